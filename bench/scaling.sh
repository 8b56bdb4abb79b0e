#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bench/scaling.sh - `make bench-scaling GAPBS=DIR [SCALE=20]`: graph_bench
# (mkrt beside GAPBS, kron and urand, one graph per family for every
# thread count), analysis_bench and runtime_bench at 1, 2, 4, 8 and 16
# threads (the counts above the CPUs present are left out, and the report
# says so); writes bench/results/scaling.md and scaling.csv and, with
# gnuplot, bench/results/plots/scaling.png (bench/plots/scaling.gp).
#
#   bench/scaling.sh GAPBS_DIR [SCALE] [ROOTS] [TRIALS]
#
# Defaults: scale 20, 2 roots, 2 trials of CC and PageRank (the sizes the
# 16-CPU run is budgeted for, about 4 minutes: the sequential reference
# answers, GAPBS's converted files and its -v at the first count are the
# serial part). The benchmarks must be
# built (the make target builds them). Every graph result is validated by
# graph_bench (a wrong answer fails the run and nothing is written).
set -eu
gapbs=${1:-}
scale=${2:-20}
roots=${3:-2}
trials=${4:-2}
res=bench/results
if [ -z "$gapbs" ] || [ ! -x "$gapbs/bfs" ]; then
    echo "bench-scaling: no GAPBS binaries in '$gapbs'. Fix: a GAPBS build (git clone" \
         "https://github.com/sbeamer/gapbs /tmp/gapbs && make -C /tmp/gapbs -j; README, graph_bench)," \
         "then make bench-scaling GAPBS=/tmp/gapbs" >&2
    exit 2
fi
cpus=$(getconf _NPROCESSORS_ONLN)
list=""
skipped=""
for t in 1 2 4 8 16; do
    if [ "$t" -le "$cpus" ]; then list="$list${list:+,}$t"; else skipped="$skipped $t"; fi
done
tmp=$(mktemp -d /tmp/mkrt-scaling-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
load0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)
echo "bench-scaling: threads $list on $cpus CPUs${skipped:+ (left out:$skipped)}; scale $scale"
build/bench/graph_bench --gapbs "$gapbs" --graph kron,urand --scale "$scale" --threads "$list" \
    --roots "$roots" --trials "$trials" --csv "$tmp/graph.csv" --out "$tmp/graph.md"
for t in $(echo "$list" | tr , ' '); do
    build/bench/analysis_bench --quick --threads "$t" --csv "$tmp/analysis_$t.csv" >/dev/null
    build/bench/runtime_bench --quick --threads "$t" --csv "$tmp/runtime_$t.csv" >/dev/null
    echo "analysis_bench, runtime_bench: $t threads done"
done
seconds=$(( $(date +%s) - start ))

# One long CSV: suite,case,graph,impl,threads,value,unit.
{
    echo "suite,case,graph,impl,threads,value,unit"
    awk -F, 'NR > 1 && ($1 == "mkrt-cpu" || $1 == "gapbs") {
        print "graph," $2 "," $3 "," $1 "," $5 "," $6 ",s"
        if ($9 != "") print "graph," $2 "_cpu_per_wall," $3 "," $1 "," $5 "," $9 ",CPU/(wall x threads)"
    }' "$tmp/graph.csv"
    for t in $(echo "$list" | tr , ' '); do
        awk -F, -v t="$t" 'NR > 1 && ($2 == "time" || $2 == "cpu") && $3 == "15000" {
            print "analysis," $2 "," $3 " blocks," $4 "," t "," $5 "," $6 }' "$tmp/analysis_$t.csv"
        awk -F, -v t="$t" 'NR > 1 { print "runtime," $2 " " $3 ",-," $4 "," t "," $5 "," $6 }' "$tmp/runtime_$t.csv"
    done
} > "$res/scaling.csv"

# The report.
{
    echo "# Scaling: mkrt beside GAPBS at 1 to 16 threads"
    echo
    echo "Command: \`make bench-scaling GAPBS=$gapbs SCALE=$scale\` (bench/scaling.sh $gapbs $scale $roots $trials),"
    echo "$(date -u +%Y-%m-%d), $seconds s; machine: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //'), $cpus CPUs,"
    echo "$(uname -n); load average $load0 at the start, $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown) at the end."
    echo "Threads run: $list.${skipped:+ Left out (more than the $cpus CPUs present):$skipped.}"
    if [ -n "$skipped" ]; then
        echo "Those rows wait for a machine with that many CPUs (the lent device host: the same command there)."
    fi
    echo
    echo "graph_bench: Kronecker and uniform random graphs of scale $scale (edge factor 16), $roots roots"
    echo "(BFS, SSSP) and $trials trials (CC, PageRank) per thread count, every answer validated (BFS and SSSP"
    echo "against the sequential reference, CC against union-find, PageRank against the fixed point);"
    echo "GAPBS's own per-trial times (its -v verification at the first count, its -a answers checked at all);"
    echo "one graph per family for all thread counts. Speedup: the 1-thread"
    echo "time over this one, per engine. CPU / (wall x threads): CPU time of all the engine's threads"
    echo "(mkrt: getrusage around the call; GAPBS: its own runs, 3 trials less 1) over the wall time and"
    echo "threads (1.0: every thread busy)."
    echo
    echo "| graph | kernel | threads | mkrt ms | GAPBS ms | GAPBS / mkrt | mkrt speedup | GAPBS speedup | mkrt CPU / (wall x threads) | GAPBS CPU / (wall x threads) |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1 && ($1 == "mkrt-cpu" || $1 == "gapbs") {
        k = $3 SUBSEP $2; e = ($1 == "gapbs"); sec[k, $5, e] = $6; cpu[k, $5, e] = $9
        if (!(k in seen)) { seen[k] = 1; order[++n] = k }
        if (!($5 in tseen)) { tseen[$5] = 1; ts[++nt] = $5 }
    } END {
        for (i = 1; i <= n; i++) {
            k = order[i]; split(k, gk, SUBSEP)
            for (j = 1; j <= nt; j++) {
                t = ts[j]; m = sec[k, t, 0]; g = sec[k, t, 1]; m1 = sec[k, ts[1], 0]; g1 = sec[k, ts[1], 1]
                if (m == "") continue
                printf "| %s | %s | %s | %.3f | %s | %s | %.2fx | %s | %s | %s |\n", gk[1], gk[2], t, m * 1e3,
                    g == "" ? "-" : sprintf("%.3f", g * 1e3), g == "" ? "-" : sprintf("%.2fx", g / m), m1 / m,
                    g == "" ? "-" : sprintf("%.2fx", g1 / g), cpu[k, t, 0] == "" ? "-" : cpu[k, t, 0],
                    cpu[k, t, 1] == "" ? "-" : cpu[k, t, 1]
            }
        }
    }' "$tmp/graph.csv"
    echo
    echo "runtime_bench --quick --threads N: mkrt with N workers beside a mutex+condvar pool of N workers"
    echo "(200000 items per producer, bursts of 64); throughput in M items/s, CPU / wall of all the"
    echo "process's threads (producers included); single-item round trip p50 and p99 (us)."
    echo
    echo "| threads | NOP 1 producer: mkrt / pool | ADD 2 producers: mkrt / pool | CPU / wall, ADD 2: mkrt / pool | p50 mkrt / pool | p99 mkrt / pool |"
    echo "|---|---|---|---|---|---|"
    for t in $(echo "$list" | tr , ' '); do
        awk -F, -v t="$t" 'NR > 1 { v[$2 " " $3 " " $4] = $5 } END {
            printf "| %s | %.1f / %.1f | %.1f / %.1f | %.2f / %.2f | %.1f / %.1f | %.1f / %.1f |\n", t,
                v["throughput NOP 1 mkrt"], v["throughput NOP 1 mutex+condvar pool"],
                v["throughput ADD 2 mkrt"], v["throughput ADD 2 mutex+condvar pool"],
                v["cpu ADD 2 mkrt"], v["cpu ADD 2 mutex+condvar pool"],
                v["latency p50 mkrt"], v["latency p50 mutex+condvar pool"],
                v["latency p99 mkrt"], v["latency p99 mutex+condvar pool"] }' "$tmp/runtime_$t.csv"
    done
    echo
    echo "analysis_bench --quick --threads N: reaching definitions on 15000 blocks; seconds (wall) and CPU"
    echo "seconds per solve, one run each; mkrt with N workers, the hand-written worklist with N threads."
    echo
    echo "| threads | sequential s | mkrt (N workers) s | mkrt CPU s | hand-written s | hand-written CPU s |"
    echo "|---|---|---|---|---|---|"
    for t in $(echo "$list" | tr , ' '); do
        awk -F, -v t="$t" 'NR > 1 && $3 == "15000" { v[$2 " " $4] = $5 } END {
            w = "mkrt with " t " workers"
            printf "| %s | %.4f | %.4f | %.4f | %.4f | %.4f |\n", t, v["time sequential (block order)"],
                v["time " w], v["cpu " w], v["time hand-written parallel"], v["cpu hand-written parallel"] }' \
            "$tmp/analysis_$t.csv"
    done
    echo
    echo "Raw rows: bench/results/scaling.csv; chart: bench/results/plots/scaling.png (speedup over 1 thread"
    echo "per kernel, mkrt and GAPBS). graph_bench's full report of this run follows."
    echo
    sed -n '/^| graph | kernel | engine/,$p' "$tmp/graph.md"
} > "$res/scaling.md"
echo "bench-scaling: wrote $res/scaling.md and $res/scaling.csv in $seconds s"
if command -v gnuplot >/dev/null 2>&1; then
    mkdir -p "$res/plots"
    gnuplot bench/plots/scaling.gp && echo "bench-scaling: wrote $res/plots/scaling.png"
else
    echo "bench-scaling: no gnuplot: no chart (make bench-deps installs gnuplot-nox)"
fi
