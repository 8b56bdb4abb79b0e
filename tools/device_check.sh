#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tools/device_check.sh - the GPU machine's one prepared run (issue 36):
# builds mkrt for sm_90 with PTX, runs the cuda_* tests on the GPU (among
# them cuda_traversal: BFS, SSSP, CC and PageRank through mkrt_traversal_*
# on the megakernel, against the CPU engine, up to 2^18 vertices),
# `make bench-cuda RECORD=1` (the megakernel against CUDA Graph replay, same
# run), and `make -j16 check`, writing every log and result into OUTDIR.
#
#   P=/path/to/liburcu-prefix tools/device_check.sh OUTDIR
#
# Environment:
#   P          where liburcu is unpacked (include/ and lib/, or usr/include
#              and usr/lib/<triplet>/ as `dpkg -x` leaves them); optional
#              when pkg-config already finds liburcu-cds and liburcu-memb.
#   CPPFLAGS, LDFLAGS, LD_LIBRARY_PATH  passed through to make and the tests.
#   STEPS      the steps to run, in order (default: "info build cuda bench
#              check"); e.g. STEPS="bench" to rerun the benchmark alone.
#              "graph" (not in the default): graph_bench --device at scale
#              SCALE (default 20) on kron and urand, 16 threads, beside GAPBS
#              when GAPBS names its built directory.
#   BUDGET_S   seconds for the whole run (default 560): a step gets at most
#              what is left (the device tool allows 600 per command).
#   JOBS       make's -j (default: the CPUs, at most 16).
# Without a GPU (no libcuda.so.1, or nvidia-smi finds none) it says so in
# OUTDIR/summary.txt and still builds and runs what needs none: the cuda_*
# tests then skip, the benchmark prints that it skipped.
# Exit status: 0 when every step run passed, 1 otherwise, 2 bad usage.
# OUTDIR/summary.txt: one line per step (status, seconds, log), the GPU,
# and where the recorded figures are (OUTDIR/results/).
set -u
if [ $# -ne 1 ]; then
    echo "usage: P=/liburcu/prefix $0 OUTDIR" >&2
    exit 2
fi
out=$1
mkdir -p "$out/results" || exit 2
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 2
start=$(date +%s)
budget=${BUDGET_S:-560}
steps=${STEPS:-info build cuda bench check}
cpus=$(nproc 2>/dev/null || echo 2)
jobs=${JOBS:-$([ "$cpus" -gt 16 ] && echo 16 || echo "$cpus")}
summary=$out/summary.txt
: > "$summary"
failed=0

say() { echo "$*" | tee -a "$summary"; }
left() { echo $((budget - ($(date +%s) - start))); }

# liburcu from P: pkg-config's path (and sysroot, for a dpkg -x tree whose
# .pc files say prefix=/usr), or a shim that answers for liburcu alone when
# the machine has no pkg-config (the install check's pkg-config cases then
# fail for that reason only; unpack pkgconf into P as well to run them).
inc='' lib=''
if [ -n "${P:-}" ]; then
    pcdir=$(find "$P" -name liburcu-cds.pc 2>/dev/null | head -n 1)
    inc=$(find "$P" -path '*/include/urcu.h' 2>/dev/null | head -n 1)
    lib=$(find "$P" -name 'liburcu-cds.so*' 2>/dev/null | head -n 1)
    inc=${inc:+$(dirname "$inc")}
    lib=${lib:+$(dirname "$lib")}
    if [ -n "$pcdir" ]; then
        PKG_CONFIG_PATH="$(dirname "$pcdir")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
        export PKG_CONFIG_PATH
    fi
    if [ -n "$pcdir" ] && grep -q '^prefix=/usr$' "$pcdir" && [ -d "$P/usr" ]; then
        export PKG_CONFIG_SYSROOT_DIR="$P"
    fi
    [ -n "$lib" ] && export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    for pc in "$P/usr/bin/pkg-config" "$P/usr/bin/pkgconf" "$P/bin/pkg-config" "$P/bin/pkgconf"; do
        if ! command -v pkg-config > /dev/null 2>&1 && [ -x "$pc" ]; then
            mkdir -p "$out/bin"
            ln -sf "$pc" "$out/bin/pkg-config"
            export PATH="$out/bin:$PATH"
        fi
    done
fi
if ! command -v pkg-config > /dev/null 2>&1; then
    mkdir -p "$out/bin"
    cat > "$out/bin/pkg-config" << EOF
#!/bin/sh
# liburcu only (tools/device_check.sh: the machine has no pkg-config)
c= l= m=
for a; do
case \$a in
--exists|--static|--print-errors|--short-errors) ;;
--cflags) c=1 ;;
--libs) l=1 ;;
--modversion) m=1 ;;
liburcu-cds|liburcu-memb) ;;
*) exit 1 ;;
esac
done
[ -n "\$m" ] && { echo 0.14; exit 0; }
[ -n "\$c\$l" ] || exit 0
echo \${c:+${inc:+-I$inc}} \${l:+${lib:+-L$lib -Wl,-rpath,$lib} -lurcu-cds -lurcu-common -lurcu-memb}
EOF
    chmod +x "$out/bin/pkg-config"
    export PATH="$out/bin:$PATH"
    say "note: no pkg-config here: a liburcu-only shim ($out/bin/pkg-config) answers; the install check's pkg-config cases will fail for that reason"
fi

# The GPU, if any.
gpu=none
if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L > "$out/nvidia-smi-L.txt" 2>&1 &&
    grep -q '^GPU' "$out/nvidia-smi-L.txt"; then
    gpu=$(head -n 1 "$out/nvidia-smi-L.txt")
elif ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
    gpu="libcuda.so.1 present, nvidia-smi found no GPU"
fi
nvcc=$(sh tools/nvcc_build.sh auto 2>/dev/null || true)
say "device_check: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname), $cpus CPUs, make -j$jobs, budget ${budget}s"
say "GPU: $gpu"
say "nvcc: ${nvcc:-none}"
[ "$gpu" = none ] && say "note: no NVIDIA GPU: the cuda_* tests skip and the benchmark skips; nothing here measures the GPU"

# step NAME MAX_SECONDS COMMAND...: runs it under timeout (at most what is
# left of the budget), logs to OUTDIR/NAME.log, one summary line.
step() {
    name=$1 most=$2
    shift 2
    t=$(left)
    [ "$t" -lt "$most" ] && most=$t
    if [ "$most" -le 5 ]; then
        say "SKIP $name: no time left in the ${budget}s budget"
        failed=1
        return 1
    fi
    s=$(date +%s)
    timeout -k 10 "$most" "$@" > "$out/$name.log" 2>&1
    rc=$?
    d=$(($(date +%s) - s))
    if [ $rc -eq 0 ]; then
        say "PASS $name (${d}s, $out/$name.log)"
    else
        if [ $rc -eq 124 ]; then
            say "TIMEOUT $name after ${d}s (limit ${most}s, $out/$name.log)"
        else
            say "FAIL $name: exit $rc after ${d}s ($out/$name.log)"
        fi
        failed=1
    fi
    return $rc
}

# sm_90 code and compute_90 PTX only (the Makefile's default adds sm_80).
arch='-gencode arch=compute_90,code=[sm_90,compute_90]'
# shellcheck disable=SC2016 # expanded by the sh -c that runs it
# The cuda_* tests without MKRT_LIBCUDA: the real driver (make check
# points the other tests at the stand-in).
cuda_tests='unset MKRT_LIBCUDA FAKE_CUDA_MODE; st=0
for t in build/tests/cuda_*; do
    [ -x "$t" ] || continue
    echo "== $t"
    timeout -k 5 120 "$t" || { echo "== $t: exit $?"; st=1; }
done
exit $st'

for s in $steps; do
    case $s in
    info)
        { uname -a; nvidia-smi 2>&1 || true; echo "nvcc: ${nvcc:-none}"; [ -n "$nvcc" ] && "$nvcc" --version;
          echo "PKG_CONFIG_PATH=${PKG_CONFIG_PATH:-} PKG_CONFIG_SYSROOT_DIR=${PKG_CONFIG_SYSROOT_DIR:-}";
          echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"; pkg-config --cflags --libs liburcu-cds liburcu-memb; } \
            > "$out/info.log" 2>&1
        ;;
    build) step build 240 make -j"$jobs" CUDA_ARCH="$arch" all tests cuda-test-data ;;
    cuda)
        step cuda_tests 240 sh -c "$cuda_tests"
        grep -E '^(not ok|ok .*# (SKIP|skip))|^1\.\.0|^== ' "$out/cuda_tests.log" > "$out/cuda_tests.brief" 2>/dev/null
        n=$(grep -c '^1\.\.0 # SKIP' "$out/cuda_tests.log" 2>/dev/null)
        [ "${n:-0}" -gt 0 ] && say "  cuda_tests: $n of them skipped (no usable GPU): see $out/cuda_tests.brief"
        ;;
    bench)
        if step bench_cuda 240 make -j"$jobs" CUDA_ARCH="$arch" bench-cuda RECORD=1; then
            if grep -q '^cuda_bench: skipped' "$out/bench_cuda.log"; then
                say "  bench_cuda recorded nothing: $(grep '^cuda_bench: skipped' "$out/bench_cuda.log" | cut -c1-160)"
            else
                cp bench/results/cuda.md bench/results/cuda.csv "$out/results/"
            fi
        fi
        ;;
    check) step check 420 make -j"$jobs" CUDA_ARCH="$arch" check ;;
    graph)
        step graph_build 120 make -j"$jobs" CUDA_ARCH="$arch" build/bench/graph_bench &&
            step graph_device 300 build/bench/graph_bench --device ${GAPBS:+--gapbs "$GAPBS"} --graph kron,urand \
                --scale "${SCALE:-20}" --threads 16 --roots 8 --trials 2 \
                --out "$out/results/graph_device.md" --csv "$out/results/graph_device.csv"
        ;;
    *) say "unknown step $s (info, build, cuda, bench, check, graph)"; failed=1 ;;
    esac
done
say "elapsed $(($(date +%s) - start))s; figures (when a GPU ran them): $out/results/"
exit $failed
