#!/usr/bin/env bash
# bench-routines.sh — what verifying a server after a call of a user
# routine costs the pooler: pgbench through pgpoolcheck built from the
# working tree and, side by side, from BASE_REV (a revision without the
# verification, to compare), interleaved, on this machine. Not a test: it
# prints figures.
#
# Workloads (pgbench -n -M simple, transaction mode, the default
# --on-session-state preserve):
#   select-only   pgbench -S: no user routine, nothing to verify
#   plain-fn      SELECT plain_add(:aid, 1), a plain SQL function, in every
#                 transaction: the pooler learns that it changes nothing at its
#                 first call, and verifies no other call
#   opaque-fn     SELECT opaque_add(:aid, 1), a PL/pgSQL function whose body runs
#                 dynamic SQL (EXECUTE): every call is verified, and its server
#                 gets RESET ALL, before the server goes back
#   c-fn          SELECT similarity(:aid::text, '1'), a C function of pg_trgm:
#                 opaque, verified at every call like opaque-fn
#   c-fn-trusted  the same with --trusted-routines extension:pg_trgm (the working
#                 tree only): learned once, then not verified
# For each it prints TPS, mean latency, failed transactions, the CPU
# microseconds per transaction of the pooler and of PostgreSQL, and the
# transactions PostgreSQL committed per pgbench transaction (pg_stat_database:
# 1 plus the pooler's own queries, such as a verification).
#
# Usage: [VAR=value ...] scripts/bench-routines.sh
# Environment (default):
#   BASE_REV ("")         also build and run this git revision ("": only the working tree)
#   CLIENTS (50)          pgbench clients       DURATION (10) seconds per run
#   ROUNDS (2)            interleaved rounds    POOL_SIZE (20) servers per pool
#   SCALE (10)            pgbench scale         BASE_PORT (24700): PostgreSQL, then the pooler
#   PGBIN (/usr/lib/postgresql/<newest>/bin)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
. scripts/servers.sh

BASE_REV=${BASE_REV:-}
CLIENTS=${CLIENTS:-50}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-2}
POOL_SIZE=${POOL_SIZE:-20}
SCALE=${SCALE:-10}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PGBENCH=$(command -v pgbench || echo "$PGBIN/pgbench")
BASE_PORT=${BASE_PORT:-24700}
PG_PORT=$BASE_PORT
POOL_PORT=$((BASE_PORT + 1))

bench_setup bench-routines
bench_cleanup() { [ -z "$BASE_REV" ] || git worktree remove --force "$WORK/base" >/dev/null 2>&1 || true; }

echo "# building pgpoolcheck"
go build -o "$WORK/ppc-tree" ./cmd/pgpoolcheck
TARGETS="ppc-tree"
if [ -n "$BASE_REV" ]; then
  git worktree add --detach "$WORK/base" "$BASE_REV" >/dev/null 2>&1
  (cd "$WORK/base" && go build -o "$WORK/ppc-base" ./cmd/pgpoolcheck)
  TARGETS="ppc-base ppc-tree"
fi
"${RUNAS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
setsid "${RUNAS[@]}" "$PGBIN/postgres" -D "$WORK/data" -k "$WORK" -p "$PG_PORT" -c listen_addresses=127.0.0.1 \
  -c max_connections=$((POOL_SIZE + 30)) -c shared_buffers=256MB -c fsync=off -c synchronous_commit=off \
  >"$WORK/postgres.log" 2>&1 &
SIDS+=("$!")
wait_ready "$PG_PORT"
PG_PID=$(head -1 "$WORK/data/postmaster.pid")
"$PGBENCH" -i -q -s "$SCALE" -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres >/dev/null 2>&1
"$PGBIN/psql" -qX -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres \
  -c "CREATE EXTENSION pg_trgm" \
  -c "CREATE FUNCTION plain_add(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b'" \
  -c "CREATE FUNCTION opaque_add(a int, b int) RETURNS int LANGUAGE plpgsql AS \$\$DECLARE r int; BEGIN EXECUTE 'SELECT \$1 + \$2' INTO r USING a, b; RETURN r; END\$\$"
for f in plain opaque; do
  printf '\\set aid random(1, 100000 * :scale)\nSELECT %s_add(:aid, 1);\n' "$f" >"$WORK/$f-fn.sql"
done
printf '\\set aid random(1, 100000 * :scale)\nSELECT similarity(:aid::text, %s);\n' "'1'" >"$WORK/c-fn.sql"
cp "$WORK/c-fn.sql" "$WORK/c-fn-trusted.sql"

echo "# $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}')"
echo "# pgbench -n -M simple -c $CLIENTS -j 2 -T $DURATION, pool $POOL_SIZE, $ROUNDS rounds${BASE_REV:+, base $BASE_REV}"
printf '%-12s %-9s %5s %9s %9s %6s %8s %8s %8s\n' workload target round tps lat_ms failed pool_us pg_us pg_xact
# commits: transactions committed in the database so far (the statistics
# are flushed when a backend's transaction ends, at the latest after 1 s).
commits() {
  "$PGBIN/psql" -qXAt -h 127.0.0.1 -p "$PG_PORT" -U postgres postgres \
    -c "SELECT pg_stat_force_next_flush(); SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'" | tail -1
}
for r in $(seq "$ROUNDS"); do
  for w in select-only plain-fn opaque-fn c-fn c-fn-trusted; do
    for t in $TARGETS; do
      extra=()
      if [ "$w" = c-fn-trusted ]; then
        [ "$t" = ppc-tree ] || continue
        extra=(--trusted-routines extension:pg_trgm)
      fi
      setsid "$WORK/$t" proxy --listen "127.0.0.1:$POOL_PORT" --upstream "postgres://postgres@/postgres?host=$WORK&port=$PG_PORT" \
        --pool-size "$POOL_SIZE" --log-level warn "${extra[@]}" >>"$WORK/$t.log" 2>&1 &
      sid=$!
      SIDS+=("$sid")
      wait_ready "$POOL_PORT"
      pid=$(pgrep -o -s "$sid" -x "$t" || echo "$sid")
      args=(-S)
      [ "$w" != select-only ] && args=(-f "$WORK/$w.sql")
      x0=$(commits)
      c0=$(cpu_of "$pid") g0=$(pg_cpu)
      out=$("$PGBENCH" -n -M simple "${args[@]}" -c "$CLIENTS" -j 2 -T "$DURATION" -h 127.0.0.1 -p "$POOL_PORT" -U postgres postgres 2>&1 || true)
      c1=$(cpu_of "$pid") g1=$(pg_cpu)
      stop_session "$sid"
      sleep 1.2
      x1=$(commits)
      tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' <<<"$out" | head -1)
      lat=$(sed -n 's/^latency average = \([0-9.]*\).*/\1/p' <<<"$out")
      failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' <<<"$out")
      xacts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' <<<"$out")
      if [ -z "$tps" ] || [ -z "$xacts" ] || [ "$xacts" = 0 ]; then
        printf '%-12s %-9s %5s   (pgbench failed: %s)\n' "$w" "$t" "$r" "$(tail -1 <<<"$out")"
        continue
      fi
      printf '%-12s %-9s %5s %9.0f %9.2f %6s %8.1f %8.1f %8.2f\n' "$w" "$t" "$r" "$tps" "$lat" "${failed:-0}" \
        "$(echo "($c1 - $c0) * 1000000 / $HZ / $xacts" | bc -l)" \
        "$(echo "($g1 - $g0) * 1000000 / $HZ / $xacts" | bc -l)" \
        "$(echo "($x1 - $x0 - 2) / $xacts" | bc -l)"
    done
  done
done
