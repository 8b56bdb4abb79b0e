# SPDX-License-Identifier: BSD-2-Clause
"""Bad input raises a clear exception with a Fix; C errors keep their status and message."""
import threading

import numpy as np
import pytest

import mkrt
from mkrt._mkrt import lib


def fix_of(excinfo):
    e = excinfo.value
    assert isinstance(e, mkrt.MkrtError)
    assert "Fix:" in e.message, e.message
    return e


def test_one_class_per_status():
    names = ["MKRT_EAGAIN", "MKRT_EINVAL", "MKRT_ENOMEM", "MKRT_EOVERFLOW", "MKRT_ECLOSED", "MKRT_ETIMEDOUT",
             "MKRT_ECYCLE", "MKRT_EBUDGET", "MKRT_EDEVICE", "MKRT_ENOTSUP", "MKRT_ESTATE"]
    classes = [mkrt.error_class(getattr(lib, n)) for n in names]
    assert len(set(classes)) == len(names)
    for n, c in zip(names, classes):
        assert issubclass(c, mkrt.MkrtError) and c.status == getattr(lib, n)
        assert c("x. Fix: y").status_name == n
    assert issubclass(mkrt.TimedOut, TimeoutError) and issubclass(mkrt.InvalidArgument, ValueError)
    assert mkrt.error_class(-99) is mkrt.MkrtError


def test_c_config_error_keeps_status_message_and_fix():
    with pytest.raises(mkrt.InvalidArgument) as ei:
        mkrt.Runtime(workers=100000)
    e = fix_of(ei)
    assert e.status == lib.MKRT_EINVAL and e.status_name == "MKRT_EINVAL"
    assert "workers" in e.message and "100000" in e.message
    with pytest.raises(mkrt.InvalidArgument) as ei:
        mkrt.Runtime(ring_capacity=1000)  # not a power of two
    assert "ring_capacity" in fix_of(ei).message
    with pytest.raises(mkrt.InvalidArgument):
        mkrt.Runtime(backend="gpu")
    with pytest.raises(mkrt.InvalidType):
        mkrt.Runtime(no_such_field=1)
    with pytest.raises(mkrt.InvalidArgument):
        mkrt.Runtime(workers=-1)
    with pytest.raises(mkrt.InvalidArgument):
        mkrt.Runtime(plan_off="fast")


@pytest.fixture
def rt():
    with mkrt.Runtime(workers=1, cells=16) as r:
        yield r


def test_bad_items(rt):
    with pytest.raises(mkrt.InvalidType) as ei:
        rt.publish(op=1, out=np.array([1.0, 2.0]), param=3)  # floats: never converted silently
    assert "float" in fix_of(ei).message
    with pytest.raises(mkrt.InvalidArgument) as ei:
        rt.publish(op=1, out=np.array([1, -2]), param=3)
    assert "out[1] is -2" in fix_of(ei).message
    with pytest.raises(mkrt.InvalidArgument) as ei:
        rt.publish(op=1, out=2**32, param=3)
    fix_of(ei)
    with pytest.raises(mkrt.InvalidArgument):
        rt.publish(np.zeros((3, 5), dtype=np.uint32))
    with pytest.raises(mkrt.InvalidType):
        rt.publish(np.zeros(3, dtype=[("a", "<u4")]))
    with pytest.raises(mkrt.InvalidType):
        rt.publish(op=[True, False], out=1)
    with pytest.raises(mkrt.InvalidArgument):
        rt.publish(op=[1, 1, 1], out=[1, 2], param=0)
    with pytest.raises(mkrt.InvalidArgument):
        rt.publish()
    with pytest.raises(mkrt.InvalidArgument) as ei:
        rt.quiesce(timeout=-1)
    fix_of(ei)
    with pytest.raises(mkrt.InvalidType):
        rt.drain(timeout="1s")
    with pytest.raises(mkrt.InvalidArgument):
        rt.cells(10, 10)
    with pytest.raises(mkrt.InvalidArgument):
        rt.cell(-1)
    with pytest.raises(mkrt.InvalidType):
        rt.cells(out=np.zeros(16, dtype=np.int64))
    with pytest.raises(mkrt.InvalidArgument):
        rt.wait(12345, timeout=0)  # a ticket this producer never issued
    assert rt.stats()["published"] == 0  # nothing bad went in


def test_closed_runtime_and_closing_twice():
    rt = mkrt.Runtime(workers=1, cells=4)
    rt.publish(op=mkrt.OP_STORE, out=1, param=5)
    p = rt.producer()
    rt.close()
    rt.close()  # a second close does nothing
    assert rt.closed and "closed" in repr(rt)
    for call in (lambda: rt.publish(op=1, out=1), lambda: rt.cells(), lambda: rt.stats(),
                 lambda: rt.quiesce(1), lambda: rt.producer(), lambda: rt.explain()):
        with pytest.raises(mkrt.Closed) as ei:
            call()
        fix_of(ei)
    with pytest.raises(mkrt.Closed):
        p.publish(op=1, out=1)  # closed with the runtime
    p.close()
    with mkrt.Runtime(workers=1) as rt2:
        pass
    rt2.close()
    assert rt2.closed


def test_producer_belongs_to_its_thread(rt):
    p = rt.producer()
    caught = []

    def other():
        try:
            p.publish(op=1, out=1, param=1)
        except mkrt.StateError as e:
            caught.append(e)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert len(caught) == 1 and "another thread" in caught[0].message and "Fix:" in caught[0].message
    p.close()
    p.close()


def test_graph_input_errors():
    with pytest.raises(mkrt.InvalidArgument) as ei:
        mkrt.Graph([0, 2, 3], [1, 0])  # indptr[-1] = 3 but 2 indices: C would read past the end
    assert "indptr[-1]" in fix_of(ei).message
    with pytest.raises(mkrt.InvalidType):
        mkrt.Graph(np.array([0.0, 1.0]), [0])
    with pytest.raises(mkrt.InvalidArgument):
        mkrt.Graph([0, 1], [-1])
    with pytest.raises(mkrt.InvalidArgument):
        mkrt.Graph([0, 1], [0], weights=[1, 2])
    g = mkrt.Graph([0, 1, 2], [1, 5], symmetric=False)  # target 5 is not a vertex: C's check
    with pytest.raises(mkrt.InvalidArgument) as ei:
        mkrt.Runtime(workers=1, graph=g)
    e = fix_of(ei)
    assert e.status == lib.MKRT_EINVAL and "5" in e.message
    g = mkrt.Graph([0, 2, 1, 3], [1, 0, 2], symmetric=False)  # offsets decrease: C's check
    with pytest.raises(mkrt.InvalidArgument) as ei:
        mkrt.Runtime(workers=1, graph=g)
    fix_of(ei)


def test_traversal_errors():
    g = mkrt.Graph.from_edges([0, 1], [1, 2], undirected=True)
    with mkrt.Runtime(workers=1, graph=g) as rt:
        with pytest.raises(mkrt.InvalidArgument) as ei:
            rt.traversal("dfs")
        fix_of(ei)
        t = rt.traversal("sssp")
        with pytest.raises(mkrt.StateError) as ei:
            t.values()  # never started: the C library says so
        assert ei.value.status == lib.MKRT_ESTATE and "Fix:" in ei.value.message
        t.run(0, timeout=10)
        with pytest.raises(mkrt.NotSupported) as ei:
            t.parents()  # SSSP has no tree
        fix_of(ei)
        with pytest.raises(mkrt.InvalidArgument) as ei:
            t.start(3)  # not a vertex: C's check
        fix_of(ei)
        with pytest.raises(mkrt.InvalidArgument):
            t.start(-1)
        with pytest.raises(mkrt.InvalidType):
            t.values(out=np.zeros(3, dtype=np.float64))
        t.close()
        t.close()
        with pytest.raises(mkrt.StateError):
            t.start(0)
    with pytest.raises(mkrt.Closed):
        rt.bfs(0)
    with mkrt.Runtime(workers=1, cells=4) as rt:
        with pytest.raises(mkrt.StateError):
            rt.bfs(0)  # no graph registered


def test_runtime_arguments_of_the_wrong_kind():
    with pytest.raises(mkrt.InvalidType):
        mkrt.Runtime(workers=1, graph="not a graph")
    with pytest.raises(mkrt.InvalidType):
        mkrt.Runtime(workers=1, streams=[42])
    with pytest.raises(mkrt.InvalidType):
        mkrt.Runtime(backend=1)
