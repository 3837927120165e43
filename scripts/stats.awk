# stats.awk — the interval arithmetic the record-mode scripts share
# (awk -f scripts/stats.awk -f PROGRAM ...).

# tq: the 0.975 quantile of Student t with df degrees of freedom.
function tq(df,   q) {
  split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086", q, " ")
  if (df <= 20) return q[df]
  return df <= 30 ? 2.05 : (df <= 60 ? 2.01 : (df <= 120 ? 1.99 : 1.98))
}

# half: the half-width of the 95% interval of the mean of n values with sum
# s and sum of squares q (rounding can make the variance a hair below zero
# when the values are equal).
function half(n, s, q,   v) {
  v = (q - s * s / n) / (n - 1)
  return tq(n - 1) * sqrt(v > 0 ? v / n : 0)
}
