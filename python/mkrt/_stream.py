# SPDX-License-Identifier: BSD-2-Clause
"""mkrt.Stream: a streaming graph with standing queries (include/mkrt/stream.h)."""
import threading
import weakref

import numpy as np

from . import _state
from ._state import Closing
from ._arrays import ITEM_DTYPE, as_index, as_uint
from ._errors import Closed, InvalidArgument, InvalidType, StateError, raise_err, raise_status
from ._mkrt import ffi, lib

_QUERY_KINDS = {"bfs": lib.MKRT_STREAM_BFS, "sssp": lib.MKRT_STREAM_SSSP, "cc": lib.MKRT_STREAM_CC}
_FIX_Q = "pass queries like [(\"bfs\", 0), (\"sssp\", 0), \"cc\"]: BFS and SSSP need a source vertex"
_FIX_E = "pass equal-length arrays of non-negative integer vertex ids below the stream's vertices"


class View(Closing):
    """A consistent read of every query's results at one point of the update stream.

    position: how many updates (that changed the graph, in apply order)
    the results include, none after. read(query) / view[query] give one
    query's values as a uint64 array (BFS hops, SSSP distance,
    mkrt.UNREACHED where not reached; CC: the smallest vertex of the
    component); values() all of them, shape (queries, vertices).

    A view belongs to the thread that opened it and holds the copy it reads:
    the apply op waits for it before rewriting that copy, so close it soon
    (a `with` block). While it is open this thread may not wait on the
    runtime (quiesce, drain, wait raise StateError instead of hanging).
    """

    def __init__(self, stream):
        self._stream = stream
        self._owner = threading.get_ident()
        self._v = ffi.new("mkrt_stream_view *")
        st = lib.mkrt_stream_view_open(stream._check_open("Stream.view()"), self._v)
        if st != lib.MKRT_OK:
            raise_status(st, "Stream.view()", "pass an open stream")
        self._open = True
        _state.view_opened(1)
        self.position = int(self._v.position)

    def _check(self, what):
        if not self._open:
            raise Closed("%s: the view is closed. Fix: open another with Stream.view()" % what)
        if self._owner != threading.get_ident():
            raise StateError("%s: the view belongs to another thread. Fix: open a view on each thread that "
                             "reads" % what)

    def read(self, query=0, first=0, count=None, out=None):
        """Values of vertices first .. first+count-1 of one query (count None: to the last vertex)."""
        self._check("View.read()")
        n = self._stream.vertices
        query = as_index(query, "query", "pass a query index below %d" % self._stream.queries)
        first = as_index(first, "first", "pass a vertex below %d" % n)
        if count is None:
            count = max(n - first, 0)
        count = as_index(count, "count", "pass how many vertices to read")
        if first + count > n:
            raise InvalidArgument("View.read(first=%d, count=%d): the range ends at %d, past the %d vertices. "
                                  "Fix: read vertices below %d" % (first, count, first + count, n, n))
        if out is None:
            out = np.empty(count, dtype=np.uint64)
        elif not (isinstance(out, np.ndarray) and out.dtype == np.uint64 and out.ndim == 1
                  and out.shape[0] >= count and out.flags.c_contiguous and out.flags.writeable):
            raise InvalidType("View.read(out=...): a writeable C-contiguous uint64 array of at least %d entries "
                              "is needed. Fix: np.empty(%d, dtype=np.uint64)" % (count, count))
        err = ffi.new("mkrt_error *")
        st = lib.mkrt_stream_view_read(self._v, query, first, count, ffi.from_buffer("uint64_t[]", out), err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        return out[:count]

    def __getitem__(self, query):
        return self.read(query)

    def values(self):
        """Every query's values, shape (queries, vertices), uint64."""
        res = np.empty((self._stream.queries, self._stream.vertices), dtype=np.uint64)
        for q in range(self._stream.queries):
            self.read(q, out=res[q])
        return res

    def close(self):
        """Closes the view (a second close does nothing)."""
        if self._open:
            if self._owner != threading.get_ident():
                raise StateError("View.close(): the view belongs to another thread. Fix: close it on the "
                                 "thread that opened it")
            lib.mkrt_stream_view_close(self._v)
            self._open = False
            _state.view_opened(-1)


class Stream(Closing):
    """A mutable undirected weighted graph whose standing queries stay exact under updates.

    Stream(vertices, queries, *, weight_max=255, op_base=4000)

    queries: a list of ("bfs", source), ("sssp", source) or "cc" (up to
        16): BFS hops and SSSP distances from a source, connected components
        (the smallest vertex of each component).
    weight_max: the largest edge weight (1 .. 2**24).
    op_base: the first of the three op numbers the stream registers.

    Load the initial edges with load(), attach it to a runtime
    (mkrt.Runtime(streams=[s]) or rt.attach_stream(s)), then publish
    insert()/delete() batches from any threads; after rt.quiesce() every
    update published before it is in, and a view() reads the results at one
    consistent point, also while updates flow. Vertex ids and weights are
    checked here before anything is published (a bad batch raises and
    publishes nothing); deleting an absent edge or inserting an edge again
    with another weight fails as an item: see Runtime.failures(), whose
    messages the stream writes. Close the runtime before the stream.
    """

    def __init__(self, vertices, queries, *, weight_max=255, op_base=4000):
        cfg = ffi.new("mkrt_stream_config *", lib.mkrt_stream_config_default())
        cfg.vertices = as_index(vertices, "vertices", "pass the number of vertices (2 .. 2**31)")
        cfg.weight_max = as_index(weight_max, "weight_max", "pass the largest edge weight (1 .. 2**24)")
        cfg.op_base = as_index(op_base, "op_base", "pass a free user op number (16 .. 4093)")
        if isinstance(queries, (str, tuple)):
            queries = [queries]
        queries = list(queries)
        if len(queries) > lib.MKRT_STREAM_QUERIES_MAX:
            raise InvalidArgument("%d queries; a stream keeps at most %d. Fix: use fewer queries"
                                  % (len(queries), lib.MKRT_STREAM_QUERIES_MAX))
        self.query_kinds = []
        for i, q in enumerate(queries):
            if isinstance(q, str):
                q = (q,)
            if not isinstance(q, (tuple, list)) or not q or q[0] not in _QUERY_KINDS:
                raise InvalidArgument("query %d is %r. Fix: %s" % (i, q, _FIX_Q))
            kind = q[0]
            if kind == "cc":
                if len(q) > 1:
                    raise InvalidArgument("query %d is %r: CC has no source. Fix: pass \"cc\"" % (i, q))
                src = 0
            else:
                if len(q) != 2:
                    raise InvalidArgument("query %d is %r: %s needs a source. Fix: %s" % (i, q, kind, _FIX_Q))
                src = as_index(q[1], "query %d's source" % i, "pass a source vertex")
            cfg.query[i].kind = _QUERY_KINDS[kind]
            cfg.query[i].source = src
            self.query_kinds.append((kind, src) if kind != "cc" else ("cc",))
        cfg.queries = len(queries)
        out = ffi.new("mkrt_stream **")
        err = ffi.new("mkrt_error *")
        st = lib.mkrt_stream_create(cfg, out, err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        self._s = out[0]
        self.vertices = cfg.vertices
        self.queries = cfg.queries
        self.weight_max = cfg.weight_max
        self._rt = None  # weakref to the runtime it is attached to

    def _check_open(self, what):
        if self._s is None:
            raise Closed("%s: the stream is closed. Fix: create another mkrt.Stream" % what)
        return self._s

    def _attached(self, rt):
        self._rt = weakref.ref(rt)

    def _runtime_closed(self):
        self._rt = None

    def _runtime(self, what):
        rt = self._rt() if self._rt is not None else None
        if rt is None or rt.closed:
            raise StateError("%s: the stream is not attached to an open runtime. Fix: "
                             "mkrt.Runtime(streams=[stream]) (or rt.attach_stream(stream)) first" % what)
        return rt

    def load(self, src, dst, weights=None):
        """Loads the initial edges (before any update) and computes every query.

        Self-loops and repeated edges are skipped (returns how many);
        weights 0 become 1 and weights above weight_max become weight_max
        (as in C). weights None: every weight 1.
        """
        s = self._check_open("Stream.load()")
        u, v, w = self._edges(src, dst, weights, check_weights=False)
        skipped = ffi.new("uint64_t *")
        err = ffi.new("mkrt_error *")
        st = lib.mkrt_stream_load(s, ffi.from_buffer("uint32_t[]", u), ffi.from_buffer("uint32_t[]", v),
                                  ffi.NULL if w is None else ffi.from_buffer("uint32_t[]", w), u.shape[0],
                                  skipped, err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        return int(skipped[0])

    def _edges(self, src, dst, weights, check_weights=True):
        u = as_uint(src, np.uint32, "src", _FIX_E)
        v = as_uint(dst, np.uint32, "dst", _FIX_E)
        if u.shape != v.shape:
            raise InvalidArgument("src has %d entries and dst %d. Fix: %s" % (u.shape[0], v.shape[0], _FIX_E))
        for name, a in (("src", u), ("dst", v)):
            if a.size and int(a.max()) >= self.vertices:
                i = int(np.flatnonzero(a >= self.vertices)[0])
                raise InvalidArgument("%s[%d] is %d, not below the stream's %d vertices. Fix: %s"
                                      % (name, i, int(a[i]), self.vertices, _FIX_E))
        w = None
        if weights is not None:
            w = as_uint(weights, np.uint32, "weights", "pass integer weights in 1..%d" % self.weight_max)
            if w.shape != u.shape:
                raise InvalidArgument("weights has %d entries and src %d. Fix: one weight per edge"
                                      % (w.shape[0], u.shape[0]))
            if check_weights and w.size and (int(w.min()) < 1 or int(w.max()) > self.weight_max):
                i = int(np.flatnonzero((w < 1) | (w > self.weight_max))[0])
                raise InvalidArgument("weights[%d] is %d, outside 1..%d (weight_max). Fix: pass weights in "
                                      "1..%d, or create the stream with a larger weight_max"
                                      % (i, int(w[i]), self.weight_max, self.weight_max))
        return u, v, w

    def items(self, src, dst, weights=None, delete=False):
        """The items that insert (or delete) these edges, as an ITEM_DTYPE array (to publish yourself)."""
        s = self._check_open("Stream.items()")
        u, v, w = self._edges(src, dst, None if delete else weights)
        out = np.empty(u.shape[0], dtype=ITEM_DTYPE)
        st = lib.mkrtpy_stream_items(s, 1 if delete else 0, ffi.from_buffer("uint32_t[]", u),
                                     ffi.from_buffer("uint32_t[]", v),
                                     ffi.NULL if w is None else ffi.from_buffer("uint32_t[]", w), u.shape[0],
                                     ffi.from_buffer("mkrt_item[]", out))
        if st != lib.MKRT_OK:
            raise_status(st, "Stream.items()", "pass an open stream")
        return out

    def insert(self, src, dst, weights=None, timeout=None):
        """Publishes the insertion of edges {src[i], dst[i]} (weights None: 1) through this thread's producer."""
        rt = self._runtime("Stream.insert()")
        return rt.publish(self.items(src, dst, weights), timeout=timeout)

    def delete(self, src, dst, timeout=None):
        """Publishes the deletion of edges {src[i], dst[i]} through this thread's producer."""
        rt = self._runtime("Stream.delete()")
        return rt.publish(self.items(src, dst, delete=True), timeout=timeout)

    def view(self):
        """Opens a View (a context manager) of every query's results."""
        return View(self)

    def recompute(self, query=0):
        """One query computed from scratch on the graph as it is (the oracle; quiesce first)."""
        s = self._check_open("Stream.recompute()")
        query = as_index(query, "query", "pass a query index below %d" % self.queries)
        out = np.empty(self.vertices, dtype=np.uint64)
        err = ffi.new("mkrt_error *")
        st = lib.mkrt_stream_recompute(s, query, ffi.from_buffer("uint64_t[]", out), err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        return out

    def stats(self):
        """The stream's counters (mkrt_stream_stats) as a dict."""
        s = self._check_open("Stream.stats()")
        st_ = ffi.new("mkrt_stream_stats *")
        st = lib.mkrt_stream_stats_read(s, st_)
        if st != lib.MKRT_OK:
            raise_status(st, "Stream.stats()", "pass an open stream")
        return {f: getattr(st_, f) for f, _ in ffi.typeof("mkrt_stream_stats").fields}

    def close(self):
        """Frees the stream; its runtime must be closed first (StateError otherwise)."""
        if self._s is None:
            return
        rt = self._rt() if self._rt is not None else None
        if rt is not None and not rt.closed:
            raise StateError("Stream.close(): the runtime it is attached to is still open and may run its "
                             "ops. Fix: close the runtime first (leave its `with` block)")
        s, self._s = self._s, None
        lib.mkrt_stream_destroy(s)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass  # still attached to an open runtime: leaked rather than freed under it

    def __repr__(self):
        return "<mkrt.Stream %d vertices, queries %s%s>" % (self.vertices, self.query_kinds,
                                                            "" if self._s is not None else ", closed")
