#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bench/arms_ab.sh - the A/B of ARMS (skipping redundant arms, issue 23):
# bench/arms_bench with ARMS on (MKRT_PLAN_OFF=none) and forced off
# (MKRT_PLAN_OFF=arms), interleaved round by round; the median wall time
# of ROUNDS runs per workload and side, and the mean items ARMS skipped.
#
#   sh bench/arms_ab.sh [ROUNDS]      (needs: make build/bench/arms_bench)
#
# Workloads: 2 producers repeating each other's MIN items (overlap), the
# same with OR, each producer on pairs of its own (disjoint: only repeats
# inside a producer, across its drain segments), 4 producers overlapping,
# and overlap on the simulated device (ROUTE off so the device runs it).
set -u
R=${1:-9}
B=${BUILD:-build}
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
i=0
while [ "$i" -lt "$R" ]; do
    for w in "--mode overlap --op min" "--mode overlap --op or" "--mode disjoint --op min" \
             "--producers 4 --mode overlap --op min" "--sim --mode overlap --op min"; do
        for off in none arms; do
            extra=""
            case "$w" in --sim*) extra=",route" ;; esac
            MKRT_PLAN_OFF=$off$extra "$B/bench/arms_bench" $w --items 2000000 | awk -v w="$w" -v o="$off" '{
                for (i = 1; i <= NF; i++) { if ($i == "wall") ms = $(i + 1); if ($i == "arms-skipped") sk = $(i + 1) }
                gsub(/,/, "", sk); print w "|" o "|" ms "|" sk }' >> "$tmp"
        done
    done
    i=$((i + 1))
done
echo "Made by \`sh bench/arms_ab.sh $R\` on $(uname -m), $(nproc) CPUs ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null)), load average $(cut -d' ' -f1-3 /proc/loadavg)."
echo "Median wall ms of $R interleaved rounds (2M items per producer); lower is better;"
echo "change = (off - on) / off: positive means ARMS pays."
echo
echo "| arms_bench workload | ARMS on (ms) | ARMS off (ms) | change | items skipped (on, mean) |"
echo "|---|---|---|---|---|"
sort "$tmp" | awk -F'|' '{ k = $1 "|" $2; n[k]++; v[k, n[k]] = $3; s[k] += $4; w[$1] = 1 }
    END { for (k in n) { m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i];
              for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
              med[k] = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2; sk[k] = s[k] / m }
          for (x in w) { on = med[x "|none"]; off = med[x "|arms"]
              ch = (off > 0) ? (off - on) * 100 / off : 0
              printf "| %s | %.2f | %.2f | %+.1f%% | %d |\n", x, on, off, ch, sk[x "|none"] } }' | sort
