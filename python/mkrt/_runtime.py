# SPDX-License-Identifier: BSD-2-Clause
"""mkrt.Runtime and mkrt.Producer: the C runtime (include/mkrt/runtime.h,
publish.h, stats.h, explain.h) with NumPy in and out."""
import collections
import threading
import time

import numpy as np

from . import _arrays
from ._arrays import as_index, timeout_ns
from ._errors import (Closed, InvalidArgument, InvalidType, OutOfMemory, StateError, TimedOut, make_error,
                      raise_err, raise_status)
from ._mkrt import ffi, lib
from ._graph import Graph, Traversal
from ._state import Closing, no_view_held, views_open_here
from ._stream import Stream

_BACKENDS = {"auto": lib.MKRT_BACKEND_AUTO, "cpu": lib.MKRT_BACKEND_CPU, "cuda": lib.MKRT_BACKEND_CUDA,
             "sim": lib.MKRT_BACKEND_SIM}
_PLAN_BITS = {"wake": 1, "shed": 2, "fuse": 4, "route": 8, "drain": 16, "pull": 32, "arms": 64, "queue": 128}
#: mkrt_config fields Runtime() takes as keywords (their C defaults apply when not given).
_CONFIG_INTS = ("workers", "ring_capacity", "max_batch", "max_producers", "burst_per_ring",
                "device_memory_budget", "watchdog_ms", "cells", "append_log_capacity", "dead_letter_capacity",
                "cuda_max_blocks", "device_idle_us", "device_resident_us", "cuda_device_state",
                "cuda_blocks_per_sm", "emit_capacity")
_PLAN_COUNTER_NAMES = sorted(
    (getattr(lib, n), n[len("MKRT_PLAN_N_"):].lower()) for n in dir(lib) if n.startswith("MKRT_PLAN_N_"))

#: A failed item, as the runtime reported it (Runtime.failures()).
Failure = collections.namedtuple("Failure", "op in_ out param status status_name message")
Failure.error = lambda f: make_error(f.status, f.message)
Failure.error.__doc__ = "The exception (an mkrt.MkrtError subclass) this failure stands for."

class _Guard:
    """Keeps a C handle alive while calls use it, without a lock per call.

    A call enters (appends to a deque, then reads the handle) and leaves
    (pops); shut() clears the handle, then waits until no call is inside.
    deque.append/pop and attribute stores are atomic under the GIL, so a
    call either entered before shut() looked (shut() waits for it) or reads
    the cleared handle (and raises): a C call never gets a freed handle.
    A lock per call costs more than the C call here (a microsecond where
    locks are system calls, as on this project's machines).
    """
    __slots__ = ("handle", "_calls", "_shut_lock")

    def __init__(self, handle):
        self.handle = handle
        self._calls = collections.deque()
        self._shut_lock = threading.Lock()

    def enter(self):
        self._calls.append(None)
        h = self.handle
        if h is None:
            self._calls.pop()
        return h

    def leave(self):
        self._calls.pop()

    def shut(self):
        """Clears the handle and returns it once no call uses it (None if already shut)."""
        with self._shut_lock:
            h, self.handle = self.handle, None
        if h is not None:
            while self._calls:
                time.sleep(0.0002)
        return h


class _Use:
    """`with rt._use(what) as ptr:` keeps the runtime from being destroyed during a C call."""
    __slots__ = ("g", "what")

    def __init__(self, guard, what):
        self.g, self.what = guard, what

    def __enter__(self):
        ptr = self.g.enter()
        if ptr is None:
            raise Closed("%s: the runtime is closed. Fix: call it before Runtime.close() (or inside the "
                         "`with mkrt.Runtime(...)` block)" % self.what)
        return ptr

    def __exit__(self, *exc):
        self.g.leave()
        return False


class Producer(Closing):
    """A producer: a lock-free ring of its own to publish items into.

    It belongs to the thread that opened it (using it from another thread
    raises StateError). Its items are drained in publish order. Use it as a
    context manager, or close() it; Runtime.close() closes those left open.
    Runtime.publish() uses one producer per thread, opened on first use.
    """

    def __init__(self, rt):
        self._rt = rt
        self._owner = threading.get_ident()
        err = ffi.new("mkrt_error *")
        with rt._use("Runtime.producer()") as ptr:
            p = lib.mkrt_producer_open(ptr, err)
        if p == ffi.NULL:
            raise_err(err.status, err)
        self._g = _Guard(p)
        with rt._lock:
            rt._producers.add(self)

    def _enter(self, what):
        if self._owner != threading.get_ident():
            raise StateError("%s: this producer belongs to another thread (a producer is one thread's at a "
                             "time). Fix: open one per thread (Runtime.producer(), or Runtime.publish(), "
                             "which keeps one per thread)" % what)
        p = self._g.enter()
        if p is None:
            raise Closed("%s: the producer is closed. Fix: open another with Runtime.producer()" % what)
        return p

    @property
    def closed(self):
        """True once closed (by close() or by Runtime.close())."""
        return self._g.handle is None

    def publish(self, items=None, *, op=None, in_=None, out=None, param=None, timeout=None):
        """Publishes items, waiting for ring space up to timeout seconds (None: for ever).

        items: an array of mkrt.ITEM_DTYPE (published without a copy), an
        (n, 4) integer array, or the fields as keyword arrays or scalars
        (op=, in_=, out=, param=; see mkrt.items()). Returns how many were
        published (all of them). Raises TimedOut (its .published says how
        many went in) when the ring stayed full, Closed when the runtime
        closed.
        """
        arr = _arrays.items(items, op, in_, out, param)
        return self._publish(arr, timeout_ns(timeout), "Producer.publish()")

    def _publish(self, arr, tns, what):
        n = arr.shape[0]
        published = ffi.new("size_t *")
        err = ffi.new("mkrt_error *")
        # A thread that holds a stream view must not wait for ring space: the
        # dispatcher may be in the apply op, waiting for that very view.
        held = views_open_here()
        p = self._enter(what)
        try:
            st = lib.mkrt_publish_some(p, ffi.from_buffer("mkrt_item[]", arr), n, 0 if held else tns, published,
                                       err)
        finally:
            self._g.leave()
        if st == lib.MKRT_ETIMEDOUT and held:
            e = StateError("%s: the ring is full and this thread holds %d open stream view(s), which the "
                           "apply op may be waiting for; %d of %d items were published. Fix: close the view "
                           "before publishing more" % (what, held, published[0], n))
            e.published = published[0]
            raise e
        if st != lib.MKRT_OK:
            if st == lib.MKRT_ETIMEDOUT:
                e = TimedOut("%s: the ring stayed full; %d of %d items were published. Fix: publish the rest "
                             "later, wait longer, or raise ring_capacity" % (what, published[0], n))
                e.published = published[0]
                raise e
            if st == lib.MKRT_ECLOSED:
                e = Closed("%s: the runtime is closing; %d of %d items were published. Fix: publish before "
                           "Runtime.close()" % (what, published[0], n))
                e.published = published[0]
                raise e
            raise_err(st, err)
        return n

    def fence(self):
        """A ticket (int) covering everything this producer published so far."""
        t = ffi.new("uint64_t *")
        p = self._enter("Producer.fence()")
        try:
            st = lib.mkrt_fence(p, t)
        finally:
            self._g.leave()
        if st != lib.MKRT_OK:
            raise_status(st, "Producer.fence()", "fence before Runtime.close()")
        return int(t[0])

    def wait(self, ticket, timeout=None):
        """Waits until every item the ticket covers completed (ran, was pruned or failed).

        Raises TimedOut when not by timeout seconds (None: for ever).
        The GIL is released while it waits.
        """
        ticket = as_index(ticket, "ticket", "pass a ticket from Producer.fence()", limit=2**64 - 1)
        tns = timeout_ns(timeout)
        no_view_held("Producer.wait()")
        p = self._enter("Producer.wait()")
        try:
            st = lib.mkrt_wait(p, ticket, tns)
        finally:
            self._g.leave()
        if st != lib.MKRT_OK:
            if st == lib.MKRT_EINVAL:
                raise InvalidArgument("Producer.wait(%d): this producer never issued that ticket (it has "
                                      "published fewer items). Fix: pass a ticket from this producer's "
                                      "fence()" % ticket)
            raise_status(st, "Producer.wait(timeout=%s)" % timeout,
                         "wait longer (timeout=None waits for ever)" if st == lib.MKRT_ETIMEDOUT
                         else "wait before Runtime.close()")

    def close(self):
        """Closes the producer (what it published still runs). A second close does nothing."""
        if self._owner != threading.get_ident() and not self._rt.closed:
            raise StateError("Producer.close(): the producer belongs to another thread. Fix: close it on the "
                             "thread that opened it (Runtime.close() closes the ones left open)")
        self._close_any()

    def _close_any(self):
        # Any thread: its owner is gone (the thread ended) or cannot be in a call (Runtime.close()).
        p = self._g.shut()
        if p is not None:
            lib.mkrt_producer_close(p)
        rt = self._rt
        with rt._lock:
            rt._producers.discard(self)


class _ThreadProducer:
    """The producer Runtime.publish() keeps for one thread; closed when the thread ends."""

    def __init__(self, p):
        self.p = p

    def __del__(self):
        try:
            self.p._close_any()
        except Exception:
            pass


class Runtime(Closing):
    """An mkrt runtime: producers -> dispatcher -> CPU worker pool (or a device).

    Runtime(backend="auto", workers=0, cells=None, *, graph=None, streams=(),
    plan_off=0, failures_kept=1024, **config)

    backend: "auto" (CUDA where usable, else the CPU pool), "cpu", "cuda" or
        "sim" (the megakernel protocol against a host thread).
    workers: CPU workers; 0 picks one per CPU less one for the dispatcher.
    cells: 64-bit cells (handles 0..cells-1); None: the C default (1 << 20),
        raised to the vertices of the graph or streams given.
    graph: an mkrt.Graph to register (traversals, RELAX items read it).
    streams: mkrt.Stream objects whose ops to register.
    plan_off: plan decisions off for A/B runs: an int of MKRT_PLAN_* bits,
        or names ("wake", "shed", "fuse", "route", "drain", "pull", "arms",
        "queue") as a list or a comma-separated string.
    failures_kept: failed items kept with their messages for failures().
    **config: any other mkrt_config field by name (ring_capacity,
        max_batch, max_producers, burst_per_ring, device_memory_budget,
        watchdog_ms, append_log_capacity, emit_capacity, ...); the C library
        checks the ranges (InvalidArgument names the field and a Fix).

    Use it as a context manager; close() (or leaving the `with` block) runs
    everything published, then frees the runtime. Every method may be called
    from any thread; the GIL is released while C runs or waits, so Python
    threads publish and traverse concurrently. C failures raise the
    mkrt.MkrtError subclass of their status with the C message and its Fix.
    Failed items (an unknown op, a handle >= cells, a bad stream update) do
    not raise at publish time: they are kept with their message, see
    failures().
    """

    def __init__(self, backend="auto", workers=0, cells=None, *, graph=None, streams=(), plan_off=0,
                 failures_kept=1024, **config):
        self._lock = threading.Lock()  # the producer set
        self._g = _Guard(None)
        self._log = ffi.NULL
        self._producers = set()
        self._local = threading.local()
        self._keep = []  # arrays and objects the C runtime borrows until destroy
        self._streams = []
        self._graph = None
        self._close_status = None
        cfg = ffi.new("mkrt_config *", lib.mkrt_config_default())
        if isinstance(backend, str):
            if backend.lower() not in _BACKENDS:
                raise InvalidArgument("backend=%r is not one of %s. Fix: pick one of them"
                                      % (backend, ", ".join(_BACKENDS)))
            cfg.backend = _BACKENDS[backend.lower()]
        else:
            raise InvalidType("backend=%r; a name is needed. Fix: pass one of %s" % (backend, ", ".join(_BACKENDS)))
        unknown = set(config) - set(_CONFIG_INTS)
        if unknown:
            raise InvalidType("Runtime() got unknown config field(s) %s. Fix: use mkrt_config field names: %s"
                              % (", ".join(sorted(unknown)), ", ".join(_CONFIG_INTS)))
        config = dict(config, workers=workers)
        streams = list(streams)
        if cells is None:
            need = max([getattr(graph, "vertices", 0)] + [getattr(s, "vertices", 0) for s in streams])
            if need > cfg.cells:
                config["cells"] = need
        else:
            config["cells"] = cells
        for k, v in config.items():
            limit = 2**(8 * _field_size(k)) - 1
            setattr(cfg, k, as_index(v, k, "pass a non-negative integer (see mkrt_config in "
                                            "include/mkrt/config.h for its range)", limit=limit))
        cfg.plan_off = _plan_bits(plan_off)
        kept = as_index(failures_kept, "failures_kept", "pass how many failed items to keep, e.g. 1024",
                        limit=1 << 24)
        self._log = lib.mkrtpy_log_new(kept)
        if self._log == ffi.NULL:
            raise OutOfMemory("Runtime(): no memory for the failure log of %d entries. Fix: free memory or "
                              "pass a smaller failures_kept" % kept)
        lib.mkrtpy_config_set_log(cfg, self._log)
        self.config = {k: getattr(cfg, k) for k in _CONFIG_INTS}
        self.config["backend"] = backend
        self.config["plan_off"] = cfg.plan_off
        err = ffi.new("mkrt_error *")
        out = ffi.new("mkrt_runtime **")
        st = lib.mkrt_create(cfg, out, err)
        if st != lib.MKRT_OK:
            lib.mkrtpy_log_free(self._log)
            self._log = ffi.NULL
            raise_err(st, err)
        self._g.handle = out[0]
        try:
            if graph is not None:
                self.register_graph(graph)
            for s in streams:
                self.attach_stream(s)
        except BaseException:
            self.close()
            raise

    # ---- lifecycle -------------------------------------------------------
    def _use(self, what):
        return _Use(self._g, what)

    @property
    def _ptr(self):
        return self._g.handle

    @property
    def closed(self):
        """True once close() began."""
        return self._g.handle is None

    def close(self, timeout=None):
        """Stops intake, runs everything published, and frees the runtime.

        Waits for calls other threads are making on the runtime (a wait
        without a timeout in another thread delays it). If draining takes
        longer than timeout seconds (None: for ever), what has not started
        fails with TimedOut in failures() and close() raises TimedOut; the
        runtime is gone either way. A second close() does nothing.
        """
        tns = timeout_ns(timeout)
        if self._ptr is not None:
            no_view_held("Runtime.close()")
        ptr = self._g.shut()
        if ptr is None:
            return
        err = ffi.new("mkrt_error *")
        st = lib.mkrt_destroy(ptr, tns, err)
        with self._lock:
            producers = list(self._producers)
        for p in producers:
            p._close_any()
        for s in self._streams:
            s._runtime_closed()
        self._close_status = st
        # The failure log stays readable (failures()); freed with the object.
        if st != lib.MKRT_OK:
            raise_err(st, err)

    def __del__(self):
        try:
            if getattr(self, "_g", None) is not None and self._g.handle is not None:
                self.close()
        except Exception:
            pass
        if getattr(self, "_log", ffi.NULL) != ffi.NULL:
            lib.mkrtpy_log_free(self._log)
            self._log = ffi.NULL

    def __repr__(self):
        if self._ptr is None:
            return "<mkrt.Runtime closed>"
        return "<mkrt.Runtime %s>" % self.backend_detail

    # ---- registration ----------------------------------------------------
    def register_graph(self, graph):
        """Registers an mkrt.Graph (before the first producer opens, as in C).

        The runtime keeps the graph's arrays until it is closed.
        """
        if not isinstance(graph, Graph):
            raise InvalidType("register_graph(%r): an mkrt.Graph is needed. Fix: build one with "
                              "mkrt.Graph(indptr, indices) or mkrt.Graph.from_scipy(matrix)" % (graph,))
        err = ffi.new("mkrt_error *")
        with self._use("Runtime.register_graph()") as ptr:
            st = lib.mkrt_graph_register(ptr, graph._cgraph, err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        self._keep.append(graph)
        self._graph = graph

    @property
    def graph(self):
        """The registered mkrt.Graph (None when none is)."""
        return self._graph

    def attach_stream(self, stream):
        """Registers an mkrt.Stream's ops on this runtime (before the first producer opens)."""
        if not isinstance(stream, Stream):
            raise InvalidType("attach_stream(%r): an mkrt.Stream is needed. Fix: create one with "
                              "mkrt.Stream(vertices, queries)" % (stream,))
        stream._check_open("Runtime.attach_stream()")
        err = ffi.new("mkrt_error *")
        with self._use("Runtime.attach_stream()") as ptr:
            st = lib.mkrt_stream_register(stream._s, ptr, err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        lib.mkrtpy_log_add_stream(self._log, stream._s)
        self._streams.append(stream)
        stream._attached(self)

    # ---- publishing ------------------------------------------------------
    def producer(self):
        """Opens a Producer for the calling thread (a context manager)."""
        return Producer(self)

    def _thread_producer(self):
        tp = getattr(self._local, "tp", None)
        if tp is None or tp.p.closed:
            tp = _ThreadProducer(Producer(self))
            self._local.tp = tp
        return tp.p

    def publish(self, items=None, *, op=None, in_=None, out=None, param=None, timeout=None):
        """Publishes items through the calling thread's producer (opened on first use).

        Arguments as Producer.publish(). Returns the number published.
        """
        arr = _arrays.items(items, op, in_, out, param)
        tns = timeout_ns(timeout)
        return self._thread_producer()._publish(arr, tns, "Runtime.publish()")

    def fence(self):
        """A ticket covering what the calling thread published through publish()."""
        return self._thread_producer().fence()

    def wait(self, ticket, timeout=None):
        """Waits for a ticket from fence() (same thread); raises TimedOut when not by timeout seconds."""
        return self._thread_producer().wait(ticket, timeout)

    def drain(self, timeout=None):
        """Waits until everything published before the call completed (not what it emitted).

        Raises TimedOut when not done by timeout seconds (None: for ever; 0
        checks once).
        """
        self._wait_call(lib.mkrt_drain, "Runtime.drain", timeout)

    def quiesce(self, timeout=None):
        """Waits until everything published before the call, and all it emitted, completed.

        Then every cell and every stream view includes that work. Raises
        TimedOut when not done by timeout seconds (None: for ever; 0 checks
        once); the work goes on.
        """
        self._wait_call(lib.mkrt_quiesce, "Runtime.quiesce", timeout)

    def _wait_call(self, fn, name, timeout):
        tns = timeout_ns(timeout)
        what = "%s(timeout=%s)" % (name, timeout)
        no_view_held(what)
        with self._use(what) as ptr:
            st = fn(ptr, tns)
        if st != lib.MKRT_OK:
            if st == lib.MKRT_ETIMEDOUT:
                raise TimedOut("%s: the work published before the call had not completed within %s s. Fix: "
                               "wait longer (timeout=None waits for ever), or look at failures() and "
                               "stats() for work that keeps emitting" % (what, timeout))
            raise_status(st, what, "call it before Runtime.close()")

    # ---- cells and logs --------------------------------------------------
    @property
    def cell_count(self):
        """mkrt_config::cells: handles are 0..cell_count-1."""
        return self.config["cells"]

    def cells(self, first=0, count=None, out=None):
        """Cells first .. first+count-1 as a uint64 array (count None: to the last cell).

        out: a C-contiguous uint64 array of count entries to fill instead
        of a new one.
        """
        first = as_index(first, "first", "pass a cell index below cell_count")
        if count is None:
            count = max(self.cell_count - first, 0) if out is None else len(out)
        count = as_index(count, "count", "pass how many cells to read", limit=2**63)
        if first + count > self.cell_count:
            raise InvalidArgument("cells(first=%d, count=%d): the range ends at %d, past the %d cells. Fix: "
                                  "read below cell_count" % (first, count, first + count, self.cell_count))
        if out is None:
            out = np.empty(count, dtype=np.uint64)
        elif not (isinstance(out, np.ndarray) and out.dtype == np.uint64 and out.flags.c_contiguous
                  and out.flags.writeable and out.ndim == 1 and out.shape[0] >= count):
            raise InvalidType("out must be a writeable C-contiguous 1-d uint64 array of at least %d entries. "
                              "Fix: np.empty(%d, dtype=np.uint64)" % (count, count))
        with self._use("Runtime.cells()") as ptr:
            st = lib.mkrt_cells_read(ptr, first, count, ffi.from_buffer("uint64_t[]", out, require_writable=True))
        if st != lib.MKRT_OK:
            raise_status(st, "Runtime.cells(%d, %d)" % (first, count), "read cells below cell_count")
        return out[:count]

    def cell(self, handle):
        """One cell's value (int)."""
        handle = as_index(handle, "handle", "pass a cell index below cell_count")
        v = ffi.new("uint64_t *")
        with self._use("Runtime.cell()") as ptr:
            st = lib.mkrt_cell_read(ptr, handle, v)
        if st != lib.MKRT_OK:
            raise InvalidArgument("Runtime.cell(%d): there are %d cells. Fix: pass a handle below %d"
                                  % (handle, self.cell_count, self.cell_count))
        return int(v[0])

    def write_cell(self, handle, value):
        """Writes a cell (only while no published item that touches it may still run)."""
        handle = as_index(handle, "handle", "pass a cell index below cell_count")
        value = as_index(value, "value", "pass a value in 0..2**64-1", limit=2**64 - 1)
        with self._use("Runtime.write_cell()") as ptr:
            st = lib.mkrt_cell_write(ptr, handle, value)
        if st != lib.MKRT_OK:
            raise InvalidArgument("Runtime.write_cell(%d): there are %d cells. Fix: pass a handle below %d"
                                  % (handle, self.cell_count, self.cell_count))

    def append_log(self, handle, max=4096):
        """The params APPENDed to handle that are in the log (oldest first), as a uint32 array."""
        handle = as_index(handle, "handle", "pass a cell index")
        max = as_index(max, "max", "pass how many params to return at most", limit=1 << 30)
        out = np.empty(max, dtype=np.uint32)
        with self._use("Runtime.append_log()") as ptr:
            n = lib.mkrt_append_log_read(ptr, handle, ffi.from_buffer("uint32_t[]", out), max)
        return out[:min(n, max)]

    def consume_append_log(self, max=4096):
        """Takes the oldest completed APPEND entries out of the log: (handles, params) arrays."""
        max = as_index(max, "max", "pass how many entries to take at most", limit=1 << 30)
        buf = np.empty((max, 2), dtype=np.uint32)
        with self._use("Runtime.consume_append_log()") as ptr:
            n = lib.mkrt_append_log_consume(ptr, ffi.from_buffer("mkrt_append_entry[]", buf), max)
        return buf[:n, 0].copy(), buf[:n, 1].copy()

    def failures(self, max=None):
        """Failed items since the last call, oldest first, as a list of mkrt.Failure.

        Each has the item (op, in_, out, param), status, status_name and
        the full message with its Fix (a stream's updates are explained by
        the stream); f.error() is the matching exception. The runtime keeps
        failures_kept of them; failures_dropped counts the ones beyond.
        """
        if self._log == ffi.NULL:
            return []
        cap = self._log_cap() if max is None else as_index(max, "max", "pass how many failures to take")
        buf = ffi.new("mkrtpy_failure[]", cap or 1)
        total = ffi.new("uint64_t *")
        dropped = ffi.new("uint64_t *")
        n = lib.mkrtpy_log_take(self._log, buf, cap, total, dropped)
        self.failures_total, self.failures_dropped = int(total[0]), int(dropped[0])
        res = []
        for i in range(n):
            f = buf[i]
            res.append(Failure(f.item.op, getattr(f.item, "in"), f.item.out,
                               f.item.param, f.status, ffi.string(lib.mkrt_status_name(f.status)).decode(),
                               ffi.string(f.message).decode("utf-8", "replace")))
        return res

    def _log_cap(self):
        return 1 << 12

    # ---- what happened ---------------------------------------------------
    def stats(self):
        """The runtime's counters (mkrt_stats) as a dict; plan_counts is a dict by decision."""
        s = ffi.new("mkrt_stats *")
        with self._use("Runtime.stats()") as ptr:
            st = lib.mkrt_stats_read(ptr, s)
            if st != lib.MKRT_OK:
                raise_status(st, "Runtime.stats()", "call it before Runtime.close()")
            d = {}
            for name, _ in ffi.typeof("mkrt_stats").fields:
                v = getattr(s, name)
                if name == "plan_counts":
                    d[name] = {cname: int(v[i]) for i, cname in _PLAN_COUNTER_NAMES if cname != "counters"}
                elif name in ("backend", "backend_detail"):
                    d[name] = ffi.string(v).decode() if v != ffi.NULL else None
                else:
                    d[name] = v
        return d

    @property
    def backend_detail(self):
        """What runs the batches and why (mkrt_backend_describe())."""
        with self._use("Runtime.backend_detail") as ptr:
            return ffi.string(lib.mkrt_backend_describe(ptr)).decode()

    def explain(self, max=64):
        """EXPLAIN: the plans of the last batches (up to 64), oldest first, as a list of dicts.

        Each dict has the batch's inputs (items, pressure, measured costs),
        the decisions (width, workers, route, pulled, ...) and run_ns.
        """
        max = as_index(max, "max", "pass how many records to return (the runtime keeps 64)", limit=1 << 20)
        recs = ffi.new("mkrt_plan_record[]", max or 1)
        with self._use("Runtime.explain()") as ptr:
            n = lib.mkrt_plan_explain(ptr, recs, max)
        names = [f for f, _ in ffi.typeof("mkrt_plan_record").fields]
        return [{f: getattr(recs[i], f) for f in names} for i in range(n)]

    # ---- traversals of the registered graph ------------------------------
    def traversal(self, kind="bfs"):
        """Opens a Traversal of the registered graph (see mkrt.Traversal and mkrt.TRAVERSAL_KINDS).

        Each thread that runs searches at once opens its own.
        """
        return Traversal(self, kind)

    def traverse(self, kind, root=0, timeout=None, **params):
        """One search of the registered graph from root; the result of that kind (see TRAVERSAL_KINDS)."""
        with self.traversal(kind) as t:
            return t.run(root, timeout, **params)

    def bfs(self, root, timeout=None):
        """BFS from root: an mkrt.BFSResult(depth, parent) of arrays over the vertices.

        depth (uint64): edges from root, mkrt.UNREACHED where not reached;
        parent (uint32): the BFS tree (root's parent is root), mkrt.NO_PARENT
        where not reached.
        """
        return self.traverse("bfs", root, timeout)

    def sssp(self, root, timeout=None):
        """Shortest-path distances from root over the graph's weights (uint64, mkrt.UNREACHED where not reached)."""
        return self.traverse("sssp", root, timeout)

    def cc(self, timeout=None):
        """Connected components (weakly, on a directed graph): each vertex's label, the smallest
        vertex of its component (uint64). Where the C library has the CC kind."""
        return self.traverse("cc", 0, timeout)

    def pagerank(self, timeout=None, **params):
        """PageRank (GAPBS's definition; a symmetric graph): mkrt.PageRankResult(score, iterations).

        params: damping (0.85), tolerance (1e-4, L1 change), max_iterations
        (20). Where the C library has the PageRank kind.
        """
        return self.traverse("pagerank", 0, timeout, **params)


def _field_size(name):
    return ffi.sizeof(ffi.typeof("mkrt_config").fields[[f for f, _ in ffi.typeof("mkrt_config").fields]
                                                          .index(name)][1].type)


def _plan_bits(plan_off):
    fix = "pass an int of MKRT_PLAN_* bits, or names from %s" % ", ".join(_PLAN_BITS)
    if isinstance(plan_off, str):
        plan_off = [p.strip() for p in plan_off.split(",") if p.strip()]
    if isinstance(plan_off, (list, tuple, set)):
        bits = 0
        for p in plan_off:
            if p not in _PLAN_BITS:
                raise InvalidArgument("plan_off names %r, not a decision. Fix: %s" % (p, fix))
            bits |= _PLAN_BITS[p]
        return bits
    return as_index(plan_off, "plan_off", fix, limit=2**32 - 1)
