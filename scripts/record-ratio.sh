#!/usr/bin/env bash
# record-ratio.sh — issue 5's figure (record mode ÷ session mode TPS) over
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
awk '
  # tq: the 0.975 quantile of Student t with df degrees of freedom.
  function tq(df,   q) {
    split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086", q, " ")
    if (df <= 20) return q[df]
    return df <= 30 ? 2.05 : (df <= 60 ? 2.01 : (df <= 120 ? 1.99 : 1.98))
  }
  # half: the half-width of the 95% interval of the mean of n values with
  # sum s and sum of squares q (rounding can make the variance a hair
  # below zero when the values are equal).
  function half(n, s, q,   v) {
    v = (q - s * s / n) / (n - 1)
    return tq(n - 1) * sqrt(v > 0 ? v / n : 0)
  }
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
' "$@"
