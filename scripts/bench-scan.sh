#!/usr/bin/env bash
# bench-scan.sh — wall time and peak memory of `pgpoolcheck scan` over
# synthetic source trees. Not a test: it prints figures.
#
# For each tree size it generates a tree into a temporary directory
# (scripts/benchscan gen: the repository's own testdata SQL and
# application-code samples, three files in five SQL, two in five code; the
# same tree for the same checkout, no randomness), unless WORK already holds
# it from an earlier run with KEEP=1 (to measure two binaries on one tree),
# then runs `pgpoolcheck scan --fail-on never --format FORMAT TREE >
# /dev/null` for each format and records the wall time and the maximum
# resident set size, from /usr/bin/time -v when it exists, else from
# getrusage (the benchscan helper). Output: one markdown table to paste
# into BENCHMARKS.md.
#
# Usage: [VAR=value ...] scripts/bench-scan.sh
# Environment (default):
#   SIZES ("2000:34000000 20000:340000000")  FILES:BYTES of each tree
#   FORMATS ("text json")                      --format values
#   BIN (built from the working tree)          the pgpoolcheck binary to measure
#   WORK (a new mktemp -d)                     where the trees go (removed at the
#                                              end unless KEEP=1)
#   COUNT (1)                                  1: count the findings of each tree
#                                              (one more scan, not measured)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

SIZES=${SIZES-"2000:34000000 20000:340000000"}
FORMATS=${FORMATS-"text json"}
KEEP=${KEEP:-0}
COUNT=${COUNT:-1}
WORK=${WORK:-$(mktemp -d /tmp/bench-scan-XXXXXX)}
mkdir -p "$WORK"
if [ "$KEEP" != 1 ]; then
  trap 'rm -rf "$WORK"' EXIT
fi

go build -o "$WORK/benchscan" ./scripts/benchscan
if [ -z "${BIN-}" ]; then
  BIN=$WORK/pgpoolcheck
  go build -o "$BIN" ./cmd/pgpoolcheck
fi

# measure FORMAT TREE prints "WALL_S MAXRSS_KB"; standard output goes to
# /dev/null.
measure() {
  local format=$1 tree=$2
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v -o "$WORK/time.txt" "$BIN" scan --fail-on never --format "$format" "$tree" >/dev/null 2>"$WORK/stderr.txt"
    awk -F': ' '
      /Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; wall = s }
      /Maximum resident set size/ { rss = $2 }
      END { printf "%.2f %d\n", wall, rss }' "$WORK/time.txt"
  else
    "$WORK/benchscan" run -- "$BIN" scan --fail-on never --format "$format" "$tree" 2>"$WORK/stderr.txt" |
      awk '{ print $2, $4 }'
  fi
}

rows=()
for size in $SIZES; do
  files=${size%%:*} bytes=${size#*:}
  tree=$WORK/tree-$files
  if [ ! -d "$tree" ]; then
    "$WORK/benchscan" gen -out "$tree" -files "$files" -bytes "$bytes" >"$WORK/gen.txt"
  fi
  actual=$(find "$tree" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
  findings=-
  if [ "$COUNT" = 1 ]; then
    # One more scan, not measured: the github format is a line per finding.
    findings=$("$BIN" scan --fail-on never --format github "$tree" 2>/dev/null | wc -l)
  fi
  for format in $FORMATS; do
    read -r wall rss < <(measure "$format" "$tree")
    echo "files=$files bytes=$actual findings=$findings format=$format wall_s=$wall maxrss_kb=$rss" >&2
    rows+=("$(printf '| %s | %s MB | %s | `%s` | %s s | %s MB |' \
      "$files" "$(awk -v b="$actual" 'BEGIN { printf "%.0f", b / 1e6 }')" "$findings" "$format" "$wall" \
      "$(awk -v k="$rss" 'BEGIN { printf "%.0f", k / 1024 }')")")
  done
done

echo
echo "machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
echo "binary: $BIN"
echo
echo '| files | size | findings | format | wall | max RSS |'
echo '|---|---|---|---|---|---|'
printf '%s\n' "${rows[@]}"
