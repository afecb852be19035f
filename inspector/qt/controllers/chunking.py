"""Wires the state to the runner: debounced re-chunking whenever what determines the chunks changes.

Slider moves arrive at up to 60 per second. Outside a drag (keys, the spin box, settings set
elsewhere) a restartable single-shot timer (pyqtgraph's `SignalProxy`, superqt's `qdebounced`)
turns a burst into one request ~100 ms after the last move. While the user holds a slider
(`InspectorState.dragging`) a debounce would wait for a pause that a continuous drag never makes,
so the timer is throttled instead: started by the first move and not restarted by the next ones,
it sends the latest parameters at most once every `throttle_ms` while the slider moves, and the
release sends the final position at once. The runner drops whatever a newer request supersedes,
so a slow re-chunk never queues up behind the drag. Switching strategy or document is a deliberate
act and runs at once.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.qt.controllers.chunk_jobs import ChunkRequest, ChunkResult, ChunkRunner
from inspector.qt.controllers.state import InspectorState

DEBOUNCE_MS = 100
#: During a drag, at most one request this often (the latest parameters win).
THROTTLE_MS = 100


class ChunkingController(QObject):
    """Keeps `state.result` in step with the state's document, strategy and parameters."""

    requested = Signal(int)
    """Id of each request handed to the runner (tests and benchmarks wait on it)."""

    def __init__(self, state: InspectorState, runner: ChunkRunner, *, debounce_ms: int = DEBOUNCE_MS,
                 throttle_ms: int = THROTTLE_MS, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.runner = runner
        self._debounce_ms = debounce_ms
        self.throttle_ms = throttle_ms
        """Interval between requests while a slider is dragged."""
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.submit_now)
        self._submitted: tuple | None = None
        state.documentChanged.connect(lambda _doc: self.submit_now())
        state.strategyChanged.connect(lambda _name: self.submit_now())
        state.paramsChanged.connect(lambda _params: self.schedule())
        state.withPrefixChanged.connect(lambda _on: self.schedule())
        state.embedViewChanged.connect(lambda _view: self.submit_now())
        state.draggingChanged.connect(self._on_dragging)
        runner.resultReady.connect(self._on_result)
        runner.errored.connect(self._on_error)
        runner.busyChanged.connect(self._update_busy)

    @property
    def debounce_ms(self) -> int:
        return self._debounce_ms

    def set_debounce_ms(self, ms: int) -> None:
        self._debounce_ms = ms

    @property
    def pending(self) -> bool:
        """True while a debounced request waits for its timer."""
        return self._timer.isActive()

    def _key(self) -> tuple:
        s = self.state
        return (id(s.document), s.strategy, tuple(sorted(s.params.items())), s.with_prefix, s.embed_view)

    def schedule(self) -> None:
        """Re-chunk after the debounce interval (restarted by every call), or during a drag within
        the throttle interval (not restarted: a continuous drag still re-chunks). Nothing to do
        when the state already matches the last request (a strategy switch emits its params too)."""
        if self.state.document is None:
            return
        if self._key() == self._submitted:
            self._timer.stop()
            self._update_busy()
            return
        if self.state.dragging:
            if not self._timer.isActive():
                self._timer.start(self.throttle_ms)
        else:
            self._timer.start(self._debounce_ms)
        self._update_busy()

    def _on_dragging(self, dragging: bool) -> None:
        """The release is the position the user chose: it gets its own request now, not after a
        debounce (nothing to send when the last throttled request already had it)."""
        if dragging or self.state.document is None:
            return
        if self._key() != self._submitted:
            self.submit_now()
        else:
            self._timer.stop()
            self._update_busy()

    def submit_now(self) -> int:
        """Re-chunk immediately; returns the request id (0 when there is no document)."""
        self._timer.stop()
        doc = self.state.document
        if doc is None:
            self.runner.cancel()
            self._update_busy()
            return 0
        request = ChunkRequest(doc, self.state.strategy, self.state.params, self.state.with_prefix,
                               self.state.embed_view)
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
