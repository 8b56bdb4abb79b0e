# SPDX-License-Identifier: BSD-2-Clause
# tests/examples/check_analysis_demo.sh - the README's demo at a small size:
# its result matches the sequential solver, its table has the side-by-side
# rows, dedupe pruned duplicates, and bad input gets the usage and exit 2.
# ANALYSIS_DEMO names the binary (the Makefile's check passes it).
. "$(dirname "$0")/../tap.sh"
demo=${ANALYSIS_DEMO:-build/examples/analysis_demo}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$demo" --blocks 3000 --facts 256 --producers 3 >"$out" 2>&1
ok $? "the demo runs at 3000 blocks, 256 facts, 3 analysis threads (exit 0)" || diag_file "$out"
grep -q '^  matches sequential solver  *yes$' "$out"
ok $? "matches sequential solver  yes"
for row in 'sequential solver (s)' 'mkrt (s)' 'speedup' 'work vs sequential' 'items pruned (duplicates)'; do
    grep -q "^  $row  " "$out"
    ok $? "the table has the row '$row'"
done
emitted=$(sed -n 's/^  items emitted (sweeps)  *\([0-9]*\)$/\1/p' "$out")
[ "${emitted:-0}" -gt 0 ]
ok $? "the seeds and sweeps queued sweeps that the runtime ran ($emitted items emitted)"
# One analysis thread scans every block twice in a row: the copies meet in
# a batch (with several threads that depends on their timing).
"$demo" --blocks 3000 --facts 256 --producers 1 >"$out" 2>&1
pruned=$(sed -n 's/^  items pruned (duplicates)  *\([0-9]*\)$/\1/p' "$out")
[ "${pruned:-0}" -gt 0 ] && grep -q 'matches sequential solver  *yes' "$out"
ok $? "one analysis thread: dedupe pruned the regions found twice ($pruned items), matches"

"$demo" --blocks 1 --facts 1 --producers 1 >"$out" 2>&1 && grep -q 'matches sequential solver  *yes' "$out"
ok $? "one block, one fact, one thread: still runs and matches"
# Every block its own region (all propagation between items) and regions
# of a whole function (none): the same answer.
for k in 1 128; do
    "$demo" --blocks 2000 --facts 256 --producers 2 --workers 2 --region $k >"$out" 2>&1 &&
        grep -q 'matches sequential solver  *yes' "$out"
    ok $? "regions of $k blocks, 2 workers: matches" || diag_file "$out"
done
"$demo" --blocks 2000 --facts 1024 --producers 2 --workers 2 >"$out" 2>&1 &&
    grep -q 'matches sequential solver  *yes' "$out"
ok $? "2 CPU workers (items of a layer run concurrently), 1024 facts: matches" || diag_file "$out"

for args in '--blocks 0' '--facts 0' '--facts 65537' '--producers 0' '--producers 65' '--workers 65' \
            '--region 0' '--region 129' \
            '--blocks -3' '--blocks 12x' '--frobnicate' '--blocks'; do
    # shellcheck disable=SC2086 # the arguments are meant to split
    "$demo" $args >"$out" 2>&1
    rc=$?
    [ "$rc" -eq 2 ] && grep -q '^usage: ' "$out"
    ok $? "bad input '$args': usage message and exit 2 (got $rc)" || diag_file "$out"
done
done_testing
