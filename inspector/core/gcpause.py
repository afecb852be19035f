"""Keep the cyclic garbage collector out of allocation-heavy core work.

Parsing a 20 MB Markdown document creates millions of short-lived objects (markdown-it's tokens);
CPython's collector counts allocations and, every so often, walks *every* tracked object in a
full collection. During such a parse it ran dozens of full collections of 0.5–3 s each, finding
nothing (the objects are acyclic and freed by reference counting), and each one held the GIL: the
window's GUI thread froze for as long. Inside `paused_gc()` automatic collection is off; the
sections it wraps allocate acyclic data (tokens, spans, chunks), so nothing is leaked, and the
collector resumes when the last paused section in any thread ends.

What such a section leaves behind (a document's structure, its chunks: hundreds of thousands of
objects that live as long as the document is shown) would still be walked by the collector three
more times as it ages through the generations (0.1–0.5 s each on a loaded machine). So the last
section out freezes what is alive (`gc.freeze()`): frozen objects are never walked again, and
being acyclic they are still freed by reference counting when the caches drop them. The price: a
reference cycle that happens to be garbage at that moment is never collected (a few small
objects; `benchmarks/soak.py` watches the resident memory of a long session).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from typing import Iterator

_LOCK = threading.Lock()
_DEPTH = 0
_WAS_ENABLED = True


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Automatic garbage collection off for the duration (nested and concurrent sections in
    several threads share one pause; the collector's own state is restored by the last one out)."""
    global _DEPTH, _WAS_ENABLED
    with _LOCK:
        if _DEPTH == 0:
            _WAS_ENABLED = gc.isenabled()
            gc.disable()
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                gc.freeze()
                if _WAS_ENABLED:
                    gc.enable()


__all__ = ["paused_gc"]
