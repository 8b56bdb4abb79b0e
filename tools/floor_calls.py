#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# tools/floor_calls.py [BUILD/obj] - the calls between source folders (floors),
# from the symbols each object defines and uses (nm), and any cycle among them.
# docs/design.md, "Source floors": a floor calls only floors below it.
# Exit status 1 when there is a cycle.
import collections
import glob
import os
import subprocess
import sys

root = sys.argv[1] if len(sys.argv) > 1 else 'build/obj'
objs = glob.glob(root + '/queue/*.o') + glob.glob(root + '/src/*/*.o')
defs, uses = {}, collections.defaultdict(set)
def folder(o):
    rel = os.path.relpath(o, root)
    parts = rel.split('/')
    return parts[0] if parts[0] == 'queue' else parts[1]
for o in objs:
    f = folder(o)
    out = subprocess.run(['nm', o], capture_output=True, text=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'TDBR':
            defs[p[2]] = f
        elif len(p) == 2 and p[0] == 'U':
            uses[f].add(p[1])
edges = collections.defaultdict(set)
why = {}
for f, syms in uses.items():
    for s in syms:
        g = defs.get(s)
        if g and g != f:
            edges[f].add(g); why.setdefault((f, g), s)
for f in sorted(edges):
    print(f, '->', ' '.join(sorted(edges[f])))
# cycles: DFS
cyc = []
def reach(a, b, seen):
    if a == b: return True
    for n in edges[a]:
        if n not in seen:
            seen.add(n)
            if reach(n, b, seen): return True
    return False
for a in list(edges):
    for b in list(edges[a]):
        if reach(b, a, {b}):
            cyc.append((a, b, why[(a, b)]))
print('cycles:', cyc if cyc else 'none')
sys.exit(1 if cyc else 0)
