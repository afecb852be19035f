"""Wires the state to the runner: debounced re-chunking whenever what determines the chunks changes.

Slider moves arrive at up to 60 per second; a restartable single-shot timer (pyqtgraph's
`SignalProxy`, superqt's `qdebounced`) turns a burst into one request ~100 ms after the last move,
and the runner drops whatever an even newer request supersedes. Switching strategy or document is
a deliberate act and runs at once.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.qt.controllers.chunk_jobs import ChunkRequest, ChunkResult, ChunkRunner
from inspector.qt.controllers.state import InspectorState

DEBOUNCE_MS = 100


class ChunkingController(QObject):
    """Keeps `state.result` in step with the state's document, strategy and parameters."""

    requested = Signal(int)
    """Id of each request handed to the runner (tests and benchmarks wait on it)."""

    def __init__(self, state: InspectorState, runner: ChunkRunner, *, debounce_ms: int = DEBOUNCE_MS,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.runner = runner
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.submit_now)
        self._submitted: tuple | None = None
        state.documentChanged.connect(lambda _doc: self.submit_now())
        state.strategyChanged.connect(lambda _name: self.submit_now())
        state.paramsChanged.connect(lambda _params: self.schedule())
        state.withPrefixChanged.connect(lambda _on: self.schedule())
        runner.resultReady.connect(self._on_result)
        runner.errored.connect(self._on_error)
        runner.busyChanged.connect(self._update_busy)

    @property
    def debounce_ms(self) -> int:
        return self._timer.interval()

    def set_debounce_ms(self, ms: int) -> None:
        self._timer.setInterval(ms)

    @property
    def pending(self) -> bool:
        """True while a debounced request waits for its timer."""
        return self._timer.isActive()

    def _key(self) -> tuple:
        s = self.state
        return (id(s.document), s.strategy, tuple(sorted(s.params.items())), s.with_prefix)

    def schedule(self) -> None:
        """Re-chunk after the debounce interval (restarted by every call). Nothing to do when the
        state already matches the last request (a strategy switch emits its params too)."""
        if self.state.document is None:
            return
        if self._key() == self._submitted:
            self._timer.stop()
            self._update_busy()
            return
        self._timer.start()
        self._update_busy()

    def submit_now(self) -> int:
        """Re-chunk immediately; returns the request id (0 when there is no document)."""
        self._timer.stop()
        doc = self.state.document
        if doc is None:
            self.runner.cancel()
            self._update_busy()
            return 0
        request = ChunkRequest(doc, self.state.strategy, self.state.params, self.state.with_prefix)
        self._submitted = self._key()
        rid = self.runner.submit(request)
        self.requested.emit(rid)
        self._update_busy()
        return rid

    def shutdown(self) -> None:
        self._timer.stop()
        self.runner.shutdown()
        self.state.set_busy(False)

    def _on_result(self, result: ChunkResult) -> None:
        if result.request.document is not self.state.document:
            return  # finished for a document that is no longer shown
        self.state.set_error("")
        self.state.set_result(result)
        self._update_busy()

    def _on_error(self, _rid: int, message: str) -> None:
        self.state.set_error(message)
        self._update_busy()

    def _update_busy(self, *_args) -> None:
        self.state.set_busy(self._timer.isActive() or self.runner.busy)
