# The MySQL adapter of a multi-database gem: its SQL never reaches PostgreSQL.
module Adapters
  class MysqlAdapter
    def set_timeout(timeout)
      connection.execute("SET max_execution_time = #{timeout.to_i}")
      connection.execute("SET SESSION foreign_key_checks = 0")
    end
  end
end
