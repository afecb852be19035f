"""Full garbage collections while the user is idle, not in the middle of an open or a drag.

`inspector.core.runtime.gcpause` explains the cost: with the model loaded a full collection walks over
half a million objects and holds the GIL for 60-250 ms, in whichever thread happened to allocate.
While an `IdleCollector` lives the interpreter runs none of its own; every `CHECK_MS` it runs one
on the GUI thread once one is due (as many middle collections as the interpreter waits for) and
the user has been idle for `IDLE_MS`: no mouse, key or wheel input on a watched window (the main
one, and any that takes the focus, such as a dialog), no button held, no job running in any
runner. After `gcpause.OVERDUE_AFTER` middle collections (continuous
work for many seconds) it runs one anyway, so garbage cycles never wait without bound.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QGuiApplication

from inspector.core.api import gcpause

#: Milliseconds without input or work before a due collection runs.
IDLE_MS = 1_000
#: Milliseconds between checks (a check reads three counters).
CHECK_MS = 250

_INPUT = frozenset({
    QEvent.Type.MouseButtonPress, QEvent.Type.MouseButtonRelease, QEvent.Type.MouseButtonDblClick,
    QEvent.Type.MouseMove, QEvent.Type.Wheel, QEvent.Type.KeyPress, QEvent.Type.KeyRelease,
    QEvent.Type.TouchBegin, QEvent.Type.TouchUpdate, QEvent.Type.TouchEnd, QEvent.Type.TabletMove,
    QEvent.Type.InputMethod, QEvent.Type.Shortcut,
})


class _Deferral:
    """One `defer_full_collections`, resumed exactly once (by `stop`, or when the collector is
    collected without one)."""

    def __init__(self) -> None:
        gcpause.defer_full_collections()
        self.active = True

    def release(self) -> None:
        if self.active:
            self.active = False
            gcpause.resume_full_collections()


class IdleCollector(QObject):
    """Defers the interpreter's full collections and runs them while the user is idle."""

    def __init__(self, busy: Callable[[], bool], *, idle_ms: int = IDLE_MS, check_ms: int = CHECK_MS,
                 clock: Callable[[], float] = time.monotonic, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._busy = busy
        self._idle_s = idle_ms / 1000
        self._clock = clock
        self._last_activity = clock()
        self._watched: weakref.WeakSet[QObject] = weakref.WeakSet()
        self._following = False
        self.collections = 0
        """Full collections run (benchmarks print these three)."""
        self.overdue_collections = 0
        self.longest_ms = 0.0
        self._deferral = _Deferral()
        weakref.finalize(self, self._deferral.release)  # gone without a stop (a parent deleted)
        self.timer = QTimer(self)
        self.timer.setInterval(check_ms)
        self.timer.timeout.connect(self.check)
        self.timer.start()

    def watch(self, obj: QObject) -> None:
        """Count input delivered to `obj` (a top-level window's QWindow sees every mouse and key
        event of its widgets before they do) as activity."""
        if obj not in self._watched:
            self._watched.add(obj)
            obj.installEventFilter(self)

    def follow_focus(self) -> None:
        """Also watch every window that takes the focus from now on (a dialog the user types in)."""
        app = QGuiApplication.instance()
        if isinstance(app, QGuiApplication) and not self._following:
            self._following = True
            app.focusWindowChanged.connect(self._on_focus_window)

    def _on_focus_window(self, window: QObject | None) -> None:
        if window is not None:
            self.watch(window)

    def eventFilter(self, _obj: QObject, event: QEvent) -> bool:  # noqa: N802  (Qt's name)
        if event.type() in _INPUT:
            self._last_activity = self._clock()
        return False

    def idle(self) -> bool:
        """No input, no held mouse button and no running job for `idle_ms`."""
        now = self._clock()
        if self._busy() or QGuiApplication.mouseButtons() != Qt.MouseButton.NoButton:
            self._last_activity = now
        return now - self._last_activity >= self._idle_s

    def check(self) -> bool:
        """Run a full collection if one is due and the user is idle, or one is overdue; True when
        one ran."""
        if not self._deferral.active:
            return False
        idle = self.idle()  # every check: a job that just ended is activity
        if not gcpause.full_collection_due():
            return False
        overdue = gcpause.full_collection_overdue()
        if not idle and not overdue:
            return False
        t0 = time.perf_counter()
        gcpause.collect_full()
        ms = (time.perf_counter() - t0) * 1000
        self.collections += 1
        self.overdue_collections += overdue
        self.longest_ms = max(self.longest_ms, ms)
        return True

    def stop(self) -> None:
        """Stop checking and give the interpreter its own full collections back."""
        self.timer.stop()
        self._deferral.release()
