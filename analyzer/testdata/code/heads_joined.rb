# SQL heads that code completes with values.
class TenantSession
  def enter(name, value, kind, key)
    connection.execute("SET #{name} = #{value}") # want session-set:error
    connection.execute("SET LOCAL #{name} = #{value}")
    connection.execute("SELECT pg_advisory_#{kind}(#{key})") # want advisory-lock-session:error
  end

  # An interpolation where a keyword goes: the query does not parse with
  # it, and is still read.
  def lock_next(materialized)
    DB.fetch(<<~SQL).first
      WITH j AS #{materialized} (SELECT id FROM jobs ORDER BY id LIMIT 1)
      SELECT pg_try_advisory_lock(id) FROM j -- want advisory-lock-session:error
    SQL
  end

  def lock_with_junk(key, order)
    DB.run("SELECT pg_advisory_lock(#{key}) FROM jobs #{order} #{order}") # want advisory-lock-session:error
  end
end
