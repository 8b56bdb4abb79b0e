# SPDX-License-Identifier: BSD-2-Clause
"""State shared by the modules: the stream views open on each thread."""
import threading

from ._errors import StateError

# Views of a stream open on each thread (_stream.View): waiting for the
# runtime while holding one could wait for ever (the apply op waits for the
# view before it rewrites its copy, stream.h), so such waits are refused.
_views = threading.local()


def views_open_here():
    return getattr(_views, "n", 0)


def view_opened(delta):
    _views.n = views_open_here() + delta


def no_view_held(what):
    n = views_open_here()
    if n:
        raise StateError("%s: this thread holds %d open stream view(s), and the apply op waits for views "
                         "before it rewrites their copy, so the wait could never end. Fix: close the "
                         "view (leave its `with` block) before waiting" % (what, n))


class Closing:
    """A context manager whose exit calls close() (Runtime, Producer, Stream, View)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
