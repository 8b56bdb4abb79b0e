#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tests/abi/check_exports.sh - libmkrt.so exports the public API and
# nothing else (TAP).
#
#   - every defined dynamic symbol is a function declared in include/mkrt/*.h
#     (no mkrt__* internals, no helper that escaped `static`);
#   - every function declared there is exported (none left out by
#     src/libmkrt.map, none declared but never written);
#   - every public header is included by mkrt/mkrt.h;
#   - the SONAME follows the rule of the README's "Versioning and ABI"
#     (libmkrt.so.0.MINOR while MAJOR is 0, libmkrt.so.MAJOR after).
#
# Run from the repository root by `make abi-check` (part of `make check`):
#   MKRT_SO=build/libmkrt.so.X.Y.Z CC=cc sh tests/abi/check_exports.sh
# The declared names come from the headers run through the preprocessor
# (comments gone): each mkrt_<letter or digit>... followed by "(" that is
# not a function-pointer typedef's "(*".
set -u
so=${MKRT_SO:?set MKRT_SO to the libmkrt.so.X.Y.Z to check}
cc=${CC:-cc}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../tap.sh"

# The public functions, from the headers.
for h in include/mkrt/*.h; do
    echo "#include \"mkrt/${h##*/}\""
done > "$tmp/all.c"
"$cc" -Iinclude -E -P -x c "$tmp/all.c" > "$tmp/all.i" 2> "$tmp/cpp.err"
ok $? "the public headers preprocess ($cc -E)"
tr '\n\t' '  ' < "$tmp/all.i" | grep -o 'mkrt_[a-z0-9][a-z0-9_]* *( *[^* ]' |
    sed 's/ *(.*$//' | sort -u > "$tmp/declared"
count=$(wc -l < "$tmp/declared")
[ "$count" -gt 100 ]
ok $? "the headers declare the public functions ($count found)"

# What the library exports.
nm -D --defined-only "$so" > "$tmp/nm" 2> "$tmp/nm.err"
ok $? "nm -D reads $so"
awk '{ sub(/@.*/, "", $NF); print $NF }' "$tmp/nm" | sort -u > "$tmp/exported"

comm -13 "$tmp/declared" "$tmp/exported" > "$tmp/extra"
[ ! -s "$tmp/extra" ]
ok $? "every exported symbol is declared in include/mkrt/ ($(wc -l < "$tmp/exported") exported)"
[ -s "$tmp/extra" ] && { echo "#   exported but not public:"; diag_file "$tmp/extra"; }

comm -23 "$tmp/declared" "$tmp/exported" > "$tmp/missing"
[ ! -s "$tmp/missing" ]
ok $? "every function declared in include/mkrt/ is exported"
[ -s "$tmp/missing" ] && { echo "#   declared but not exported:"; diag_file "$tmp/missing"; }

! grep -q '^mkrt__' "$tmp/exported"
ok $? "no internal mkrt__* symbol is exported"
for s in mkrt__device_inject_hang mkrt__megakernel_fatbin mkrt__runtime_hold; do
    ! grep -qx "$s" "$tmp/exported"
    ok $? "$s (internal) is not exported"
done
awk '$2 == "T" { print $3 }' "$tmp/nm" | grep -qx mkrt_create
ok $? "mkrt_create is exported as a function"

# Every public header is reachable from mkrt/mkrt.h.
missing_h=""
for h in include/mkrt/*.h; do
    b=${h##*/}
    [ "$b" = mkrt.h ] && continue
    grep -q "^#include \"mkrt/$b\"" include/mkrt/mkrt.h || missing_h="$missing_h $b"
done
[ -z "$missing_h" ]
ok $? "mkrt/mkrt.h includes every public header${missing_h:+ (missing:$missing_h)}"

# The SONAME from the version in mkrt/version.h.
field() { sed -n "s/^#define MKRT_VERSION_$1  *\([0-9][0-9]*\).*/\1/p" include/mkrt/version.h; }
major=$(field MAJOR)
minor=$(field MINOR)
patch=$(field PATCH)
if [ "$major" = 0 ]; then want=libmkrt.so.0.$minor; else want=libmkrt.so.$major; fi
soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
[ "$soname" = "$want" ]
ok $? "SONAME is $want for version $major.$minor.$patch (found: ${soname:-none})"
case "$so" in
*/libmkrt.so.$major.$minor.$patch) r=0 ;;
*) r=1 ;;
esac
ok $r "the library file is named for version $major.$minor.$patch (${so##*/})"

done_testing
