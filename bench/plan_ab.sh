#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bench/plan_ab.sh - A/B of the plan's decisions (issue 23): every
# workload run with the decisions on (MKRT_PLAN_OFF=none), all forced off
# (MKRT_PLAN_OFF=all), and each one forced off alone, interleaved round
# by round in one run of this script (so the machine's drift hits every
# configuration alike); the median of ROUNDS runs per configuration.
#
#   sh bench/plan_ab.sh [ROUNDS] > bench/results/plan_decisions.md
#
# Workloads: peer_bench's four (--quick --mkrt-only, mkrt with 2
# workers and with its default), graph_bench's four kernels (Kronecker,
# scale GSCALE (default 18), 4 roots, 2 trials, 2 threads), the analysis demo (--quick), and bursty_bench on
# the CPU pool and on the simulated device. Needs the binaries built:
#   make build/bench/peer_bench build/bench/graph_bench \
#        build/examples/analysis_demo build/bench/bursty_bench
set -u
R=${1:-5}
B=${BUILD:-build}
GSCALE=${GSCALE:-18} # the graph kernels' Kronecker scale (18: runs of 5-60 ms, not 1-6 ms)
CONFS=${CONFS:-"none all wake shed fuse route drain pull arms queue"} # a subset: CONFS="none all fuse"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# One round: every configuration once, each workload; "metric value" lines
# appended to $tmp/<conf>.
run_round() {
    for c in $CONFS; do
        export MKRT_PLAN_OFF=$c
        "$B/bench/peer_bench" --quick --mkrt-only 2>/dev/null | awk '
            /: mkrt default .* M\/s, 1 worker/ {
                name = $0; sub(/: mkrt default.*/, "", name); gsub(/[ ,]+/, "_", name)
                split($0, a, "mkrt default "); split(a[2], d, " "); 
                split($0, b, "2 workers "); split(b[2], w, " ")
                print "peer " name " default_Mitems/s " d[1]; print "peer " name " 2workers_Mitems/s " w[1] }' >> "$tmp/$c"
        "$B/bench/graph_bench" --quick --graph kron --scale "$GSCALE" --roots 4 --trials 2 --threads 2 2>/dev/null |
            awk '/^mkrt-cpu (bfs|sssp|cc|pr): / { k = $2; sub(/:/, "", k); print "graph " k " ms " $3 }' >> "$tmp/$c"
        "$B/examples/analysis_demo" --quick 2>/dev/null |
            awk '/^  mkrt \(s\)/ { print "analysis demo ms " $3 * 1000 }' >> "$tmp/$c"
        for sim in "" --sim; do
            "$B/bench/bursty_bench" $sim 2>/dev/null | awk -v s="${sim:-cpu}" ' BEGIN { gsub(/-/, "", s) }
                { for (i = 1; i <= NF; i++) { if ($i == "wall") w = $(i + 1); if ($i == "p50") p = $(i + 1); if ($i == "p99") q = $(i + 1) }
                  print "bursty " s " wall_ms " w; print "bursty " s " p50_us " p; print "bursty " s " p99_us " q }' >> "$tmp/$c"
        done
    done
}

i=0
while [ "$i" -lt "$R" ]; do
    run_round
    i=$((i + 1))
done

# Medians per (workload, metric, configuration).
for c in $CONFS; do
    sort "$tmp/$c" | awk -v c="$c" '
        { key = $1 " " $2 " " $3; v[key, ++n[key]] = $4; keys[key] = 1 }
        END { for (k in keys) { m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i];
              for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
              med = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2; print k, c, med } }'
done > "$tmp/medians"

echo "# The plan's decisions, on vs forced off (issue 23)"
echo
echo "Made by \`GSCALE=$GSCALE sh bench/plan_ab.sh $R\` on $(uname -m), $(nproc) CPUs ($(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD 2>/dev/null))."
echo "Median of $R rounds; each round runs every configuration once, interleaved."
echo "\"on\": every decision (MKRT_PLAN_OFF=none); \"all off\": MKRT_PLAN_OFF=all; \"-X\": only X off."
echo "Change = on against all off: for a rate (Mitems/s) higher is better, for times lower is better;"
echo "positive means the decisions pay."
echo
printf '| workload | metric | on | all off | change |'
for c in wake shed fuse route drain pull arms queue; do printf ' -%s |' "$c"; done
echo
printf '|---|---|---|---|---|'
for c in wake shed fuse route drain pull arms queue; do printf -- '---|'; done
echo
awk '{ key = $1 " " $2 "|" $3; val[key, $4] = $5; keys[key] = 1 }
     END { for (k in keys) print k }' "$tmp/medians" | sort | while IFS='|' read -r wl metric; do
    awk -v wl="$wl" -v metric="$metric" '
        $1 " " $2 == wl && $3 == metric { v[$4] = $5 }
        END { on = v["none"]; off = v["all"]
              rate = metric ~ /\/s$/
              ch = (off > 0) ? (rate ? (on / off - 1) * 100 : (off / on - 1) * 100) : 0
              printf "| %s | %s | %s | %s | %+.1f%% |", wl, metric, on, off, ch
              n = split("wake shed fuse route drain pull arms queue", d, " ")
              for (i = 1; i <= n; i++) printf " %s |", v[d[i]]
              printf "\n" }' "$tmp/medians"
done
