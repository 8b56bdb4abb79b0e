#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause
# tests/abi/planner_calls.sh - every planner function libmkrt.so exports is
# called on the data path (issue 23, TAP).
#
# The rule (also in docs/design.md, "Planner exports"):
#   - The planner headers are the ones that declare planners: plan_cache.h,
#     topology.h, frontier.h, barrier.h, layer.h, dedupe.h (geometry.h
#     declares types only). The other public headers (runtime.h,
#     publish.h, op.h, graph.h, stream.h, stats.h, explain.h, ...) are the
#     runtime's API.
#   - A function of a planner header that libmkrt.so exports is a planner
#     (it turns inputs into a decision: a topology, barriers, layers, a
#     split, a memory plan, a pruned batch) unless it is in API below: what
#     a user needs to hold, feed or read a planner's objects - create,
#     destroy, defaults and scratch capacities; the plan cache's own
#     operations (find, get_or_plan, remove, clear, invalidate, read lock,
#     stats); the key and bucket helpers a caller of get_or_plan builds a
#     key with; names of enum values; mkrt_error_clear. Also API: a public
#     entry to a rule the data path runs through the same code, offered on
#     a caller's own batch (mkrt_layer_batch: layer.c's level pass, which
#     the dedupe stage runs as mkrt__layer_prune_levels;
#     mkrt_dedupe_prune_ordered: prune_rule.h's rule, which that pass
#     applies), and the dedupe concept's set form on a caller's own batch
#     (mkrt_dedupe_prune: every exact duplicate dropped, for callers whose
#     items form a set; it decides nothing about how a batch runs, and the
#     runtime's batches are sequences, so no stage may call it).
#   - Every planner must be reachable from the data path: from a function
#     the runtime's API exports (mkrt_create starts the dispatcher, whose
#     stages call the planners; mkrt_publish, mkrt_wait, ...) through calls
#     in src/ (outside src/runtime/test_hooks.c, which only the test build
#     compiles). The functions of API are not starting points: a planner
#     that only a user's own call could reach is not on the data path.
#     What is not reachable moves to libmkrt_planlib (planlib/,
#     include/mkrt_planlib/) or is deleted.
#   - TODO below names a planner another change of issue 23 owns (its
#     check reports "# TODO" until it is called or moved, then passes:
#     take it off the list then).
#
# How the calls are found: each file under src/ with its comments removed
# (perl, see uncomment below), strings and characters blanked; a function body
# is the brace block after a name and its parameters at file scope; an
# identifier inside it is an edge from that function (a call, or a
# function pointer it passes). References at file scope (initialisers of
# tables of function pointers, macro bodies) are starting points. Static
# functions of the same name in two files are merged (more reachable, never
# less). Run from the repository root by `make abi-check`:
#   MKRT_SO=build/libmkrt.so.X.Y.Z CC=cc sh tests/abi/planner_calls.sh
set -u
so=${MKRT_SO:?set MKRT_SO to the libmkrt.so.X.Y.Z to check}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../tap.sh"

PLANNER_HEADERS="plan_cache.h topology.h frontier.h barrier.h layer.h dedupe.h geometry.h"

# API of the planner headers (see the rule above), one name a line.
cat > "$tmp/api" <<'EOF'
mkrt_barrier_scratch_create
mkrt_barrier_scratch_dependency_capacity
mkrt_barrier_scratch_destroy
mkrt_barrier_scratch_wave_capacity
mkrt_dedupe_scratch_capacity
mkrt_dedupe_scratch_create
mkrt_dedupe_prune
mkrt_dedupe_prune_ordered
mkrt_dedupe_scratch_destroy
mkrt_device_key_cpu
mkrt_device_key_from_caps
mkrt_error_clear
mkrt_layer_batch
mkrt_layer_scratch_capacity
mkrt_layer_scratch_create
mkrt_layer_scratch_destroy
mkrt_plan_cache_clear
mkrt_plan_cache_config_default
mkrt_plan_cache_create
mkrt_plan_cache_destroy
mkrt_plan_cache_find
mkrt_plan_cache_get_or_plan
mkrt_plan_cache_get_or_plan_copy
mkrt_plan_cache_invalidate_device
mkrt_plan_cache_invalidate_policy_before
mkrt_plan_cache_read_lock
mkrt_plan_cache_read_unlock
mkrt_plan_cache_remove
mkrt_plan_cache_stats_read
mkrt_plan_checksum
mkrt_plan_density_bucket
mkrt_plan_fusion_bucket
mkrt_plan_key_equal
mkrt_plan_key_make
mkrt_plan_key_rehash
mkrt_plan_launch_bucket
mkrt_plan_pressure_bucket
mkrt_plan_readback_bucket
mkrt_topology_scratch_bytes
mkrt_wave_topology_name
EOF
sort -o "$tmp/api" "$tmp/api"
# Planners not on the data path yet, left to the change that owns them
# (none today).
TODO="mkrt_plan_execution"

# A C file with its comments removed, strings and characters kept, no
# macro expanded (perl, which prove needs anyway: gcc's -fpreprocessed has
# no clang equivalent, and the check must not depend on $CC).
uncomment() {
    perl -0777 -pe 's{/\*.*?\*/|//[^\n]*|("(?:\\.|[^"\\\n])*"|'"'"'(?:\\.|[^'"'"'\\\n])*'"'"')}{defined $1 ? $1 : " "}gse' "$1"
}

# Functions a header declares (comments removed; "name(" that is not a
# function-pointer typedef's "(*").
declared_in() {
    uncomment "$1" | tr '\n\t' '  ' |
        grep -o 'mkrt_[a-z0-9][a-z0-9_]* *( *[^* ]' | sed 's/ *(.*$//' | sort -u
}

nm -D --defined-only "$so" > "$tmp/nm" 2> "$tmp/nm.err"
ok $? "nm -D reads $so"
awk '{ sub(/@.*/, "", $NF); print $NF }' "$tmp/nm" | sort -u > "$tmp/exported"

: > "$tmp/planner_decl"
for h in $PLANNER_HEADERS; do
    [ -f "include/mkrt/$h" ] || { ok 1 "planner header include/mkrt/$h exists"; continue; }
    declared_in "include/mkrt/$h" >> "$tmp/planner_decl"
done
sort -u -o "$tmp/planner_decl" "$tmp/planner_decl"
: > "$tmp/other_decl"
for h in include/mkrt/*.h; do
    case " $PLANNER_HEADERS " in *" ${h##*/} "*) continue ;; esac
    declared_in "$h" >> "$tmp/other_decl"
done
sort -u -o "$tmp/other_decl" "$tmp/other_decl"

# The planners: exported, declared by a planner header, not API.
comm -12 "$tmp/planner_decl" "$tmp/exported" | comm -23 - "$tmp/api" > "$tmp/planners"
# The starting points: what the runtime's API exports.
comm -12 "$tmp/other_decl" "$tmp/exported" | comm -23 - "$tmp/planner_decl" > "$tmp/roots"
[ "$(wc -l < "$tmp/planners")" -gt 5 ] && [ "$(wc -l < "$tmp/roots")" -gt 50 ]
ok $? "$(wc -l < "$tmp/planners") exported planner functions, $(wc -l < "$tmp/roots") API functions to start from"

comm -23 "$tmp/api" "$tmp/exported" > "$tmp/stale"
[ ! -s "$tmp/stale" ]
ok $? "every name of the API list is an exported function"
[ -s "$tmp/stale" ] && { echo "#   listed as API but not exported (remove from the list):"; diag_file "$tmp/stale"; }

# The call graph: "caller callee" per reference.
find src -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) ! -path src/runtime/test_hooks.c | sort > "$tmp/files"
while read -r f; do
    uncomment "$f"
    echo
    echo "@@END_OF_FILE@@"
done < "$tmp/files" | awk '
function emit(to) { if (to != "") print cur, to }
BEGIN { depth = 0; cur = "@file"; cand = ""; init = 0; cont = 0 }
/^@@END_OF_FILE@@$/ { depth = 0; cur = "@file"; cand = ""; init = 0; cont = 0; next }
{
    line = $0
    gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
    gsub(/\047([^\047\\]|\\.)*\047/, "0", line)
    directive = cont || line ~ /^[ \t]*#/
    cont = directive && line ~ /\\$/
    if (directive) {
        save = cur; cur = "@file"
        while (match(line, /[A-Za-z_][A-Za-z0-9_]*/)) {
            emit(substr(line, RSTART, RLENGTH)); line = substr(line, RSTART + RLENGTH)
        }
        cur = save
        next
    }
    while (match(line, /[A-Za-z_][A-Za-z0-9_]*|[{};=(]/)) {
        tok = substr(line, RSTART, RLENGTH)
        line = substr(line, RSTART + RLENGTH)
        if (tok == "{") {
            if (depth == 0) cur = (cand != "" && !init) ? cand : "@file"
            depth++
        } else if (tok == "}") {
            if (depth > 0) depth--
            if (depth == 0) { cur = "@file"; cand = ""; init = 0 }
        } else if (tok == ";") {
            if (depth == 0) { cand = ""; init = 0 }
        } else if (tok == "=") {
            if (depth == 0) init = 1
        } else if (tok == "(") {
            if (depth == 0 && cand == "" && last != "" && last !~ /^(__attribute__|alignas|_Alignas|_Static_assert|sizeof|__declspec)$/)
                cand = last
            last = ""
        } else {
            if (depth > 0 || init) emit(tok)
            last = tok
            continue
        }
        last = ""
    }
}' | sort -u > "$tmp/edges"

awk '
FILENAME == ARGV[1] { root[$1] = 1; next }
FILENAME == ARGV[2] { want[$1] = 1; next }
{ adj[$1] = adj[$1] " " $2; defined[$1] = 1 }
END {
    n = 0
    for (r in root) { q[n++] = r; seen[r] = "API" }
    q[n++] = "@file"; seen["@file"] = "file scope"
    for (i = 0; i < n; i++) {
        k = split(adj[q[i]], to, " ")
        for (j = 1; j <= k; j++)
            if (!(to[j] in seen)) { seen[to[j]] = q[i]; q[n++] = to[j] }
    }
    for (w in want) print w, ((w in seen) ? seen[w] : "-")
}' "$tmp/roots" "$tmp/planners" "$tmp/edges" | sort > "$tmp/reached"

while read -r fn from; do
    if [ "$from" != "-" ]; then
        ok 0 "$fn is called on the data path (from $from)"
    elif case " $TODO " in *" $fn "*) true ;; *) false ;; esac; then
        n=$((n + 1))
        echo "not ok $n - $fn is not called on the data path yet # TODO left to the dedupe stage's owner (call it or move it)"
    else
        ok 1 "$fn is an exported planner that nothing under src/ calls from the runtime's API. Fix: call it where the data path decides what it decides, or move it to libmkrt_planlib"
    fi
done < "$tmp/reached"

done_testing
