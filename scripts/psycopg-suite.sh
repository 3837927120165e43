#!/usr/bin/env bash
# psycopg-suite.sh — psycopg 3's own test suite through pgpoolcheck's
# pooler, in session and in transaction mode, on both relays (the default
# loop relay and the hidden --relay bridged), and directly against
# PostgreSQL. Not a test (psycopg's tests are not in Debian's package, so
# CI cannot have them): it prints, per target, the failures that are not
# in scripts/psycopg-inherent.txt and the listed ones that passed.
#
# Usage: scripts/psycopg-suite.sh PSYCOPG_CHECKOUT
#   PSYCOPG_CHECKOUT is a work tree of psycopg at the tag of the installed
#   python3-psycopg (3.1.7 on Debian 12), e.g.
#     git clone -q <mirror of psycopg> /tmp/psycopg && git -C /tmp/psycopg checkout 3.1.7
#   Its tests run with /usr/bin/python3 and Debian's pytest
#   (python3-pytest, python3-pytest-asyncio, python3-anyio,
#   python3-dnspython), against the installed psycopg, not the checkout's.
# Environment (default):
#   TARGETS ("direct session transaction session-bridged transaction-bridged")
#   FILES   (the 26 test files below)   e.g. "tests/test_prepared.py"
#   PYTEST_ARGS ("")  more pytest arguments, split at spaces (e.g. -k prepared)
#   RERUN (1)  re-run the failures of a target once, together: a test that
#              passes then is shown as flaky, not as a failure
#   BASE_PORT (27480)  PostgreSQL on BASE_PORT, the pooler on BASE_PORT+1
#              (keep within 21000–29999)
#   POOL_SIZE (20 in transaction mode; 60 in session mode, where every
#              client holds a server)
#   PGBIN (/usr/lib/postgresql/<newest>/bin)   LOG_DIR (unset: kept in $WORK, removed)
# PostgreSQL and the pooler run in their own sessions (setsid) on those
# fixed ports and are stopped on exit; as root PostgreSQL runs as the
# postgres OS user. The exit status is 1 when a target had an unexpected
# failure.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="/usr/local/go/bin:$PATH"
. scripts/servers.sh

CHECKOUT=${1:?usage: scripts/psycopg-suite.sh PSYCOPG_CHECKOUT}
CHECKOUT=$(cd "$CHECKOUT" && pwd)
[ -f "$CHECKOUT/tests/conftest.py" ] || { echo "$CHECKOUT: not a psycopg checkout (no tests/conftest.py)" >&2; exit 2; }
PY=/usr/bin/python3
"$PY" -c 'import pytest, pytest_asyncio, psycopg' 2>/dev/null || {
  echo "needs Debian's python3-pytest, python3-pytest-asyncio and python3-psycopg (apt-get install -y python3-pytest python3-pytest-asyncio python3-anyio python3-dnspython python3-psycopg)" >&2
  exit 2
}
PSYCOPG_VERSION=$("$PY" -c 'import psycopg; print(psycopg.__version__)')
CHECKOUT_VERSION=$(git -C "$CHECKOUT" describe --tags 2>/dev/null || echo unknown)
if [ "$CHECKOUT_VERSION" != "$PSYCOPG_VERSION" ]; then
  echo "warning: the checkout is at $CHECKOUT_VERSION, the installed psycopg is $PSYCOPG_VERSION" >&2
fi

TARGETS=${TARGETS:-"direct session transaction session-bridged transaction-bridged"}
FILES=${FILES:-"tests/test_adapt.py tests/test_client_cursor.py tests/test_client_cursor_async.py
  tests/test_concurrency.py tests/test_concurrency_async.py tests/test_connection.py
  tests/test_connection_async.py tests/test_copy.py tests/test_copy_async.py tests/test_cursor.py
  tests/test_cursor_async.py tests/test_errors.py tests/test_pipeline.py tests/test_pipeline_async.py
  tests/test_prepared.py tests/test_prepared_async.py tests/test_psycopg_dbapi20.py tests/test_query.py
  tests/test_rows.py tests/test_server_cursor.py tests/test_server_cursor_async.py tests/test_sql.py
  tests/test_tpc.py tests/test_tpc_async.py tests/test_transaction.py tests/test_transaction_async.py
  tests/test_typeinfo.py"}
RERUN=${RERUN:-1}
BASE_PORT=${BASE_PORT:-27480}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PG_PORT=$BASE_PORT
PROXY_PORT=$((BASE_PORT + 1))
LIST=$ROOT/scripts/psycopg-inherent.txt

bench_setup psycopg-suite
LOGS=${LOG_DIR:-$WORK/logs}
mkdir -p "$LOGS"
for p in "$PG_PORT" "$PROXY_PORT"; do
  port_free "$p" || { echo "port $p is in use: set BASE_PORT" >&2; exit 1; }
done

echo "# psycopg $PSYCOPG_VERSION (tests of $CHECKOUT_VERSION), pytest $("$PY" -c 'import pytest; print(pytest.__version__)')"
echo "# building pgpoolcheck ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- pooler cmd || echo ', with uncommitted changes'))"
go build -o "$WORK/pgpoolcheck" ./cmd/pgpoolcheck

echo "# PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on port $PG_PORT"
"${RUNAS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
# max_prepared_transactions for the two-phase commit tests.
setsid "${RUNAS[@]}" "$PGBIN/postgres" -D "$WORK/data" -k "$WORK" -p "$PG_PORT" \
  -c listen_addresses=127.0.0.1 -c max_connections=200 -c max_prepared_transactions=10 \
  -c fsync=off -c synchronous_commit=off >"$WORK/postgres.log" 2>&1 &
SIDS+=("$!")
wait_ready "$PG_PORT" || { echo "PostgreSQL did not start:" >&2; tail -5 "$WORK/postgres.log" >&2; exit 1; }

# start_proxy MODE RELAY LOG: the pooler on PROXY_PORT; its session in PROXY_SID.
start_proxy() {
  local mode=$1 relay=$2 log=$3 size=${POOL_SIZE:-}
  [ -n "$size" ] || { [ "$mode" = session ] && size=60 || size=20; }
  local args=(proxy --listen "127.0.0.1:$PROXY_PORT" --upstream "postgres://postgres@/postgres?host=$WORK&port=$PG_PORT"
    --mode "$mode" --pool-size "$size")
  [ "$relay" = bridged ] && args+=(--relay bridged)
  setsid "$WORK/pgpoolcheck" "${args[@]}" >"$log" 2>&1 &
  PROXY_SID=$!
  SIDS+=("$!")
  wait_ready "$PROXY_PORT" || { echo "the pooler did not start:" >&2; tail -5 "$log" >&2; exit 1; }
}

# run_pytest DSN XML LOG [IDS...]: psycopg's tests (FILES, or the given
# node ids) against DSN, results as JUnit XML.
run_pytest() {
  local dsn=$1 xml=$2 log=$3
  shift 3
  local sel=("$@")
  [ "${#sel[@]}" -gt 0 ] || read -r -a sel <<<"$(echo $FILES)"
  # -p no:randomly: keep psycopg's order; the proxy marker: pproxy is
  # not in Debian (those tests need a TCP proxy of their own).
  (cd "$CHECKOUT" && PSYCOPG_TEST_DSN="$dsn" COLUMNS=250 timeout 40m "$PY" -m pytest -o cache_dir="$WORK/pytest-cache" -p no:randomly \
    -m 'not proxy' --junitxml="$xml" -q -o junit_family=xunit1 $PYTEST_ARGS "${sel[@]}") >"$log" 2>&1 || true
}
PYTEST_ARGS=${PYTEST_ARGS:-}

# failures XML [all]: the node ids that failed or errored (with all:
# every node id that ran), one a line.
failures() {
  (cd "$CHECKOUT" && "$PY" - "$1" "${2:-}") <<'PY'
import os, sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception as e:
    print("#no-results", e)
    sys.exit(0)
every = len(sys.argv) > 2 and sys.argv[2] == "all"
for tc in root.iter("testcase"):
    if every or tc.find("failure") is not None or tc.find("error") is not None:
        cls, name = tc.get("classname", ""), tc.get("name", "")
        parts = cls.split(".")
        # classname is tests.test_x (module) or tests.test_x.TestClass.
        path = "/".join(parts)
        i = len(parts)
        while i > 0:
            cand = "/".join(parts[:i]) + ".py"
            if os.path.exists(cand):
                path = cand + "".join("::" + p for p in parts[i:])
                break
            i -= 1
        print(path + "::" + name)
PY
}

# counts XML: tests run, failed, skipped.
counts() {
  (cd "$CHECKOUT" && "$PY" - "$1") <<'PY'
import sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception:
    print("? ? ?"); sys.exit(0)
t = f = s = 0
for tc in root.iter("testcase"):
    t += 1
    if tc.find("failure") is not None or tc.find("error") is not None: f += 1
    elif tc.find("skipped") is not None: s += 1
print(t, f, s)
PY
}

# expected TARGET: the listed node ids of a target (transaction targets:
# the list; session and direct: none).
expected() {
  case $1 in
    transaction*) { grep -v '^[[:space:]]*\(#\|@\|$\)' "$LIST" || true; } | awk -F' *\\| *' '{print $1}' ;;
  esac
}

# The tests psycopg marks flakey itself (its CI deselects them with
# -m 'not flakey'): one that fails and then passes is labelled so.
(cd "$CHECKOUT" && PSYCOPG_TEST_DSN="host=127.0.0.1 port=1" "$PY" -m pytest -q --collect-only -m flakey \
  -p no:randomly -o cache_dir="$WORK/pytest-cache" 2>/dev/null | grep '::' | sort >"$WORK/upstream-flakey") || true

status=0
summary=()
for target in $TARGETS; do
  dsn="host=127.0.0.1 port=$PG_PORT user=postgres dbname=postgres"
  PROXY_SID=
  case $target in
    direct) ;;
    session | transaction) start_proxy "$target" loop "$LOGS/$target.proxy.log" ;;
    session-bridged | transaction-bridged) start_proxy "${target%-bridged}" bridged "$LOGS/$target.proxy.log" ;;
    *) echo "unknown target $target" >&2; exit 2 ;;
  esac
  [ "$target" = direct ] || dsn="host=127.0.0.1 port=$PROXY_PORT user=postgres dbname=postgres"
  echo "# $target: running (log $LOGS/$target.log)"
  start=$(date +%s)
  run_pytest "$dsn" "$WORK/$target.xml" "$LOGS/$target.log"
  read -r ran failed skipped <<<"$(counts "$WORK/$target.xml")"
  failures "$WORK/$target.xml" | sort >"$WORK/$target.failed"
  : >"$WORK/$target.flaky"
  if [ "$RERUN" = 1 ] && [ -s "$WORK/$target.failed" ] && ! grep -q '^#' "$WORK/$target.failed"; then
    mapfile -t ids <"$WORK/$target.failed"
    run_pytest "$dsn" "$WORK/$target.rerun.xml" "$LOGS/$target.rerun.log" "${ids[@]}"
    failures "$WORK/$target.rerun.xml" | sort >"$WORK/$target.refailed"
    comm -23 "$WORK/$target.failed" "$WORK/$target.refailed" >"$WORK/$target.flaky"
    cp "$WORK/$target.refailed" "$WORK/$target.failed"
  fi
  [ -z "$PROXY_SID" ] || stop_session "$PROXY_SID" TERM
  expected "$target" | sort -u >"$WORK/$target.expected"
  comm -23 "$WORK/$target.failed" "$WORK/$target.expected" >"$WORK/$target.unexpected"
  # Listed tests that ran and did not fail (a selection may leave some out).
  failures "$WORK/$target.xml" all | sort >"$WORK/$target.ran"
  comm -12 "$WORK/$target.ran" "$WORK/$target.expected" | comm -23 - "$WORK/$target.failed" >"$WORK/$target.notfailed"
  nfail=$(wc -l <"$WORK/$target.failed")
  echo "## $target: $ran tests, $nfail failed ($failed before the re-run), $skipped skipped, $(( $(date +%s) - start )) s"
  if [ -s "$WORK/$target.unexpected" ]; then
    status=1
    echo "   unexpected failures:"
    while read -r id; do
      msg=$(grep -h -m1 -F -- "FAILED $id" "$LOGS/$target.rerun.log" "$LOGS/$target.log" 2>/dev/null | head -1 | sed 's/^[^ ]* FAILED [^ ]* - //; s/^.*FAILED [^ ]* - //' | cut -c1-160 || true)
      [ -n "$msg" ] || msg=$(grep -h -m1 -F -- "ERROR $id" "$LOGS/$target.rerun.log" "$LOGS/$target.log" 2>/dev/null | head -1 | sed 's/^.* - //' | cut -c1-160 || true)
      echo "     $id${msg:+  -- $msg}"
    done <"$WORK/$target.unexpected"
  fi
  if [ -s "$WORK/$target.notfailed" ]; then
    echo "   listed as inherent but passed:"
    sed 's/^/     /' "$WORK/$target.notfailed"
  fi
  if [ -s "$WORK/$target.flaky" ]; then
    echo "   failed, then passed on the re-run (flaky):"
    while read -r id; do
      grep -qxF -- "$id" "$WORK/upstream-flakey" && id="$id  (marked flakey by psycopg)"
      echo "     $id"
    done <"$WORK/$target.flaky"
  fi
  summary+=("$target: $ran run, $nfail failed ($(wc -l <"$WORK/$target.unexpected") unexpected, $((nfail - $(wc -l <"$WORK/$target.unexpected"))) inherent), $(wc -l <"$WORK/$target.notfailed") listed not failing, $(wc -l <"$WORK/$target.flaky") flaky")
done
echo "# summary"
printf '   %s\n' "${summary[@]}"
exit "$status"
