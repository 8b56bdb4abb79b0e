# SPDX-License-Identifier: BSD-2-Clause
"""Items published from NumPy arrays give the results of running them in order."""
import threading

import numpy as np
import pytest

import mkrt
import reference


def random_items(rng, n, cells):
    ops = rng.choice([mkrt.OP_STORE, mkrt.OP_ADD, mkrt.OP_APPEND, mkrt.OP_MIN, mkrt.OP_OR, mkrt.OP_ACC], n)
    return mkrt.items(op=ops, in_=rng.integers(0, cells, n), out=rng.integers(0, cells, n),
                      param=rng.integers(0, 1000, n))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_item_ops_equal_sequential_reference(seed):
    rng = np.random.default_rng(seed)
    cells = 24
    arr = random_items(rng, 3000, cells)
    with mkrt.Runtime(workers=2, cells=cells, max_batch=256) as rt:
        # In three slices, each in its own form: structured, (n, 4), fields.
        rt.publish(arr[:1000])
        rt.publish(arr[1000:2000].view(np.uint32).reshape(-1, 4))
        part = arr[2000:]
        rt.publish(op=part["op"], in_=part["in"], out=part["out"], param=part["param"])
        rt.quiesce(timeout=30)
        got = rt.cells()
        log = {h: list(rt.append_log(h)) for h in range(cells)}
        st = rt.stats()
        assert rt.failures() == []
    want_log = {}
    want = reference.run_items([0] * cells, arr, want_log)
    assert got.tolist() == want
    assert {h: v for h, v in log.items() if v} == want_log
    assert st["published"] == 3000
    assert st["executed"] + st["pruned"] == 3000 and st["failed"] == 0


def test_fence_and_wait_on_an_explicit_producer():
    with mkrt.Runtime(workers=1, cells=8) as rt:
        with rt.producer() as p:
            p.publish(op=mkrt.OP_STORE, out=3, param=41)
            p.publish(op=mkrt.OP_ADD, in_=3, out=3, param=1)
            t = p.fence()
            assert t == 2
            p.wait(t, timeout=10)
            assert rt.cell(3) == 42
        rt.write_cell(5, 2**64 - 1)
        assert rt.cells(5, 1)[0] == 2**64 - 1
        out = np.zeros(8, dtype=np.uint64)
        assert rt.cells(out=out) is not None and out[3] == 42


def test_threads_publish_at_once():
    threads, per = 4, 5000
    with mkrt.Runtime(workers=2, cells=threads + 1) as rt:
        errors = []

        def producer(k):
            try:
                # ACC on a handle of its own and on the shared handle 0,
                # in batches of 500 (one producer per thread, opened on use).
                for b in range(per // 500):
                    vals = np.arange(b * 500, (b + 1) * 500, dtype=np.uint32)
                    rt.publish(op=mkrt.OP_ACC, out=k + 1, param=vals)
                    rt.publish(op=mkrt.OP_ACC, out=0, param=1)
                rt.wait(rt.fence(), timeout=30)
            except Exception as e:  # pragma: no cover - reported below
                errors.append(e)

        ts = [threading.Thread(target=producer, args=(k,)) for k in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert errors == []
        rt.quiesce(timeout=30)
        got = rt.cells()
        st = rt.stats()
    assert got[0] == threads * (per // 500)
    assert got[1:].tolist() == [sum(range(per))] * threads
    assert st["published"] == threads * (per + per // 500)


def test_failed_items_carry_message_and_fix():
    with mkrt.Runtime(workers=1, cells=4) as rt:
        rt.publish(op=mkrt.OP_STORE, out=[1, 9], param=7)
        rt.publish(op=999, in_=0, out=0)
        rt.quiesce(timeout=10)
        fs = rt.failures()
        assert rt.cell(1) == 7
    assert [(f.op, f.out, f.status_name) for f in fs] == [(mkrt.OP_STORE, 9, "MKRT_EINVAL"),
                                                         (999, 0, "MKRT_ENOTSUP")]
    for f in fs:
        assert "Fix:" in f.message
    e = fs[0].error()
    assert isinstance(e, mkrt.InvalidArgument) and e.status == mkrt.InvalidArgument.status
    assert "9" in e.message and e.fix.startswith("Fix:")


def test_stats_and_explain_are_plain_python():
    with mkrt.Runtime(workers=2, cells=64, plan_off="arms,queue") as rt:
        rt.publish(op=mkrt.OP_STORE, out=np.arange(64), param=1)
        rt.drain(timeout=10)
        st = rt.stats()
        ex = rt.explain()
        assert rt.config["plan_off"] == 64 | 128
    assert isinstance(st["plan_counts"], dict) and "pull_levels" in st["plan_counts"]
    assert isinstance(st["backend"], str) and st["backend_detail"].startswith(st["backend"])
    assert all(type(v) in (int, str, dict) for v in st.values())
    assert ex and isinstance(ex[-1], dict) and sum(r["items"] for r in ex) == 64
    assert all(type(v) is int for r in ex for v in r.values())


def test_append_log_read_and_consume():
    with mkrt.Runtime(workers=1, cells=8) as rt:
        rt.publish(op=mkrt.OP_APPEND, out=[3, 5, 3], param=[10, 20, 30])
        rt.drain(timeout=10)
        assert rt.append_log(3).tolist() == [10, 30]
        handles, params = rt.consume_append_log()
        assert list(zip(handles.tolist(), params.tolist())) == [(3, 10), (5, 20), (3, 30)]
        assert rt.append_log(3).tolist() == []
        with pytest.raises(mkrt.InvalidArgument):
            rt.append_log(3, max=-1)
