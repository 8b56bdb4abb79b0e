#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tools/nvcc_build.sh - the build's one place that looks for nvcc, asked
# only by the recipes that need it (the Makefile runs no probe when read).
#
#   nvcc_build.sh NVCC                       prints the nvcc to use
#   nvcc_build.sh NVCC OUT 'DEPS' ARGS...    nvcc ARGS -o OUT, unless OUT is
#                                            newer than every file of DEPS
# NVCC: "auto" (nvcc on PATH, else /usr/local/cuda/bin/nvcc), a command,
# or empty (build without CUDA).
# Exit status: 0 done (or up to date), 2 no nvcc, 1 nvcc failed.
set -u
nvcc=$1
if [ "$nvcc" = auto ]; then
    nvcc=$(command -v nvcc 2>/dev/null) ||
        { [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc; } || nvcc=
fi
[ -n "$nvcc" ] || exit 2
if [ $# -eq 1 ]; then
    echo "$nvcc"
    exit 0
fi
out=$2
deps=$3
shift 3
if [ -e "$out" ]; then
    # shellcheck disable=SC2086 # DEPS is a list of file names
    [ -z "$(find $deps -newer "$out")" ] && exit 0
fi
mkdir -p "$(dirname "$out")"
echo "$nvcc $* -o $out"
"$nvcc" "$@" -o "$out.tmp" && mv "$out.tmp" "$out" && exit 0
rm -f "$out.tmp"
exit 1
