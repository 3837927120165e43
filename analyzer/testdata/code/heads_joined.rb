# SQL heads that code completes with values.
class TenantSession
  def enter(name, value, kind, key)
    connection.execute("SET #{name} = #{value}") # want session-set:error
    connection.execute("SET LOCAL #{name} = #{value}")
    connection.execute("SELECT pg_advisory_#{kind}(#{key})") # want advisory-lock-session:error
  end
end
