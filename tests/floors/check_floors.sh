# SPDX-License-Identifier: BSD-2-Clause
# tests/floors/check_floors.sh - the floor rule (tools/floors.txt) is
# enforced: on a copy of the tree, an upward include makes `make` fail
# before it compiles anything, with a message that names the rule, the
# file and the header; an upward call makes tools/floors.py calls fail;
# the temporary allow-list is live (a line taken out fails the check).
# Run by `make floors-check` (part of `make check`) from the repository
# root; CC: the compiler (default cc).
. tests/tap.sh
CC=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mkrt-floors.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out.txt
# The top-level folders of the floors and layers tools/floors.txt declares.
dirs=$(awk '$1 == "floor" || $1 == "layer" { sub(/\/.*/, "", $3); print $3 }' tools/floors.txt | sort -u)
fresh() { # fresh: a clean copy of what the rule and the Makefile read
    rm -rf "$tmp/tree" && mkdir -p "$tmp/tree" &&
    # shellcheck disable=SC2086 # a word list
    cp -R Makefile mk tools include $dirs "$tmp/tree/"
}
# names_rule FILE HEADER: the output names the rule, the file and the header
names_rule() {
    grep -q 'the floor rule (tools/floors.txt)' "$out" && grep -q "$1" "$out" && grep -q "$2" "$out"
}
# make_fails OBJ: `make` of that object fails, and builds nothing
make_fails() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$tmp/tree" BUILD=b "b/obj/$1" >"$out" 2>&1
    st=$?
    [ $st -ne 0 ] && [ ! -e "$tmp/tree/b/obj/$1" ]
}

fresh
python3 tools/floors.py --root "$tmp/tree" includes >"$out" 2>&1; st=$?
ok $st "the tree as it is follows the floor rule"
[ $st -eq 0 ] || diag_file "$out"

# An upward include in the lowest floor, and in ops/, each alone.
for f in base/alloc.c src/ops/op_exec.c; do
    fresh
    printf '#include "pipeline/dispatch.h"\n' >>"$tmp/tree/$f"
    make_fails "${f%.c}.o"; st=$?
    ok $st "make ${f%.c}.o fails when $f includes pipeline/dispatch.h"
    names_rule "$f" 'pipeline/dispatch.h'
    ok $? "  the message names the floor rule, $f and pipeline/dispatch.h"
    [ $st -eq 0 ] || diag_file "$out"
done

# Through a relative path, and with angle brackets (found through -Isrc).
fresh
printf '#include "../pipeline/stages.h"\n' >>"$tmp/tree/src/plan/decide.c"
make_fails src/plan/decide.o
ok $? "an upward include by a relative path (src/plan -> ../pipeline/stages.h) fails make"
fresh
printf '#include <runtime/runtime_internal.h>\n' >>"$tmp/tree/src/state/producers.c"
make_fails src/state/producers.o && names_rule src/state/producers.c runtime/runtime_internal.h
ok $? "an upward include in angle brackets (state -> runtime) fails make, naming the rule"

# A layer on the public API reaching into the library's internals.
fresh
printf '#include "pipeline/dispatch.h"\n' >>"$tmp/tree/planlib/src/sizing.c"
python3 tools/floors.py --root "$tmp/tree" includes >"$out" 2>&1
[ $? -ne 0 ] && names_rule planlib/src/sizing.c 'layer planlib, on the public API'
ok $? "a layer (planlib) that includes pipeline/dispatch.h fails the check"

# The temporary allow-list is live: without its line, ops/ -> graph/ fails.
fresh
grep -v '^allow include src/ops/op_exec.c graph/engine.h' tools/floors.txt >"$tmp/tree/tools/floors.txt"
python3 tools/floors.py --root "$tmp/tree" includes >"$out" 2>&1
[ $? -ne 0 ] && names_rule src/ops/op_exec.c graph/engine.h
ok $? "without its allow line, src/ops/op_exec.c including graph/engine.h fails the check"

# Calls, from the objects: base/ calling a function of pipeline/ fails;
# pipeline/ calling base/ passes.
mkdir -p "$tmp/obj/base" "$tmp/obj/src/pipeline"
printf 'void mkrt__up(void);\nvoid mkrt__low(void);\nvoid mkrt__low(void) { mkrt__up(); }\n' >"$tmp/low.c"
printf 'void mkrt__up(void);\nvoid mkrt__up(void) { }\n' >"$tmp/up.c"
printf 'void mkrt__low(void);\nvoid mkrt__down(void);\nvoid mkrt__down(void) { mkrt__low(); }\n' >"$tmp/down.c"
$CC -c "$tmp/low.c" -o "$tmp/obj/base/alloc.o" && $CC -c "$tmp/up.c" -o "$tmp/obj/src/pipeline/drain.o" &&
    $CC -c "$tmp/down.c" -o "$tmp/obj/src/pipeline/admit.o"
ok $? "the call fixture compiles"
python3 tools/floors.py calls "$tmp/obj/base/alloc.o" "$tmp/obj/src/pipeline/drain.o" >"$out" 2>&1
[ $? -ne 0 ] && names_rule 'floor base may call only itself' 'mkrt__up is defined on floor pipeline'; st=$?
ok $st "base/ calling mkrt__up of pipeline/ fails the call check, naming the rule"
[ $st -eq 0 ] || diag_file "$out"
python3 tools/floors.py calls "$tmp/obj/src/pipeline/admit.o" "$tmp/obj/base/alloc.o" >"$out" 2>&1
ok $? "pipeline/ calling base/ passes the call check"
done_testing
