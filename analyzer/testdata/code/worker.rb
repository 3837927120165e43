# Background worker with Rails-style raw SQL.
class JobWorker
  def claim(id)
    Rails.logger.info "LISTEN for jobs on #{queue}"
    connection.execute("SELECT pg_try_advisory_lock(#{id})") # want advisory-lock-session
    connection.execute "SET statement_timeout = '30s'" # want session-set
    connection.execute(%q{SET LOCAL lock_timeout = '1s'})
    rows = connection.select_all(<<~SQL, "claim")
      SELECT id FROM jobs
      WHERE state = 'ready'
      FOR UPDATE SKIP LOCKED
    SQL
    connection.execute(<<-SQL)
      CREATE TEMP TABLE batch (id bigint) -- want temp-table
    SQL
    puts "SET ROLE admin is not allowed"
    raise ArgumentError, "could not LISTEN"
    connection.execute('LISTEN ' + channel) # want listen
  end
end
