# currval() and lastval() in the transaction of the INSERT that set them
# are safe behind a transaction pooler; in a later transaction they are not.
defmodule Shop.Counters do
  def add(name) do
    Repo.transaction(fn ->
      Repo.query!("INSERT INTO counters (name) VALUES ($1)", [name])
      Repo.query!("SELECT currval('counters_id_seq')")
    end)
  end

  def add_later(name) do
    Repo.query!("INSERT INTO counters (name) VALUES ($1)", [name])
    Repo.query!("SELECT lastval()") # want sequence-session
  end
end
