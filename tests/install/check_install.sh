#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tests/install/check_install.sh - an installed mkrt, used the way a program
# outside the tree uses it: through pkg-config (TAP).
#
# `make install-check` (part of `make check`) runs
#     make install DESTDIR=$(BUILD)/install-test PREFIX=/opt/mkrt-test
# (with a PREFIX the build was not made with) and then this script with
# MKRT_DESTDIR and MKRT_PREFIX set to the two. By hand:
#     make install DESTDIR=/tmp/stage PREFIX=/opt/mkrt-test
#     MKRT_DESTDIR=/tmp/stage MKRT_PREFIX=/opt/mkrt-test sh tests/install/check_install.sh
# CC picks the compiler; MKRT_SAN adds sanitizer flags (make tsan/asan).
#
# pkg-config finds the staged tree through PKG_CONFIG_PATH and
# PKG_CONFIG_SYSROOT_DIR=$MKRT_DESTDIR (the .pc says /opt/mkrt-test, the
# sysroot puts the staging directory in front of its -I and -L paths).
# Checks: the files and links, the .pc's prefix and version, then
# tests/install/consumer.c and examples/minimal.c built with
# `pkg-config --cflags --libs mkrt` against libmkrt.so (run with
# LD_LIBRARY_PATH), and the consumer built with
# `pkg-config --static --cflags --libs mkrt` against libmkrt.a (run without);
# then the layers (stream, planlib: files, .pc; tests/install/layer_consumer.c
# through pkg-config mkrt-stream mkrt-planlib, shared and static) and the
# soak's plugin ABI (mkrt-soak.pc, a plugin built with its --cflags).
set -u
destdir=${MKRT_DESTDIR:?set MKRT_DESTDIR to the DESTDIR of make install}
prefix=${MKRT_PREFIX:?set MKRT_PREFIX to the PREFIX of make install}
cc=${CC:-cc}
san=${MKRT_SAN:-}
root=$destdir$prefix
libdir=$root/lib
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$src/tests/tap.sh"
# run DESCRIPTION LOG COMMAND...: ok when the command succeeds; its output
# is shown when it fails.
run() {
    d=$1
    log=$2
    shift 2
    "$@" > "$log" 2>&1
    r=$?
    ok $r "$d"
    [ $r -eq 0 ] || diag_file "$log"
    return $r
}
pc() { PKG_CONFIG_PATH=$libdir/pkgconfig PKG_CONFIG_SYSROOT_DIR=$destdir pkg-config "$@"; }

field() { sed -n "s/^#define MKRT_VERSION_$1  *\([0-9][0-9]*\).*/\1/p" "$root/include/mkrt/version.h"; }
major=$(field MAJOR)
minor=$(field MINOR)
patch=$(field PATCH)
version=$major.$minor.$patch
if [ "$major" = 0 ]; then soname=libmkrt.so.0.$minor; else soname=libmkrt.so.$major; fi

# The installed files.
missing=""
for f in include/mkrt/mkrt.h include/mkrt/version.h include/mkrt/runtime.h lib/libmkrt.a \
         "lib/libmkrt.so.$version" "lib/$soname" lib/libmkrt.so lib/pkgconfig/mkrt.pc; do
    [ -e "$root/$f" ] || missing="$missing $f"
done
[ -z "$missing" ]
ok $? "installed under DESTDIR$prefix: headers, libmkrt.a, libmkrt.so.$version, $soname, libmkrt.so, mkrt.pc${missing:+ (missing:$missing)}"
[ "$(readlink "$libdir/$soname")" = "libmkrt.so.$version" ] &&
    [ "$(readlink "$libdir/libmkrt.so")" = "libmkrt.so.$version" ]
ok $? "$soname and libmkrt.so link to libmkrt.so.$version"
for h in "$src"/include/mkrt/*.h; do
    cmp -s "$h" "$root/include/mkrt/${h##*/}" || missing="$missing ${h##*/}"
done
[ -z "$missing" ]
ok $? "every public header is installed unchanged${missing:+ (differ:$missing)}"

# The .pc names the install prefix, not the build's.
grep -qx "prefix=$prefix" "$libdir/pkgconfig/mkrt.pc"
r=$?
ok $r "mkrt.pc says prefix=$prefix"
[ $r -eq 0 ] || diag_file "$libdir/pkgconfig/mkrt.pc"
! grep -q "$destdir" "$libdir/pkgconfig/mkrt.pc"
ok $? "mkrt.pc does not name the staging DESTDIR"
[ "$(pc --modversion mkrt)" = "$version" ]
ok $? "pkg-config --modversion mkrt is $version, the version of mkrt/version.h"
pc --cflags --libs mkrt > "$tmp/shared.flags" 2>&1 &&
    grep -q -- "-I$root/include" "$tmp/shared.flags" && grep -q -- "-L$libdir" "$tmp/shared.flags"
ok $? "pkg-config --cflags --libs mkrt: $(cat "$tmp/shared.flags")"
pc --static --libs mkrt > "$tmp/static.flags" 2>&1
r=$?
for l in -lmkrt -lurcu-cds -lurcu-memb -lurcu-common -pthread -ldl -lm; do
    grep -qw -- "$l" "$tmp/static.flags" || r=1
done
ok $r "pkg-config --static --libs mkrt adds liburcu, -pthread, -ldl, -lm: $(cat "$tmp/static.flags")"
PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --define-prefix --cflags mkrt 2> /dev/null |
    grep -q -- "-I$root/include"
ok $? "pkg-config --define-prefix relocates it (libdir and includedir are under \${prefix})"

# A program against the shared library.
cflags="-std=c11 -Wall -Wextra -Werror -O1 $san"
# shellcheck disable=SC2046,SC2086 # the flags are word lists
if run "the consumer builds with pkg-config --cflags --libs mkrt (libmkrt.so)" "$tmp/cc1.log" \
    "$cc" $cflags -o "$tmp/consumer" "$src/tests/install/consumer.c" $(pc --cflags --libs mkrt); then
    readelf -d "$tmp/consumer" | grep -q "NEEDED.*\[$soname\]"
    ok $? "... and needs $soname"
    run "... and runs with LD_LIBRARY_PATH=DESTDIR$prefix/lib" "$tmp/run1.log" \
        env LD_LIBRARY_PATH="$libdir" "$tmp/consumer" && diag_file "$tmp/run1.log"
else
    ok 1 "... and needs $soname"
    ok 1 "... and runs"
fi
# shellcheck disable=SC2046,SC2086
if run "examples/minimal.c builds with pkg-config --cflags --libs mkrt" "$tmp/cc2.log" \
    "$cc" $cflags -o "$tmp/minimal" "$src/examples/minimal.c" $(pc --cflags --libs mkrt); then
    run "... and runs" "$tmp/run2.log" env LD_LIBRARY_PATH="$libdir" "$tmp/minimal"
else
    ok 1 "... and runs"
fi

# The same program against the static library: libmkrt.a is forced (a
# linker picks libmkrt.so over it), the rest as pkg-config --static says.
static_libs=$(pc --static --libs mkrt | sed 's/\(^\| \)-lmkrt\( \|$\)/\1-Wl,-Bstatic -lmkrt -Wl,-Bdynamic\2/')
# shellcheck disable=SC2046,SC2086
if run "the consumer builds with pkg-config --static --cflags --libs mkrt (libmkrt.a)" "$tmp/cc3.log" \
    "$cc" $cflags -o "$tmp/consumer-static" "$src/tests/install/consumer.c" \
    $(pc --static --cflags mkrt) $static_libs; then
    ! readelf -d "$tmp/consumer-static" | grep -q "NEEDED.*libmkrt"
    ok $? "... and does not need libmkrt.so"
    run "... and runs without LD_LIBRARY_PATH" "$tmp/run3.log" "$tmp/consumer-static" &&
        diag_file "$tmp/run3.log"
else
    ok 1 "... and does not need libmkrt.so"
    ok 1 "... and runs"
fi

# The layers (docs/design.md, "Packaging"): each a library of its own
# with its header folder and its .pc, installed by `make install` beside
# libmkrt (stream, planlib), and the soak's plugin ABI with mkrt-soak.pc;
# include/mkrt/ holds libmkrt's headers only.
soversion=${soname#libmkrt.so.}
for l in stream planlib; do
    missing=""
    for f in "lib/libmkrt_$l.a" "lib/libmkrt_$l.so.$version" "lib/libmkrt_$l.so.$soversion" \
             "lib/libmkrt_$l.so" "lib/pkgconfig/mkrt-$l.pc"; do
        [ -e "$root/$f" ] || missing="$missing $f"
    done
    ls "$root/include/mkrt_$l/"*.h > /dev/null 2>&1 || missing="$missing include/mkrt_$l/"
    [ -z "$missing" ]
    ok $? "layer $l: libmkrt_$l.a, .so.$version, .so.$soversion, .so, include/mkrt_$l/, mkrt-$l.pc${missing:+ (missing:$missing)}"
    [ "$(pc --modversion "mkrt-$l")" = "$version" ] && pc --libs "mkrt-$l" | grep -qw -- "-lmkrt_$l" &&
        pc --libs "mkrt-$l" | grep -qw -- "-lmkrt"
    ok $? "pkg-config mkrt-$l: version $version, -lmkrt_$l and -lmkrt: $(pc --libs "mkrt-$l" 2>&1)"
done
[ -e "$root/include/mkrt_soak/soak_plugin.h" ] && [ "$(pc --modversion mkrt-soak)" = "$version" ]
ok $? "the soak's plugin ABI: include/mkrt_soak/soak_plugin.h and mkrt-soak.pc"
[ ! -e "$root/include/mkrt/stream.h" ] && [ ! -e "$root/include/mkrt/soak_plugin.h" ] &&
    ! grep -q '^#include "mkrt_' "$root/include/mkrt/mkrt.h"
ok $? "include/mkrt/ and the umbrella mkrt/mkrt.h hold libmkrt's API only (no layer header)"
# shellcheck disable=SC2046,SC2086
run "a plugin builds with pkg-config --cflags mkrt-soak (no library)" "$tmp/cc6.log" \
    "$cc" -std=c11 -Wall -Wextra -Werror -shared -fPIC -o "$tmp/plugin.so" \
    "$src/examples/soak_plugin_example.c" $(pc --cflags mkrt-soak)

# A program using two layers, against their shared libraries, then their
# static ones (libmkrt_stream.a libmkrt_planlib.a libmkrt.a forced).
# shellcheck disable=SC2046,SC2086
if run "tests/install/layer_consumer.c builds with pkg-config --cflags --libs mkrt-stream mkrt-planlib" \
    "$tmp/cc4.log" "$cc" $cflags -o "$tmp/layer" "$src/tests/install/layer_consumer.c" \
    $(pc --cflags --libs mkrt-stream mkrt-planlib); then
    readelf -d "$tmp/layer" | grep -q "NEEDED.*\[libmkrt_stream.so.$soversion\]"
    ok $? "... and needs libmkrt_stream.so.$soversion"
    run "... and runs: the stream allocates through libmkrt's allocator" "$tmp/run4.log" \
        env LD_LIBRARY_PATH="$libdir" "$tmp/layer" && diag_file "$tmp/run4.log"
else
    ok 1 "... and needs libmkrt_stream.so.$soversion"
    ok 1 "... and runs"
fi
# shellcheck disable=SC2046 # a word list
layer_static=$(for w in $(pc --static --libs mkrt-stream mkrt-planlib); do
    case $w in -lmkrt | -lmkrt_*) printf ' -Wl,-Bstatic %s -Wl,-Bdynamic' "$w" ;; *) printf ' %s' "$w" ;; esac
done)
# shellcheck disable=SC2046,SC2086
if run "... and with pkg-config --static (libmkrt_stream.a, libmkrt_planlib.a, libmkrt.a)" "$tmp/cc5.log" \
    "$cc" $cflags -o "$tmp/layer-static" "$src/tests/install/layer_consumer.c" \
    $(pc --static --cflags mkrt-stream mkrt-planlib) $layer_static; then
    ! readelf -d "$tmp/layer-static" | grep -q "NEEDED.*libmkrt"
    ok $? "... and needs no libmkrt*.so"
    run "... and runs" "$tmp/run5.log" "$tmp/layer-static" && diag_file "$tmp/run5.log"
else
    ok 1 "... and needs no libmkrt*.so"
    ok 1 "... and runs"
fi

done_testing
