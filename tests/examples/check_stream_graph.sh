# SPDX-License-Identifier: BSD-2-Clause
# tests/examples/check_stream_graph.sh - the streaming graph example
# (examples/stream_graph.c) runs, its answers after each change are the
# ones worked out by hand, and the closure of an absent road is refused
# with a Fix. STREAM_GRAPH names the binary (the Makefile's check passes it).
. "$(dirname "$0")/../tap.sh"
ex=${STREAM_GRAPH:-build/examples/stream_graph}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$ex" >"$out" 2>&1
ok $? "the example runs (exit 0)" || diag_file "$out"
# The ring: 5 minutes a road, both ways round.
grep -q '^  time        0   5  10  15  20  25  30  25  20  15  10   5$' "$out"
ok $? "the ring's travel times"
# Bypass 0-6 (7 min) open, 2-3 and 8-9 closed: 3 is reached the long way.
grep -q '^  time        0   5  10  22  17  12   7  12  17  15  10   5$' "$out"
ok $? "after the bypass opens and two roads close" || diag_file "$out"
grep -q '^  group       0   0   0   3   3   3   3   3   3   0   0   0$' "$out"
ok $? "closing the bypass splits the junctions into two groups" || diag_file "$out"
grep -q 'refused: stream delete {4, 10}: no such edge.*Fix:' "$out"
ok $? "the absent road's closure is refused with a Fix" || diag_file "$out"
grep -q '^applied 1 inserts, 3 deletes; 1 refused' "$out"
ok $? "the counts" || diag_file "$out"
done_testing
