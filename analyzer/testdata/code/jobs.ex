defmodule Jobs do
  def claim(repo, id) do
    Ecto.Adapters.SQL.query!(repo, "SELECT pg_try_advisory_lock($1)", [id]) # want advisory-lock-session
    Logger.info("SET ROLE skipped for #{id}")
    Ecto.Adapters.SQL.query!(repo, ~s(SET search_path TO tenant_#{id}), []) # want session-set:critical
    Ecto.Adapters.SQL.query!(repo, """
    SET LOCAL statement_timeout = '5s'
    """, [])
    IO.puts("LISTEN later")
  end
end
