#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bench/mega_ab.sh - the CPU pool as a persistent megakernel (issue 33
# part B), old and new side by side: each measurement runs the old build
# and the new one back to back, ROUNDS times, alternating which goes
# first, so the machine's drift hits both alike. Prints one line per run
# (side, measurement, figures) for bench/results/megakernel.md.
#
#   OLD=/tmp/old-mega NEW=. GAPBS=DIR sh bench/mega_ab.sh [ROUNDS] [WHAT]
# (GAPBS=DIR: a GAPBS build, its bfs and sssp binaries; see graph_bench in
# the README)
#
# PIN: a prefix for every command (PIN="taskset -c 0,1": a 2-CPU process
# on a larger machine; the runtime sizes itself from its affinity mask).
# THREADS: graph_bench's --threads values (default "1 2").
# OLD and NEW are trees with `make build/bench/graph_bench
# build/bench/peer_bench build/bench/runtime_bench
# build/examples/analysis_demo` done. WHAT: any of demo, peer, latency,
# graph (default: all). graph runs graph_bench at scale 18, kron and
# urand, BFS and SSSP, --threads 1 and 2, beside GAPBS, and counts the
# futex calls and context switches of the whole run with perf stat
# (they include GAPBS's and the graph's generation: compare old with
# new, not with zero).
#
# "workers" means different thread counts on the two sides: the old pool
# ran `workers` threads beside the dispatcher (W + 1 threads), the new one
# runs W threads in all, the dispatching thread among them.
set -u
R=${1:-3}
WHAT=${2:-demo peer latency graph}
OLD=${OLD:?set OLD to the old tree}
NEW=${NEW:-.}
GAPBS=${GAPBS:?set GAPBS to a GAPBS build (its bfs and sssp binaries). Fix: git clone https://github.com/sbeamer/gapbs and make -C gapbs, then GAPBS=gapbs}
SCALE=${SCALE:-18}
PIN=${PIN:-}
THREADS=${THREADS:-1 2}
# perf stat where it is installed and allowed; else the run alone
perf_stat() { # file command...
    f=$1; shift
    if perf stat -x, -e syscalls:sys_enter_futex true >/dev/null 2>&1; then
        perf stat -x, -e syscalls:sys_enter_futex,context-switches -o "$f" "$@"
    else
        : > "$f"; "$@"
    fi
}

run_side() { # side tree what
    side=$1 t=$2
    case $3 in
    demo)
        for nw in 0 1 2; do
            $PIN "$t/build/examples/analysis_demo" --workers "$nw" | awk -v s="$side" -v w="$nw" '
                /^  sequential solver/ {seq = $NF} /^  mkrt \(s\)/ {mk = $NF} /^  speedup/ {sp = $NF}
                END {print s, "demo workers=" w, "sequential_s " seq, "mkrt_s " mk, "speedup " sp}'
        done ;;
    peer)
        $PIN "$t/build/bench/peer_bench" --mkrt-only | awk -v s="$side" '/M\/s/ {print s, "peer", $0}' ;;
    latency)
        $PIN "$t/build/bench/runtime_bench" | awk -v s="$side" '/^\| p50|^\| p99/ {print s, "latency", $0}' ;;
    graph)
        for th in $THREADS; do
            perf_stat /tmp/mega_ab_perf.$$ $PIN "$t/build/bench/graph_bench" --gapbs "$GAPBS" --graph kron,urand --scale "$SCALE" \
                --kernel bfs,sssp --threads "$th" |
                awk -v s="$side" -v th="$th" -F'|' '/^\| (kron|urand) \| (bfs|sssp) \| (mkrt-cpu|gapbs) / {
                    gsub(/ /, "", $2); gsub(/ /, "", $3); gsub(/ /, "", $4); gsub(/ /, "", $6)
                    print s, "graph threads=" th, $2, $3, $4, "ms " $6}'
            awk -F, -v s="$side" -v th="$th" '/futex|context/ {print s, "graph threads=" th, "whole-run", $3, $1}' \
                /tmp/mega_ab_perf.$$
        done
        rm -f /tmp/mega_ab_perf.$$ ;;
    esac
}

i=0
while [ "$i" -lt "$R" ]; do
    for m in $WHAT; do
        if [ $((i % 2)) -eq 0 ]; then
            run_side old "$OLD" "$m"; run_side new "$NEW" "$m"
        else
            run_side new "$NEW" "$m"; run_side old "$OLD" "$m"
        fi
    done
    i=$((i + 1))
done
