# SPDX-License-Identifier: BSD-2-Clause
# bench/plots/graph_pivot.awk - one graph family of bench/results/graph.csv
# (engine,kernel,graph,scale,threads,seconds,mteps; bench/graph_bench.c) as
# a tab-separated table for gnuplot: a header "kernel<TAB>engines...", then
# one row per kernel (bfs, sssp, cc, pr) with the milliseconds per search
# or run of each engine, "NaN" where it has none:
#
#   awk -F, -v fam=kron -f bench/plots/graph_pivot.awk bench/results/graph.csv
#
# The engine columns are always mkrt-cpu gapbs graphblas igraph reference,
# so an engine keeps its colour in both panels.
BEGIN {
    FS = ","
    ne = split("mkrt-cpu gapbs graphblas igraph reference", eng, " ")
    nk = split("bfs sssp cc pr", ker, " ")
}
NR > 1 && $3 == fam { ms[$2, $1] = $6 * 1000 }
END {
    printf "kernel"
    for (e = 1; e <= ne; e++) printf "\t%s", eng[e]
    printf "\n"
    for (k = 1; k <= nk; k++) {
        printf "%s", ker[k]
        for (e = 1; e <= ne; e++) printf "\t%s", ((ker[k], eng[e]) in ms) ? ms[ker[k], eng[e]] : "NaN"
        printf "\n"
    }
}
