#!/usr/bin/env bash
# bench-pooler.sh — pgbench -S through pgpoolcheck's pooler, PgBouncer and
# directly to PostgreSQL, interleaved, on this machine. Not a test: it
# prints figures (TPS, average latency, failed transactions, pooler CPU
# seconds and peak RSS per run, and the RSS of each pooler holding 10,000
# idle clients).
#
# Usage: scripts/bench-pooler.sh
# Environment:
#   CLIENTS="10 100 1000"  client counts        DURATION=10   seconds per run
#   ROUNDS=2               interleaved rounds   SCALE=10      pgbench scale
#   POOL_SIZE=20           pool size            IDLE=10000    idle clients (0: skip)
#   PGBOUNCER_BIN          PgBouncer binary (default: pgbouncer on PATH; none: skipped)
#   PGBIN                  PostgreSQL server binaries (default: /usr/lib/postgresql/<newest>/bin)
#   POOLER_GOMAXPROCS      GOMAXPROCS for the pgpoolcheck process (default: Go's, all CPUs)
# Every server runs in its own session (setsid) on ports in 21000–29999,
# below the kernel's ephemeral range. Run as root or as a normal user; as
# root, PostgreSQL and PgBouncer run as the postgres OS user.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

CLIENTS=${CLIENTS-"10 100 1000"}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-2}
SCALE=${SCALE:-10}
POOL_SIZE=${POOL_SIZE:-20}
IDLE=${IDLE:-10000}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PGBOUNCER_BIN=${PGBOUNCER_BIN:-$(command -v pgbouncer || true)}
PGBENCH=$(command -v pgbench || echo "$PGBIN/pgbench")

ulimit -n "$(ulimit -Hn)" || true
echo "# ulimit -n $(ulimit -n); $(nproc) CPUs; $(date -u +%FT%TZ); pooler GOMAXPROCS=${POOLER_GOMAXPROCS:-default}"

WORK=$(mktemp -d /tmp/bench-pooler-XXXXXX)
RUNAS=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$WORK"
  RUNAS=(runuser -u postgres --)
fi
PIDS=()
# Each server runs under setsid, so its pid is also its process group:
# SIGINT to the group shuts it down (the pooler and PgBouncer stop,
# PostgreSQL does a fast shutdown), SIGKILL to the group after a grace time.
cleanup() {
  for p in "${PIDS[@]}"; do kill -INT -- "-$p" 2>/dev/null || true; done
  sleep 2
  for p in "${PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

free_port() {
  local p
  while :; do
    p=$((21000 + RANDOM % 9000))
    if ! ss -ltn "( sport = :$p )" 2>/dev/null | grep -q ":$p"; then echo "$p"; return; fi
  done
}

PGPORT=$(free_port)
POOLER_PORT=$(free_port)
BOUNCER_PORT=$(free_port)

echo "# building pgpoolcheck and idleclients"
go build -o "$WORK/pgpoolcheck" ./cmd/pgpoolcheck
go build -o "$WORK/idleclients" ./scripts/idleclients

echo "# PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on port $PGPORT"
"${RUNAS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
setsid "${RUNAS[@]}" "$PGBIN/postgres" -D "$WORK/data" -k "$WORK" -p "$PGPORT" \
  -c listen_addresses=127.0.0.1 -c max_connections=1100 -c shared_buffers=256MB \
  -c fsync=off -c synchronous_commit=off >"$WORK/postgres.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do "$PGBIN/pg_isready" -q -h "$WORK" -p "$PGPORT" && break; sleep 0.1; done
"$PGBENCH" -i -q -s "$SCALE" -h "$WORK" -p "$PGPORT" -U postgres postgres 2>&1 | tail -1

echo "# pgpoolcheck proxy on port $POOLER_PORT"
${POOLER_GOMAXPROCS:+env GOMAXPROCS=$POOLER_GOMAXPROCS} setsid "$WORK/pgpoolcheck" proxy --listen "127.0.0.1:$POOLER_PORT" \
  --upstream "postgres://postgres@/postgres?host=$WORK&port=$PGPORT" \
  --mode transaction --pool-size "$POOL_SIZE" --max-client-conn 12000 --log-level warn \
  >"$WORK/pooler.log" 2>&1 &
POOLER_PID=$!
PIDS+=("$POOLER_PID")

BOUNCER_PID=
if [ -n "$PGBOUNCER_BIN" ]; then
  echo "# PgBouncer $("$PGBOUNCER_BIN" --version | head -1 | awk '{print $2}') on port $BOUNCER_PORT"
  cat >"$WORK/pgbouncer.ini" <<INI
[databases]
postgres = host=$WORK port=$PGPORT dbname=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $WORK/userlist.txt
pool_mode = transaction
default_pool_size = $POOL_SIZE
max_client_conn = 12000
ignore_startup_parameters = extra_float_digits
logfile = $WORK/pgbouncer.log
log_connections = 0
log_disconnections = 0
INI
  echo '"postgres" ""' >"$WORK/userlist.txt"
  [ "$(id -u)" = 0 ] && chown postgres: "$WORK/pgbouncer.ini" "$WORK/userlist.txt"
  # runuser resets the open-files limit (to 1024 here); raise it again for
  # PgBouncer, which needs one descriptor per client.
  setsid "${RUNAS[@]}" sh -c 'ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"' "$PGBOUNCER_BIN" "$WORK/pgbouncer.ini" >/dev/null 2>&1 &
  BOUNCER_PID=$!
  PIDS+=("$BOUNCER_PID")
else
  echo "# PgBouncer not found: skipped"
fi
sleep 1
# With runuser, $! is runuser's pid; the pooler process is its child.
real_pid() { local c; c=$(pgrep -P "$1" | head -1); echo "${c:-$1}"; }
[ -n "$BOUNCER_PID" ] && BOUNCER_PID=$(real_pid "$BOUNCER_PID")

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hwm_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status"; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
TICK=$(getconf CLK_TCK)

url_for() {
  case $1 in
    direct) echo "postgresql://postgres@127.0.0.1:$PGPORT/postgres" ;;
    pgbouncer) echo "postgresql://postgres@127.0.0.1:$BOUNCER_PORT/postgres" ;;
    pgpoolcheck) echo "postgresql://postgres@127.0.0.1:$POOLER_PORT/postgres" ;;
  esac
}
pid_for() {
  case $1 in
    pgbouncer) echo "$BOUNCER_PID" ;;
    pgpoolcheck) echo "$POOLER_PID" ;;
    *) echo "" ;;
  esac
}

TARGETS="direct pgpoolcheck"
[ -n "$BOUNCER_PID" ] && TARGETS="direct pgbouncer pgpoolcheck"

printf '\n%-12s %7s %5s %10s %10s %8s %9s %9s\n' target clients round tps lat_ms failed cpu_s peak_mb
for c in $CLIENTS; do
  for r in $(seq "$ROUNDS"); do
    for t in $TARGETS; do
      pid=$(pid_for "$t")
      if [ -n "$pid" ]; then echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || true; c0=$(cpu_ticks "$pid"); fi
      out=$("$PGBENCH" -n -S -T "$DURATION" -j 2 -c "$c" "$(url_for "$t")" 2>&1 || true)
      tps=$(echo "$out" | awk '/^tps/ {print $3; exit}')
      lat=$(echo "$out" | awk '/latency average/ {print $4; exit}')
      failed=$(echo "$out" | awk '/number of failed transactions/ {print $5; exit}')
      [ -z "$failed" ] && failed=$(echo "$out" | grep -c 'error\|abort' || true)
      cpu=- ; peak=-
      if [ -n "$pid" ]; then
        c1=$(cpu_ticks "$pid")
        cpu=$(awk -v a="$c0" -v b="$c1" -v t="$TICK" 'BEGIN {printf "%.1f", (b - a) / t}')
        peak=$(awk -v k="$(hwm_kb "$pid")" 'BEGIN {printf "%.1f", k / 1024}')
      fi
      printf '%-12s %7s %5s %10s %10s %8s %9s %9s\n' "$t" "$c" "$r" "${tps:-ERR}" "${lat:-ERR}" "${failed:-?}" "$cpu" "$peak" | tee -a "$WORK/results"
      if [ -z "$tps" ] || [ "${failed:-0}" != 0 ]; then
        echo "$out" | grep -i -m3 'error\|fatal\|could not\|abort' | sed 's/^/    /' || true
      fi
    done
  done
done

if [ -s "$WORK/results" ]; then
  printf '\n# mean over rounds\n%-12s %7s %10s %10s %9s\n' target clients tps lat_ms cpu_s
  awk '$4 != "ERR" {k = $1 " " $2; n[k]++; tps[k] += $4; lat[k] += $5; if ($7 != "-") cpu[k] += $7}
       END {for (k in n) {split(k, a, " "); printf "%-12s %7s %10.0f %10.3f %9s\n", a[1], a[2], tps[k] / n[k], lat[k] / n[k], (cpu[k] ? sprintf("%.1f", cpu[k] / n[k]) : "-")}}' \
    "$WORK/results" | sort -k2,2n -k1,1
fi

if [ "$IDLE" -gt 0 ]; then
  printf '\n%-12s %8s %12s %12s %14s\n' target idle rss_before rss_after bytes_per_client
  for t in $TARGETS; do
    pid=$(pid_for "$t")
    [ -z "$pid" ] && continue
    before=$(rss_kb "$pid")
    "$WORK/idleclients" -n "$IDLE" -url "$(url_for "$t")" >"$WORK/idle.out" 2>"$WORK/idle.err" &
    ic=$!
    for _ in $(seq 600); do grep -q ready "$WORK/idle.out" 2>/dev/null && break; sleep 0.2; done
    sleep 2
    after=$(rss_kb "$pid")
    ready=$(awk '/ready/ {print $2}' "$WORK/idle.out")
    kill -TERM "$ic"; wait "$ic" 2>/dev/null || true  # background jobs ignore SIGINT
    per=$(awk -v a="$before" -v b="$after" -v n="${ready:-0}" 'BEGIN {if (n > 0) printf "%.0f", (b - a) * 1024 / n; else print "-"}')
    printf '%-12s %8s %10s kB %10s kB %14s\n' "$t" "${ready:-0}" "$before" "$after" "$per"
    [ -s "$WORK/idle.err" ] && sed 's/^/    /' "$WORK/idle.err"
    sleep 2
  done
fi
echo
echo "# pooler log (warnings and errors):"
tail -5 "$WORK/pooler.log" | sed 's/^/    /'
