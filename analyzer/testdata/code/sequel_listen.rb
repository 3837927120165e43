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
