#!/usr/bin/env bash
# loaded-suite.sh — the README's test command, run RUNS times in a row on a
# fresh clone of a commit while BUSY other processes keep the cores busy
# (`while :; do :; done`, each in its own session so the scheduler does not
# group it with the tests). Not a test: it prints one line per run (exit
# status and time) and stops at the first failure, keeping that run's log.
#
# Usage: [RUNS=10] [BUSY=2] [REV=HEAD] [WORK=/tmp/loaded-suite] scripts/loaded-suite.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10}
BUSY=${BUSY:-2}
REV=$(git rev-parse "${REV:-HEAD}")
WORK=${WORK:-/tmp/loaded-suite}

rm -rf "$WORK"
mkdir -p "$WORK"
git clone -q "$PWD" "$WORK/src"
git -C "$WORK/src" checkout -q "$REV"
for d in internal/drivers/testdata/node internal/e2e/testdata/drivers/node; do
  npm ci --prefix "$WORK/src/$d" --no-audit --no-fund >/dev/null
done

pids=()
cleanup() { for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || true; done; }
trap cleanup EXIT
for _ in $(seq "$BUSY"); do
  setsid bash -c 'while :; do :; done' &
  pids+=($!)
done

echo "rev $REV, $RUNS runs of 'CI=true go test -count=1 ./...' beside $BUSY busy loops on $(nproc) cores"
cd "$WORK/src"
for i in $(seq "$RUNS"); do
  t0=$(date +%s)
  if CI=true go test -count=1 ./... >"$WORK/run$i.log" 2>&1; then
    echo "run $i: ok in $(( $(date +%s) - t0 )) s"
  else
    echo "run $i: FAILED in $(( $(date +%s) - t0 )) s (log: $WORK/run$i.log)"
    grep -E '^(--- FAIL|FAIL|panic:)' "$WORK/run$i.log" | head -20
    exit 1
  fi
done
