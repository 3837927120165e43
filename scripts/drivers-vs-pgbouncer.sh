#!/usr/bin/env bash
# drivers-vs-pgbouncer.sh — internal/drivers' TestDrivers variants (real
# psycopg2, psycopg 3, asyncpg, node-postgres and pgjdbc programs) through
# pgpoolcheck's pooler and through PgBouncer in transaction mode, on this
# machine. Not a test: it prints which variants pass where.
#
# pgpoolcheck: the test as CI runs it (an in-process proxy in front of
# pgtest's server, started afresh for each variant), with DRIVERS_SUMMARY=1.
# PgBouncer: the script starts a PostgreSQL of its own and, for each
# PgBouncer binary and each ignore_startup_parameters value, runs every
# variant alone (one test process each) through a PgBouncer started for
# that variant and stopped after it, with DRIVERS_EXTERNAL_URL (the
# PgBouncer) and DRIVERS_EXTERNAL_SERVER (the PostgreSQL) set: see the
# package comment of internal/drivers/drivers_test.go. A variant that
# fails is run again by the test directly against PostgreSQL; the table
# says whether it passes there (direct-pass: the failure is the pooler's).
#
# PgBouncer's configuration: pool_mode = transaction, default_pool_size =
# POOL_SIZE, max_prepared_statements = MAX_PREPARED (only for PgBouncer >=
# 1.21, which has it), query_wait_timeout = 15 (as the test's in-process
# proxy), max_client_conn = 200, auth_type = trust, the server over its
# unix socket, and ignore_startup_parameters as the target names it.
#
# Usage: [VAR=value ...] scripts/drivers-vs-pgbouncer.sh
# Environment (default):
#   PGBOUNCER_BIN ("/tmp/pgbouncer-1.25/bin/pgbouncer /usr/sbin/pgbouncer")
#                  PgBouncer binaries, space-separated ("": none)
#   IGNORE_PARAMS ("none extra_float_digits extra_float_digits,options")
#                  ignore_startup_parameters values tried with each binary,
#                  space-separated; none: the setting is left out
#   PGPOOLCHECK (1)  0: skip the pgpoolcheck run
#   VARIANTS (every variant of the test)  e.g. "jdbc/default asyncpg/pool"
#   POOL_SIZE (2)   MAX_PREPARED (200)
#   DRIVERS_CLIENTS, DRIVERS_ROUNDS, DRIVERS_PYTHON, PGJDBC_JAR: passed to the test
#   BASE_PORT (27460)  PostgreSQL on BASE_PORT, PgBouncer on BASE_PORT+1
#                  (keep within 21000–29999)
#   PGBIN (/usr/lib/postgresql/<newest>/bin)  PostgreSQL server binaries
#   LOG_DIR (unset)  keep every test's -v output and PgBouncer's logs there
# PostgreSQL and PgBouncer run in their own sessions (setsid) on those
# fixed ports and are stopped on exit; as root they run as the postgres OS
# user.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
. scripts/servers.sh

PGBOUNCER_BIN=${PGBOUNCER_BIN-"/tmp/pgbouncer-1.25/bin/pgbouncer /usr/sbin/pgbouncer"}
IGNORE_PARAMS=${IGNORE_PARAMS-"none extra_float_digits extra_float_digits,options"}
PGPOOLCHECK=${PGPOOLCHECK:-1}
POOL_SIZE=${POOL_SIZE:-2}
MAX_PREPARED=${MAX_PREPARED:-200}
BASE_PORT=${BASE_PORT:-27460}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PG_PORT=$BASE_PORT
BOUNCER_PORT=$((BASE_PORT + 1))
ALL_VARIANTS=$(sed -n 's/^[[:space:]]*{name: "\([^"]*\)".*/\1/p' internal/drivers/drivers_test.go)
VARIANTS=${VARIANTS:-$ALL_VARIANTS}
unset DRIVERS_EXTERNAL_URL DRIVERS_EXTERNAL_SERVER

WORK=$(mktemp -d /tmp/drivers-vs-pgbouncer-XXXXXX)
RUNAS=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$WORK"
  RUNAS=(runuser -u postgres --)
fi
LOGS=${LOG_DIR:-$WORK/logs}
mkdir -p "$LOGS"

SIDS=()  # every session started, for cleanup
cleanup() {
  trap - EXIT
  local s
  for s in "${SIDS[@]}"; do stop_session "$s" TERM; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bouncer_version() { "$1" --version 2>/dev/null | awk 'NR == 1 {print $2}'; }
version_ge() { [ "$(printf '%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }

for p in "$PG_PORT" "$BOUNCER_PORT"; do
  port_free "$p" || { echo "port $p is in use: set BASE_PORT" >&2; exit 1; }
done

echo "# building the test binary of internal/drivers ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- internal/drivers || echo ', with uncommitted changes'))"
go test -c -o "$WORK/drivers.test" ./internal/drivers

# run_test LOG RUN [VAR=value ...]: the test binary in internal/drivers
# (its testdata), -v, DRIVERS_SUMMARY=1; the output goes to LOG.
run_test() {
  local log=$1 run=$2
  shift 2
  (cd internal/drivers && env DRIVERS_SUMMARY=1 "$@" "$WORK/drivers.test" \
    -test.run "$run" -test.count=1 -test.v -test.timeout 30m) >"$log" 2>&1 || true
}

# results TARGET LOG POOLERLOG VARIANT...: one row per variant into
# $WORK/results (target, variant, result, direct verdict, first error, the
# pooler's first ERROR or WARNING line), from the DRIVERS-RESULT lines of
# LOG, else its --- SKIP/FAIL lines, and from POOLERLOG ("": none).
results() {
  local target=$1 log=$2 plog=$3 v line pline=
  shift 3
  if [ -n "$plog" ]; then
    pline=$(grep -m1 -E '^[0-9-]+ [0-9:.]+ [A-Z]+ \[[0-9]+\] (ERROR|WARNING) ' "$plog" | cut -d' ' -f5- | tr '\t' ' ' || true)
  fi
  for v in "$@"; do
    line=$(awk -F'\t' -v v="$v" '$1 ~ /DRIVERS-RESULT$/ && $2 == v {print $3 "\t" $4 "\t" $5; exit}' "$log")
    if [ -z "$line" ]; then
      if grep -q -- "--- SKIP: TestDrivers/$v " "$log"; then
        line="SKIP	-	$(grep -A1 -- "--- SKIP: TestDrivers/$v " "$log" | tail -1 | sed 's/^[[:space:]]*//')"
      elif grep -q -- "--- PASS: TestDrivers/$v " "$log"; then
        line="PASS	-	"
      else
        line="FAIL	-	no result line: $(grep -m1 -E 'panic:|FAIL|Fatal' "$log" || echo "see the log")"
      fi
    fi
    printf '%s\t%s\t%s\t%s\n' "$target" "$v" "$line" "$pline" >>"$WORK/results"
  done
}
: >"$WORK/results"
TARGETS=()

# --- pgpoolcheck --------------------------------------------------------------
if [ "$PGPOOLCHECK" = 1 ]; then
  echo "# pgpoolcheck: the in-process proxy (transaction mode, pool of 2, the default classifier and policy) in front of pgtest's server"
  run_test "$LOGS/pgpoolcheck.log" '^TestDrivers$'
  results pgpoolcheck "$LOGS/pgpoolcheck.log" "" $VARIANTS
  TARGETS+=(pgpoolcheck)
fi

# --- PostgreSQL ---------------------------------------------------------------
if [ -n "$PGBOUNCER_BIN" ]; then
  echo "# PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on port $PG_PORT"
  "${RUNAS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
  setsid "${RUNAS[@]}" "$PGBIN/postgres" -D "$WORK/data" -k "$WORK" -p "$PG_PORT" \
    -c listen_addresses=127.0.0.1 -c max_connections=100 -c fsync=off -c synchronous_commit=off \
    >"$WORK/postgres.log" 2>&1 &
  SIDS+=("$!")
  wait_ready "$PG_PORT" || { echo "PostgreSQL did not start:" >&2; tail -5 "$WORK/postgres.log" >&2; exit 1; }
  "$PGBIN/psql" -XAtq -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c \
    'CREATE TABLE IF NOT EXISTS driver_rows (variant text NOT NULL, client int NOT NULL, round int NOT NULL)'
fi
SERVER_URL="postgres://postgres@127.0.0.1:$PG_PORT/postgres?sslmode=disable"
BOUNCER_URL="postgres://postgres@127.0.0.1:$BOUNCER_PORT/postgres?sslmode=disable"
echo '"postgres" ""' >"$WORK/userlist.txt"

# start_pgbouncer BIN IGNORE LOG: PgBouncer on BOUNCER_PORT; its session in
# BOUNCER_SID, 1 if it does not start.
start_pgbouncer() {
  local bin=$1 ignore=$2 log=$3 ini="$WORK/pgbouncer.ini"
  cat >"$ini" <<INI
[databases]
postgres = host=$WORK port=$PG_PORT dbname=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $BOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $WORK/userlist.txt
pool_mode = transaction
default_pool_size = $POOL_SIZE
max_client_conn = 200
query_wait_timeout = 15
logfile = $log
INI
  if version_ge "$(bouncer_version "$bin")" 1.21; then echo "max_prepared_statements = $MAX_PREPARED" >>"$ini"; fi
  if [ "$ignore" != none ]; then echo "ignore_startup_parameters = $ignore" >>"$ini"; fi
  [ "$(id -u)" = 0 ] && chown postgres: "$ini" "$WORK/userlist.txt" && touch "$log" && chown postgres: "$log"
  setsid "${RUNAS[@]}" "$bin" "$ini" >>"$log.out" 2>&1 &
  BOUNCER_SID=$!
  SIDS+=("$!")
  if ! wait_ready "$BOUNCER_PORT"; then
    echo "# PgBouncer $bin did not start:"; tail -3 "$log.out" "$log" | sed 's/^/    /'
    stop_session "$BOUNCER_SID" TERM
    return 1
  fi
}

# --- PgBouncer ----------------------------------------------------------------
for bin in $PGBOUNCER_BIN; do
  ver=$(bouncer_version "$bin" || true)
  if [ -z "$ver" ]; then echo "# PgBouncer $bin: not runnable, skipped"; continue; fi
  for ignore in $IGNORE_PARAMS; do
    target="pgbouncer-$ver/isp=$ignore"
    tag="pgbouncer-$ver-isp-${ignore//,/+}"
    mps="max_prepared_statements = $MAX_PREPARED"
    version_ge "$ver" 1.21 || mps="no max_prepared_statements (< 1.21)"
    isp="ignore_startup_parameters = $ignore"
    [ "$ignore" = none ] && isp="no ignore_startup_parameters"
    echo "# $target ($bin): pool_mode = transaction, default_pool_size = $POOL_SIZE, $mps, $isp; one PgBouncer per variant"
    TARGETS+=("$target")
    for v in $VARIANTS; do
      vtag=${v//\//-}
      if ! start_pgbouncer "$bin" "$ignore" "$LOGS/$tag-$vtag.pgbouncer.log"; then
        printf '%s\t%s\tFAIL\t-\tPgBouncer did not start\n' "$target" "$v" >>"$WORK/results"
        continue
      fi
      run_test "$LOGS/$tag-$vtag.log" "^TestDrivers\$/^${v%%/*}\$/^${v#*/}\$" \
        DRIVERS_EXTERNAL_URL="$BOUNCER_URL" DRIVERS_EXTERNAL_SERVER="$SERVER_URL"
      stop_session "$BOUNCER_SID" TERM
      results "$target" "$LOGS/$tag-$vtag.log" "$LOGS/$tag-$vtag.pgbouncer.log" "$v"
      printf '  %-30s %s\n' "$v" "$(awk -F'\t' -v t="$target" -v v="$v" '$1 == t && $2 == v {print $3; exit}' "$WORK/results")"
    done
  done
done

# --- summary ------------------------------------------------------------------
echo
echo "# clients ${DRIVERS_CLIENTS:-20} × rounds ${DRIVERS_ROUNDS:-100} per variant; pool of $POOL_SIZE"
for t in "${TARGETS[@]}"; do
  echo
  echo "## $t: $(awk -F'\t' -v t="$t" '$1 == t && $3 == "PASS" {n++} $1 == t {all++} END {printf "%d/%d pass", n, all}' "$WORK/results")"
  echo
  echo "| variant | result | direct run | first error | the pooler's first ERROR/WARNING |"
  echo "|---|---|---|---|---|"
  awk -F'\t' -v t="$t" 'function cell(s) {gsub(/\|/, "\\|", s); if (length(s) > 300) s = substr(s, 1, 300) "…"; return s}
    $1 == t {printf "| %s | %s | %s | %s | %s |\n", $2, $3, $4, cell($5), cell($6)}' "$WORK/results"
done
echo
echo "## overview"
echo
header="| variant |"
sep="|---|"
for t in "${TARGETS[@]}"; do header="$header $t |"; sep="$sep---|"; done
echo "$header"
echo "$sep"
for v in $VARIANTS; do
  row="| $v |"
  for t in "${TARGETS[@]}"; do
    row="$row $(awk -F'\t' -v t="$t" -v v="$v" '$1 == t && $2 == v {print $3; exit}' "$WORK/results") |"
  done
  echo "$row"
done
row="| passed |"
for t in "${TARGETS[@]}"; do
  row="$row $(awk -F'\t' -v t="$t" '$1 == t && $3 == "PASS" {n++} $1 == t {all++} END {printf "%d/%d", n, all}' "$WORK/results") |"
done
echo "$row"
[ -n "${LOG_DIR:-}" ] && echo && echo "# logs in $LOG_DIR"
exit 0
