# SPDX-License-Identifier: BSD-2-Clause
# bench/plots/cuda.gp - GPU round trip per batch: mkrt's persistent
# megakernel vs a kernel launch per layer vs a CUDA Graph
# (bench/cuda_bench.c), p50 and p99 by batch shape, from
# bench/results/cuda.csv into bench/results/plots/cuda.png. cuda.csv comes
# from 'make bench-cuda RECORD=1' on a GPU machine; without it this script
# prints a note and draws nothing. Run from the repository root: make plots.
load (exists("plotdir") ? plotdir : "bench/plots")."/common.gp"
if (!exists("csv")) csv = resultdir."/cuda.csv"
if (!exists("png")) png = resultdir."/plots/cuda.png"
if (!has_file(csv)) { \
    print "cuda.gp: skipped the GPU chart: no ".csv." yet (run make bench-cuda RECORD=1 on a GPU machine)"; \
    exit \
}

machine = machine_of(resultdir."/cuda.md")
gap = 1  # as in "set style histogram clustered gap 1" below
# x of bar k (1-based) of n in cluster x0 of a clustered histogram.
barx(x0, k, n) = x0 + (k - 1 - (n - 1) / 2.0) / (n + gap)
# "16 layers x 1K items" -> "16 layers\nx 1K items"
shape(s) = (p = strstrt(s, " x "), p ? s[1:p - 1]."\n".s[p + 1:] : s)

set output png
set multiplot layout 1,2 title \
    sprintf("GPU round trip per batch, host-observed: persistent megakernel vs launch + sync per layer vs CUDA Graph\n%s; %s", machine, csv) font ",13"
set style data histograms
set style histogram clustered gap 1
set boxwidth 0.9 relative
set xtics scale 0
set logscale y 10
set yrange [*:*]
set key top left horizontal Left reverse samplen 2 font ",10"
set bmargin 5

do for [pc in "p50 p99"] {
    cs = "round trip ".pc
    set title "Round trip ".pc." (lower is better)"
    set ylabel "round trip (microseconds, log scale)"
    cols = impl_cols("cuda", cs, "us")
    n = words(cols)
    set xrange [-0.5:pivot_rows("cuda", cs, "us") - 0.5]
    set yrange [*:case_max("cuda", cs, "us") * 8]  # room for the key
    plot for [k=1:n] pivot("cuda", cs, "us") using (column(ci(k) + 1)):xtic(shape(strcol(1))) \
             lc rgb colour(ci(k)) title columnhead(ci(k) + 1), \
         for [k=1:n] pivot("cuda", cs, "us") \
             using (barx($0, k, n)):(column(ci(k) + 1)):(fmt(column(ci(k) + 1))) \
             with labels offset 0, 0.7 font ",9" notitle
    unset key
}
unset multiplot
set output
