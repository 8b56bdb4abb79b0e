# SPDX-License-Identifier: BSD-2-Clause
"""mkrt from Python: the lock-free megakernel runtime, with NumPy in and out.

A cffi (API mode) binding of the public C API (include/mkrt/):

    import mkrt, numpy as np
    g = mkrt.Graph(indptr, indices)          # CSR arrays, or Graph.from_scipy(m)
    depth, parent = mkrt.bfs(g, 0)           # or: with mkrt.Runtime(graph=g) as rt: rt.bfs(0)

- mkrt.Runtime: producers publish NumPy arrays of 16-byte items (op, in,
  out, param); fences, waits, drain and quiesce with timeouts; cells read
  into arrays; stats() and explain() as plain Python objects.
- mkrt.Graph and Runtime.traversal(): BFS (depths, parents), SSSP, and CC
  and PageRank where the C library has them, on the CPU pool, several at
  once from threads (TRAVERSAL_KINDS lists this build's kinds).
- mkrt.Stream: a streaming graph with standing BFS/SSSP/CC queries,
  updates published from arrays, consistent views.

Every C failure raises the mkrt.MkrtError subclass of its status
(InvalidArgument, TimedOut, Closed, StateError, ...) with .status and the
C message including its "Fix: ..."; bad input from Python raises the same
classes (never a crash, never a silent conversion). The GIL is released
while C runs or waits.
"""
from ._mkrt import ffi as _ffi, lib as _lib
from ._errors import (MkrtError, WouldBlock, InvalidArgument, InvalidType, OutOfMemory, Overflow, Closed,
                      TimedOut, Cycle, OverBudget, DeviceError, NotSupported, StateError, error_class)
from ._arrays import ITEM_DTYPE, items
from ._runtime import Runtime, Producer, Failure
from ._graph import Graph, Traversal, BFSResult, PageRankResult, TRAVERSAL_KINDS, UNREACHED, NO_PARENT, bfs, sssp
from ._stream import Stream, View

#: The C library's version ("MAJOR.MINOR.PATCH"); the package has the same.
__version__ = _ffi.string(_lib.mkrt_version()).decode()

#: Built-in op numbers (include/mkrt/op.h) and the first a user op may have.
OP_NOP, OP_STORE, OP_ADD, OP_APPEND = _lib.MKRT_OP_NOP, _lib.MKRT_OP_STORE, _lib.MKRT_OP_ADD, _lib.MKRT_OP_APPEND
OP_MIN, OP_RELAX, OP_OR, OP_ACC = _lib.MKRT_OP_MIN, _lib.MKRT_OP_RELAX, _lib.MKRT_OP_OR, _lib.MKRT_OP_ACC
OP_USER_FIRST = _lib.MKRT_OP_USER_FIRST

__all__ = ["Runtime", "Producer", "Failure", "Graph", "Traversal", "BFSResult", "PageRankResult", "Stream", "View",
           "ITEM_DTYPE", "items", "bfs", "sssp", "TRAVERSAL_KINDS", "UNREACHED", "NO_PARENT",
           "MkrtError", "WouldBlock", "InvalidArgument", "InvalidType", "OutOfMemory", "Overflow", "Closed",
           "TimedOut", "Cycle", "OverBudget", "DeviceError", "NotSupported", "StateError", "error_class",
           "OP_NOP", "OP_STORE", "OP_ADD", "OP_APPEND", "OP_MIN", "OP_RELAX", "OP_OR", "OP_ACC",
           "OP_USER_FIRST", "__version__"]
