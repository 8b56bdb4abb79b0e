#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tests/cli/check_graph_cli.sh - bad input to the graph programs: an
# unknown graph family or kernel, a truncated edge list, a vertex id out of
# range, a GAPBS folder without its binaries. Each must print a message
# with a fix and exit 2 (never crash, never run on a wrong graph).
#   GRAPH_BFS=build/examples/graph_bfs [GRAPH_BENCH=build/bench/graph_bench] sh check_graph_cli.sh
. "$(dirname "$0")/../tap.sh"
bfs=${GRAPH_BFS:-build/examples/graph_bfs}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect2() { # expect2 DESCRIPTION NEEDLE COMMAND...
    what=$1 needle=$2
    shift 2
    "$@" >"$tmp/out" 2>&1
    rc=$?
    [ "$rc" -eq 2 ]
    ok $? "$what: exit 2 (got $rc)"
    grep -q -- "$needle" "$tmp/out"
    ok $? "$what: says '$needle'" || diag_file "$tmp/out"
}

expect2 "graph_bfs --graph rmat" "unknown graph family 'rmat'" "$bfs" --graph rmat
expect2 "graph_bfs --kernel bc" "unknown kernel 'bc'" "$bfs" --kernel bc
printf '0 1\n1 2\n3\n' >"$tmp/trunc.el"
expect2 "graph_bfs on a truncated edge list" "line 3" "$bfs" --el "$tmp/trunc.el"
printf '0 1\n1 7\n' >"$tmp/range.el"
expect2 "graph_bfs on an id out of range" "vertex id 7 is out of range" \
    "$bfs" --el "$tmp/range.el" --vertices 4
printf '0 1\n1 2\n2 0\n3 4\n' >"$tmp/good.el"
"$bfs" --el "$tmp/good.el" --roots 2 --threads 2 >"$tmp/out" 2>&1
ok $? "graph_bfs on a good edge list: all four kernels validated" || diag_file "$tmp/out"
grep -q "CC: 2 components" "$tmp/out"
ok $? "  its two components found"

# graph_bench is built by `make bench`, not `make check`: checked where it
# is built and newer than its sources.
src=$(dirname "$0")/../../bench
if [ -n "${GRAPH_BENCH:-}" ] && [ -x "$GRAPH_BENCH" ] && [ "$GRAPH_BENCH" -nt "$src/graph_bench.c" ] &&
    [ "$GRAPH_BENCH" -nt "$src/graph/run_family.c" ]; then
    expect2 "graph_bench --graph rmat" "unknown graph family" "$GRAPH_BENCH" --graph rmat
    expect2 "graph_bench --kernel bc" "unknown kernel 'bc'" "$GRAPH_BENCH" --kernel bc
    expect2 "graph_bench --gapbs on a folder without GAPBS" "no GAPBS binaries" \
        "$GRAPH_BENCH" --gapbs "$tmp"
fi
done_testing
