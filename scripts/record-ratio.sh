#!/usr/bin/env bash
# record-ratio.sh — the record-mode cost figure (record mode ÷ session mode TPS) over
# one or more saved outputs of `RECORD=1 scripts/bench-pooler.sh`. Not a
# test: it prints figures.
#
# Each round of a cell gives one ratio: the record run's TPS over the
# session run's of the same round (the two ran back to back); a round
# where either run failed or had an aborted client is left out, as
# bench-pooler.sh leaves it out. Per cell and over every round of every
# file it prints:
#   - the mean of the ratios with its 95% confidence interval (Student t),
#     as bench-pooler.sh does for one run;
#   - the geometric mean (the mean of the ratios' logarithms, taken back),
#     with its interval. With a round-to-round spread near 0.1, the plain
#     mean of ratios reads about half a percent high (a ratio's mean is
#     above the ratio of the means), so this is the one to compare with
#     0.95.
#
# Usage: scripts/record-ratio.sh BENCH_OUTPUT...
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: $0 BENCH_OUTPUT..." >&2
  exit 2
fi
awk -f "$(dirname "$0")/stats.awk" -f /dev/stdin "$@" <<'AWK'
  function stats(n, s, q,   m, h) { # mean [CI]
    m = s / n
    if (n < 2) return sprintf("%.3f", m)
    h = half(n, s, q)
    return sprintf("%.3f [%.3f, %.3f]", m, m - h, m + h)
  }
  function gstats(n, s, q,   m, h) { # the same over logarithms, taken back
    m = s / n
    if (n < 2) return sprintf("%.3f", exp(m))
    h = half(n, s, q)
    return sprintf("%.3f [%.3f, %.3f]", exp(m), exp(m - h), exp(m + h))
  }
  # raw rows: protocol target clients round tps lat_ms failed aborted ...
  ($2 == "pgpoolcheck-session" || $2 == "pgpoolcheck-record") && $4 ~ /^[0-9]+$/ {
    if ($5 == "ERR" || $8 != 0) next
    k = FILENAME SUBSEP $1 SUBSEP $3 SUBSEP $4
    if ($2 == "pgpoolcheck-session") s[k] = $5; else r[k] = $5
    cell = $1 " " $3
    if (!(cell in seen)) { seen[cell] = 1; cells[++nc] = cell }
  }
  END {
    for (k in s) {
      if (!(k in r) || s[k] <= 0) continue
      split(k, a, SUBSEP); c = a[2] " " a[3]
      x = r[k] / s[k]; l = log(x)
      n[c]++; sx[c] += x; qx[c] += x * x; sl[c] += l; ql[c] += l * l
      N++; SX += x; QX += x * x; SL += l; QL += l * l
    }
    if (N == 0) { print "no paired session and record rounds found" > "/dev/stderr"; exit 1 }
    printf "| protocol | clients | rounds | mean of ratios [95%% CI] | geometric mean [95%% CI] |\n"
    printf "|---|--:|--:|--:|--:|\n"
    for (i = 1; i <= nc; i++) {
      c = cells[i]
      if (!(c in n)) continue
      split(c, p, " ")
      printf "| %s | %s | %d | %s | %s |\n", p[1], p[2], n[c], stats(n[c], sx[c], qx[c]), gstats(n[c], sl[c], ql[c])
    }
    printf "| every round of every cell | | %d | %s | %s |\n", N, stats(N, SX, QX), gstats(N, SL, QL)
  }
AWK
