# SPDX-License-Identifier: BSD-2-Clause
# bench/plots/pivot.awk - one case of a benchmark CSV (bench/bench_util.h:
# benchmark,case,param,impl,value,unit) as a tab-separated table for gnuplot:
#
#   awk -v bench=ring -v cs=1P1C -f bench/plots/pivot.awk bench/results/ring.csv
#
# prints "param<TAB>impl...<TAB>" then one row per param of case `cs` (in
# the order the CSV has them). The columns are every impl of the benchmark
# with a figure in unit `unit` (all units when unset), in first-seen order,
# so a column is the same impl in every case; "NaN" where a case has no
# figure for it. cs may end in "*" to take every case with that prefix; the
# row label is then the rest of the case name and the param ("NOP 2").
# With -v names=1 it prints only the impl names, quoted, space-separated
# (for gnuplot's word()); with -v cols=1 the numbers of the impl columns
# that have a figure in case `cs` (1 = the first impl). The benchmarks
# write no quoted CSV fields.
BEGIN { FS = ","; prefix = (cs ~ /\*$/) ? substr(cs, 1, length(cs) - 1) : "" }
NR == 1 || $1 != bench || (unit != "" && $6 != unit) { next }
{
    if (!($4 in col)) { col[$4] = ++ncol; impl[ncol] = $4 }
    if (prefix != "") {
        if (substr($2, 1, length(prefix)) != prefix) next
        label = substr($2, length(prefix) + 1); sub(/^ +/, "", label); label = label " " $3
    } else {
        if ($2 != cs) next
        label = $3
    }
    if (!(label in row)) { row[label] = ++nrow; lab[nrow] = label }
    val[row[label], col[$4]] = $5
}
END {
    if (cols) {
        sep = ""
        for (c = 1; c <= ncol; c++)
            for (r = 1; r <= nrow; r++)
                if ((r, c) in val) { printf "%s%d", sep, c; sep = " "; break }
        printf "\n"
        exit
    }
    if (names) {
        for (c = 1; c <= ncol; c++) printf "%s\"%s\"", (c > 1 ? " " : ""), impl[c]
        printf "\n"
        exit
    }
    printf "param"
    for (c = 1; c <= ncol; c++) printf "\t%s", impl[c]
    printf "\n"
    for (r = 1; r <= nrow; r++) {
        printf "%s", lab[r]
        for (c = 1; c <= ncol; c++) printf "\t%s", ((r, c) in val) ? val[r, c] : "NaN"
        printf "\n"
    }
}
