# SPDX-License-Identifier: BSD-2-Clause
"""mkrt.Graph (a CSR graph, include/mkrt/graph.h) and mkrt.Traversal
(mkrt_traversal_*: BFS, SSSP, and the kinds the C library adds)."""
import collections
import threading

import numpy as np

from ._arrays import as_index, as_uint, timeout_ns
from ._errors import InvalidArgument, InvalidType, StateError, TimedOut, raise_err, raise_status
from ._mkrt import ffi, lib
from ._state import no_view_held

#: A vertex a search did not reach (its depth or distance).
UNREACHED = 2**64 - 1
#: The parent of a vertex a BFS did not reach.
NO_PARENT = 2**32 - 1

#: BFS result: depth (uint64 array) and parent (uint32 array) per vertex.
BFSResult = collections.namedtuple("BFSResult", "depth parent")


#: PageRank result: score (float64 array) per vertex and the iterations it took.
PageRankResult = collections.namedtuple("PageRankResult", "score iterations")


def _read_values(t):
    return t.values()


def _read_depth_parent(t):
    return BFSResult(t.values(), t.parents())


def _read_ranks(t):
    return PageRankResult(*t.ranks())


# The traversal kinds: name -> (C enumerator of include/mkrt/graph.h, how a
# finished search's result is read). A kind the C library gains is one line
# here (build_ffi.py reads the enumerators from the header); a kind whose
# enumerator this build's header lacks is left out.
_KIND_TABLE = {
    "bfs": ("MKRT_TRAVERSAL_BFS", _read_depth_parent),
    "sssp": ("MKRT_TRAVERSAL_SSSP", _read_values),
    "cc": ("MKRT_TRAVERSAL_CC", _read_values),
    "pagerank": ("MKRT_TRAVERSAL_PAGERANK", _read_ranks),
}
_KINDS = {k: (getattr(lib, e), r) for k, (e, r) in _KIND_TABLE.items()
          if hasattr(lib, e) and (k != "pagerank" or hasattr(lib, "mkrt_traversal_read_ranks"))}
#: The traversal kinds this build binds (Runtime.traversal(kind)).
TRAVERSAL_KINDS = tuple(_KINDS)

_FIX_CSR = ("pass indptr (vertices + 1 non-decreasing offsets from 0), indices (indptr[-1] targets below "
            "vertices) and optionally weights (one per index), as non-negative integer arrays")


class Graph:
    """A directed graph in compressed sparse rows, for Runtime(graph=...).

    Graph(indptr, indices, weights=None, *, symmetric=None)

    indptr: vertices + 1 offsets (integers, indptr[0] = 0, non-decreasing);
    indices: the targets of vertex v are indices[indptr[v]:indptr[v+1]];
    weights: one non-negative integer below 2**32 per index (SSSP's edge
        lengths), or None (every weight 1).
    symmetric: the graph holds v -> u for every u -> v (store both
        directions of an undirected edge); BFS may then run large levels
        bottom-up. None: found out here (O(E log E)).

    The graph keeps read-only copies of the arrays (the C runtime borrows
    them until it is closed). The C library checks the rest when a runtime
    registers the graph (offsets that decrease, a target not below
    vertices: InvalidArgument naming the vertex, with a Fix).
    """

    def __init__(self, indptr, indices, weights=None, *, symmetric=None):
        indptr = as_uint(indptr, np.uint64, "indptr", _FIX_CSR)
        indices = as_uint(indices, np.uint32, "indices", _FIX_CSR)
        if indptr.shape[0] < 2:
            raise InvalidArgument("indptr has %d entries; a graph needs at least one vertex (vertices + 1 "
                                  "entries). Fix: %s" % (indptr.shape[0], _FIX_CSR))
        if indptr.shape[0] - 1 > 0xFFFFFFFF:
            raise InvalidArgument("indptr has %d entries; at most 2**32 vertices. Fix: use fewer vertices"
                                  % indptr.shape[0])
        if int(indptr[-1]) != indices.shape[0]:
            raise InvalidArgument("indptr[-1] is %d but indices has %d entries (they must be equal: the C "
                                  "library reads indptr[-1] targets). Fix: %s"
                                  % (int(indptr[-1]), indices.shape[0], _FIX_CSR))
        if weights is not None:
            weights = as_uint(weights, np.uint32, "weights", _FIX_CSR)
            if weights.shape[0] != indices.shape[0]:
                raise InvalidArgument("weights has %d entries and indices %d. Fix: one weight per index"
                                      % (weights.shape[0], indices.shape[0]))
        self.indptr = np.array(indptr, dtype=np.uint64, copy=True)
        self.indices = np.array(indices, dtype=np.uint32, copy=True)
        self.weights = None if weights is None else np.array(weights, dtype=np.uint32, copy=True)
        for a in (self.indptr, self.indices, self.weights):
            if a is not None:
                a.flags.writeable = False
        self.vertices = self.indptr.shape[0] - 1
        self.edges = self.indices.shape[0]
        if symmetric is None:
            symmetric = self._is_symmetric()
        self.symmetric = bool(symmetric)
        g = ffi.new("mkrt_graph *")
        g.vertices = self.vertices
        # The buffers are kept (they are this object's arrays); C only reads them.
        self._bufs = [ffi.from_buffer("uint64_t[]", self.indptr),
                      ffi.from_buffer("uint32_t[]", self.indices)]
        g.offsets = self._bufs[0]
        g.targets = self._bufs[1]
        if self.weights is not None:
            self._bufs.append(ffi.from_buffer("uint32_t[]", self.weights))
            g.weights = self._bufs[2]
        self._cgraph = g

    def _is_symmetric(self):
        if self.edges == 0:
            return True
        if self.indices.max() >= self.vertices:
            return False  # the C check at registration names the bad target
        rows = np.repeat(np.arange(self.vertices, dtype=np.uint64), np.diff(self.indptr).astype(np.int64))
        cols = self.indices.astype(np.uint64)
        n = np.uint64(self.vertices)
        return bool(np.array_equal(np.sort(rows * n + cols), np.sort(cols * n + rows)))

    @classmethod
    def from_scipy(cls, matrix, *, weighted=False, symmetric=None):
        """A Graph from a scipy.sparse matrix (any format; converted to CSR).

        Row u, column v is the edge u -> v. weighted=True takes the matrix's
        values as weights (an integer dtype is needed); weighted=False
        keeps only the structure (every weight 1).
        """
        try:
            m = matrix.tocsr()
        except AttributeError:
            raise InvalidType("from_scipy(%s): a scipy.sparse matrix is needed. Fix: pass e.g. "
                              "scipy.sparse.csr_matrix(...)" % type(matrix).__name__) from None
        if m.shape[0] != m.shape[1]:
            raise InvalidArgument("from_scipy: the matrix is %dx%d; an adjacency matrix is square. Fix: pass a "
                                  "square matrix" % m.shape)
        m.sort_indices()
        weights = None
        if weighted:
            if m.data.dtype.kind not in "iu":
                raise InvalidType("from_scipy(weighted=True): the values have dtype %s; integer weights are "
                                  "needed. Fix: m.astype(np.uint32) after checking they are whole numbers, "
                                  "or weighted=False" % m.data.dtype)
            weights = m.data
        return cls(m.indptr, m.indices, weights, symmetric=symmetric)

    @classmethod
    def from_edges(cls, src, dst, vertices=None, weights=None, *, undirected=False):
        """A Graph from edge arrays u -> v (both directions when undirected=True).

        Rows are sorted by target; repeated edges are kept as given.
        """
        src = as_uint(src, np.uint32, "src", "pass non-negative integer vertex ids")
        dst = as_uint(dst, np.uint32, "dst", "pass non-negative integer vertex ids")
        if src.shape != dst.shape:
            raise InvalidArgument("src has %d entries and dst %d. Fix: one target per source"
                                  % (src.shape[0], dst.shape[0]))
        if weights is not None:
            weights = as_uint(weights, np.uint32, "weights", "pass non-negative integer weights")
            if weights.shape != src.shape:
                raise InvalidArgument("weights has %d entries and src %d. Fix: one weight per edge"
                                      % (weights.shape[0], src.shape[0]))
        top = int(max(src.max(initial=0), dst.max(initial=0))) + 1 if src.size else 1
        if vertices is None:
            vertices = top
        vertices = as_index(vertices, "vertices", "pass the number of vertices")
        if top > vertices:
            raise InvalidArgument("an edge names vertex %d but vertices is %d. Fix: pass vertices > every id"
                                  % (top - 1, vertices))
        if undirected:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
            if weights is not None:
                weights = np.concatenate([weights, weights])
        order = np.lexsort((dst, src))
        indptr = np.zeros(vertices + 1, dtype=np.uint64)
        np.cumsum(np.bincount(src, minlength=vertices), out=indptr[1:])
        return cls(indptr, dst[order], None if weights is None else weights[order],
                   symmetric=True if undirected else None)

    def __repr__(self):
        return "<mkrt.Graph %d vertices, %d edges%s%s>" % (self.vertices, self.edges,
                                                           ", weighted" if self.weights is not None else "",
                                                           ", symmetric" if self.symmetric else "")


class Traversal:
    """A search of a runtime's registered graph with state of its own.

    rt.traversal(kind) opens one (kind: one of mkrt.TRAVERSAL_KINDS: "bfs",
    "sssp", and "cc" and "pagerank" where the C library has them).
    Several run at once in one runtime, from any threads (one thread at a
    time per traversal). start(root) returns at once; wait() waits (the GIL
    released); values() and parents() read the result into NumPy arrays;
    run(root) does all three. Use it as a context manager, or close() it.
    """

    def __init__(self, rt, kind):
        if kind not in _KINDS:
            raise InvalidArgument("traversal kind %r is not one of %s (this build of mkrt). Fix: pick one of "
                                  "them" % (kind, ", ".join(TRAVERSAL_KINDS)))
        if rt.graph is None:
            raise StateError("Runtime.traversal(): no graph is registered. Fix: Runtime(graph=mkrt.Graph(...)) "
                             "or rt.register_graph(g) before opening traversals")
        self.kind = kind
        self._rt = rt
        self._lock = threading.Lock()
        self._started = False
        self.vertices = rt.graph.vertices
        d = ffi.new("mkrt_traversal_desc *")
        d.kind = _KINDS[kind][0]
        d.symmetric = rt.graph.symmetric
        out = ffi.new("mkrt_traversal **")
        err = ffi.new("mkrt_error *")
        with rt._use("Runtime.traversal()") as ptr:
            st = lib.mkrt_traversal_open(ptr, d, out, err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        self._t = out[0]

    def _ptr(self, what):
        if self._t is None:
            raise StateError("%s: the traversal is closed. Fix: open another with Runtime.traversal()" % what)
        return self._t

    def start(self, root=0, **params):
        """Starts a search from root (a vertex; CC and PageRank have none: 0); returns at once.

        PageRank takes damping (0.85), tolerance (1e-4, L1) and
        max_iterations (20) as keywords; the C library checks their ranges.
        """
        root = as_index(root, "root", "pass a vertex id in 0..%d" % (self.vertices - 1))
        err = ffi.new("mkrt_error *")
        if params:
            if self.kind != "pagerank":
                raise InvalidType("Traversal.start(%s): a %s search takes no parameters. Fix: pass the root only"
                                  % (", ".join(params), self.kind))
            p = ffi.new("mkrt_pagerank_params *")
            for k, v in params.items():
                if k not in ("damping", "tolerance", "max_iterations"):
                    raise InvalidType("Traversal.start(%s=...): PageRank takes damping, tolerance and "
                                      "max_iterations. Fix: use those names" % k)
                if k == "max_iterations":
                    v = as_index(v, k, "pass a positive number of iterations")
                elif isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                    raise InvalidType("Traversal.start(%s=%r): a number is needed. Fix: e.g. damping=0.85"
                                      % (k, v))
                setattr(p, k, v)
            with self._rt._use("Traversal.start()"), self._lock:
                st = lib.mkrt_traversal_start_pagerank(self._ptr("Traversal.start()"), p, err)
        else:
            with self._rt._use("Traversal.start()"), self._lock:
                st = lib.mkrt_traversal_start(self._ptr("Traversal.start()"), root, err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        self._started = True

    def wait(self, timeout=None):
        """Waits until the search started last finished; TimedOut when not by timeout seconds."""
        tns = timeout_ns(timeout)
        no_view_held("Traversal.wait()")
        with self._rt._use("Traversal.wait()"), self._lock:
            st = lib.mkrt_traversal_wait(self._ptr("Traversal.wait()"), tns)
        if st != lib.MKRT_OK:
            if st == lib.MKRT_ETIMEDOUT:
                raise TimedOut("Traversal.wait(timeout=%s): the %s search has not finished (it goes on). Fix: "
                               "wait longer (timeout=None waits for ever)" % (timeout, self.kind))
            raise_status(st, "Traversal.wait()", "wait before Runtime.close()")

    def _out(self, out, dtype, what):
        n = self.vertices
        if out is None:
            return np.empty(n, dtype=dtype)
        if not (isinstance(out, np.ndarray) and out.dtype == dtype and out.ndim == 1 and out.shape[0] == n
                and out.flags.c_contiguous and out.flags.writeable):
            raise InvalidType("%s(out=...): a writeable C-contiguous %s array of %d entries is needed. Fix: "
                              "np.empty(%d, dtype=np.%s)" % (what, np.dtype(dtype).name, n, n, np.dtype(dtype).name))
        return out

    def values(self, out=None):
        """The finished search's values, one uint64 per vertex (BFS: depth; SSSP: distance;
        mkrt.UNREACHED where not reached). out: an array to fill instead of a new one."""
        out = self._out(out, np.uint64, "Traversal.values")
        err = ffi.new("mkrt_error *")
        with self._rt._use("Traversal.values()"), self._lock:
            st = lib.mkrt_traversal_read(self._ptr("Traversal.values()"), 0, self.vertices,
                                         ffi.from_buffer("uint64_t[]", out), err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        return out

    def parents(self, out=None):
        """The finished BFS's tree: each vertex's parent (uint32; the root's is itself,
        mkrt.NO_PARENT where not reached). NotSupported for other kinds."""
        out = self._out(out, np.uint32, "Traversal.parents")
        err = ffi.new("mkrt_error *")
        with self._rt._use("Traversal.parents()"), self._lock:
            st = lib.mkrt_traversal_parents(self._ptr("Traversal.parents()"), 0, self.vertices,
                                            ffi.from_buffer("uint32_t[]", out), err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        return out

    def ranks(self):
        """The finished PageRank's scores (float64 per vertex) and the iterations it took."""
        out = self._out(None, np.float64, "Traversal.ranks")
        it = ffi.new("uint32_t *")
        err = ffi.new("mkrt_error *")
        with self._rt._use("Traversal.ranks()"), self._lock:
            st = lib.mkrt_traversal_read_ranks(self._ptr("Traversal.ranks()"), 0, self.vertices,
                                               ffi.from_buffer("double[]", out), it, err)
        if st != lib.MKRT_OK:
            raise_err(st, err)
        return out, int(it[0])

    def result(self):
        """The finished search's result in the kind's form (BFS: BFSResult; SSSP: distances;
        CC: labels, the smallest vertex of each component; PageRank: PageRankResult)."""
        return _KINDS[self.kind][1](self)

    def run(self, root=0, timeout=None, **params):
        """start(root, **params), wait(timeout), result()."""
        self.start(root, **params)
        self.wait(timeout)
        return self.result()

    def stats(self):
        """Work counters since the traversal opened: levels_pushed, levels_pulled, edges_examined."""
        s = ffi.new("mkrt_traversal_stats *")
        with self._rt._use("Traversal.stats()"), self._lock:
            st = lib.mkrt_traversal_stats_read(self._ptr("Traversal.stats()"), s)
        if st != lib.MKRT_OK:
            raise_status(st, "Traversal.stats()", "call it on an open traversal")
        return {f: getattr(s, f) for f, _ in ffi.typeof("mkrt_traversal_stats").fields}

    def close(self):
        """Closes the traversal (StateError while its search runs). A second close does nothing;
        closing after Runtime.close() does nothing (the runtime freed it)."""
        with self._lock:
            if self._t is None:
                return
            if self._rt.closed:
                self._t = None
                return
            err = ffi.new("mkrt_error *")
            with self._rt._use("Traversal.close()"):
                st = lib.mkrt_traversal_close(self._t, err)
            if st != lib.MKRT_OK:
                raise_err(st, err)
            self._t = None

    def __del__(self):
        try:
            if getattr(self, "_t", None) is not None and not self._rt.closed:
                self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is not None and self._t is not None and not self._rt.closed:
            try:  # an exception mid-search: let the search finish before closing
                self.wait(None)
            except Exception:
                pass
        self.close()
        return False


def bfs(graph, root, **runtime_args):
    """BFS of graph from root on a runtime of its own: mkrt.BFSResult(depth, parent).

    For many searches, open one mkrt.Runtime(graph=graph) and call its bfs().
    """
    from ._runtime import Runtime
    with Runtime(graph=graph, **runtime_args) as rt:
        return rt.bfs(root)


def sssp(graph, root, **runtime_args):
    """SSSP distances of graph from root on a runtime of its own (uint64, UNREACHED where not reached)."""
    from ._runtime import Runtime
    with Runtime(graph=graph, **runtime_args) as rt:
        return rt.sssp(root)
