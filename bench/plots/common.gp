# SPDX-License-Identifier: BSD-2-Clause
# bench/plots/common.gp - what every chart shares; loaded by ring.gp,
# runtime.gp and cuda.gp, which 'make plots' runs from the repository root.
# gnuplot -e "resultdir='DIR'" bench/plots/X.gp reads DIR/X.csv and DIR/X.md
# and writes DIR/plots/X.png; -e "csv='FILE'; png='FILE'" sets those alone.

if (!exists("plotdir")) plotdir = "bench/plots"
if (!exists("resultdir")) resultdir = "bench/results"

# 1 when the file exists and is not empty.
has_file(f) = system(sprintf("[ -s '%s' ] && echo 1 || echo 0", f)) + 0

# One case of the benchmark's CSV as a table (bench/plots/pivot.awk).
pivot(bench, cs, unit) = sprintf("< awk -v bench='%s' -v cs='%s' -v unit='%s' -f '%s/pivot.awk' '%s'", \
                                 bench, cs, unit, plotdir, csv)
# How many rows (params) that table has.
pivot_rows(bench, cs, unit) = system(sprintf("awk -v bench='%s' -v cs='%s' -v unit='%s' -f '%s/pivot.awk' '%s' | wc -l", \
                                             bench, cs, unit, plotdir, csv)) - 1
# The largest figure of a case (prefix*, as pivot.awk) in a unit.
case_max(bench, cs, unit) = system(sprintf("awk -F, -v b='%s' -v cs='%s' -v u='%s' 'BEGIN { p = sub(/[*]$/, \"\", cs); m = 0 } \
    NR > 1 && $1 == b && $6 == u && (p ? index($2, cs) == 1 : $2 == cs) && $5 + 0 > m { m = $5 + 0 } END { print m }' '%s'", \
    bench, cs, unit, csv)) + 0
# The benchmark's impl names, quoted, for word(): one per pivot column.
impl_names(bench, unit) = system(sprintf("awk -v bench='%s' -v unit='%s' -v names=1 -f '%s/pivot.awk' '%s'", \
                                         bench, unit, plotdir, csv))
# The pivot columns (1 = first impl) with a figure in case cs, as words.
impl_cols(bench, cs, unit) = system(sprintf("awk -v bench='%s' -v cs='%s' -v unit='%s' -v cols=1 -f '%s/pivot.awk' '%s'", \
                                            bench, cs, unit, plotdir, csv))
# The k-th of those (set cols = impl_cols(...) first).
ci(k) = word(cols, k) + 0
# The "Machine: ..." line of a report (the .md written with the CSV).
machine_of(md) = system(sprintf("sed -n 's/^Machine: //p' '%s' 2>/dev/null", md))

set terminal pngcairo size 1400,560 noenhanced font "DejaVu Sans,11" linewidth 1.2
set datafile separator "\t"
set datafile missing "NaN"
set key autotitle columnhead
set grid ytics mytics lc rgb "#dddddd"
set border 3
set tics nomirror
set style fill solid 0.85 border -1

# A bar's value label: 3 significant figures, no exponent.
fmt(v) = v >= 100 ? sprintf("%.0f", v) : v >= 10 ? sprintf("%.1f", v) : sprintf("%.2f", v)

# mkrt in blues, peers in warm and neutral colours; by pivot column, so an
# impl keeps its colour in every panel.
array colours[8] = ["#1f4e9c", "#d95f02", "#7570b3", "#4a90d9", "#e6ab02", "#a6761d", "#66a61e", "#777777"]
colour(i) = colours[(i - 1) % 8 + 1]
is_mkrt(name) = strstrt(name, "mkrt") == 1 || name eq "megakernel"
