"""Every few seconds, on a thread of its own, give the memory freed since back to the system
(`inspector.core.runtime.heap`): the window's resident size then follows what it holds."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QTimer

from inspector.core.api import heap

#: Milliseconds between trims. A trim walks the C library's heaps (at most 7 ms in a 30-minute
#: soak, on its own thread); the transient work it undoes (a re-chunk, an index, a model batch) is
#: seconds apart at the least. Every 15 s left what a burst of work freed resident for as long.
INTERVAL_MS = 5_000


class HeapTrimmer(QObject):
    """Runs `heap.trim()` every `interval_ms` on a daemon thread (never the GUI thread; a trim
    still running is not started again). Does nothing where the C library is not glibc."""

    def __init__(self, interval_ms: int = INTERVAL_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._thread: threading.Thread | None = None
        self.timer = QTimer(self)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self.start_trim)
        if heap.available():
            self.timer.start()

    def start_trim(self) -> bool:
        """Start a trim unless one is running; True when one was started."""
        if self._thread is not None and self._thread.is_alive():
            return False
        self._thread = threading.Thread(target=heap.trim, name="heap-trim", daemon=True)
        self._thread.start()
        return True

    def stop(self) -> None:
        self.timer.stop()
