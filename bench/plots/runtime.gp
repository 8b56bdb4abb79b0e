# SPDX-License-Identifier: BSD-2-Clause
# bench/plots/runtime.gp - the runtime end to end vs a mutex + condition
# variable queue feeding a thread pool (bench/runtime_bench.c): throughput
# by op and producer count, and single-item round-trip latency, from
# bench/results/runtime.csv (make bench RECORD=1) into
# bench/results/plots/runtime.png. Run from the repository root: make plots.
load (exists("plotdir") ? plotdir : "bench/plots")."/common.gp"
if (!exists("csv")) csv = resultdir."/runtime.csv"
if (!exists("png")) png = resultdir."/plots/runtime.png"
if (!has_file(csv)) { print "runtime.gp: no ".csv." (make bench RECORD=1)"; exit }

machine = machine_of(resultdir."/runtime.md")
# "NOP 2" -> "NOP\n2 producers"
producers(s) = word(s, 1)."\n".word(s, 2).(word(s, 2) eq "1" ? " producer" : " producers")
gap = 1  # as in "set style histogram clustered gap 1" below
# x of bar k (1-based) of n in cluster x0 of a clustered histogram.
barx(x0, k, n) = x0 + (k - 1 - (n - 1) / 2.0) / (n + gap)

set output png
set multiplot layout 1,2 title \
    sprintf("Runtime end to end: mkrt vs a mutex+condvar queue per worker feeding a thread pool (2 workers each)\n%s; %s", machine, csv) font ",13"
set style data histograms
set style histogram clustered gap 1
set boxwidth 0.9 relative
set xtics scale 0
set yrange [0:*]
set offsets 0, 0, graph 0.2, 0  # room for the value labels and the key
set bmargin 5
set key top left horizontal Left reverse samplen 2 font ",10"

set title "Throughput, bursts of 64 items (higher is better)"
set ylabel "throughput (million items/s)"
cols = impl_cols("runtime", "throughput*", "M items/s")
n = words(cols)
set xrange [-0.5:pivot_rows("runtime", "throughput*", "M items/s") - 0.5]
plot for [k=1:n] pivot("runtime", "throughput*", "M items/s") using (column(ci(k) + 1)):xtic(producers(strcol(1))) \
         lc rgb colour(ci(k)) title columnhead(ci(k) + 1), \
     for [k=1:n] pivot("runtime", "throughput*", "M items/s") \
         using (barx($0, k, n)):(column(ci(k) + 1)):(fmt(column(ci(k) + 1))) \
         with labels offset 0, 0.7 font ",9" notitle

set title "Latency, one item published then waited for (lower is better)"
set ylabel "round trip (microseconds)"
cols = impl_cols("runtime", "latency", "us")
n = words(cols)
set xrange [-0.5:pivot_rows("runtime", "latency", "us") - 0.5]
plot for [k=1:n] pivot("runtime", "latency", "us") using (column(ci(k) + 1)):xtic(1) \
         lc rgb colour(ci(k)) title columnhead(ci(k) + 1), \
     for [k=1:n] pivot("runtime", "latency", "us") \
         using (barx($0, k, n)):(column(ci(k) + 1)):(fmt(column(ci(k) + 1))) \
         with labels offset 0, 0.7 font ",9" notitle
unset multiplot
set output
