# SPDX-License-Identifier: BSD-2-Clause
"""BFS and SSSP through mkrt_traversal_* equal pure-Python references."""
import threading
import time

import numpy as np
import pytest

import mkrt
import reference


def random_graph(seed, n=300, m=900, undirected=True, weighted=False):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    w = rng.integers(1, 20, m) if weighted else None
    g = mkrt.Graph.from_edges(src, dst, vertices=n, weights=w, undirected=undirected)
    rows = np.repeat(np.arange(n), np.diff(g.indptr.astype(np.int64)))
    adj = reference.adjacency(n, rows, g.indices, g.weights)
    return g, adj


def check_bfs_tree(g, adj, root, depth, parent):
    for v in range(g.vertices):
        if depth[v] == mkrt.UNREACHED:
            assert parent[v] == mkrt.NO_PARENT
        elif v == root:
            assert parent[v] == root
        else:
            p = int(parent[v])
            assert depth[p] + 1 == depth[v]
            assert v in [t for t, _ in adj[p]]


@pytest.mark.parametrize("undirected", [True, False])
def test_bfs_equals_reference(undirected):
    for seed in range(3):
        g, adj = random_graph(seed, undirected=undirected)
        assert g.symmetric == undirected
        with mkrt.Runtime(workers=2, graph=g) as rt:
            for root in (0, 7, 123):
                depth, parent = rt.bfs(root, timeout=30)
                assert depth.dtype == np.uint64 and parent.dtype == np.uint32
                assert depth.tolist() == reference.bfs(adj, root)
                check_bfs_tree(g, adj, root, depth, parent)


def test_sssp_equals_reference():
    for seed in range(3):
        g, adj = random_graph(seed, weighted=True, undirected=seed != 1)
        with mkrt.Runtime(workers=2, graph=g) as rt:
            for root in (0, 42):
                assert rt.sssp(root, timeout=30).tolist() == reference.sssp(adj, root)


@pytest.mark.skipif("cc" not in mkrt.TRAVERSAL_KINDS, reason="this build's include/mkrt/graph.h has no CC kind")
def test_cc_equals_reference():
    for seed in range(3):
        g, adj = random_graph(seed, n=400, m=300)  # sparse: many components
        with mkrt.Runtime(workers=2, graph=g) as rt:
            labels = rt.cc(timeout=30)
            assert labels.tolist() == reference.cc(adj)
            with rt.traversal("cc") as t:
                with pytest.raises(mkrt.InvalidType):
                    t.start(0, damping=0.5)  # CC takes no parameters


@pytest.mark.skipif("pagerank" not in mkrt.TRAVERSAL_KINDS,
                    reason="this build's include/mkrt/graph.h has no PageRank kind")
def test_pagerank_equals_reference():
    g, adj = random_graph(4, n=300, m=1500)
    want = reference.pagerank(adj)
    with mkrt.Runtime(workers=2, graph=g) as rt:
        score, iterations = rt.pagerank(tolerance=1e-9, max_iterations=1000, timeout=30)
        assert score.dtype == np.float64 and iterations > 1
        assert float(np.abs(score - np.array(want)).sum()) < 1e-6
        with pytest.raises(mkrt.InvalidArgument) as ei:
            rt.pagerank(damping=1.5)  # the C library's range check
        assert "Fix:" in ei.value.message
    gd = mkrt.Graph.from_edges([0, 1], [1, 2], undirected=False)
    with mkrt.Runtime(workers=1, graph=gd) as rt:
        with pytest.raises(mkrt.InvalidArgument) as ei:
            rt.pagerank()  # needs a symmetric graph
        assert "Fix:" in ei.value.message


def test_scipy_input_and_one_shot_helpers():
    sp = pytest.importorskip("scipy.sparse")  # make check-python checks scipy is there first
    rng = np.random.default_rng(5)
    n = 200
    a = sp.random(n, n, density=0.02, random_state=7, format="coo")
    a = ((a + a.T) > 0).astype(np.int64)
    wmat = a.multiply(rng.integers(1, 9, (n, n))).tocsr().astype(np.int64)
    g = mkrt.Graph.from_scipy(a)
    gw = mkrt.Graph.from_scipy(wmat, weighted=True)
    assert g.symmetric and g.edges == a.nnz and gw.weights is not None
    adj = reference.adjacency(n, *wmat.nonzero(), np.asarray(wmat[wmat.nonzero()]).ravel())
    assert mkrt.bfs(g, 3, workers=1).depth.tolist() == reference.bfs(adj, 3)
    assert mkrt.sssp(gw, 3, workers=1).tolist() == reference.sssp(adj, 3)
    with pytest.raises(mkrt.InvalidType):
        mkrt.Graph.from_scipy(wmat.astype(np.float64), weighted=True)


def test_traversals_at_once_from_threads():
    g, adj = random_graph(11, n=2000, m=6000)
    roots = [0, 1, 2, 3, 4, 5]
    results, errors = {}, []
    with mkrt.Runtime(workers=2, graph=g) as rt:
        def search(root):
            try:
                with rt.traversal("bfs") as t:
                    for _ in range(3):  # reused: one search at a time per traversal
                        results[root] = t.run(root, timeout=60).depth.tolist()
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        ts = [threading.Thread(target=search, args=(r,)) for r in roots]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert rt.stats()["levels_pushed"] > 0
    assert errors == []
    for r in roots:
        assert results[r] == reference.bfs(adj, r)


def test_gil_is_released_while_c_waits():
    # A path: one BFS level per vertex, so the search outlasts the waiting
    # thread's timeout in C while this thread keeps running Python code.
    for n in (200000, 1000000, 4000000):
        g = mkrt.Graph.from_edges(np.arange(n - 1), np.arange(1, n), vertices=n, undirected=True)
        rt = mkrt.Runtime(workers=1, graph=g)
        t = rt.traversal("bfs")
        window = {}

        def waiter():
            t.start(0)
            window["start"] = time.monotonic()
            try:
                t.wait(timeout=0.3)
                window["finished"] = True
            except mkrt.TimedOut:
                window["finished"] = False
            window["end"] = time.monotonic()

        th = threading.Thread(target=waiter)
        ticks = []
        th.start()
        while th.is_alive():
            ticks.append(time.monotonic())
        th.join()
        if not window["finished"]:
            inside = [x for x in ticks if window["start"] + 0.05 < x < window["end"] - 0.05]
            # Were the GIL held by the waiting call, this thread could not run in there.
            assert len(inside) > 1000
            try:
                rt.close(timeout=0.05)  # cuts the search short
            except mkrt.TimedOut:
                pass
            return
        rt.close()
    pytest.fail("a BFS over a 4 x 10^6-vertex path finished within 0.3 s: nothing left to observe the GIL with")
