# SPDX-License-Identifier: BSD-2-Clause
# bench/plots/graph.gp - the graph kernels (bench/graph_bench.c): time per
# BFS or SSSP search and per CC or PageRank run, for each engine (mkrt's CPU
# pool, GAPBS, GraphBLAS, igraph, the sequential reference), one panel per
# graph family, from bench/results/graph.csv into
# bench/results/plots/graph.png. Run from the repository root: make plots.
load (exists("plotdir") ? plotdir : "bench/plots")."/common.gp"
if (!exists("csv")) csv = resultdir."/graph.csv"
if (!exists("png")) png = resultdir."/plots/graph.png"
if (!has_file(csv)) { print "graph.gp: no ".csv." (make bench RECORD=1 GAPBS=DIR)"; exit }

machine = machine_of(resultdir."/graph.md")
table(fam) = sprintf("< awk -v fam='%s' -f '%s/graph_pivot.awk' '%s'", fam, plotdir, csv)
scale = system(sprintf("awk -F, 'NR == 2 { print $4 }' '%s'", csv))
threads = system(sprintf("awk -F, '$1 == \"mkrt-cpu\" { print $5; exit }' '%s'", csv))
n = 5  # engine columns (graph_pivot.awk)
cols = "1 2 3 7 8"  # common.gp colours: mkrt blue, GAPBS orange, GraphBLAS, igraph, reference
gap = 1
barx(x0, k) = x0 + (k - 1 - (n - 1) / 2.0) / (n + gap)

set output png
set multiplot layout 1,2 title \
    sprintf("Graph kernels, scale %s, edge factor 16, %s threads: time per search (BFS, SSSP) or run (CC, PageRank); lower is better\n%s; %s", \
            scale, threads, machine, csv) font ",13"
set style data histograms
set style histogram clustered gap 1
set boxwidth 0.9 relative
set xtics scale 0
set logscale y
set yrange [*:*]
set offsets 0, 0, graph 0.25, 0
set bmargin 4
set key top left horizontal Left reverse samplen 2 font ",10"
set ylabel "milliseconds (log scale)"
set xrange [-0.5:3.5]
do for [fam in "kron urand"] {
    set title (fam eq "kron" ? "Graph500 Kronecker (kron)" : "uniform random (urand)")
    plot for [k=1:n] table(fam) using (column(k + 1)):xtic(1) lc rgb colour(word(cols, k) + 0) title columnhead(k + 1), \
         for [k=1:n] table(fam) using (barx($0, k)):(column(k + 1)):(fmt(column(k + 1))) \
             with labels offset 0, 0.7 font ",8" notitle
}
unset multiplot
set output
