#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# bench/roam_ab.sh - the probes behind bench/results/megakernel.md's
# "The token roams" section: items/s of independent and random items at
# 1 and 2 workers, and single-item round trips, OLD and NEW side by side
# (each pair runs back to back, PAIRS times), median of the per-pair
# ratios (NEW / OLD) and the spread.
#
#   OLD=tree NEW=tree sh bench/roam_ab.sh [PAIRS]
# OLD and NEW are trees with `make build/libmkrt.a` done.
set -eu
PAIRS=${1:-11}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
L="-lurcu-cds -lurcu-common -lurcu-memb -lm -pthread -ldl"
HERE=$(cd "$(dirname "$0")" && pwd)
for side in OLD NEW; do
    eval tree=\$$side
    for p in items_probe latency_probe; do
        ${CC:-cc} -O2 -std=gnu11 -I"$tree/include" -o "$T/$p.$side" "$HERE/probes/$p.c" "$tree/build/libmkrt.a" $L
    done
done
pair() { # label, then the probe's arguments; the figure is the first number
    label=$1; shift
    i=0; : > "$T/r"
    while [ $i -lt "$PAIRS" ]; do
        a=$("$T/$1.NEW" $2 $3 | awk '{print $1=="p50" ? $5 : $1}')
        b=$("$T/$1.OLD" $2 $3 | awk '{print $1=="p50" ? $5 : $1}')
        echo "$a $b" >> "$T/r"; i=$((i + 1))
    done
    med() { sort -n | awk '{v[NR]=$1} END {printf "%.2f %.2f %.2f", v[int((NR+1)/2)], v[1], v[NR]}'; }
    new=$(cut -d' ' -f1 "$T/r" | med); old=$(cut -d' ' -f2 "$T/r" | med)
    ratio=$(awk '{print $1/$2}' "$T/r" | med)
    echo "$label: NEW ${new%% *}, OLD ${old%% *} (medians); NEW/OLD median, min, max: $ratio"
}
pair "independent, 2 workers, M items/s" items_probe 2 indep
pair "independent, 1 worker, M items/s" items_probe 1 indep
pair "random, 2 workers, M items/s" items_probe 2 random
pair "random, 1 worker, M items/s" items_probe 1 random
pair "round trip p99, default workers, us" latency_probe 0 ""
pair "round trip p99, 1 worker, us" latency_probe 1 ""
