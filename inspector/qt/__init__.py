"""The Qt view layer: the only package that imports PySide6."""

from __future__ import annotations

import sys


def _guard_singleton_refcounts() -> bool:
    """Work around PySide6 6.12.0 on Python < 3.12, which returns None from every void method
    (setPen, fillRect, setText, ...) and True from `Signal.emit` without taking a reference. From
    Python 3.12 these singletons are immortal (PEP 683), so the bug is invisible there; on 3.11
    their counts fall by one per call, and after a few thousand calls the interpreter aborts with
    "deallocating None" (or "True or False"). PySide6 6.11.2 is not affected. When a probe shows
    the leak, None, True and False get enough extra references to outlast any session (they are
    never freed in a correct program, so nothing else changes). Returns True if it was needed."""
    if sys.version_info >= (3, 12):
        return False
    from PySide6.QtCore import QObject, QPointF, Signal

    class _Probe(QObject):
        ping = Signal()

    point, probe = QPointF(), _Probe()
    for _ in range(8):  # warm up: first calls build caches that hold references of their own
        point.setX(1.0)
        probe.ping.emit()
    before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(256):
        point.setX(1.0)
        probe.ping.emit()
    after = sys.getrefcount(None), sys.getrefcount(True)
    # A leak loses one reference per call: demand most of the 256 before acting.
    if before[0] - after[0] < 200 and before[1] - after[1] < 200:
        return False
    import ctypes

    for singleton in (None, True, False):
        ctypes.c_ssize_t.from_address(id(singleton)).value += 1 << 40
    return True


def _read_sources_once() -> bool:
    """PySide6 decides whether each module imported after it "uses PySide6" (for its `__feature__`
    switches) by `inspect.getsource` of the whole module: through linecache, which then keeps
    every line of every such module for the life of the process. At the window's launch that is
    ~620 modules and ~0.12 s of CPU, most of it on the way to the first chunks (issue 31). The
    same answer, whether the module's source holds "PySide6", comes from the file's bytes,
    read once and not kept. Modules without a `.py` file, or whose file cannot be read, go to
    PySide6's own check. Returns True if installed (False where this PySide6 has no such check:
    nothing changes then)."""
    import PySide6.QtCore  # noqa: F401  (shibokensupport exists once PySide6 is imported)

    try:
        from shibokensupport import feature
    except ImportError:
        return False
    own = getattr(feature, "_mod_uses_pyside", None)
    if own is None or getattr(own, "reads_bytes", False):
        return own is not None

    def uses_pyside(module) -> bool:
        path = getattr(module, "__file__", None)
        if not isinstance(path, str) or not path.endswith(".py"):
            return own(module)
        try:
            with open(path, "rb") as f:
                return b"PySide6" in f.read()
        except OSError:
            return own(module)

    uses_pyside.reads_bytes = True  # type: ignore[attr-defined]
    # (`replaced`: PySide6's own check, which a test compares this one with)
    uses_pyside.replaced = own  # type: ignore[attr-defined]
    feature._mod_uses_pyside = uses_pyside
    return True


SINGLETON_GUARD = _guard_singleton_refcounts()
SOURCES_READ_ONCE = _read_sources_once()
