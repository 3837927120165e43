require "sequel"

DB = Sequel.connect(ENV.fetch("DATABASE_URL"))

# Sequel's listen runs LISTEN and waits on a connection of its pool.
class JobWaker
  def run
    DB.listen(:jobs, loop: true) do |_channel, _pid, payload| # want listen:error
      wake(payload)
    end
  end

  def once
    DB.listen("jobs", timeout: 5) { |_c, _p, payload| wake(payload) } # want listen:error
  end

  def notify
    DB.notify(:jobs, payload: "1")
    listener.listen
  end
end

# Sequel's virtual rows send the advisory lock functions as SQL.
class Locker
  def with_lock(ds, id)
    ds.get{pg_advisory_lock(id)} # want advisory-lock-session:error
    ds.get{pg_advisory_xact_lock(id)}
    yield
  ensure
    ds.get{pg_advisory_unlock(id)} # want advisory-lock-session:info
  end
end
