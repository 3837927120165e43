#!/usr/bin/env bash
# bench-scaleout.sh — pgbench -S at many clients against one pooler
# process and against several sharing one port, for pgpoolcheck and
# PgBouncer, interleaved, on this machine. Not a test: it prints figures.
#
# Targets, each started afresh for its run and stopped after it:
#   ppc-1          one pgpoolcheck process, one event loop
#   ppc-loops2     one pgpoolcheck process, --event-loops 2
#   ppc-2proc      two pgpoolcheck processes, --so-reuseport, peer ids 1 and 2
#   pgb-1          one PgBouncer process
#   pgb-2proc      two PgBouncer processes, so_reuseport, peer_id 1 and 2
# For each it prints TPS, mean latency, failed/aborted clients and the CPU
# microseconds per transaction of the pooler processes (utime+stime from
# /proc/PID/stat), of PostgreSQL (postmaster and children) and of pgbench.
#
# Usage: [VAR=value ...] scripts/bench-scaleout.sh
# Environment (default):
#   CLIENTS (1000)        pgbench clients       DURATION (15) seconds per run
#   ROUNDS (2)            interleaved rounds    POOL_SIZE (20) servers per pool and process
#   PROTOCOL (simple)     pgbench -M            SCALE (10) pgbench scale
#   PGBOUNCER_BIN (/usr/sbin/pgbouncer)         PgBouncer binary (1.19+ for peer_id)
#   PGBIN (/usr/lib/postgresql/<newest>/bin)   BASE_PORT (24600): PostgreSQL, then the pooler port
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
. scripts/servers.sh

CLIENTS=${CLIENTS:-1000}
DURATION=${DURATION:-15}
ROUNDS=${ROUNDS:-2}
POOL_SIZE=${POOL_SIZE:-20}
PROTOCOL=${PROTOCOL:-simple}
SCALE=${SCALE:-10}
PGBOUNCER_BIN=${PGBOUNCER_BIN:-/usr/sbin/pgbouncer}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PGBENCH=$(command -v pgbench || echo "$PGBIN/pgbench")
BASE_PORT=${BASE_PORT:-24600}
PG_PORT=$BASE_PORT
POOL_PORT=$((BASE_PORT + 1))
TARGETS=${TARGETS:-"ppc-1 ppc-loops2 ppc-2proc pgb-1 pgb-2proc"}
ulimit -n "$(ulimit -Hn)" || true

bench_setup bench-scaleout


echo "# building pgpoolcheck"
go build -o "$WORK/pgpoolcheck" ./cmd/pgpoolcheck
"${RUNAS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
setsid "${RUNAS[@]}" "$PGBIN/postgres" -D "$WORK/data" -k "$WORK" -p "$PG_PORT" -c listen_addresses=127.0.0.1 \
  -c max_connections=$((POOL_SIZE * 2 + 30)) -c shared_buffers=256MB -c fsync=off -c synchronous_commit=off \
  >"$WORK/postgres.log" 2>&1 &
SIDS+=("$!")
wait_ready "$PG_PORT"
PG_PID=$(head -1 "$WORK/data/postmaster.pid")
"$PGBENCH" -i -q -s "$SCALE" -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres >/dev/null 2>&1
echo '"postgres" ""' >"$WORK/userlist.txt"
[ "$(id -u)" = 0 ] && chown postgres: "$WORK/userlist.txt"

# start TARGET: the pooler processes of TARGET, their pids in POOLER_PIDS.
POOLER_PIDS=()
TARGET_SIDS=()
start() {
  POOLER_PIDS=() TARGET_SIDS=()
  local common=(proxy --listen "127.0.0.1:$POOL_PORT" --upstream "postgres://postgres@/postgres?host=$WORK&port=$PG_PORT"
    --pool-size "$POOL_SIZE" --max-client-conn $((CLIENTS + 100)) --log-level warn)
  local peers="1=127.0.0.1:$POOL_PORT,2=127.0.0.1:$POOL_PORT"
  case $1 in
    ppc-1) launch_ppc "${common[@]}" ;;
    ppc-loops2) launch_ppc "${common[@]}" --event-loops 2 ;;
    ppc-2proc)
      launch_ppc "${common[@]}" --so-reuseport --peer-id 1 --peers "$peers"
      launch_ppc "${common[@]}" --so-reuseport --peer-id 2 --peers "$peers"
      ;;
    pgb-1) launch_pgb 0 ;;
    pgb-2proc) launch_pgb 1; launch_pgb 2 ;;
  esac
  wait_ready "$POOL_PORT"
  sleep 0.5
  local s
  for s in "${TARGET_SIDS[@]}"; do
    POOLER_PIDS+=("$(pgrep -o -s "$s" -x "$([ "${1%%-*}" = ppc ] && echo pgpoolcheck || basename "$PGBOUNCER_BIN" | cut -c1-15)" || echo "$s")")
  done
}
launch_ppc() {
  setsid "$WORK/pgpoolcheck" "$@" >>"$WORK/ppc.log" 2>&1 &
  TARGET_SIDS+=("$!") SIDS+=("$!")
}
launch_pgb() {  # peer id (0: no peering)
  local ini="$WORK/pgb$1.ini"
  cat >"$ini" <<INI
[databases]
postgres = host=$WORK port=$PG_PORT dbname=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $POOL_PORT
unix_socket_dir =
auth_type = trust
auth_file = $WORK/userlist.txt
pool_mode = transaction
default_pool_size = $POOL_SIZE
max_client_conn = $((CLIENTS + 100))
logfile = $WORK/pgb$1.log
pidfile = $WORK/pgb$1.pid
log_connections = 0
log_disconnections = 0
INI
  if [ "$1" != 0 ]; then
    printf 'so_reuseport = 1\npeer_id = %s\n[peers]\n1 = host=127.0.0.1 port=%s\n2 = host=127.0.0.1 port=%s\n' "$1" "$POOL_PORT" "$POOL_PORT" >>"$ini"
  fi
  [ "$(id -u)" = 0 ] && chown postgres: "$ini"
  setsid "${RUNAS[@]}" sh -c 'ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"' "$PGBOUNCER_BIN" "$ini" >>"$WORK/pgb$1.out" 2>&1 &
  TARGET_SIDS+=("$!") SIDS+=("$!")
}
stop_all() { local s; for s in "${TARGET_SIDS[@]}"; do stop_session "$s"; done; }

echo "# $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}'); $("$PGBOUNCER_BIN" --version 2>/dev/null | head -1)"
echo "# pgbench -S -M $PROTOCOL -c $CLIENTS -j 2 -T $DURATION, pool $POOL_SIZE per process, $ROUNDS rounds"
printf '%-10s %5s %9s %9s %6s %8s %8s %8s\n' target round tps lat_ms failed pool_us pg_us bench_us
for r in $(seq "$ROUNDS"); do
  for t in $TARGETS; do
    start "$t"
    c0=$(cpu_of "${POOLER_PIDS[@]}") g0=$(pg_cpu)
    out=$( { /usr/bin/time -f 'BENCHCPU %U %S' "$PGBENCH" -n -S -M "$PROTOCOL" -c "$CLIENTS" -j 2 -T "$DURATION" \
      -h 127.0.0.1 -p "$POOL_PORT" -U postgres postgres; } 2>&1 || true)
    c1=$(cpu_of "${POOLER_PIDS[@]}") g1=$(pg_cpu)
    stop_all
    tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
    lat=$(sed -n 's/^latency average = \([0-9.]*\).*/\1/p' <<<"$out")
    failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
    xacts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
    bench=$(awk '/^BENCHCPU/ {print $2 + $3}' <<<"$out")
    if [ -z "$tps" ] || [ -z "$xacts" ] || [ "$xacts" = 0 ]; then
      printf '%-10s %5s %9s   (pgbench failed: %s)\n' "$t" "$r" - "$(tail -1 <<<"$out")"
      continue
    fi
    printf '%-10s %5s %9.0f %9.2f %6s %8.1f %8.1f %8.1f\n' "$t" "$r" "$tps" "$lat" "${failed:-0}" \
      "$(echo "($c1 - $c0) * 1000000 / $HZ / $xacts" | bc -l)" \
      "$(echo "($g1 - $g0) * 1000000 / $HZ / $xacts" | bc -l)" \
      "$(echo "${bench:-0} * 1000000 / $xacts" | bc -l)"
    # Let the servers of the stopped poolers leave PostgreSQL.
    for _ in $(seq 50); do
      [ "$(pgrep -c -P "$PG_PID")" -le 8 ] && break
      sleep 0.2
    done
  done
done
