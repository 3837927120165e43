# Specs whose transactions always roll back.
RSpec.describe Tenant do
  around do |example|
    DB.transaction(rollback: :always) do
      DB.run("SET search_path TO tenant_a, public")
      DB.run("CREATE TEMP TABLE scratch (id int)")
      example.run
    end
  end

  it "rolls back by hand" do
    ActiveRecord::Base.transaction do
      ActiveRecord::Base.connection.execute("SET statement_timeout = '1s'")
      ActiveRecord::Base.connection.execute("SELECT pg_advisory_lock(3)") # want advisory-lock-session:error
      raise ActiveRecord::Rollback
    end
  end

  it "commits when it does not raise" do
    ActiveRecord::Base.transaction do
      ActiveRecord::Base.connection.execute("SET search_path TO app") # want session-set:critical
      raise ActiveRecord::Rollback if dry_run?
    end
  end
end
