# SPDX-License-Identifier: BSD-2-Clause
"""Checked conversions from Python and NumPy values to what the C API takes.

Rule: an integer array whose values all fit the C type is taken as is when
it already has that dtype and is C-contiguous (no copy), else copied after
the range is checked. Anything else (floats, booleans, objects, negative
or too large values, wrong shapes) raises, naming the argument, the first
bad index and value, and a Fix; nothing is truncated or rounded silently.
"""
import numpy as np

from ._errors import InvalidArgument, InvalidType
from ._mkrt import lib

#: One mkrt_item (16 bytes, C layout): the dtype of the arrays publish() takes and returns.
ITEM_DTYPE = np.dtype([("op", "<u4"), ("in", "<u4"), ("out", "<u4"), ("param", "<u4")])

_LIMITS = {np.dtype(np.uint32): 0xFFFFFFFF, np.dtype(np.uint64): 0xFFFFFFFFFFFFFFFF}


def _first_bad(mask):
    return int(np.flatnonzero(mask)[0])


def as_uint(x, dtype, name, fix, ndim=1, limit=None):
    """x as a C-contiguous array of dtype (np.uint32 or np.uint64), range-checked."""
    dtype = np.dtype(dtype)
    top = _LIMITS[dtype] if limit is None else limit
    if isinstance(x, np.ndarray):
        a = x
    else:
        if isinstance(x, (str, bytes)):
            raise InvalidType("%s is a %s, not integers. Fix: %s" % (name, type(x).__name__, fix))
        try:
            a = np.asarray(x)
        except (ValueError, TypeError) as e:
            raise InvalidType("%s cannot be read as an integer array (%s). Fix: %s" % (name, e, fix)) from None
    if a.dtype.kind not in "iu":
        raise InvalidType("%s has dtype %s; integers are needed (no silent conversion of %s). Fix: %s"
                          % (name, a.dtype, "floats" if a.dtype.kind == "f" else a.dtype.kind, fix))
    if a.ndim != ndim:
        raise InvalidArgument("%s has shape %s; %d dimension(s) are needed. Fix: %s"
                              % (name, a.shape, ndim, fix))
    if a.size:
        if a.dtype.kind == "i":
            neg = a < 0
            if neg.any():
                i = _first_bad(neg.ravel())
                raise InvalidArgument("%s[%d] is %d: ids and counts cannot be negative. Fix: %s"
                                      % (name, i, int(a.ravel()[i]), fix))
        if np.iinfo(a.dtype).max > top:
            big = a > top
            if big.any():
                i = _first_bad(big.ravel())
                raise InvalidArgument("%s[%d] is %d, above %d. Fix: %s"
                                      % (name, i, int(a.ravel()[i]), top, fix))
    if a.dtype == dtype and a.flags.c_contiguous and a.dtype.isnative:
        return a
    return np.ascontiguousarray(a, dtype=dtype)


def as_index(x, name, fix, limit=0xFFFFFFFF):
    """x as a Python int in 0..limit (a vertex, handle or op); numpy integers accepted."""
    if type(x) is int:  # the common case, first
        v = x
    elif isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise InvalidType("%s is %r (%s); an integer is needed. Fix: %s" % (name, x, type(x).__name__, fix))
    else:
        v = int(x)
    if v < 0:
        raise InvalidArgument("%s is %d: ids cannot be negative. Fix: %s" % (name, v, fix))
    if v > limit:
        raise InvalidArgument("%s is %d, above %d. Fix: %s" % (name, v, limit, fix))
    return v


def timeout_ns(timeout, name="timeout"):
    """Seconds (None: for ever) as the C API's relative nanoseconds."""
    if timeout is None:
        return lib.MKRT_TIMEOUT_INFINITE
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float, np.integer, np.floating)):
        raise InvalidType("%s is %r; seconds (a number) or None are needed. Fix: pass e.g. %s=1.5, "
                          "or None to wait for ever" % (name, timeout, name))
    t = float(timeout)
    if not t >= 0:
        raise InvalidArgument("%s is %r seconds. Fix: pass 0 (check once), a positive number of seconds, "
                              "or None to wait for ever" % (name, timeout))
    ns = int(t * 1e9)
    return min(ns, lib.MKRT_TIMEOUT_INFINITE - 1)


def items(items=None, op=None, in_=None, out=None, param=None):
    """Builds an array of mkrt items (dtype ITEM_DTYPE).

    Either ``items``: an array of ITEM_DTYPE (used without a copy when
    C-contiguous) or an integer array of shape (n, 4) with columns op, in,
    out, param; or the four fields as arrays or scalars (broadcast against
    each other; a missing field is 0).
    """
    fix_items = ("pass a structured array of mkrt.ITEM_DTYPE, an (n, 4) integer array of op, in, out, "
                 "param, or op=, in_=, out=, param= arrays of non-negative integers below 2**32")
    if items is not None:
        if any(f is not None for f in (op, in_, out, param)):
            raise InvalidArgument("items and op/in_/out/param were both given. Fix: pass one or the other")
        if isinstance(items, np.ndarray) and items.dtype.names is not None:
            if items.dtype != ITEM_DTYPE:
                raise InvalidType("items has dtype %s; mkrt.ITEM_DTYPE (op, in, out, param as <u4) is "
                                  "needed. Fix: build it with mkrt.items(...) or np.zeros(n, mkrt.ITEM_DTYPE)"
                                  % (items.dtype,))
            if items.ndim != 1:
                raise InvalidArgument("items has shape %s; one dimension is needed. Fix: items.ravel()"
                                      % (items.shape,))
            return np.ascontiguousarray(items)
        a = as_uint(items, np.uint32, "items", fix_items, ndim=2)
        if a.shape[1] != 4:
            raise InvalidArgument("items has shape %s; (n, 4) is needed (op, in, out, param). Fix: %s"
                                  % (a.shape, fix_items))
        return np.ascontiguousarray(a).view(ITEM_DTYPE).reshape(a.shape[0])
    fields = {"op": op, "in": in_, "out": out, "param": param}
    given = {k: v for k, v in fields.items() if v is not None}
    if not given:
        raise InvalidArgument("no items: neither items nor op/in_/out/param were given. Fix: %s" % fix_items)
    arrs = {}
    for k, v in given.items():
        a = np.asarray(v) if not isinstance(v, np.ndarray) else v
        if a.ndim == 0:
            a = a.reshape(1)
        arrs[k] = as_uint(a, np.uint32, "in_" if k == "in" else k, fix_items)
    n = max(a.shape[0] for a in arrs.values())
    res = np.zeros(n, dtype=ITEM_DTYPE)
    for k, a in arrs.items():
        if a.shape[0] not in (1, n):
            raise InvalidArgument("%s has %d entries and another field %d. Fix: give every field the same "
                                  "length (or a scalar)" % ("in_" if k == "in" else k, a.shape[0], n))
        res[k] = a
    return res
