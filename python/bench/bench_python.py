#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""mkrt from Python beside the libraries a Python graph user would pick instead.

Same graph, same thread count (--threads, default 2) for everyone:
  - BFS from --roots roots of a Graph500-style Kronecker graph (symmetric):
    mkrt (Runtime.bfs: depths and parents into NumPy), NetworKit (BFS),
    python-igraph (Graph.bfs), python-graphblas (level-synchronous vxm).
  - SSSP on the same graph with weights 1..255: mkrt (Runtime.sssp),
    NetworKit (Dijkstra), igraph (distances), graphblas (Bellman-Ford,
    min_plus vxm; --gb-sssp, slow).
  - An update stream (insertions and deletions in batches) with standing
    BFS and SSSP from a root: mkrt.Stream (insert/delete, quiesce, one view)
    vs NetworKit's DynBFS + DynDijkstra (updateBatch on the same events).
  - The binding's own cost: a C call from Python vs the same call in C, a
    method call with its checks, publishing per call and per item, BFS
    total vs the C search.
Every answer is checked against the others (the bench exits 1 on a
mismatch); a library that is not installed is left out and said so.

  python3 python/bench/bench_python.py [--scale 17] [--record bench/results/python.md]

Needs the mkrt package built (pip install ./python, or PYTHONPATH=build/python
after make check-python) and, for the peers, pip install networkit igraph
python-graphblas.
"""
import argparse
import os
import platform
import statistics
import sys
import time

# OpenMP peers (NetworKit, SuiteSparse:GraphBLAS) sleep rather than spin
# while they wait: on a shared 2-CPU machine spinning threads lose their
# CPU to other work and the peer's time balloons (set it to compare spinning).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

import mkrt  # noqa: E402

INF = np.iinfo(np.int64).max


def kronecker(scale, edgefactor, seed):
    """Graph500 Kronecker edges (A, B, C = 0.57, 0.19, 0.19), ids permuted; undirected, no loops or repeats."""
    rng = np.random.default_rng(seed)
    n, m = 1 << scale, edgefactor << scale
    u = np.zeros(m, dtype=np.int64)
    v = np.zeros(m, dtype=np.int64)
    ab, c_norm, a_norm = 0.57 + 0.19, 0.19 / (1 - 0.57 - 0.19), 0.57 / (0.57 + 0.19)
    for bit in range(scale):
        ii = rng.random(m) > ab
        jj = rng.random(m) > np.where(ii, c_norm, a_norm)
        u += ii.astype(np.int64) << bit
        v += jj.astype(np.int64) << bit
    perm = rng.permutation(n)
    u, v = perm[u], perm[v]
    keep = u != v
    lo, hi = np.minimum(u[keep], v[keep]), np.maximum(u[keep], v[keep])
    key = np.unique(lo * n + hi)
    return n, key // n, key % n


def csr_of(n, lo, hi, w=None):
    """Symmetric CSR (both directions), rows sorted."""
    src = np.concatenate([lo, hi])
    dst = np.concatenate([hi, lo])
    order = np.lexsort((dst, src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    ww = None if w is None else np.concatenate([w, w])[order]
    return indptr, dst[order], ww


def med(xs):
    return statistics.median(xs)


def fmt_ms(s):
    return "%.2f" % (s * 1e3)


class Checker:
    def __init__(self):
        self.bad = []
        self.peer_bad = []

    def same(self, what, a, b, peer_only=False):
        """a and b equal; a difference is mkrt's failure, or with peer_only the peer's (reported, not fatal)."""
        if not np.array_equal(a, b):
            diff = int(np.flatnonzero(a != b)[0])
            (self.peer_bad if peer_only else self.bad).append(
                "%s differ at %d vertices, first %d: %s vs %s" % (what, int(np.count_nonzero(a != b)), diff,
                                                                  a[diff], b[diff]))
            return False
        return True


def as_depth(a, unreached):
    """Depths or distances as int64, INF where not reached (each library marks that its own way)."""
    a = np.asarray(a)
    out = np.full(a.shape, INF, dtype=np.int64)
    reached = (a < unreached) if a.dtype.kind == "f" else (a != unreached)
    out[reached] = a[reached].astype(np.int64)
    return out


def bench_static(args, chk, rows, notes):
    n, lo, hi = kronecker(args.scale, args.edgefactor, args.seed)
    rng = np.random.default_rng(args.seed + 1)
    w = rng.integers(1, 256, lo.shape[0])
    indptr, indices, weights = csr_of(n, lo, hi, w)
    deg = np.diff(indptr)
    roots = rng.choice(np.flatnonzero(deg > 0), args.roots, replace=False)
    notes.append("graph: Kronecker scale %d, edgefactor %d: %d vertices, %d undirected edges (%d stored)"
                 % (args.scale, args.edgefactor, n, lo.shape[0], indices.shape[0]))
    g = mkrt.Graph(indptr, indices, symmetric=True)
    gw = mkrt.Graph(indptr, indices, weights, symmetric=True)
    ref_bfs, ref_sssp = {}, {}

    # ---- mkrt
    with mkrt.Runtime(workers=args.threads, graph=g) as rt:
        rt.bfs(int(roots[0]))  # warm-up
        tot, core, read = [], [], []
        t = rt.traversal("bfs")
        for r in roots:
            t0 = time.perf_counter()
            res = rt.bfs(int(r))
            tot.append(time.perf_counter() - t0)
            ref_bfs[int(r)] = as_depth(res.depth, mkrt.UNREACHED)
            t0 = time.perf_counter()
            t.start(int(r))
            t.wait()
            t1 = time.perf_counter()
            t.values()
            t.parents()
            core.append(t1 - t0)
            read.append(time.perf_counter() - t1)
        t.close()
        rows.append(("BFS", "mkrt", med(tot), "depths + parents into NumPy (open, search, read, close)"))
        notes.append("mkrt BFS split: search (start + wait) %s ms, reading depths and parents %s ms, "
                     "the rest of Runtime.bfs (open/close a traversal, checks) %s ms (medians)"
                     % (fmt_ms(med(core)), fmt_ms(med(read)), fmt_ms(max(med(tot) - med(core) - med(read), 0))))
    with mkrt.Runtime(workers=args.threads, graph=gw) as rt:
        rt.sssp(int(roots[0]))
        tot = []
        for r in roots:
            t0 = time.perf_counter()
            d = rt.sssp(int(r))
            tot.append(time.perf_counter() - t0)
            ref_sssp[int(r)] = as_depth(d, mkrt.UNREACHED)
        rows.append(("SSSP", "mkrt", med(tot), "distances into NumPy"))

    if "cc" in mkrt.TRAVERSAL_KINDS or "pagerank" in mkrt.TRAVERSAL_KINDS:
        bench_cc_pr(args, chk, rows, notes, n, lo, hi, g)
    else:
        notes.append("CC and PageRank: this build's mkrt has no such traversal kinds (include/mkrt/graph.h), "
                     "so they are not compared")

    # ---- NetworKit
    try:
        import networkit as nk
    except ImportError:
        notes.append("NetworKit not installed: left out (pip install networkit)")
    else:
        nk.setNumberOfThreads(args.threads)
        G = nk.GraphFromCoo((lo, hi), n=n, directed=False)
        Gw = nk.GraphFromCoo((w.astype(np.float64), (lo, hi)), n=n, weighted=True, directed=False)
        for kernel, algo, graph, ref in (("BFS", nk.distance.BFS, G, ref_bfs), ("SSSP", nk.distance.Dijkstra, Gw, ref_sssp)):
            tot = []
            for r in roots:
                t0 = time.perf_counter()
                b = algo(graph, int(r), storePaths=False)
                b.run()
                d = b.getDistances(asarray=True)
                tot.append(time.perf_counter() - t0)
                chk.same("%s mkrt vs NetworKit (root %d)" % (kernel, r), ref[int(r)], as_depth(d, 1e300))
            rows.append((kernel, "NetworKit %s" % nk.__version__, med(tot),
                         "%s(storePaths=False) + getDistances(asarray)" % algo.__name__))

    # ---- python-igraph
    try:
        import igraph as ig
    except ImportError:
        notes.append("python-igraph not installed: left out (pip install igraph)")
    else:
        G = ig.Graph(n=n, edges=np.column_stack([lo, hi]), directed=False)
        G.es["weight"] = w.tolist()
        tot = []
        for r in roots:
            t0 = time.perf_counter()
            vids, layers, _parents = G.bfs(int(r))
            vids = np.asarray(vids)
            layers = np.asarray(layers)
            d = np.full(n, INF, dtype=np.int64)
            d[vids[:layers[-1]]] = np.repeat(np.arange(len(layers) - 1), np.diff(layers))
            tot.append(time.perf_counter() - t0)
            chk.same("BFS depths mkrt vs igraph (root %d)" % r, ref_bfs[int(r)], d)
        rows.append(("BFS", "igraph %s" % ig.__version__, med(tot), "Graph.bfs (one thread: igraph has no threads)"))
        tot = []
        for r in roots[: max(2, len(roots) // 4)]:
            t0 = time.perf_counter()
            d = np.asarray(G.distances(source=int(r), weights="weight")[0])
            tot.append(time.perf_counter() - t0)
            chk.same("SSSP mkrt vs igraph (root %d)" % r, ref_sssp[int(r)], as_depth(d, np.inf))
        rows.append(("SSSP", "igraph %s" % ig.__version__, med(tot), "Graph.distances(weights) (one thread)"))

    # ---- python-graphblas
    try:
        import graphblas as gb
    except ImportError:
        notes.append("python-graphblas not installed: left out (pip install python-graphblas)")
    else:
        gb.ss.config["nthreads"] = args.threads
        src = np.concatenate([lo, hi])
        dst = np.concatenate([hi, lo])
        A = gb.Matrix.from_coo(src, dst, True, nrows=n, ncols=n, dtype=bool)
        tot = []
        for r in roots:
            t0 = time.perf_counter()
            lev = gb.Vector(gb.dtypes.INT64, n)
            q = gb.Vector(bool, n)
            q[int(r)] << True
            k = 0
            while q.nvals:
                lev(q.S) << k
                k += 1
                q(~lev.S, replace=True) << q.vxm(A, gb.semiring.any_pair)
            idx, vals = lev.to_coo()
            d = np.full(n, INF, dtype=np.int64)
            d[idx] = vals
            tot.append(time.perf_counter() - t0)
            chk.same("BFS depths mkrt vs graphblas (root %d)" % r, ref_bfs[int(r)], d)
        rows.append(("BFS", "python-graphblas %s" % gb.__version__, med(tot),
                     "level-synchronous any_pair vxm with a complemented mask"))
        if args.gb_sssp:
            Aw = gb.Matrix.from_coo(src, dst, np.concatenate([w, w]), nrows=n, ncols=n, dtype=gb.dtypes.INT64)
            tot = []
            for r in roots[:2]:
                t0 = time.perf_counter()
                d = gb.Vector(gb.dtypes.INT64, n)
                d[int(r)] << 0
                while True:
                    d2 = d.dup()
                    d2(gb.binary.min) << d.vxm(Aw, gb.semiring.min_plus)
                    if d2.isequal(d):
                        break
                    d = d2
                idx, vals = d.to_coo()
                dd = np.full(n, INF, dtype=np.int64)
                dd[idx] = vals
                tot.append(time.perf_counter() - t0)
                chk.same("SSSP mkrt vs graphblas (root %d)" % r, ref_sssp[int(r)], dd)
            rows.append(("SSSP", "python-graphblas %s" % gb.__version__, med(tot), "Bellman-Ford, min_plus vxm"))


def pagerank_arbiter(n, indptr, indices, damping=0.85, tol=1e-10):
    """GAPBS's PageRank by Jacobi iteration in NumPy: the arbiter of the scores."""
    deg = np.diff(indptr).astype(np.float64)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    score = np.full(n, 1.0 / n)
    for _ in range(1000):
        contrib = np.divide(score, deg, out=np.zeros(n), where=deg > 0)
        new = (1 - damping) / n + damping * np.bincount(rows, weights=contrib[indices], minlength=n)
        done = np.abs(new - score).sum() < tol
        score = new
        if done:
            break
    return score


def bench_cc_pr(args, chk, rows, notes, n, lo, hi, g):
    """CC and PageRank, where mkrt has the kinds: beside NetworKit and igraph."""
    try:
        import networkit as nk
        nk.setNumberOfThreads(args.threads)
        G = nk.GraphFromCoo((lo, hi), n=n, directed=False)
    except ImportError:
        nk = None
    try:
        import igraph as ig
        IG = ig.Graph(n=n, edges=np.column_stack([lo, hi]), directed=False)
    except ImportError:
        ig = None
    reps = 3
    with mkrt.Runtime(workers=args.threads, graph=g) as rt:
        if "cc" in mkrt.TRAVERSAL_KINDS:
            rt.cc()
            tot = []
            for _ in range(reps):
                t0 = time.perf_counter()
                labels = rt.cc().astype(np.int64)
                tot.append(time.perf_counter() - t0)
            rows.append(("CC", "mkrt", med(tot), "labels (smallest vertex of each component) into NumPy"))

            def smallest_of(part):
                part = np.asarray(part, dtype=np.int64)
                sm = np.full(int(part.max()) + 1, n, dtype=np.int64)
                np.minimum.at(sm, part, np.arange(n))
                return sm[part]
            if nk is not None:
                tot = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    c = nk.components.ParallelConnectedComponents(G)
                    c.run()
                    part = c.getPartition().getVector()
                    tot.append(time.perf_counter() - t0)
                chk.same("CC mkrt vs NetworKit", labels, smallest_of(part))
                rows.append(("CC", "NetworKit %s" % nk.__version__, med(tot),
                             "ParallelConnectedComponents + getPartition"))
            if ig is not None:
                tot = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    memb = IG.connected_components().membership
                    tot.append(time.perf_counter() - t0)
                chk.same("CC mkrt vs igraph", labels, smallest_of(memb))
                rows.append(("CC", "igraph %s" % ig.__version__, med(tot), "connected_components (one thread)"))
        if "pagerank" in mkrt.TRAVERSAL_KINDS:
            indptr = g.indptr.astype(np.int64)
            want = pagerank_arbiter(n, indptr, g.indices.astype(np.int64))
            rt.pagerank()
            tot = []
            for _ in range(reps):
                t0 = time.perf_counter()
                score, iters = rt.pagerank(tolerance=1e-4)
                tot.append(time.perf_counter() - t0)
            err = float(np.abs(score - want).sum())
            if err > 1e-3:
                chk.bad.append("PageRank mkrt vs the NumPy Jacobi arbiter: L1 %.2e" % err)
            rows.append(("PageRank", "mkrt", med(tot), "d 0.85, L1 tolerance 1e-4 (%d iterations; L1 %.1e from "
                         "the converged scores)" % (iters, err)))
            if nk is not None:
                tot = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    pr = nk.centrality.PageRank(G, damp=0.85, tol=1e-4)
                    pr.norm = nk.centrality.Norm.L1_NORM
                    pr.run()
                    sc = np.asarray(pr.scores())
                    tot.append(time.perf_counter() - t0)
                err = float(np.abs(sc - want).sum())
                if err > 1e-3:
                    chk.peer_bad.append("PageRank NetworKit vs the arbiter: L1 %.2e" % err)
                rows.append(("PageRank", "NetworKit %s" % nk.__version__, med(tot),
                             "PageRank(damp 0.85, tol 1e-4, L1 norm), no sink handling (GAPBS's definition); "
                             "L1 %.1e from the converged scores" % err))
            notes.append("PageRank: mkrt and NetworKit compute GAPBS's definition (vertices without edges give "
                         "nothing); igraph's PRPACK redistributes them, another definition, so it is not compared")


def bench_stream(args, chk, rows, notes):
    n, lo, hi = kronecker(args.stream_scale, args.edgefactor, args.seed + 7)
    rng = np.random.default_rng(args.seed + 8)
    w = rng.integers(1, 256, lo.shape[0]).astype(np.uint32)
    m = lo.shape[0]
    order = rng.permutation(m)
    held = order[: args.batches * args.batch]          # inserted by the stream, batch by batch
    base = order[args.batches * args.batch:]           # loaded at the start
    deg = np.bincount(np.concatenate([lo[base], hi[base]]), minlength=n)
    root = int(np.argmax(deg))
    ndel = args.batch // 4
    notes.append("stream: Kronecker scale %d: %d vertices, %d edges loaded, then %d batches of %d insertions "
                 "+ %d deletions; standing BFS and SSSP (weights 1..255) from vertex %d, and connected components"
                 % (args.stream_scale, n, base.shape[0], args.batches, args.batch, ndel, root))
    # The same update batches for both: insert held edges, delete random present ones.
    batches = []
    alive = np.zeros(m, dtype=bool)
    alive[base] = True
    for b in range(args.batches):
        ins = held[b * args.batch:(b + 1) * args.batch]
        alive[ins] = True
        cand = np.flatnonzero(alive)
        dels = rng.choice(cand, ndel, replace=False)
        alive[dels] = False
        batches.append((ins, dels))

    # mkrt
    s = mkrt.Stream(n, [("bfs", root), ("sssp", root), "cc"])
    s.load(lo[base], hi[base], w[base])
    mk_ans = []
    times = []
    with mkrt.Runtime(workers=args.threads, streams=[s]) as rt:
        for ins, dels in batches:
            t0 = time.perf_counter()
            s.insert(lo[ins], hi[ins], w[ins])
            s.delete(lo[dels], hi[dels])
            rt.quiesce()
            with s.view() as v:
                ans = v.values()
            times.append(time.perf_counter() - t0)
            mk_ans.append(ans)
        fails = rt.failures()
    if fails:
        chk.bad.append("mkrt stream: %d failed updates, first: %s" % (len(fails), fails[0].message))
    rows.append(("stream batch", "mkrt", med(times), "insert + delete + quiesce + a view of the three queries"))
    s.close()

    try:
        import networkit as nk
    except ImportError:
        notes.append("NetworKit not installed: the stream has no peer")
        return
    nk.setNumberOfThreads(args.threads)
    G = nk.GraphFromCoo((w[base].astype(np.float64), (lo[base], hi[base])), n=n, weighted=True, directed=False)
    dbfs = nk.distance.DynBFS(G, root)
    dbfs.run()
    ddij = nk.distance.DynDijkstra(G, root)
    ddij.run()
    dcc = nk.components.DynConnectedComponents(G)
    dcc.run()
    E = nk.dynamics.GraphEvent
    ADD, REM = nk.dynamics.GraphEventType.EDGE_ADDITION, nk.dynamics.GraphEventType.EDGE_REMOVAL
    # DynDijkstra gets one update() per event: with updateBatch() of the
    # insertions, NetworKit 11.3's distances differ from its own static
    # Dijkstra (and from scipy's and mkrt's) from the second batch on.
    times, split = [], {"graph + DynDijkstra": [], "DynBFS": [], "DynConnectedComponents": []}
    for i, (ins, dels) in enumerate(batches):
        t0 = time.perf_counter()
        ev = []
        for a, b, c in zip(lo[ins].tolist(), hi[ins].tolist(), w[ins].tolist()):
            G.addEdge(a, b, float(c))
            e = E(ADD, a, b, float(c))
            ddij.update(e)
            ev.append(e)
        for a, b, c in zip(lo[dels].tolist(), hi[dels].tolist(), w[dels].tolist()):
            G.removeEdge(a, b)
            e = E(REM, a, b, float(c))
            ddij.update(e)
            ev.append(e)
        dd = ddij.getDistances(asarray=True)
        t1 = time.perf_counter()
        dbfs.updateBatch(ev)
        db = dbfs.getDistances(asarray=True)
        t2 = time.perf_counter()
        dcc.updateBatch(ev)
        part = np.asarray(dcc.getPartition().getVector())
        t3 = time.perf_counter()
        times.append(t3 - t0)
        for k, dt in zip(split, (t1 - t0, t2 - t1, t3 - t2)):
            split[k].append(dt)
        # Components as mkrt labels them: the smallest vertex of each.
        def smallest_of(part):
            sm = np.full(int(part.max()) + 1, n, dtype=np.int64)
            np.minimum.at(sm, part, np.arange(n))
            return sm[part]
        sc = nk.components.ConnectedComponents(G)
        sc.run()
        want_c = smallest_of(np.asarray(sc.getPartition().getVector()))
        chk.same("stream CC mkrt vs static CC (batch %d)" % i, mk_ans[i][2].astype(np.int64), want_c)
        chk.same("NetworKit DynConnectedComponents vs static CC (batch %d)" % i, smallest_of(part), want_c,
                 peer_only=True)
        # The arbiter, neither side's incremental code: NetworKit's static
        # BFS and Dijkstra on the graph as it now is. mkrt must equal it;
        # a dynamic peer that does not is reported, not fatal.
        sb = nk.distance.BFS(G, root, storePaths=False)
        sb.run()
        sd = nk.distance.Dijkstra(G, root, storePaths=False)
        sd.run()
        want_b = as_depth(sb.getDistances(asarray=True), 1e300)
        want_d = as_depth(sd.getDistances(asarray=True), 1e300)
        chk.same("stream BFS mkrt vs static BFS (batch %d)" % i, as_depth(mk_ans[i][0], mkrt.UNREACHED), want_b)
        chk.same("stream SSSP mkrt vs static Dijkstra (batch %d)" % i, as_depth(mk_ans[i][1], mkrt.UNREACHED), want_d)
        chk.same("NetworKit DynBFS vs static BFS (batch %d)" % i, as_depth(db, 1e300), want_b, peer_only=True)
        chk.same("NetworKit DynDijkstra vs static Dijkstra (batch %d)" % i, as_depth(dd, 1e300), want_d,
                 peer_only=True)
    notes.append("NetworKit per batch, split (medians): " + ", ".join("%s %s ms" % (k, fmt_ms(med(v)))
                                                              for k, v in split.items()))
    rows.append(("stream batch", "NetworKit %s" % nk.__version__, med(times),
                 "addEdge/removeEdge + DynDijkstra update per event + DynBFS and DynConnectedComponents "
                 "updateBatch + the three answers"))


def alternate(fns, k, rounds=7):
    """Best ns per call of each function over alternating rounds (as timeit: a shared machine only adds)."""
    res = [[] for _ in fns]
    for _ in range(rounds):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(k):
                f()
            res[i].append((time.perf_counter() - t0) / k * 1e9)
    return [min(r) for r in res]


def bench_binding(args, out):
    from mkrt._mkrt import ffi, lib
    k = 200000
    py_call, = alternate([lib.mkrt_version_number], k)
    t0 = time.perf_counter()
    lib.mkrtpy_nop_calls(k * 10)
    c_call = (time.perf_counter() - t0) / (k * 10) * 1e9
    out.append(("a public C call from Python (cffi; the GIL released and taken again)", py_call, "ns/call"))
    out.append(("the same call from C", c_call, "ns/call"))
    # A ring that holds 2^20 items: publishing then measures the copy, not waiting for execution.
    with mkrt.Runtime(workers=args.threads, cells=1 << 20, ring_capacity=1 << 21) as rt:
        v = ffi.new("uint64_t *")
        p = rt._ptr
        raw, full = alternate([lambda: lib.mkrt_cell_read(p, 5, v), lambda: rt.cell(5)], 20000)
        out.append(("mkrt_cell_read through cffi, raw", raw, "ns/call"))
        out.append(("Runtime.cell(h): the same with its checks and the runtime guard", full, "ns/call"))
        prod = rt._thread_producer()._g.handle
        pub = ffi.new("size_t *")
        err = ffi.new("mkrt_error *")
        for size in (1, 1024):
            batch = mkrt.items(op=mkrt.OP_STORE, out=np.arange(size) % 64, param=1)
            buf = ffi.from_buffer("mkrt_item[]", batch)
            raw, full = alternate([lambda: lib.mkrt_publish_some(prod, buf, size, lib.MKRT_TIMEOUT_INFINITE, pub,
                                                                 err),
                                   lambda: rt.publish(batch)], 2000 if size == 1 else 200)
            out.append(("mkrt_publish_some of %d item(s) through cffi, raw" % size, raw / size, "ns/item"))
            out.append(("Runtime.publish(%d item(s)): the same with item checks and the thread's producer" % size,
                        full / size, "ns/item"))
        rt.quiesce()
        n = 1 << 20
        items = mkrt.items(op=mkrt.OP_STORE, out=np.arange(n) % (1 << 20), param=np.arange(n))
        t0 = time.perf_counter()
        rt.publish(items)
        pub_t = time.perf_counter() - t0
        rt.quiesce()
        work = time.perf_counter() - t0
        out.append(("Runtime.publish(2^20 items of ITEM_DTYPE): no copy in Python; C copies into the ring",
                    pub_t / n * 1e9, "ns/item"))
        out.append(("the same items, publish + run to quiescence (the work)", work / n * 1e9, "ns/item"))
        op = np.full(n, mkrt.OP_STORE, dtype=np.int64)
        outs = np.arange(n, dtype=np.int64)
        t0 = time.perf_counter()
        arr = mkrt.items(op=op, out=outs, param=outs)
        out.append(("mkrt.items(op=, out=, param= as int64 arrays): range checks + interleave",
                    (time.perf_counter() - t0) / n * 1e9, "ns/item"))
        rt.publish(arr)
        rt.quiesce()
        t0 = time.perf_counter()
        rt.cells()
        out.append(("Runtime.cells() of 2^20 cells into NumPy", (time.perf_counter() - t0) / n * 1e9, "ns/cell"))
    # A search with nothing to do: Runtime.bfs against the six C calls it makes, raw.
    with mkrt.Runtime(workers=args.threads, graph=mkrt.Graph([0, 1, 2], [1, 0])) as rt:
        d = ffi.new("mkrt_traversal_desc *")
        d.kind = lib.MKRT_TRAVERSAL_BFS
        d.symmetric = True
        tp = ffi.new("mkrt_traversal **")
        vals = np.empty(2, dtype=np.uint64)
        pars = np.empty(2, dtype=np.uint32)
        vb, pb = ffi.from_buffer("uint64_t[]", vals), ffi.from_buffer("uint32_t[]", pars)
        p = rt._ptr

        def raw_bfs():
            lib.mkrt_traversal_open(p, d, tp, ffi.NULL)
            t = tp[0]
            lib.mkrt_traversal_start(t, 0, ffi.NULL)
            lib.mkrt_traversal_wait(t, lib.MKRT_TIMEOUT_INFINITE)
            lib.mkrt_traversal_read(t, 0, 2, vb, ffi.NULL)
            lib.mkrt_traversal_parents(t, 0, 2, pb, ffi.NULL)
            lib.mkrt_traversal_close(t, ffi.NULL)

        raw, full = alternate([raw_bfs, lambda: rt.bfs(0)], 1000)
        out.append(("a BFS of a 2-vertex graph, its six C calls raw through cffi (the search's latency)", raw,
                    "ns/call"))
        out.append(("Runtime.bfs of the same graph: the Python layer added to those calls", full - raw, "ns/call"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scale", type=int, default=17)
    ap.add_argument("--edgefactor", type=int, default=16)
    ap.add_argument("--roots", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--stream-scale", type=int, default=15)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gb-sssp", action="store_true", help="also graphblas Bellman-Ford SSSP (slow)")
    ap.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    ap.add_argument("--record", metavar="FILE", help="write the results as Markdown to FILE")
    ap.add_argument("--append", metavar="TITLE", help="with --record: append to FILE under this heading")
    args = ap.parse_args()
    if args.quick:
        args.scale, args.stream_scale, args.roots, args.batches, args.batch = 12, 11, 3, 3, 200
    chk = Checker()
    load0 = os.getloadavg()[0]
    rows, notes, binding = [], [], []
    bench_static(args, chk, rows, notes)
    bench_stream(args, chk, rows, notes)
    bench_binding(args, binding)

    lines = []
    cmd = "python3 python/bench/bench_python.py " + " ".join(sys.argv[1:])
    lines.append("Command: `%s` (threads: %d for every library that has threads)" % (cmd.strip(), args.threads))
    lines.append("")
    lines.append("Machine: %s, %d CPUs, load average %.1f at the start and %.1f at the end (a shared machine: "
                 "other builds ran beside this), Python %s, NumPy %s, mkrt %s" % (
                     platform.machine(), os.cpu_count(), load0, os.getloadavg()[0], platform.python_version(),
                     np.__version__, mkrt.__version__))
    lines.append("")
    for nline in notes:
        lines.append("- " + nline)
    lines.append("")
    lines.append("| kernel | library | median ms | vs mkrt | what is timed |")
    lines.append("| --- | --- | ---: | ---: | --- |")
    mk = {k: t for k, lib_, t, _ in rows if lib_ == "mkrt"}
    for k, lib_, t, what in rows:
        ratio = "" if lib_ == "mkrt" or k not in mk else "%.2fx" % (t / mk[k])
        lines.append("| %s | %s | %s | %s | %s |" % (k, lib_, fmt_ms(t), ratio, what))
    lines.append("")
    lines.append("(vs mkrt: the library's time over mkrt's; above 1x mkrt is faster.)")
    lines.append("")
    lines.append("Binding overhead:")
    lines.append("")
    lines.append("| what | ns | per |")
    lines.append("| --- | ---: | --- |")
    for what, ns, per in binding:
        lines.append("| %s | %.1f | %s |" % (what, ns, per))
    lines.append("")
    lines.append("Answers checked: mkrt %s" % ("equals every peer and arbiter" if not chk.bad
                                                 else "MISMATCH: " + "; ".join(chk.bad[:5])))
    if chk.peer_bad:
        lines.append("")
        lines.append("Peers that disagree with the arbiter (mkrt agrees with it): %d checks:" % len(chk.peer_bad))
        lines.append("")
        kinds = {}
        for m in chk.peer_bad:
            kinds.setdefault(m.split(" (batch")[0].split(":")[0], []).append(m)
        for k, ms in kinds.items():
            lines.append("- %s: %d times; first: %s" % (k, len(ms), ms[0]))
    text = "\n".join(lines)
    print(text)
    if args.record:
        with open(args.record, "a" if args.append else "w") as f:
            if args.append:
                f.write("\n## %s\n\n" % args.append)
            else:
                f.write("# mkrt from Python beside NetworKit, python-igraph and python-graphblas\n\n")
                f.write("Recorded by `python/bench/bench_python.py` (issue 35). OMP_WAIT_POLICY=%s for the "
                        "OpenMP peers.\n\n" % os.environ["OMP_WAIT_POLICY"])
            f.write(text + "\n")
    return 1 if chk.bad else 0


if __name__ == "__main__":
    sys.exit(main())
