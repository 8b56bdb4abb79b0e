# SPDX-License-Identifier: BSD-2-Clause
"""The streaming graph: updates from arrays, views equal to a pure-Python recompute."""
import threading
import time

import numpy as np
import pytest

import mkrt
import reference

QUERIES = [("bfs", 0), ("sssp", 0), "cc"]


def edge_dict_reference(n, edges):
    src = [u for (u, v) in edges] + [v for (u, v) in edges]
    dst = [v for (u, v) in edges] + [u for (u, v) in edges]
    w = list(edges.values()) * 2
    adj = reference.adjacency(n, src, dst, w)
    return [reference.bfs(adj, 0), reference.sssp(adj, 0), reference.cc(adj)]


def key(u, v):
    return (min(u, v), max(u, v))


def test_stream_updates_equal_reference():
    n = 120
    rng = np.random.default_rng(3)
    s = mkrt.Stream(n, QUERIES, weight_max=50)
    u0, v0 = rng.integers(0, n, 200), rng.integers(0, n, 200)
    w0 = rng.integers(1, 51, 200)
    edges = {}
    for u, v, w in zip(u0.tolist(), v0.tolist(), w0.tolist()):
        if u != v and key(u, v) not in edges:
            edges[key(u, v)] = w
    skipped = s.load(u0, v0, w0)
    assert skipped == 200 - len(edges)
    with mkrt.Runtime(workers=2, streams=[s]) as rt:
        assert rt.cell_count >= n
        for step in range(6):
            # Deletions of present edges, insertions of absent ones.
            present = list(edges)
            dels = [present[i] for i in rng.choice(len(present), 15, replace=False)]
            for e in dels:
                del edges[e]
            ins = []
            while len(ins) < 20:
                u, v = (int(x) for x in rng.integers(0, n, 2))
                if u != v and key(u, v) not in edges:
                    edges[key(u, v)] = int(rng.integers(1, 51))
                    ins.append((u, v, edges[key(u, v)]))
            s.delete(np.array([e[0] for e in dels]), np.array([e[1] for e in dels]))
            s.insert(np.array([e[0] for e in ins]), np.array([e[1] for e in ins]),
                     np.array([e[2] for e in ins]))
            rt.quiesce(timeout=30)
            with s.view() as view:
                vals = view.values()
                pos = view.position
                assert view[1].tolist() == vals[1].tolist()
            want = edge_dict_reference(n, edges)
            for q in range(3):
                assert vals[q].tolist() == want[q], (step, q)
                assert s.recompute(q).tolist() == want[q]
            assert pos == 35 * (step + 1)
        assert rt.failures() == []
        st = s.stats()
    assert st["edges"] == len(edges) and st["inserted"] == 120 and st["deleted"] == 90
    s.close()


def test_view_held_while_updates_flow():
    n = 64
    s = mkrt.Stream(n, [("bfs", 0)])
    s.load(np.arange(n - 1), np.arange(1, n))  # a path: depth v
    with mkrt.Runtime(workers=2, streams=[s]) as rt:
        with s.view() as held:
            before = held[0].copy()
            pos = held.position
            done = threading.Event()
            errors = []

            def updater():
                try:
                    # Shortcuts from 0 to every vertex, in batches: the
                    # depths fall to 1 once they are applied.
                    for b in range(2, n, 8):
                        s.insert(np.zeros(len(range(b, min(b + 8, n))), dtype=np.uint32),
                                 np.arange(b, min(b + 8, n)))
                    rt.quiesce(timeout=60)
                except Exception as e:  # pragma: no cover - reported below
                    errors.append(e)
                done.set()

            th = threading.Thread(target=updater)
            th.start()
            time.sleep(0.3)
            # The held view still reads its point of the stream, whole.
            assert held.position == pos
            assert held[0].tolist() == before.tolist() == list(range(n))
            with pytest.raises(mkrt.StateError) as ei:
                rt.quiesce(timeout=1)  # would wait for this very view
            assert "Fix:" in ei.value.message
        th.join(timeout=60)
        assert done.is_set() and errors == []
        with s.view() as after:
            assert after.position == pos + (n - 2)
            assert after[0].tolist() == [0] + [1] * (n - 1)


def test_stream_bad_input():
    with pytest.raises(mkrt.InvalidArgument) as ei:
        mkrt.Stream(1, [("bfs", 0)])  # C: vertices outside 2..2^31
    assert "Fix:" in ei.value.message and ei.value.status_name == "MKRT_EINVAL"
    with pytest.raises(mkrt.InvalidArgument):
        mkrt.Stream(10, [("bfs",)])
    with pytest.raises(mkrt.InvalidArgument):
        mkrt.Stream(10, [("pagerank", 0)])
    with pytest.raises(mkrt.InvalidArgument) as ei:
        mkrt.Stream(10, [("bfs", 99)])  # C: source not below vertices
    assert "Fix:" in ei.value.message
    s = mkrt.Stream(10, [("bfs", 0), "cc"], weight_max=9)
    with pytest.raises(mkrt.StateError):
        s.insert([1], [2])  # not attached to a runtime
    with mkrt.Runtime(workers=1, streams=[s]) as rt:
        with pytest.raises(mkrt.InvalidArgument) as ei:
            s.insert([1, 2], [3, 10])
        assert "dst[1] is 10" in ei.value.message and "Fix:" in ei.value.message
        with pytest.raises(mkrt.InvalidArgument):
            s.insert([1], [2], weights=[10])  # above weight_max
        with pytest.raises(mkrt.InvalidArgument):
            s.insert([-1], [2])
        with pytest.raises(mkrt.InvalidType):
            s.insert(np.array([1.5]), [2])
        assert rt.stats()["published"] == 0
        s.insert([1], [2], [3])
        s.delete([4], [5])  # absent: fails as an item, explained by the stream
        s.insert([1], [2], [4])  # present with another weight
        rt.quiesce(timeout=10)
        fs = rt.failures()
        with pytest.raises(mkrt.StateError):
            s.close()  # the runtime is still open
        with s.view() as v:
            with pytest.raises(mkrt.InvalidArgument) as ei:
                v.read(5)  # no such query: C's check
            assert "Fix:" in ei.value.message
    assert [f.status_name for f in fs] == ["MKRT_ESTATE", "MKRT_EINVAL"]
    assert all("Fix:" in f.message for f in fs)
    assert s.stats()["failed_absent"] == 1
    with pytest.raises(mkrt.Closed):
        v.read(0)
    s.close()
    s.close()
    with pytest.raises(mkrt.Closed):
        s.view()


def test_publishing_into_a_full_ring_while_holding_a_view_raises():
    n = 16
    s = mkrt.Stream(n, [("bfs", 0)])
    s.load(np.arange(n - 1), np.arange(1, n))
    with mkrt.Runtime(workers=1, streams=[s], ring_capacity=64) as rt:
        with s.view():
            # Insert and delete one edge again and again: the first apply
            # takes the free copy, the next waits for this view, and the
            # ring then fills. Without the check this thread would wait for
            # ring space for ever.
            with pytest.raises(mkrt.StateError) as ei:
                for _ in range(200):
                    s.insert([0], [5])
                    s.delete([0], [5])
            assert "Fix:" in ei.value.message and ei.value.published < 2
        rt.quiesce(timeout=30)
        with s.view() as v:
            assert v[0].tolist() == s.recompute(0).tolist()  # every update that went in is applied
