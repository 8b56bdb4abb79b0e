# SPDX-License-Identifier: BSD-2-Clause
"""Exceptions: one class per mkrt_status, each carrying the status and the
full message (what failed, the numbers, "Fix: ...")."""
from ._mkrt import ffi, lib


class MkrtError(Exception):
    """A failed mkrt call.

    Attributes:
        status: the C status (a negative int, e.g. ``lib.MKRT_EINVAL`` = -2).
        status_name: its enumerator's name, e.g. ``"MKRT_EINVAL"``.
        message: the whole sentence: what failed, the numbers involved and
            ``"Fix: ..."`` (the C library's own message where it gave one).
    """

    status = None

    def __init__(self, message, status=None):
        if status is not None:
            self.status = status
        self.status_name = ffi.string(lib.mkrt_status_name(self.status)).decode() \
            if self.status is not None else "MKRT_UNKNOWN_STATUS"
        self.message = message
        super().__init__("%s: %s" % (self.status_name, message))

    @property
    def fix(self):
        """The "Fix: ..." part of the message ('' when it has none)."""
        i = self.message.find("Fix:")
        return self.message[i:] if i >= 0 else ""


class WouldBlock(MkrtError):
    """MKRT_EAGAIN: a ring or a table is full; try again."""
    status = lib.MKRT_EAGAIN


class InvalidArgument(MkrtError, ValueError):
    """MKRT_EINVAL: an argument is out of its range (C or Python side)."""
    status = lib.MKRT_EINVAL


class InvalidType(InvalidArgument, TypeError):
    """MKRT_EINVAL raised by the binding: an argument of the wrong type or dtype."""


class OutOfMemory(MkrtError, MemoryError):
    """MKRT_ENOMEM: an allocation failed; nothing was changed."""
    status = lib.MKRT_ENOMEM


class Overflow(MkrtError, OverflowError):
    """MKRT_EOVERFLOW: a size overflowed, or a log or queue is full."""
    status = lib.MKRT_EOVERFLOW


class Closed(MkrtError):
    """MKRT_ECLOSED: the runtime (or object) was closed."""
    status = lib.MKRT_ECLOSED


class TimedOut(MkrtError, TimeoutError):
    """MKRT_ETIMEDOUT: the deadline passed first (the work goes on)."""
    status = lib.MKRT_ETIMEDOUT


class Cycle(MkrtError):
    """MKRT_ECYCLE: a dependency graph has a cycle."""
    status = lib.MKRT_ECYCLE


class OverBudget(MkrtError):
    """MKRT_EBUDGET: a memory plan cannot fit the device budget."""
    status = lib.MKRT_EBUDGET


class DeviceError(MkrtError):
    """MKRT_EDEVICE: the device or its driver failed or is missing."""
    status = lib.MKRT_EDEVICE


class NotSupported(MkrtError):
    """MKRT_ENOTSUP: not supported (in this build, or for this object)."""
    status = lib.MKRT_ENOTSUP


class StateError(MkrtError):
    """MKRT_ESTATE: the object is not in a state that allows this call."""
    status = lib.MKRT_ESTATE


_BY_STATUS = {c.status: c for c in (WouldBlock, InvalidArgument, OutOfMemory, Overflow, Closed, TimedOut,
                                     Cycle, OverBudget, DeviceError, NotSupported, StateError)}


def error_class(status):
    """The exception class of a status (MkrtError for one this binding does not know)."""
    return _BY_STATUS.get(status, MkrtError)


def make_error(status, message):
    return error_class(status)(message, status)


def raise_err(status, err):
    """Raises the exception for a failed call that filled an mkrt_error."""
    msg = ffi.string(err.message).decode("utf-8", "replace")
    raise make_error(status, msg)


def raise_status(status, what, fix):
    """Raises for a failed call that has no mkrt_error: the message is built here."""
    desc = ffi.string(lib.mkrt_status_describe(status)).decode()
    raise make_error(status, "%s: %s. Fix: %s" % (what, desc, fix))


def bad(message, cls=InvalidArgument):
    """Raises bad input found by the binding (message ends in "Fix: ...")."""
    raise cls(message)
