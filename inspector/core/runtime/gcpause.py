"""Keep the cyclic garbage collector out of allocation-heavy core work, without leaking cycles.

Parsing a 20 MB Markdown document creates millions of short-lived objects (markdown-it's tokens);
CPython's collector counts allocations and, every so often, walks *every* tracked object in a
full collection. During such a parse it ran dozens of full collections of 0.5–3 s each, finding
nothing (the objects are acyclic and freed by reference counting), and each one held the GIL: the
window's GUI thread froze for as long. Inside `paused_gc()` automatic collection is off (one
process-wide pause shared by nested and concurrent sections in any thread, counted under a lock;
the collector's own state is restored by the last one out).

What such a section leaves behind (a document's structure, its chunks: hundreds of thousands of
objects that live as long as the document is shown) would then be walked by the collector three
times as it ages through the generations (young, middle, old: 0.1–0.5 s each on a loaded
machine). So the last section out, when the sections left many new objects
(`PROMOTE_AT` net allocations counted by the collector: a big document, not a slider move on a
small one), moves every tracked object straight into the *oldest* generation
(`promote_survivors`: `gc.freeze()` then at once `gc.unfreeze()`, two list splices, no walk).
Fewer new objects are left to the ordinary young collection (a few milliseconds), so short-lived
cycles made meanwhile are still caught young. Nothing is frozen for good: the oldest generation
is still searched by every full collection (and by `gc.collect()`), so a reference cycle that is
or later becomes garbage (an old document held by a closure, a widget) is freed as it would be
anyway, only not before the next full collection. An earlier version left the objects frozen:
every cycle alive at that moment was then never collected and `gc.get_objects()` no longer listed
them (a long session leaked every document caught in one).

`gc.freeze()`/`gc.unfreeze()` are process-global, so the pair runs under the same lock as the
pause (no other section can start or end between the two calls), and nothing in this program
keeps objects in the permanent generation: the model's load promotes its objects the same way
(`inspector.qt.controllers.retrieval`).

Full collections at a moment of the caller's choosing (`defer_full_collections`). With the model
loaded a full collection walks over half a million objects (torch's, the window's, a document's):
60 ms with a 20 MB document open, 250 ms with the model, on a loaded two-core machine. The
interpreter starts one whenever enough middle collections have run (`threshold2`, 10, and a
quarter of the old objects new), in whatever thread allocates at that moment: the middle of
opening a file or a drag. While deferred, `threshold2` is out of reach, so the interpreter runs
young and middle collections only (a few milliseconds); the caller runs `collect_full` when the
user is idle and `full_collection_due` says one would have run, or at the latest when
`full_collection_overdue` says garbage has been left for too long.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

#: Net new tracked objects (gc.get_count()[0]) above which the last section out promotes them
#: all: walking 50,000 young objects takes a few milliseconds, hundreds of thousands do not.
PROMOTE_AT = 50_000

#: `threshold2` while full collections are deferred: never reached (a middle collection every
#: ~7,000 net allocations would need years of them).
DEFERRED_THRESHOLD2 = 1_000_000_000
#: Middle collections since the last full one after which `full_collection_overdue`: at about
#: 7,000 net new container objects each, 1.4 million objects, a handful of seconds of continuous
#: heavy work (a 20 MB document opened twice); the interpreter's own rule would have run a full
#: collection several times by then.
OVERDUE_AFTER = 200

_LOCK = threading.Lock()
_DEPTH = 0
_WAS_ENABLED = True
_DEFERRED = 0
_DUE_AFTER = 10  # the interpreter's own threshold2, read when the first deferral starts


def _promote_locked() -> None:
    gc.freeze()  # every generation -> the permanent one (also resets the young generation's count)
    gc.unfreeze()  # the permanent generation -> the oldest one, where full collections still look


def promote_survivors() -> None:
    """Move every object the collector tracks into its oldest generation without walking them.

    For long-lived data just built (a document's chunks, the embedding model): it is not walked
    twice more on the way there, and any garbage among it is still found by the next full
    collection. Safe from any thread; a no-op on the state of `paused_gc`."""
    with _LOCK:
        _promote_locked()


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Automatic garbage collection off for the duration (nested and concurrent sections in
    several threads share one pause); the last one out promotes what survived to the oldest
    generation when it is a lot, and restores the collector's state."""
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
                if gc.get_count()[0] > PROMOTE_AT:
                    _promote_locked()
                if _WAS_ENABLED:
                    gc.enable()


def defer_full_collections() -> None:
    """From now on the interpreter runs no full collection of its own (young and middle ones go
    on); calls are counted, and `resume_full_collections` undoes the last one."""
    global _DEFERRED, _DUE_AFTER
    with _LOCK:
        if _DEFERRED == 0:
            t0, t1, t2 = gc.get_threshold()
            _DUE_AFTER = t2
            gc.set_threshold(t0, t1, DEFERRED_THRESHOLD2)
        _DEFERRED += 1


def resume_full_collections() -> None:
    """Undo one `defer_full_collections`; the last one restores the interpreter's `threshold2`."""
    global _DEFERRED
    with _LOCK:
        if _DEFERRED == 0:
            return
        _DEFERRED -= 1
        if _DEFERRED == 0:
            t0, t1, _ = gc.get_threshold()
            gc.set_threshold(t0, t1, _DUE_AFTER)


def full_collections_deferred() -> bool:
    return _DEFERRED > 0


def middle_collections_since_full() -> int:
    """Middle collections run since the last full one (the interpreter's own count)."""
    return gc.get_count()[2]


def full_collection_due() -> bool:
    """As many middle collections as the interpreter waits for before a full one have run."""
    return middle_collections_since_full() >= _DUE_AFTER


def full_collection_overdue() -> bool:
    """So many middle collections that garbage cycles should not wait for an idle moment."""
    return middle_collections_since_full() >= OVERDUE_AFTER


def collect_full() -> int:
    """One full collection now, in this thread (it holds the GIL throughout); returns what it
    found unreachable. Not inside a `paused_gc` section: the work there is not done with its
    objects, and walking them is the cost the pause avoids."""
    with _LOCK:
        if _DEPTH:
            return 0
    return gc.collect()


__all__ = ["collect_full", "defer_full_collections", "full_collection_due", "full_collection_overdue",
           "full_collections_deferred", "middle_collections_since_full", "paused_gc", "promote_survivors",
           "resume_full_collections"]
