# SPDX-License-Identifier: BSD-2-Clause
# bench/plots/scaling.gp - graph kernels at 1 to 16 threads, mkrt beside
# GAPBS (make bench-scaling): time per search or run against threads, one
# panel per graph and kernel, from bench/results/scaling.csv into
# bench/results/plots/scaling.png. Run from the repository root.
load (exists("plotdir") ? plotdir : "bench/plots")."/common.gp"
if (!exists("csv")) csv = resultdir."/scaling.csv"
if (!exists("png")) png = resultdir."/plots/scaling.png"
if (!has_file(csv)) { print "scaling.gp: no ".csv." (make bench-scaling GAPBS=DIR)"; exit }

# threads, milliseconds of one engine on one graph and kernel.
series(g, k, e) = sprintf("< awk -F, 'BEGIN { print \"threads ms\" } $1 == \"graph\" && $2 == \"%s\" && $3 == \"%s\" && $4 == \"%s\" { print $5, $6 * 1e3 }' '%s'", \
                          k, g, e, csv)

set terminal pngcairo size 1600,800 noenhanced font "DejaVu Sans,10"
set output png
set multiplot layout 2,4 title sprintf("Graph kernels against threads: mkrt vs GAPBS (%s)", csv) font ",13"
set datafile separator whitespace
set logscale x 2
set logscale y
set xlabel "threads"
set ylabel "ms per search or run"
set key top right
set grid
do for [g in "kron urand"] {
    do for [k in "bfs sssp cc pr"] {
        set title sprintf("%s %s", g, k)
        plot series(g, k, "mkrt-cpu") using 1:2 with linespoints lw 2 pt 7 title "mkrt", \
             series(g, k, "gapbs") using 1:2 with linespoints lw 2 pt 5 dt 2 title "GAPBS"
    }
}
unset multiplot
