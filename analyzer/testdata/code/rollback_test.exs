defmodule App.TenantTest do
  use ExUnit.Case

  test "runs in a transaction it rolls back" do
    Repo.transaction(fn ->
      Repo.query!("SET search_path TO tenant_a, public")
      Repo.query!("CREATE TEMP TABLE scratch (id int)")
      Repo.rollback(:done)
    end)
  end

  test "commits" do
    Repo.transaction(fn ->
      Repo.query!("SET search_path TO app") # want session-set:critical
    end)
  end
end
