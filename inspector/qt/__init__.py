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


SINGLETON_GUARD = _guard_singleton_refcounts()
