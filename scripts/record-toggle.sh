#!/usr/bin/env bash
# record-toggle.sh — what record mode's capture costs pgbench -S, measured
# inside one run. Not a test: it prints figures.
#
# scripts/bench-pooler.sh (RECORD=1) compares a session-mode proxy with a
# record-mode proxy, each started afresh for a run of a few seconds. On this
# 2-core machine one such run's TPS scatters by about 10% from the next, so
# dozens of rounds leave an interval several percent wide. This script
# measures the same cost with less noise. It builds pgpoolcheck with the
# build tag capturetoggle (pooler/capturetoggle.go): a record-mode proxy that
# leaves out the capture's per-message work in every other PERIOD seconds
# of wall-clock time. Each client follows the switch between its round
# trips. One pgbench run then alternates between periods with and without
# the capture, on the same process, the same connections and the same
# minutes of the machine. pgbench reports its TPS every second with a Unix
# timestamp (-P 1 --progress-timestamp). Seconds that straddle a switch
# are left out, and so is the first one of the run.
#
# Per cell it prints:
#   - the mean TPS of the periods with (on) and without (off) the capture,
#     and their ratio;
#   - the ratio of each "on" period to the mean of the two "off" periods
#     around it, so that a drift of the machine cancels out. It shows their
#     mean with a 95% Student t interval, and their geometric mean;
#   - CPU per transaction in each kind of period, read twice a second from
#     /proc: the proxy's (utime+stime), the whole machine's busy time, and
#     its idle time. The whole machine's figures include PostgreSQL, pgbench
#     and this script's sampler.
# With PERF=1 it also runs `perf record -a` over the middle of each run. It
# then prints CPU µs per transaction per process, and the 15 symbols whose
# µs per transaction grew most with the capture on. This needs perf and
# root (or a low kernel.perf_event_paranoid).
#
# What it leaves out, compared with session mode: in the "off" periods the
# capture's writer goroutine still ticks (every 25 ms, with nothing to do)
# and each client message costs one atomic load more. A capture's kernel
# writeback may land in either kind of period. Capturing to /dev/null
# (CAPTURE=/dev/null) takes the page cache and the writeback out.
#
# Usage: [VAR=value ...] scripts/record-toggle.sh
# Environment (default):
#   CLIENTS ("10")                   pgbench client counts
#   PROTOCOLS ("extended")           pgbench -M values
#   DURATION (300) seconds per cell  PERIOD (3) seconds with, then without
#   SCALE (10) pgbench scale         PORT (24400) PostgreSQL; the proxy on +1
#   CAPTURE ($WORK/capture.jsonl)    where the proxy writes (deleted after each cell)
#   POOLER_REV (unset)               build from this git revision instead of the
#                                    working tree
#   PERF (0)                         1: perf record -a, per-process and per-symbol figures
#   KEEP (0)                         1: keep the work directory (logs, pgbench's rows)
#   PGBIN (/usr/lib/postgresql/<newest>/bin)  PostgreSQL server binaries
# PostgreSQL and the proxy each run in their own session (setsid), as the
# postgres OS user for PostgreSQL when run as root.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
. scripts/servers.sh

CLIENTS=${CLIENTS-"10"}
PROTOCOLS=${PROTOCOLS-"extended"}
DURATION=${DURATION:-300}
PERIOD=${PERIOD:-3}
SCALE=${SCALE:-10}
PORT=${PORT:-24400}
POOLER_REV=${POOLER_REV-}
PERF=${PERF:-0}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PGBENCH=$(command -v pgbench || echo "$PGBIN/pgbench")
MAX_CLIENTS=$(printf '%s\n' $CLIENTS | sort -n | tail -1)
ulimit -n "$(ulimit -Hn)" || true

WORK=$(mktemp -d /tmp/record-toggle-XXXXXX)
CAPTURE=${CAPTURE:-$WORK/capture.jsonl}
RUNAS=()
if [ "$(id -u)" = 0 ]; then
  chown postgres: "$WORK"
  RUNAS=(runuser -u postgres --)
fi
SIDS=()
cleanup() {
  trap - EXIT
  local s
  for s in "${SIDS[@]}"; do stop_session "$s"; done
  [ "${KEEP:-0}" = 1 ] && echo "# kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- build -------------------------------------------------------------------
SRC=.
DESC="working tree at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
if [ -n "$POOLER_REV" ]; then
  SRC="$WORK/src"
  mkdir -p "$SRC"
  git archive "$POOLER_REV" | tar -x -C "$SRC"
  DESC="$(git rev-parse --short "$POOLER_REV") ($POOLER_REV)"
fi
(cd "$SRC" && go build -tags capturetoggle -o "$WORK/pgpoolcheck" ./cmd/pgpoolcheck)
chmod 755 "$WORK/pgpoolcheck"
echo "# pgpoolcheck, $DESC, built with -tags capturetoggle; capture on and off in turn every ${PERIOD}s"

# --- PostgreSQL ----------------------------------------------------------------
"${RUNAS[@]}" "$PGBIN/initdb" -D "$WORK/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null
setsid "${RUNAS[@]}" "$PGBIN/postgres" -D "$WORK/data" -k "$WORK" -p "$PORT" \
  -c listen_addresses=127.0.0.1 -c max_connections=$((MAX_CLIENTS + 20)) \
  -c shared_buffers=256MB -c fsync=off -c synchronous_commit=off >"$WORK/postgres.log" 2>&1 &
SIDS+=("$!")
wait_ready "$PORT" || { echo "PostgreSQL did not start:" >&2; tail -5 "$WORK/postgres.log" >&2; exit 1; }
echo "# PostgreSQL $("$PGBIN/postgres" --version | awk '{print $3}') on port $PORT; $("$PGBENCH" -i -q -s "$SCALE" -h 127.0.0.1 -p "$PORT" -U postgres postgres 2>&1 | tail -1)"

# sampler PID OUT: twice a second, "unix_time proxy_ticks busy_ticks idle_ticks",
# with shell builtins only (a fork per sample would cost the machine CPU).
sampler() {
  local pid=$1 out=$2 fd stat cpu rest
  exec {fd}<> <(:)
  while [ -r /proc/"$pid"/stat ]; do
    read -r stat </proc/"$pid"/stat || break
    stat=${stat##*) }
    read -r -a f <<<"$stat"
    read -r cpu rest </proc/stat
    read -r -a c <<<"$rest"
    echo "$EPOCHREALTIME $((f[11] + f[12])) $((c[0] + c[1] + c[2] + c[5] + c[6] + c[7])) $((c[3] + c[4]))"
    read -r -t 0.5 -u "$fd" || true
  done >"$out"
}

# --- the cells -------------------------------------------------------------------
for proto in $PROTOCOLS; do
  for clients in $CLIENTS; do
    j=2
    [ "$clients" -lt 2 ] && j=1
    proxy_port=$((PORT + 1))
    setsid env PGPOOLCHECK_CAPTURE_TOGGLE="$PERIOD" "$WORK/pgpoolcheck" proxy \
      --listen "127.0.0.1:$proxy_port" --upstream "postgres://postgres@127.0.0.1:$PORT/postgres?sslmode=disable" \
      --mode record --capture "$CAPTURE" --pool-size $((clients + 10)) --max-client-conn $((clients + 100)) \
      --log-level warn >"$WORK/proxy.log" 2>&1 &
    sid=$!
    SIDS+=("$sid")
    wait_ready "$proxy_port" || { echo "proxy did not start:" >&2; cat "$WORK/proxy.log" >&2; exit 1; }
    sampler "$sid" "$WORK/cpu" &
    spid=$!
    perfpid=
    if [ "$PERF" = 1 ]; then
      (sleep $((DURATION / 10)); exec perf record -a -F 999 -k CLOCK_REALTIME -o "$WORK/perf.data" \
        -- sleep $((DURATION * 8 / 10))) >/dev/null 2>&1 &
      perfpid=$!
    fi
    "$PGBENCH" -n -S -M "$proto" -c "$clients" -j "$j" -T "$DURATION" -P 1 --progress-timestamp \
      -h 127.0.0.1 -p "$proxy_port" -U postgres postgres 2>&1 |
      awk '/^progress:/ {print $2, $4} /^(number of failed|number of transactions actually)/ {print "#", $0 > "/dev/stderr"}' \
        >"$WORK/tps" 2>"$WORK/pgbench.tail"
    [ -n "$perfpid" ] && wait "$perfpid" 2>/dev/null || true
    stop_session "$sid"
    wait "$spid" 2>/dev/null || true
    bytes=$(stat -c %s "$CAPTURE" 2>/dev/null || echo 0)
    trailer=$(tail -c 300 "$CAPTURE" 2>/dev/null | tail -1 || true)
    [ -f "$CAPTURE" ] && [ "$CAPTURE" != /dev/null ] && rm -f "$CAPTURE"
    echo
    echo "## pgbench -S -M $proto -c $clients -j $j -T $DURATION, capture on and off every ${PERIOD}s"
    sed 's/^# /# pgbench: /' "$WORK/pgbench.tail"
    echo "# capture: $bytes bytes; trailer: ${trailer:-none}"
    awk -v P="$PERIOD" -f scripts/stats.awk -f /dev/stdin "$WORK/tps" "$WORK/cpu" <<'AWK'
      # TPS per period (seconds wholly inside it, the first line left out)
      FNR == NR { t = $1; a = int((t - 1) / P); b = int(t / P); if (a != b || FNR == 1) next
        s[b] += $2; n[b]++; next }
      # CPU samples: the first and last inside each period
      { k = int($1 / P); o = $1 - k * P; if (o < 0.3 || o > P - 0.05) next
        if (!(k in t0)) { t0[k] = $1; p0[k] = $2; b0[k] = $3; i0[k] = $4 }
        t1[k] = $1; p1[k] = $2; b1[k] = $3; i1[k] = $4 }
      END {
        for (k in n) { m[k] = s[k] / n[k]; st = k % 2 ? "off" : "on"; sum[st] += m[k]; cnt[st]++
          if ((k in t0) && t1[k] - t0[k] >= 0.9) { tx = m[k] * (t1[k] - t0[k])
            PX[st] += (p1[k] - p0[k]) * 1e4; BX[st] += (b1[k] - b0[k]) * 1e4; IX[st] += (i1[k] - i0[k]) * 1e4; TX[st] += tx } }
        if (!cnt["on"] || !cnt["off"]) { print "too few periods"; exit }
        on = sum["on"] / cnt["on"]; off = sum["off"] / cnt["off"]
        printf "periods: %d on, %d off; mean TPS on %.0f, off %.0f; ratio of means %.4f\n", cnt["on"], cnt["off"], on, off, on / off
        c = 0
        for (k in m) { if (k % 2 || !((k - 1) in m) || !((k + 1) in m)) continue
          r = m[k] / ((m[k - 1] + m[k + 1]) / 2); c++; sx += r; qx += r * r; sl += log(r) }
        if (c > 1) { mean = sx / c; h = half(c, sx, qx)
          printf "on ÷ the off periods around it: %d periods, mean %.4f [%.4f, %.4f], sd %.4f, geometric mean %.4f\n", c, mean, mean - h, mean + h, h / tq(c - 1) * sqrt(c), exp(sl / c) }
        for (st in TX) if (TX[st] > 0) printf "CPU µs per transaction, capture %-3s: proxy %.2f, machine busy %.2f, machine idle %.2f\n", st, PX[st] / TX[st], BX[st] / TX[st], IX[st] / TX[st]
      }
AWK
    if [ "$PERF" = 1 ] && [ -s "$WORK/perf.data" ]; then
      perf script -i "$WORK/perf.data" -F comm,time,ip,sym --ns 2>/dev/null | awk -v P="$PERIOD" -v F=999 '
        FNR == NR { t = $1; a = int((t - 1) / P); b = int(t / P); if (a != b || FNR == 1) next; s[b] += $2; n[b]++; next }
        { t = $2; sub(":", "", t); t += 0; k = int(t / P); o = t - k * P; if (o < 0.3 || o > P - 0.05 || !(k in n)) next
          seen[k] = 1; st = k % 2 ? "off" : "on"; sym = $4; for (i = 5; i <= NF; i++) sym = sym " " $i
          C[st, $1]++; S[st, $1 " " sym]++; comm[$1] = 1; syms[$1 " " sym] = 1 }
        END { us = 1e6 / F
          for (k in seen) TX[k % 2 ? "off" : "on"] += s[k] / n[k] * (P - 0.35)
          printf "perf, CPU µs per transaction (on / off / difference):\n"
          for (p in comm) { a = C["on", p] * us / TX["on"]; b = C["off", p] * us / TX["off"]
            if (a > 0.05 || b > 0.05) printf "  %-20s %7.2f %7.2f %+6.2f\n", p, a, b, a - b }
          for (x in syms) printf "SYM %+.3f %.3f %.3f %s\n", S["on", x] * us / TX["on"] - S["off", x] * us / TX["off"], S["on", x] * us / TX["on"], S["off", x] * us / TX["off"], x
        }' "$WORK/tps" - >"$WORK/perf.out"
      grep -v '^SYM' "$WORK/perf.out"
      echo "  the 15 symbols that grew most:"
      grep '^SYM' "$WORK/perf.out" | sort -k2 -gr | head -15 | awk '{d = $2; a = $3; b = $4; $1 = $2 = $3 = $4 = ""; sub(/^ +/, ""); printf "  %+.3f (%.3f / %.3f) %s\n", d, a, b, $0}'
      rm -f "$WORK/perf.data"
    fi
  done
done
