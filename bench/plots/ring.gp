# SPDX-License-Identifier: BSD-2-Clause
# bench/plots/ring.gp - ring throughput vs DPDK rte_ring, ck_ring, liburcu
# wfcqueue and a mutex ring, by producer burst size, from
# bench/results/ring.csv (make bench RECORD=1) into
# bench/results/plots/ring.png. Run from the repository root: make plots.
load (exists("plotdir") ? plotdir : "bench/plots")."/common.gp"
if (!exists("csv")) csv = resultdir."/ring.csv"
if (!exists("png")) png = resultdir."/plots/ring.png"
if (!has_file(csv)) { print "ring.gp: no ".csv." (make bench RECORD=1)"; exit }

names = impl_names("ring", "M items/s")
# mkrt's own rings drawn thick and solid, the peers thinner and dashed.
style(i) = is_mkrt(word(names, i)) ? 1 : 0
dash(i) = style(i) ? 1 : 2
machine = machine_of(resultdir."/ring.md")

set output png
set multiplot layout 1,2 title \
    sprintf("Ring throughput, 16-byte items: producers push bursts, one consumer pops up to 64 per call\n%s; %s", machine, csv) font ",13"
set logscale x 2
set logscale y 10
set xrange [0.8:80]
set xtics ("1" 1, "8" 8, "64" 64)
set xlabel "producer burst size (items per push call)"
set ylabel "throughput (million items/s, log scale)"
set yrange [1:*]
set key top left Left reverse samplen 3 spacing 1.1 font ",10" box opaque

set title "1 producer : 1 consumer (pinned to CPUs 0 and 1)"
cols = impl_cols("ring", "1P1C", "M items/s")
plot for [k=1:words(cols)] pivot("ring", "1P1C", "M items/s") using 1:(column(ci(k) + 1)) \
     with linespoints lc rgb colour(ci(k)) lw (style(ci(k)) ? 3.5 : 1.8) dt dash(ci(k)) \
     pt (style(ci(k)) ? 7 : 6) ps (style(ci(k)) ? 1.4 : 1.1) title word(names, ci(k))

set title "2 producers : 1 consumer (3 threads on 2 CPUs)"
unset key
cols = impl_cols("ring", "2P1C", "M items/s")
plot for [k=1:words(cols)] pivot("ring", "2P1C", "M items/s") using 1:(column(ci(k) + 1)) \
     with linespoints lc rgb colour(ci(k)) lw (style(ci(k)) ? 3.5 : 1.8) dt dash(ci(k)) \
     pt (style(ci(k)) ? 7 : 6) ps (style(ci(k)) ? 1.4 : 1.1) title word(names, ci(k))
unset multiplot
set output
