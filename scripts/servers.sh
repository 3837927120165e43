# servers.sh — helpers the benchmark scripts share (sourced, not run): the
# servers they start each run in a session of their own (setsid), so that
# the session id is also the process group to signal.

# alive PID: the process exists and is not a zombie.
alive() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ "$s" != Z ]; }

# stop_session SID [SIGNAL]: SIGNAL (default INT: the poolers stop,
# PostgreSQL does a fast shutdown) to the session's group, SIGKILL after 10 s.
stop_session() {
  kill "-${2:-INT}" -- "-$1" 2>/dev/null || return 0
  for _ in $(seq 100); do alive "$1" || break; sleep 0.1; done
  kill -KILL -- "-$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

# port_free PORT: nothing listens on it.
port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }

# wait_ready PORT: until a PostgreSQL server or pooler answers a startup
# packet there, 10 s at most ($PGBIN/pg_isready).
wait_ready() {
  for _ in $(seq 100); do "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$1" -U postgres -d postgres && return 0; sleep 0.1; done
  return 1
}

# cpu_of PIDS...: utime+stime ticks of the processes (HZ ticks a second).
cpu_of() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$t"; }
HZ=$(getconf CLK_TCK)

# pg_cpu: ticks of the postmaster $PG_PID, its children and its exited
# children.
pg_cpu() {
  local t p
  t=$(awk '{print $14 + $15 + $16 + $17}' "/proc/$PG_PID/stat")
  for p in $(pgrep -P "$PG_PID"); do t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done
  echo "$t"
}

# bench_setup NAME: the work directory $WORK (/tmp/NAME-XXXXXX; owned by
# postgres when run as root, with RUNAS the prefix that runs a command as
# postgres), the list SIDS of sessions to stop, and traps that on exit stop
# them, run bench_cleanup if the script defines one, and remove $WORK.
bench_setup() {
  WORK=$(mktemp -d "/tmp/$1-XXXXXX")
  RUNAS=()
  if [ "$(id -u)" = 0 ]; then
    chown postgres: "$WORK"
    RUNAS=(runuser -u postgres --)
  fi
  SIDS=()
  trap bench_exit EXIT
  trap 'exit 130' INT TERM
}
bench_exit() {
  trap - EXIT
  local s
  for s in "${SIDS[@]}"; do stop_session "$s"; done
  if declare -F bench_cleanup >/dev/null; then bench_cleanup; fi
  rm -rf "$WORK"
}
