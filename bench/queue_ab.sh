#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bench/queue_ab.sh - QUEUE's A/B on graph_bench (issue 23): PAIRS pairs of
# runs, QUEUE on (MKRT_PLAN_OFF=none) then off (MKRT_PLAN_OFF=queue), BFS and
# SSSP on kron and urand at SCALE, 2 threads, GAPBS beside each run; prints
# per configuration the median ms per search and the median of mkrt's time
# over GAPBS's in the same run (GAPBS runs right after mkrt, so the ratio
# cancels some of a loaded machine's noise).
#   sh bench/queue_ab.sh [SCALE] [PAIRS] [GAPBS_DIR]
scale=${1:-16}; pairs=${2:-3}; gapbs=${3:-/tmp/gapbs}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for i in $(seq 1 "$pairs"); do
    for off in none queue; do
        MKRT_PLAN_OFF=$off build/bench/graph_bench --gapbs "$gapbs" --graph kron,urand --scale "$scale" \
            --threads 2 --kernel bfs,sssp --trials 3 > "$tmp/run" 2>&1 || { cat "$tmp/run"; exit 1; }
        grep -E '^\| (kron|urand) \| (bfs|sssp) \| (mkrt-cpu|gapbs) \|' "$tmp/run" | sed "s/^/$i $off /" >> "$tmp/all"
    done
done
awk '{ k = $4 " " $6 " " $2; if ($8 == "mkrt-cpu") m[k, $1] = $12; else g[k, $1] = $12; keys[k] = 1 }
     END { for (k in keys) { line = k "|"; for (i = 1; i <= '"$pairs"'; i++) line = line " " m[k, i] "/" g[k, i]; print line } }' \
    "$tmp/all" | sort | while IFS='|' read -r k runs; do
    med() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
    ms=$(echo "$runs" | tr ' ' '\n' | grep . | cut -d/ -f1 | med)
    ratio=$(echo "$runs" | tr ' ' '\n' | grep . | awk -F/ '{ print $1 / $2 }' | med)
    printf '| %s | %s | %.2f | %s |\n' "$k" "$ms" "$ratio" "$runs"
done
