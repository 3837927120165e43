#!/usr/bin/env bash
# bench-pooler.sh — pgbench -S through pgpoolcheck's pooler, PgBouncer and
# directly to PostgreSQL, interleaved, on this machine. Not a test: it
# prints figures. For each protocol, client count and round it runs
# direct, each PgBouncer and pgpoolcheck in turn and records TPS, mean
# latency, failed transactions, aborted clients, the pooler's CPU seconds
# (utime+stime from /proc/PID/stat) per 100k transactions and its peak RSS
# (VmHWM, reset before each run), and the CPU microseconds per transaction
# that PostgreSQL (the postmaster and its children, backends that exited
# included) and pgbench itself spent, because on this 2-core machine the
# three share the CPUs and a pooler can cost the others CPU as well as
# its own. Then, on freshly started poolers, the RSS
# per idle client with IDLE clients logged in and holding their connection.
# Output: raw rows, then markdown tables to paste into BENCHMARKS.md.
#
# With RECORD=1 two more targets join each round, started afresh for each
# run and stopped after it: pgpoolcheck-session (`--mode session`) and
# pgpoolcheck-record (`--mode record --capture $WORK/capture.N.jsonl`, a new
# file per run), both with a pool as large as the largest client count.
# A table then gives record TPS ÷ session TPS per protocol and client
# count (the target: ≥ 0.95), with the events each capture wrote and
# dropped (read from its trailer) and its size. Odd rounds run session
# before record, even rounds record before session, and after each of them
# the script waits until its server connections have left PostgreSQL: up
# to 1000 backends exiting at the start of the next run took 5-15% of its
# TPS, always from record mode when it ran second.
#
# Usage: [VAR=value ...] scripts/bench-pooler.sh
# Environment (default):
#   CLIENTS ("10 100 1000")          pgbench client counts
#   PROTOCOLS ("simple extended prepared")  pgbench -M values
#   DURATION (10) seconds per run, pgbench -T: it includes the clients' connecting
#                                    (1000 direct connections take seconds here)
#   ROUNDS (2) interleaved rounds
#   SCALE (10) pgbench scale         POOL_SIZE (20) server connections per pool
#   IDLE (10000)                     idle clients per pooler for memory (0: skip)
#   MAX_PREPARED (200)               prepared statements kept per server connection:
#                                    pgpoolcheck --max-prepared-statements and PgBouncer
#                                    max_prepared_statements (set only for PgBouncer >= 1.21)
#   PGBOUNCER_BIN (/usr/sbin/pgbouncer)  PgBouncer binaries, space-separated, each
#                                    a target named pgbouncer-<version> ("": none)
#   POOLER_REV (unset)               build pgpoolcheck from this git revision instead
#                                    of the working tree (e.g. HEAD: committed code only)
#   POOLER_GOMAXPROCS (Go's default) GOMAXPROCS for the pgpoolcheck process
#   POOLER_ARGS ("")                 extra `pgpoolcheck proxy` flags (split on spaces)
#   RECORD (0)                       1: also pgpoolcheck in session and in record mode
#   RECORD_ONLY (0)                  1 (with RECORD=1): only those two, for the record ÷ session ratio
#   OVERSTAY_DIR (/tmp/bench-pooler-overstays)  where a pgbench run that does not end 60 s
#                                    after DURATION leaves PostgreSQL's active backends and
#                                    pgpoolcheck's goroutines (it is killed and counted failed)
#   RECORD_WARM (0)                  1 (with RECORD=1): start those two once per protocol and
#                                    client count and keep them over its rounds (server
#                                    connections stay open), as a recording proxy in staging
#                                    runs for hours; each is warmed up by an unmeasured run of
#                                    WARMUP (3) seconds first, and the capture's trailer is read
#                                    once per cell
#   BASE_REV (unset)                 also pgpoolcheck-base: pgpoolcheck built from this git
#                                    revision, with the same flags (a change beside its base)
#   SCRIPT (unset)                   a pgbench script file run instead of -S (pgbench -f)
#   SETUP_SQL (unset)                a SQL file run once on the database after pgbench -i
#                                    (views, functions the SCRIPT uses)
#   SERVER_TLS (0)                   1: PostgreSQL speaks TLS (a throwaway self-signed certificate)
#                                    and the poolers reach it over TCP with sslmode=require
#   CLIENT_TLS (0)                   1: pgbench reaches the poolers with sslmode=require (the
#                                    poolers' client TLS with that certificate); direct stays plain
#   APPS (1)                         application names the clients are split over: APPS pgbench
#                                    processes with CLIENTS/APPS clients each, application_name
#                                    app1..appN, their results summed (servers must be set up for
#                                    their next client's name)
#   SYSCALLS (0)                     1: count each pooler's system calls during every run
#                                    (perf stat: all, read/recvfrom, write/sendto, the epoll
#                                    waits, epoll_ctl, futex) and print them per transaction; a Go
#                                    pooler's epoll waits include the runtime's network poller's
#   EVLOOP (0)                       1: also scripts/evloop, the event-loop experiment (not a
#                                    product: -S simple and extended only, no prepared)
#   EVLOOP_LOOPS (2)                 its event loops
#   EVLOOP_ARGS ("")                 extra evloop flags (e.g. -edge=false)
#   PGBIN (/usr/lib/postgresql/<newest>/bin)  PostgreSQL server binaries
#   BASE_PORT (24300)                PostgreSQL on BASE_PORT, pgpoolcheck on +1,
#                                    PgBouncers on +2, +3, ..., then with RECORD=1
#                                    session and record mode (keep within 21000–29999)
# Every server runs in its own session (setsid) on those fixed ports, below
# the kernel's ephemeral range. As root, PostgreSQL and PgBouncer run as the
# postgres OS user; PgBouncer's open-files limit is raised to the hard limit
# in its own shell, because runuser resets the soft limit to 1024.
# Failed runs (an aborted client, a pgbench that cannot connect) are counted
# in the rows, never stop the script.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
. scripts/servers.sh

CLIENTS=${CLIENTS-"10 100 1000"}
PROTOCOLS=${PROTOCOLS-"simple extended prepared"}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-2}
SCALE=${SCALE:-10}
POOL_SIZE=${POOL_SIZE:-20}
IDLE=${IDLE:-10000}
MAX_PREPARED=${MAX_PREPARED:-200}
PGBOUNCER_BIN=${PGBOUNCER_BIN-/usr/sbin/pgbouncer}
POOLER_REV=${POOLER_REV-}
POOLER_ARGS=${POOLER_ARGS-}
BASE_PORT=${BASE_PORT:-24300}
RECORD=${RECORD:-0}
RECORD_ONLY=${RECORD_ONLY:-0}
RECORD_WARM=${RECORD_WARM:-0}
WARMUP=${WARMUP:-3}
EVLOOP=${EVLOOP:-0}
BASE_REV=${BASE_REV-}
APPS=${APPS:-1}
SCRIPT=${SCRIPT-}
SERVER_TLS=${SERVER_TLS:-0}
CLIENT_TLS=${CLIENT_TLS:-0}
SYSCALLS=${SYSCALLS:-0}
if [ "$SYSCALLS" = 1 ] && ! command -v perf >/dev/null 2>&1; then
  echo "SYSCALLS=1 needs perf (linux-perf)" >&2
  exit 1
fi
SYSCALL_EVENTS=raw_syscalls:sys_enter,syscalls:sys_enter_read,syscalls:sys_enter_recvfrom,syscalls:sys_enter_write,syscalls:sys_enter_sendto,syscalls:sys_enter_epoll_pwait,syscalls:sys_enter_epoll_wait,syscalls:sys_enter_epoll_ctl,syscalls:sys_enter_futex
EVLOOP_LOOPS=${EVLOOP_LOOPS:-2}
read -ra EVLOOP_EXTRA <<<"${EVLOOP_ARGS-}"
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PGBENCH=$(command -v pgbench || echo "$PGBIN/pgbench")
read -ra EXTRA_ARGS <<<"$POOLER_ARGS"

ulimit -n "$(ulimit -Hn)" || true
NOFILE=$(ulimit -n)
MAX_CLIENTS=$(printf '%s\n' $CLIENTS | sort -n | tail -1)
MAX_CLIENT_CONN=$(( (IDLE > MAX_CLIENTS ? IDLE : MAX_CLIENTS) + 2000 ))
if [ "$IDLE" -gt 0 ] && [ "$NOFILE" -le $((IDLE + 100)) ]; then
  echo "warning: open-files limit $NOFILE is too low for IDLE=$IDLE" >&2
fi

WORK=$(mktemp -d /tmp/bench-pooler-XXXXXX)
RUNAS=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$WORK"
  RUNAS=(runuser -u postgres --)
fi

declare -A PORT=() SID=() PID=() BIN=()
SIDS=()    # every session started, for cleanup
# Each server runs under setsid, so the pid $! is also its session and
# process group: SIGINT to the group shuts it down (the poolers stop,
# PostgreSQL does a fast shutdown), SIGKILL after a grace time.
cleanup() {
  trap - EXIT
  local s
  for s in "${SIDS[@]}"; do kill -INT -- "-$s" 2>/dev/null || true; done
  for _ in $(seq 50); do
    local any=
    for s in "${SIDS[@]}"; do alive "$s" && any=1; done
    [ -z "$any" ] && break
    sleep 0.1
  done
  for s in "${SIDS[@]}"; do kill -KILL -- "-$s" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The process that serves a target: the oldest one named $2 in session $1
# (with runuser, $! is runuser's pid and the server is its child).
server_pid() { pgrep -o -s "$1" -x "$2" || echo "$1"; }
bouncer_version() { "$1" --version 2>/dev/null | awk 'NR == 1 {print $2}'; }
version_ge() { [ "$(printf '%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

# --- build ---------------------------------------------------------------
if [ -n "$POOLER_REV" ]; then
  POOLER_SRC="$WORK/src"
  mkdir -p "$POOLER_SRC"
  git archive "$POOLER_REV" | tar -x -C "$POOLER_SRC"
  POOLER_DESC="$(git rev-parse --short "$POOLER_REV") ($POOLER_REV)"
else
  POOLER_SRC=$PWD
  POOLER_DESC="$(git rev-parse --short HEAD) working tree"
  if [ -n "$(git status --porcelain -- cmd pooler internal go.mod go.sum)" ]; then
    POOLER_DESC="$POOLER_DESC, with uncommitted changes"
  fi
fi
echo "# building pgpoolcheck ($POOLER_DESC) and idleclients"
(cd "$POOLER_SRC" && go build -o "$WORK/pgpoolcheck" ./cmd/pgpoolcheck)
go build -o "$WORK/idleclients" ./scripts/idleclients
if [ -n "$BASE_REV" ]; then
  echo "# building pgpoolcheck-base ($(git rev-parse --short "$BASE_REV") ($BASE_REV))"
  mkdir -p "$WORK/base-src"
  git archive "$BASE_REV" | tar -x -C "$WORK/base-src"
  (cd "$WORK/base-src" && go build -o "$WORK/pgpoolcheck-base" ./cmd/pgpoolcheck)
fi
if [ "$EVLOOP" = 1 ]; then go build -o "$WORK/evloop" ./scripts/evloop; fi

# --- targets ---------------------------------------------------------------
PORT[direct]=$BASE_PORT
PORT[pgpoolcheck]=$((BASE_PORT + 1))
BOUNCERS=()
n=2
for b in $PGBOUNCER_BIN; do
  v=$(bouncer_version "$b" || true)
  if [ -z "$v" ]; then echo "# PgBouncer $b: not runnable, skipped"; continue; fi
  t="pgbouncer-$v"
  [ -n "${BIN[$t]:-}" ] && t="$t-$n"
  BIN[$t]=$b
  PORT[$t]=$((BASE_PORT + n))
  BOUNCERS+=("$t")
  n=$((n + 1))
done
PER_RUN=()     # targets started afresh for each run and stopped after it
REC_TARGETS=() # session and record mode (RECORD=1)
if [ "$RECORD" = 1 ]; then
  for t in pgpoolcheck-session pgpoolcheck-record; do
    PORT[$t]=$((BASE_PORT + n))
    REC_TARGETS+=("$t")
    n=$((n + 1))
  done
  [ "$RECORD_WARM" = 1 ] || PER_RUN=("${REC_TARGETS[@]}")
fi
if [ "$EVLOOP" = 1 ]; then
  PORT[evloop]=$((BASE_PORT + n))
  n=$((n + 1))
fi
if [ -n "$BASE_REV" ]; then
  PORT[pgpoolcheck-base]=$((BASE_PORT + n))
  n=$((n + 1))
fi
per_run() { [[ " ${PER_RUN[*]} " == *" $1 "* ]]; }
for t in "${!PORT[@]}"; do
  port_free "${PORT[$t]}" || { echo "port ${PORT[$t]} ($t) is in use: set BASE_PORT" >&2; exit 1; }
done

PPC_HELP=$("$WORK/pgpoolcheck" proxy -h 2>&1 || true)
UPSTREAM="postgres://postgres@/postgres?host=$WORK&port=${PORT[direct]}"
[ "$SERVER_TLS" = 1 ] && UPSTREAM="postgres://postgres@127.0.0.1:${PORT[direct]}/postgres?sslmode=require"
PPC_FLAGS=(--listen "127.0.0.1:${PORT[pgpoolcheck]}" --upstream "$UPSTREAM"
  --mode transaction --pool-size "$POOL_SIZE" --max-client-conn "$MAX_CLIENT_CONN" --log-level warn)
# The TLS certificate (SERVER_TLS, CLIENT_TLS): self-signed, for 127.0.0.1,
# readable by the postgres OS user that runs PostgreSQL and PgBouncer.
if [ "$SERVER_TLS" = 1 ] || [ "$CLIENT_TLS" = 1 ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$WORK/tls.key" -out "$WORK/tls.crt" -days 2 \
    -subj /CN=127.0.0.1 >/dev/null 2>&1
  chmod 600 "$WORK/tls.key"
  [ "$(id -u)" = 0 ] && chown postgres: "$WORK/tls.key" "$WORK/tls.crt"
fi
if [ "$CLIENT_TLS" = 1 ]; then
  PPC_FLAGS+=(--client-tls-sslmode require --client-tls-cert-file "$WORK/tls.crt" --client-tls-key-file "$WORK/tls.key")
fi
if grep -q -- '-max-prepared-statements' <<<"$PPC_HELP"; then
  PPC_FLAGS+=(--max-prepared-statements "$MAX_PREPARED")
fi
# Each record proxy writes a capture file of its own, and the files are
# deleted only with $WORK at the end: deleting or truncating one (tens of
# MB) frees its blocks, and on a file system mounted with online discard
# (this machine's) that work lands in the runs that follow.
CAPTURE_N=0
CAPTURE="$WORK/capture.jsonl"

# start_pgpoolcheck [TARGET]: pgpoolcheck (transaction mode), or with
# RECORD=1 pgpoolcheck-session or pgpoolcheck-record (a fresh capture).
start_pgpoolcheck() {
  local t=${1:-pgpoolcheck} flags bin="$WORK/pgpoolcheck"
  case $t in
    pgpoolcheck) flags=("${PPC_FLAGS[@]}") ;;
    pgpoolcheck-base)
      flags=("${PPC_FLAGS[@]}")
      flags[1]="127.0.0.1:${PORT[$t]}"
      bin="$WORK/pgpoolcheck-base"
      ;;
    *)
      flags=(--listen "127.0.0.1:${PORT[$t]}" --upstream "$UPSTREAM" --pool-size "$MAX_CLIENTS"
        --max-client-conn "$MAX_CLIENT_CONN" --log-level warn)
      if [ "$t" = pgpoolcheck-record ]; then
        CAPTURE_N=$((CAPTURE_N + 1))
        CAPTURE="$WORK/capture.$CAPTURE_N.jsonl"
        flags+=(--mode record --capture "$CAPTURE")
      else
        flags+=(--mode session)
      fi
      ;;
  esac
  ${POOLER_GOMAXPROCS:+env GOMAXPROCS=$POOLER_GOMAXPROCS} setsid "$bin" proxy \
    "${flags[@]}" "${EXTRA_ARGS[@]}" >>"$WORK/$t.log" 2>&1 &
  SID[$t]=$!
  SIDS+=("$!")
  wait_ready "${PORT[$t]}" || { echo "$t did not start:" >&2; tail -5 "$WORK/$t.log" >&2; exit 1; }
  PID[$t]=$(server_pid "${SID[$t]}" pgpoolcheck)
}

start_pgbouncer() {  # target name; 1 if it does not start
  local t=$1 ini="$WORK/$1.ini" v
  v=$(bouncer_version "${BIN[$t]}")
  cat >"$ini" <<INI
[databases]
postgres = host=$([ "$SERVER_TLS" = 1 ] && echo 127.0.0.1 || echo "$WORK") port=${PORT[direct]} dbname=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${PORT[$t]}
unix_socket_dir =
auth_type = trust
auth_file = $WORK/userlist.txt
pool_mode = transaction
default_pool_size = $POOL_SIZE
max_client_conn = $MAX_CLIENT_CONN
ignore_startup_parameters = extra_float_digits
logfile = $WORK/$t.log
log_connections = 0
log_disconnections = 0
INI
  if version_ge "$v" 1.21; then echo "max_prepared_statements = $MAX_PREPARED" >>"$ini"; fi
  if [ "$SERVER_TLS" = 1 ]; then echo "server_tls_sslmode = require" >>"$ini"; fi
  if [ "$CLIENT_TLS" = 1 ]; then
    printf 'client_tls_sslmode = require\nclient_tls_cert_file = %s\nclient_tls_key_file = %s\n' "$WORK/tls.crt" "$WORK/tls.key" >>"$ini"
  fi
  echo '"postgres" ""' >"$WORK/userlist.txt"
  [ "$(id -u)" = 0 ] && chown postgres: "$ini" "$WORK/userlist.txt"
  setsid "${RUNAS[@]}" sh -c 'ulimit -n "$(ulimit -Hn)"; exec "$0" "$@"' "${BIN[$t]}" "$ini" \
    >>"$WORK/$t.out" 2>&1 &
  SID[$t]=$!
  SIDS+=("$!")
  if ! wait_ready "${PORT[$t]}"; then
    echo "# $t did not start, skipped:"; tail -3 "$WORK/$t.out" "$WORK/$t.log" 2>/dev/null | sed 's/^/    /'
    stop_session "${SID[$t]}"
    return 1
  fi
  PID[$t]=$(server_pid "${SID[$t]}" "$(basename "${BIN[$t]}" | cut -c1-15)")
}

start_evloop() {
  setsid "$WORK/evloop" -port "${PORT[evloop]}" -loops "$EVLOOP_LOOPS" -pool "$POOL_SIZE" \
    -upstream "$WORK/.s.PGSQL.${PORT[direct]}" "${EVLOOP_EXTRA[@]}" >>"$WORK/evloop.log" 2>&1 &
  SID[evloop]=$!
  SIDS+=("$!")
  wait_ready "${PORT[evloop]}" || { echo "evloop did not start:" >&2; tail -5 "$WORK/evloop.log" >&2; exit 1; }
  PID[evloop]=$(server_pid "${SID[evloop]}" evloop)
}

start_target() {
  case $1 in pgpoolcheck*) start_pgpoolcheck "$1" ;; evloop) start_evloop ;; *) start_pgbouncer "$1" ;; esac
}
stop_target() { stop_session "${SID[$1]}"; }

# --- PostgreSQL --------------------------------------------------------------
echo "# PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on port ${PORT[direct]}"
"${RUNAS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
setsid "${RUNAS[@]}" "$PGBIN/postgres" -D "$WORK/data" -k "$WORK" -p "${PORT[direct]}" \
  -c listen_addresses=127.0.0.1 -c max_connections=$((MAX_CLIENTS * (RECORD == 1 ? 3 : 1) + POOL_SIZE * (${#BOUNCERS[@]} + 1 + EVLOOP + (${#BASE_REV} > 0)) + 20)) \
  -c shared_buffers=256MB -c fsync=off -c synchronous_commit=off \
  $([ "$SERVER_TLS" = 1 ] && echo "-c ssl=on -c ssl_cert_file=$WORK/tls.crt -c ssl_key_file=$WORK/tls.key") >"$WORK/postgres.log" 2>&1 &
SIDS+=("$!")
PG_SID=$!
wait_ready "${PORT[direct]}" || { echo "PostgreSQL did not start:" >&2; tail -5 "$WORK/postgres.log" >&2; exit 1; }
"$PGBENCH" -i -q -s "$SCALE" -h 127.0.0.1 -p "${PORT[direct]}" -U postgres postgres 2>&1 | tail -1
if [ -n "${SETUP_SQL:-}" ]; then
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "${PORT[direct]}" -U postgres -d postgres -f "$SETUP_SQL"
fi

echo "# pgpoolcheck proxy on port ${PORT[pgpoolcheck]}: ${PPC_FLAGS[*]:4} ${EXTRA_ARGS[*]}" \
  "(GOMAXPROCS=${POOLER_GOMAXPROCS:-default})"
start_pgpoolcheck
POOLERS=()
for t in "${BOUNCERS[@]}"; do
  v=$(bouncer_version "${BIN[$t]}")
  mps="max_prepared_statements = $MAX_PREPARED"
  version_ge "$v" 1.21 || mps="no max_prepared_statements (< 1.21)"
  if start_pgbouncer "$t"; then
    echo "# $t (${BIN[$t]}) on port ${PORT[$t]}: pool_mode = transaction, default_pool_size = $POOL_SIZE, $mps;" \
      "open files $(awk '/Max open files/ {print $4}' "/proc/${PID[$t]}/limits")"
    POOLERS+=("$t")
  fi
done
POOLERS+=(pgpoolcheck)
if [ -n "$BASE_REV" ]; then
  start_pgpoolcheck pgpoolcheck-base
  echo "# pgpoolcheck-base on port ${PORT[pgpoolcheck-base]}: built from $BASE_REV, the same flags"
  POOLERS+=(pgpoolcheck-base)
fi
EXPERIMENTS=()
if [ "$EVLOOP" = 1 ]; then
  start_evloop
  echo "# evloop (scripts/evloop, an experiment) on port ${PORT[evloop]}: $EVLOOP_LOOPS loops, pool $POOL_SIZE"
  EXPERIMENTS=(evloop)
fi
TARGETS=(direct "${POOLERS[@]}" "${EXPERIMENTS[@]}" "${REC_TARGETS[@]}")
[ "$RECORD_ONLY" = 1 ] && TARGETS=("${REC_TARGETS[@]}")
PSQL=$(command -v psql || echo "$PGBIN/psql")
# What the poolers that stay up may hold, plus psql itself.
BASE_BACKENDS=$((POOL_SIZE * (${#POOLERS[@]} + ${#EXPERIMENTS[@]}) + 2))
if [ "$RECORD" = 1 ]; then
  echo "# pgpoolcheck-session on port ${PORT[pgpoolcheck-session]}: --mode session --pool-size $MAX_CLIENTS;" \
    "pgpoolcheck-record on port ${PORT[pgpoolcheck-record]}: --mode record --pool-size $MAX_CLIENTS --capture $WORK/capture.N.jsonl (N counts the record proxies started; deleted at the end);" \
    "$([ "$RECORD_WARM" = 1 ] && echo "both started once per protocol and client count and kept over its rounds" || echo "each started for its run and stopped after it")"
fi
echo "# $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ); ulimit -n $NOFILE"
echo "# each run: $PGBENCH -n $([ -n "$SCRIPT" ] && echo "-f $SCRIPT" || echo -S) -M PROTOCOL -T $DURATION -j 2 -c CLIENTS postgresql://postgres@127.0.0.1:PORT/postgres" \
  "$([ "$APPS" -gt 1 ] && echo "(split over $APPS pgbench processes, application_name app1..app$APPS)")"

# --- pgbench runs --------------------------------------------------------------
# pgbench_run PROTO CLIENTS URL: pgbench -S for DURATION s. With APPS > 1
# the clients are split over APPS pgbench processes, each with an
# application_name of its own, and their reports are summed into one of
# the same form (TPS and transactions added, latency from clients ÷ TPS).
pgbench_run() {
  local proto=$1 c=$2 url=$3 i n dir what=(-S)
  [ -n "$SCRIPT" ] && what=(-f "$SCRIPT")
  if [ "$APPS" -le 1 ]; then
    "$PGBENCH" -n "${what[@]}" -M "$proto" -T "$DURATION" -j $((c < 2 ? c : 2)) -c "$c" "$url"
    return
  fi
  dir=$(mktemp -d "$WORK/apps.XXXXXX")
  for i in $(seq "$APPS"); do
    n=$((c / APPS + (i <= c % APPS ? 1 : 0)))
    "$PGBENCH" -n "${what[@]}" -M "$proto" -T "$DURATION" -j 1 -c "$n" "$url$([[ $url == *\?* ]] && echo '&' || echo '?')application_name=app$i" >"$dir/$i" 2>&1 &
  done
  wait
  grep -hv '^tps = \|^latency average\|number of transactions actually processed\|number of failed transactions' "$dir"/* || true
  awk -v c="$c" '/^tps = / {tps += $3} /number of transactions actually processed/ {n += $6} /number of failed transactions/ {f += $5}
    END {printf "number of transactions actually processed: %d\nnumber of failed transactions: %d\nlatency average = %.3f ms\ntps = %.1f (%s processes summed)\n", n, f, (tps > 0 ? c / tps * 1000 : 0), tps, ENVIRON["APPS"]}' "$dir"/*
  rm -rf "$dir"
}
export -f pgbench_run
export PGBENCH DURATION APPS WORK SCRIPT
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
hwm_kb() { awk '/VmHWM/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
rss_kb() { awk '/VmRSS/ {print $2}' "/proc/$1/status"; }
TICK=$(getconf CLK_TCK)
# pg_ticks: CPU ticks of PostgreSQL so far: the postmaster and its
# children (each backend is a session of its own), plus what the children
# that exited meanwhile spent (the postmaster's cutime and cstime).
PG_MAIN=$(pgrep -o -s "$PG_SID" -x postgres)
pg_ticks() {
  local p t=0
  for p in "$PG_MAIN" $(pgrep -P "$PG_MAIN"); do
    t=$((t + $(awk '{print $14 + $15 + $16 + $17}' "/proc/$p/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
url_for() {
  local q=
  [ "$CLIENT_TLS" = 1 ] && [ "$1" != direct ] && q="?sslmode=require"
  echo "postgresql://postgres@127.0.0.1:${PORT[$1]}/postgres$q"
}

# settle_backends waits (20 s at most) until the server connections of a
# pooler just stopped are gone: hundreds of backends exiting would
# otherwise take CPU from the next run.
settle_backends() {
  local n
  for _ in $(seq 200); do
    n=$("$PSQL" -XAtq -h 127.0.0.1 -p "${PORT[direct]}" -U postgres -d postgres \
      -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'" 2>/dev/null || echo 0)
    [ "${n:-0}" -le "$BASE_BACKENDS" ] && return 0
    sleep 0.1
  done
}

# capture_stats PROTO CLIENTS ROUND: the events written and dropped by the
# record proxy just stopped, from its capture's trailer
# ({"trailer":true,"t":…,"events":N,"dropped":D}), and the file's size.
capture_stats() {
  local trailer ev dr
  trailer=$(tail -n 1 "$CAPTURE" 2>/dev/null || true)
  ev=$(sed -n 's/.*"trailer":true.*"events":\([0-9]*\).*/\1/p' <<<"$trailer")
  dr=$(sed -n 's/.*"trailer":true.*"dropped":\([0-9]*\).*/\1/p' <<<"$trailer")
  echo "$1 $2 $3 ${ev:-none} ${dr:-none} $(stat -c %s "$CAPTURE" 2>/dev/null || echo 0)" >>"$WORK/captures"
}

# overstayed PROTO TARGET CLIENTS ROUND: a pgbench run did not end 60 s
# after its time (a client waiting for an answer that never came): keep
# what PostgreSQL's backends were doing and, for pgpoolcheck, its
# goroutines (SIGQUIT makes it print them to its log and exit) in
# OVERSTAY_DIR, which outlives the run, then start a long-lived target
# again for the runs that follow.
OVERSTAY_DIR=${OVERSTAY_DIR:-/tmp/bench-pooler-overstays}
overstayed() {
  mkdir -p "$OVERSTAY_DIR"
  local f
  f="$OVERSTAY_DIR/$(date -u +%Y%m%dT%H%M%S)-$1-$2-$3-$4.txt"
  {
    echo "# $1 $2 clients=$3 round=$4 $(date -u +%FT%TZ)"
    "$PSQL" -h 127.0.0.1 -p "${PORT[direct]}" -U postgres -d postgres -c \
      "SELECT pid, state, backend_start, xact_start, state_change, wait_event_type, wait_event, left(query, 60) AS query FROM pg_stat_activity WHERE backend_type = 'client backend' AND state <> 'idle' ORDER BY state_change" 2>&1
  } >"$f"
  case $2 in
    pgpoolcheck*)
      if [ -n "${PID[$2]:-}" ]; then
        kill -QUIT "${PID[$2]}" 2>/dev/null || true
        sleep 2
        cp "$WORK/$2.log" "$f.goroutines" 2>/dev/null || true
      fi
      ;;
  esac
  echo "overstayed: $f" >&2
  if ! per_run "$2"; then
    stop_target "$2"
    start_target "$2"
  fi
}

ROWS="$WORK/rows"
: >"$ROWS"
: >"$WORK/errors"
ROW_FMT='%-9s %-19s %7s %5s %10s %9s %7s %7s %9s %7s %9s %8s %8s %10s\n'
printf "\n## raw rows\n\n$ROW_FMT" protocol target clients round tps lat_ms failed aborted txns cpu_s cpu_100k peak_mb pg_us_tx bench_us_tx
for proto in $PROTOCOLS; do
  for c in $CLIENTS; do
    if [ "$RECORD_WARM" = 1 ]; then
      # Started, then warmed up with an unmeasured run each: both
      # log in their server connections before the first measured run,
      # so that neither runs while the other's logins still go on.
      for t in "${REC_TARGETS[@]}"; do start_target "$t"; done
      for t in "${REC_TARGETS[@]}"; do
        timeout "$((WARMUP + 60))" "$PGBENCH" -n -S -M "$proto" -T "$WARMUP" -j $((c < 2 ? c : 2)) -c "$c" "$(url_for "$t")" >/dev/null 2>&1 || true
      done
    fi
    for r in $(seq "$ROUNDS"); do
      order=("${TARGETS[@]}")
      if [ $((r % 2)) = 0 ] && [ "${#REC_TARGETS[@]}" = 2 ]; then
        # Even rounds run record before session: neither always runs
        # right after the other.
        order=("${order[@]/pgpoolcheck-session/SWAP}")
        order=("${order[@]/pgpoolcheck-record/pgpoolcheck-session}")
        order=("${order[@]/SWAP/pgpoolcheck-record}")
      fi
      for t in "${order[@]}"; do
        # evloop cannot keep named statements across transactions.
        if [ "$t" = evloop ] && [ "$proto" = prepared ]; then continue; fi
        if per_run "$t"; then start_target "$t"; fi
        pid=${PID[$t]:-}
        if [ -n "$pid" ]; then echo 5 >"/proc/$pid/clear_refs" 2>/dev/null || true; c0=$(cpu_ticks "$pid"); fi
        spid=
        if [ "$SYSCALLS" = 1 ] && [ -n "$pid" ]; then
          perf stat -x, -e "$SYSCALL_EVENTS" -p "$pid" -o "$WORK/syscalls.stat" >/dev/null 2>&1 &
          spid=$!
        fi
        g0=$(pg_ticks)
        out=$( { TIMEFORMAT='%U %S'; time timeout "$((DURATION + 60))" bash -c 'pgbench_run "$@"' _ "$proto" "$c" "$(url_for "$t")" 2>&1; echo "pgbench-exit $?"; } 2>"$WORK/time" || true)
        if grep -q '^pgbench-exit 124$' <<<"$out"; then
          overstayed "$proto" "$t" "$c" "$r"
          out="$out"$'\n'"ERROR: pgbench overstayed by 60 s: killed (diagnostics in $OVERSTAY_DIR)"
        fi
        g1=$(pg_ticks)
        if [ -n "$spid" ]; then
          kill -INT "$spid" 2>/dev/null || true
          wait "$spid" 2>/dev/null || true
        fi
        tps=$(awk '/^tps = / {printf "%.1f", $3; exit}' <<<"$out")
        lat=$(awk '/^latency average/ {print $4; exit}' <<<"$out")
        txns=$(awk '/number of transactions actually processed/ {print $6; exit}' <<<"$out")
        failed=$(awk '/number of failed transactions/ {print $5; exit}' <<<"$out")
        aborted=$(grep -c 'client [0-9]* .*aborted' <<<"$out" || true)
        cpu=- cpu100k=- peak=-
        if [ -n "$pid" ]; then
          cpu=$(awk -v a="$c0" -v b="$(cpu_ticks "$pid")" -v t="$TICK" 'BEGIN {printf "%.2f", (b - a) / t}')
          [ "${txns:-0}" -gt 0 ] && cpu100k=$(awk -v s="$cpu" -v n="$txns" 'BEGIN {printf "%.2f", s / (n * 1e-5)}')
          peak=$(awk -v k="$(hwm_kb "$pid")" 'BEGIN {printf "%.1f", k / 1024}')
        fi
        pgus=- benchus=-
        if [ "${txns:-0}" -gt 0 ]; then
          pgus=$(awk -v d=$((g1 - g0)) -v t="$TICK" -v n="$txns" 'BEGIN {printf "%.1f", d / t * 1e6 / n}')
          benchus=$(awk -v n="$txns" '{printf "%.1f", ($1 + $2) * 1e6 / n; exit}' "$WORK/time")
        fi
        if [ -n "$spid" ] && [ "${txns:-0}" -gt 0 ]; then
          # all, reads, writes, epoll waits, epoll_ctl, futex per transaction.
          awk -F, -v n="$txns" -v row="$proto $t $c $r" '
            $3 ~ /raw_syscalls/ { all = $1 } $3 ~ /enter_(read|recvfrom)$/ { rd += $1 }
            $3 ~ /enter_(write|sendto)$/ { wr += $1 } $3 ~ /enter_epoll_p?wait$/ { ep += $1 }
            $3 ~ /enter_epoll_ctl$/ { ctl = $1 } $3 ~ /enter_futex$/ { fx = $1 }
            END { printf "%s %.2f %.2f %.2f %.2f %.2f %.2f\n", row, all / n, rd / n, wr / n, ep / n, ctl / n, fx / n }' "$WORK/syscalls.stat" >>"$WORK/syscalls"
        fi
        [ -z "$tps" ] && tps=ERR lat=ERR
        if per_run "$t"; then
          stop_target "$t"
          settle_backends
          PID[$t]=
          if [ "$t" = pgpoolcheck-record ]; then capture_stats "$proto" "$c" "$r"; fi
        fi
        printf "$ROW_FMT" "$proto" "$t" "$c" "$r" "$tps" "$lat" "${failed:--}" "$aborted" "${txns:-0}" "$cpu" "$cpu100k" "$peak" "$pgus" "${benchus:--}" | tee -a "$ROWS"
        if [ "$tps" = ERR ] || [ "$aborted" != 0 ] || [ "${failed:-0}" != 0 ]; then
          { echo "$proto $t c=$c round $r:"
            grep -i -m2 'error\|fatal\|could not' <<<"$out" ||
              if [ "${txns:-0}" = 0 ]; then echo "no transaction in $DURATION s (clients still connecting when it ended?)"
              else tail -1 <<<"$out"; fi
          } | sed '2,$s/^/    /' >>"$WORK/errors"
        fi
      done
    done
    if [ "$RECORD_WARM" = 1 ]; then
      for t in "${REC_TARGETS[@]}"; do stop_target "$t"; PID[$t]=; done
      settle_backends
      capture_stats "$proto" "$c" all
    fi
  done
done
if [ -s "$WORK/errors" ]; then printf '\n## first errors of failed runs\n\n'; cat "$WORK/errors"; fi

# --- summary: markdown, one table per protocol ---------------------------------------
printf '\n## summary (markdown; mean of %s rounds of %s s, pool %s)\n' "$ROUNDS" "$DURATION" "$POOL_SIZE"
for proto in $PROTOCOLS; do
  awk -v proto="$proto" -v targets="${TARGETS[*]}" -v clients="$CLIENTS" -v rounds="$ROUNDS" '
    function sp(x,   s, out) {  # integer with a space every three digits
      s = sprintf("%.0f", x); out = ""
      while (length(s) > 3) { out = " " substr(s, length(s) - 2) out; s = substr(s, 1, length(s) - 3) }
      return s out
    }
    function cell(list, f,   i, k, out) {
      out = ""
      for (i = 1; i <= list[0]; i++) { k = c SUBSEP list[i]; out = out (i > 1 ? " / " : "") f[k] }
      return out
    }
    function cell0(list,   i, out) {
      for (i = 1; i <= list[0]; i++) out = out (i > 1 ? " / " : "") list[i]
      return out
    }
    $1 == proto {
      k = $3 SUBSEP $2; n[k]++
      # A run counts for TPS, latency and CPU only if pgbench finished it
      # with no client aborted (pgbench still prints a TPS for the rest).
      if ($5 != "ERR" && $8 == 0) {
        ok[k]++; tps[k] += $5; lat[k] += $6
        if ($11 != "-") { ncpu[k]++; cpu[k] += $11 }
      }
      if ($7 != "-") fail[k] += $7
      ab[k] += $8
      if ($12 != "-" && $12 + 0 > peak[k] + 0) peak[k] = $12
    }
    END {
      nt = split(targets, t, " "); np = 0; nb = 0
      all[0] = nt; for (i = 1; i <= nt; i++) all[i] = t[i]
      for (i = 2; i <= nt; i++) { pool[++np] = t[i]; if (t[i] ~ /^pgbouncer/) bnc[++nb] = t[i] }
      pool[0] = np
      printf "\n### pgbench -S -M %s\n\nCells: %s; CPU and RSS: the poolers only.\n", proto, cell0(all)
      printf "TPS, latency and CPU are means over the rounds that ran with no aborted client\n"
      printf "(\"(1 of 2)\": one such round; \"failed\": none).\n\n"
      printf "| clients | TPS | "
      for (i = 1; i <= nb; i++) printf "pgpoolcheck ÷ %s | ", bnc[i]
      printf "latency ms | failed tx | aborted clients | pooler CPU s per 100k tx | peak RSS MB |\n"
      printf "|--------:|-----|"
      for (i = 1; i <= nb; i++) printf "------:|"
      printf "-----|-----|-----|-----|-----|\n"
      nc = split(clients, cl, " ")
      for (j = 1; j <= nc; j++) {
        c = cl[j]
        for (i = 1; i <= nt; i++) {
          k = c SUBSEP t[i]
          T[k] = !n[k] ? "–" : ok[k] ? sp(tps[k] / ok[k]) (ok[k] < n[k] ? " (" ok[k] " of " n[k] ")" : "") : "failed"
          L[k] = ok[k] ? sprintf("%.3f", lat[k] / ok[k]) : "–"
          F[k] = fail[k] + 0; A[k] = ab[k] + 0
          C[k] = ncpu[k] ? sprintf("%.2f", cpu[k] / ncpu[k]) : "–"
          P[k] = peak[k] != "" ? peak[k] : "–"
        }
        printf "| %s | %s | ", c, cell(all, T)
        for (i = 1; i <= nb; i++) {
          a = c SUBSEP "pgpoolcheck"; b = c SUBSEP bnc[i]
          printf "%s | ", (ok[a] && ok[b] && tps[b] > 0) ? sprintf("%.2f", (tps[a] / ok[a]) / (tps[b] / ok[b])) : "–"
        }
        printf "%s | %s | %s | %s | %s |\n", cell(all, L), cell(all, F), cell(all, A), cell(pool, C), cell(pool, P)
      }
    }' "$ROWS"
done

# --- where the CPU goes: pooler, PostgreSQL, pgbench ---------------------------------------
printf '\n### CPU per transaction: pooler, PostgreSQL and pgbench (µs, mean over the rounds with no aborted client)\n\n'
printf 'On 2 shared cores the TPS follows the sum: a pooler that makes PostgreSQL or pgbench\n'
printf 'work harder per transaction costs TPS as surely as its own CPU does. Direct runs start\n'
printf 'and end a backend per client, so their PostgreSQL figure is the least exact.\n\n'
printf '| protocol | clients | target | TPS | pooler | PostgreSQL | pgbench | sum |\n'
printf '|----------|--------:|--------|----:|-------:|-----------:|--------:|----:|\n'
awk -v protocols="$PROTOCOLS" -v clients="$CLIENTS" -v targets="${TARGETS[*]}" '
  $5 != "ERR" && $8 == 0 && $13 != "-" {
    k = $1 SUBSEP $3 SUBSEP $2; n[k]++; tps[k] += $5; pg[k] += $13; b[k] += $14
    if ($11 != "-") { nc[k]++; cpu[k] += $11 * 10 }
  }
  END {
    np = split(protocols, pr, " "); ncl = split(clients, cl, " "); nt = split(targets, t, " ")
    for (i = 1; i <= np; i++) for (j = 1; j <= ncl; j++) for (x = 1; x <= nt; x++) {
      k = pr[i] SUBSEP cl[j] SUBSEP t[x]
      if (!n[k]) continue
      pc = nc[k] ? cpu[k] / nc[k] : 0
      printf "| %s | %s | %s | %.0f | %s | %.1f | %.1f | %.1f |\n", pr[i], cl[j], t[x], tps[k] / n[k],
        nc[k] ? sprintf("%.1f", pc) : "–", pg[k] / n[k], b[k] / n[k], pc + pg[k] / n[k] + b[k] / n[k]
    }
  }' "$ROWS"

# --- system calls per transaction -------------------------------------------------------
if [ "$SYSCALLS" = 1 ] && [ -s "$WORK/syscalls" ]; then
  printf '\n### system calls per transaction (perf stat on the pooler, mean over the rounds)\n\n'
  printf '| protocol | clients | target | all | read, recvfrom | write, sendto | epoll wait | epoll_ctl | futex |\n'
  printf '|----------|--------:|--------|----:|--------------:|--------------:|-----------:|----------:|------:|\n'
  awk '{ k = $1 " | " $3 " | " $2; if (!(k in n)) order[++m] = k; n[k]++; a[k] += $5; r[k] += $6; w[k] += $7; e[k] += $8; c[k] += $9; f[k] += $10 }
    END { for (i = 1; i <= m; i++) { k = order[i]; printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", k, a[k] / n[k], r[k] / n[k], w[k] / n[k], e[k] / n[k], c[k] / n[k], f[k] / n[k] } }' "$WORK/syscalls"
fi

# --- record mode: record TPS ÷ session TPS ---------------------------------------------
if [ "$RECORD" = 1 ]; then
  printf '\n### record mode against session mode (target: record ≥ 0.95 × session)\n\n'
  printf 'TPS: mean over the rounds with no aborted client; per round: median of the rounds'"'"'\n'
  printf 'record ÷ session ratios (the two runs of one round are back to back); CPU: the proxy'"'"'s\n'
  printf 'CPU µs per transaction, mean; capture: events written and dropped (from the trailer;\n'
  printf '"none": no trailer) and size, per round. "per round, mean [95%% CI]": the mean of the\n'
  printf 'per-round ratios with its 95%% confidence interval (Student t over the rounds): with a\n'
  printf 'round-to-round spread of a few percent, a cell of 4 rounds can land below 0.95 by chance\n'
  printf 'when the true ratio is 0.97; the interval says how far the cell can be trusted.\n\n'
  printf '| protocol | clients | session TPS | record TPS | record ÷ session | per round (median) | per round, mean [95%% CI] | CPU µs/tx session / record | capture events / dropped / MB |\n'
  printf '|----------|--------:|------------:|-----------:|-----------------:|-------------------:|-------------------------:|---------------------------:|-------------------------------|\n'
  touch "$WORK/captures"
  awk -v protocols="$PROTOCOLS" -v clients="$CLIENTS" '
    function median(list,   n, v, i, j, t) {
      n = split(list, v, " ")
      for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j] + 0 < v[j-1] + 0; j--) { t = v[j]; v[j] = v[j-1]; v[j-1] = t }
      return n == 0 ? "" : (n % 2 ? v[(n+1)/2] : (v[n/2] + v[n/2+1]) / 2)
    }
    # tq: the 0.975 quantile of Student t with df degrees of freedom.
    function tq(df,   q) {
      split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086", q, " ")
      return df <= 20 ? q[df] : (df <= 30 ? 2.05 : 1.98)
    }
    # meanci: "mean [lo, hi]" of the numbers in list (mean alone for one).
    function meanci(list,   n, v, i, m, ss, h) {
      n = split(list, v, " ")
      if (n == 0) return "–"
      for (i = 1; i <= n; i++) m += v[i]
      m /= n
      if (n == 1) return sprintf("%.3f", m)
      for (i = 1; i <= n; i++) ss += (v[i] - m) ^ 2
      h = tq(n - 1) * sqrt(ss / (n - 1) / n)
      return sprintf("%.3f [%.3f, %.3f]", m, m - h, m + h)
    }
    FILENAME == ARGV[1] {
      if ($2 != "pgpoolcheck-session" && $2 != "pgpoolcheck-record") next
      k = $1 SUBSEP $3 SUBSEP $2
      if ($5 != "ERR" && $8 == 0) {
        ok[k]++; tps[k] += $5; cpu[k] += $11 * 10
        round[$1 SUBSEP $3 SUBSEP $4 SUBSEP $2] = $5
      }
      next
    }
    {
      k = $1 SUBSEP $2
      cap[k] = cap[k] (cap[k] != "" ? "; " : "") $4 " / " $5 " / " sprintf("%.1f", $6 / 1048576)
    }
    END {
      np = split(protocols, pr, " "); nc = split(clients, cl, " ")
      for (i = 1; i <= np; i++) for (j = 1; j <= nc; j++) {
        s = pr[i] SUBSEP cl[j] SUBSEP "pgpoolcheck-session"; r = pr[i] SUBSEP cl[j] SUBSEP "pgpoolcheck-record"
        st = ok[s] ? tps[s] / ok[s] : 0; rt = ok[r] ? tps[r] / ok[r] : 0
        ratios = ""
        for (n = 1; n <= 100; n++) {
          a = round[pr[i] SUBSEP cl[j] SUBSEP n SUBSEP "pgpoolcheck-session"]
          b = round[pr[i] SUBSEP cl[j] SUBSEP n SUBSEP "pgpoolcheck-record"]
          if (a > 0 && b > 0) ratios = ratios " " b / a
        }
        m = median(ratios)
        all = all ratios
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", pr[i], cl[j],
          ok[s] ? sprintf("%.0f", st) : "failed", ok[r] ? sprintf("%.0f", rt) : "failed",
          (st > 0 && rt > 0) ? sprintf("%.3f", rt / st) : "–", m != "" ? sprintf("%.3f", m) : "–", meanci(ratios),
          (ok[s] && ok[r]) ? sprintf("%.1f / %.1f", cpu[s] / ok[s], cpu[r] / ok[r]) : "–",
          cap[pr[i] SUBSEP cl[j]]
      }
      printf "\nEvery round of every cell: record ÷ session %s, median %.3f.\n", meanci(all), median(all)
    }' "$ROWS" "$WORK/captures"
  printf '\nThe same rounds with their geometric means (scripts/record-ratio.sh, which also pools\n'
  printf 'saved runs): the plain mean of ratios reads about half a percent high at this spread.\n\n'
  scripts/record-ratio.sh "$ROWS" || true
fi

# --- idle clients, on freshly started poolers -------------------------------------------
if [ "$IDLE" -gt 0 ]; then
  IDLE_ROWS="$WORK/idle"
  : >"$IDLE_ROWS"
  printf '\n## idle clients (each pooler restarted first)\n\n%-18s %8s %12s %12s %10s\n' target idle rss_fresh_kb rss_idle_kb bytes_per
  for t in "${POOLERS[@]}"; do
    stop_target "$t"
    start_target "$t" || continue
    sleep 1
    before=$(rss_kb "${PID[$t]}")
    "$WORK/idleclients" -n "$IDLE" -url "$(url_for "$t")" >"$WORK/idle.out" 2>"$WORK/idle.err" &
    ic=$!
    for _ in $(seq 1500); do grep -q ready "$WORK/idle.out" 2>/dev/null && break; alive "$ic" || break; sleep 0.2; done
    sleep 10  # the idle clients settle before the RSS is read
    after=$(rss_kb "${PID[$t]}")
    ready=$(awk '/ready/ {print $2}' "$WORK/idle.out")
    kill -TERM "$ic" 2>/dev/null || true  # background jobs ignore SIGINT
    wait "$ic" 2>/dev/null || true
    per=$(awk -v a="$before" -v b="$after" -v n="${ready:-0}" 'BEGIN {if (n > 0) printf "%.0f", (b - a) * 1024 / n; else print "-"}')
    printf '%-18s %8s %12s %12s %10s\n' "$t" "${ready:-0}" "$before" "$after" "$per" | tee -a "$IDLE_ROWS"
    if [ -s "$WORK/idle.err" ]; then sed 's/^/    /' "$WORK/idle.err"; fi
  done
  printf '\n| pooler | idle clients | RSS fresh | RSS with idle clients | per idle client |\n'
  printf '|--------|-------------:|----------:|----------------------:|----------------:|\n'
  awk '{printf "| %s | %s | %s kB | %s kB | %s |\n", $1, $2, $3, $4, ($5 == "-" ? "–" : sprintf("%.2f KiB", $5 / 1024))}' "$IDLE_ROWS"
fi

echo
for t in "${POOLERS[@]}" "${PER_RUN[@]}"; do
  log="$WORK/$t.log"
  [ -s "$log" ] || continue
  echo "# $t log: $(grep -c -i 'warn\|error\|fatal' "$log" || true) warning/error lines, last 3:"
  tail -3 "$log" | cut -c1-200 | sed 's/^/    /'
done
