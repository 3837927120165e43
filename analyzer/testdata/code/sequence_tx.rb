# currval() and lastval() in the transaction of the INSERT that set them
# are safe behind a transaction pooler; in a later transaction they are not.
class Ledger
  def add_entry(amount)
    ActiveRecord::Base.transaction do
      connection.execute("INSERT INTO entries (amount) VALUES (#{amount.to_i})")
      connection.select_value("SELECT currval('entries_id_seq')")
    end
  end

  def add_account(name)
    DB.transaction do
      DB.run("INSERT INTO accounts (name) VALUES ('x')")
      DB.get(Sequel.lit("SELECT lastval()"))
    end
  end

  def add_entry_later(amount)
    connection.execute("INSERT INTO entries (amount) VALUES (#{amount.to_i})")
    connection.select_value("SELECT lastval()") # want sequence-session
  end
end
