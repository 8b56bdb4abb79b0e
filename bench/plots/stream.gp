# SPDX-License-Identifier: BSD-2-Clause
# bench/plots/stream.gp - streaming graphs, mkrt beside RisGraph on
# RisGraph's sliding window (bench/stream_bench.c): updates/s and p99 per
# batch, by analyses and batch size, from bench/results/stream.csv (rows
# system,analyses,batch,mode,updates_per_s,p50,p99,p999,bytes,validated)
# into bench/results/plots/stream.png. Run from the repository root: make plots.
load (exists("plotdir") ? plotdir : "bench/plots")."/common.gp"
if (!exists("csv")) csv = resultdir."/stream.csv"
if (!exists("png")) png = resultdir."/plots/stream.png"
if (!has_file(csv)) { print "stream.gp: no ".csv." (stream_bench --risgraph DIR --csv FILE)"; exit }

# One table: a row per "analyses B", a column per system/mode, the field
# f (5 updates/s, 7 p99) of each.
table(f) = sprintf("< awk -F, -v f=%d 'NR > 1 { k = $2 \" \" $3; s = $1 \" \" $4; \
    if (!(k in seen)) { seen[k] = 1; rows[++nr] = k } if (!(s in sc)) { sc[s] = 1; cols[++nc] = s } v[k, s] = $f } \
    END { printf \"case\"; for (c = 1; c <= nc; c++) printf \",%%s\", cols[c]; print \"\"; \
    for (r = 1; r <= nr; r++) { printf \"%%s\", rows[r]; for (c = 1; c <= nc; c++) printf \",%%s\", \
    ((rows[r], cols[c]) in v) ? v[rows[r], cols[c]] : \"NaN\"; print \"\" } }' '%s'", f, csv)
ncols = system(sprintf("awk -F, 'NR > 1 && !(($1 \" \" $4) in s) { s[$1 \" \" $4] = 1; n++ } END { print n }' '%s'", csv)) + 0

set output png
set datafile separator ","
set multiplot layout 2,1 title sprintf("Streaming graphs on RisGraph's sliding window: mkrt and RisGraph, same run\n%s", csv) font ",13"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8
set boxwidth 0.9 relative
set xtics rotate by -30 scale 0 font ",9"
set logscale y
set key outside right top font ",9"
set grid ytics

set title "Updates per second (higher is better)"
set ylabel "updates/s"
plot for [k=2:ncols + 1] table(5) using k:xtic(1) title columnhead(k)

set title "p99 per batch (lower is better)"
set ylabel "microseconds"
plot for [k=2:ncols + 1] table(7) using k:xtic(1) title columnhead(k)
unset multiplot
set output
