"""The one background runner: latest request wins.

Shaped after napari's `_LayerSlicer` and superqt's worker: a `QRunnable` per request on a private
single-thread pool, increasing request ids, stages of any request but the latest dropped on
arrival, exceptions emitted as `errored` (with a traceback as details), a synchronous mode for
tests. A job is `job(cancelled, progress) -> Iterator[stage]`; it runs inside
`inspector.core.runtime.cancel.cancel_scope(cancelled)`, so long core loops stop as soon as a newer request
supersedes it. Widgets are touched only on the GUI thread: the worker emits through a relay object
that lives there. Chunking (`worker.ChunkRunner`), retrieval, the model loader, the sweep and
background file loading all run on this.
"""

from __future__ import annotations

import logging
import sys
import threading
import traceback
import weakref
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal, Slot

from inspector.core.api import Cancelled

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from types import ModuleType

log = logging.getLogger(__name__)

Progress = Callable[[int, int, str], None]
"""progress(done, total, label), called from the worker thread."""
Job = Callable[[Callable[[], bool], Progress], Iterator[Any]]

#: Runners alive in this process (the test suite checks that none leaves a thread running).
LIVE_RUNNERS: weakref.WeakSet[JobRunner] = weakref.WeakSet()


def describe_error(exc: BaseException) -> str:
    """One line for the status bar."""
    one_line = getattr(exc, "one_line", None)
    if callable(one_line):
        return str(one_line())
    if isinstance(exc, ValueError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def error_details(exc: BaseException) -> str:
    """The traceback behind an error, for the user's Details… (none for a plain bad parameter)."""
    if isinstance(exc, ValueError) and exc.__cause__ is None:
        return ""
    return "".join(traceback.format_exception(exc))


def _no_tqdm_monitor() -> None:
    """bm25s and sentence-transformers build (disabled) tqdm bars; the first bar of a process starts
    tqdm's monitor thread, which never ends. A desktop app has no use for it (it only watches
    console bars for stalls), and a thread that outlives every job would hide real leaks.

    tqdm is switched off as soon as it is imported, by whichever job imports it (`_QuietTqdm`),
    not imported here: importing it (40-60 ms of CPU with importlib.metadata) ran at the start of
    the window's first chunking, which needs no tqdm (issue 31)."""
    if "tqdm" not in sys.modules:
        _QuietTqdm.install()
        return
    import tqdm  # imported already (or now by another thread: this waits for it to finish)

    tqdm.tqdm.monitor_interval = 0


class _QuietTqdm:
    """A finder first on `sys.meta_path` (a meta path finder needs only `find_spec`): it finds tqdm
    once, with the finders after it, and has its loader switch the monitor off right after the
    package runs, before anything that imported it can make a bar."""

    _installed: _QuietTqdm | None = None
    _lock = threading.Lock()

    @classmethod
    def install(cls) -> None:
        with cls._lock:
            if cls._installed is None and "tqdm" not in sys.modules:
                cls._installed = cls()
                sys.meta_path.insert(0, cls._installed)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        if fullname != "tqdm":
            return None
        with self._lock:  # one shot: the import of tqdm holds its module lock meanwhile
            if self in sys.meta_path:
                sys.meta_path.remove(self)
        spec = None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        loader = spec.loader if spec is not None else None
        exec_module = getattr(loader, "exec_module", None)
        if spec is None or exec_module is None:
            return spec

        def exec_quietly(module: ModuleType) -> None:
            exec_module(module)
            module.tqdm.monitor_interval = 0

        loader.exec_module = exec_quietly  # type: ignore[union-attr]  # this spec's loader only
        return spec


class _Relay(QObject):
    """Lives on the GUI thread; the worker emits through it, so slots run on the GUI thread."""

    stage = Signal(int, object)
    progress = Signal(int, int, int, str)
    failed = Signal(int, str, str)
    """(request id, one line, details: the traceback of an unexpected exception, else '')."""
    finished = Signal(int)


def _spent_job(cancelled: Callable[[], bool], progress: Callable[..., None]) -> Iterator[object]:
    """What a task's job becomes once it has run (the original and all it holds are let go)."""
    return iter(())


class _Task(QRunnable):
    def __init__(self, rid: int, job: Job, relay: _Relay, is_current: Callable[[int], bool]) -> None:
        super().__init__()
        self.rid = rid
        self.job = job
        self.relay = relay
        self.is_current = is_current

    def run(self) -> None:
        from inspector.core.api import cancel_scope

        rid = self.rid
        _no_tqdm_monitor()

        def cancelled() -> bool:
            return not self.is_current(rid)

        def progress(done: int, total: int, label: str = "") -> None:
            if self.is_current(rid):
                self.relay.progress.emit(rid, int(done), int(total), label)

        try:
            if self.is_current(rid):
                with cancel_scope(cancelled):
                    for stage in self.job(cancelled, progress):
                        if not self.is_current(rid):
                            break
                        self.relay.stage.emit(rid, stage)
        except Cancelled:
            pass
        except Exception as exc:  # noqa: BLE001  (reported to the user, with a traceback in the log)
            if not isinstance(exc, ValueError):
                log.exception("background job failed")
            self.relay.failed.emit(rid, describe_error(exc), error_details(exc))
        finally:
            self.relay.finished.emit(rid)
            # A finished task holds nothing of its job: in the window the thread pools kept
            # finished tasks alive (the issue-17 soak's probe: 56-67 `_Task` objects alive
            # beside ten idle runners, each with its request's documents and chunks; 196
            # Documents alive after 24 minutes).
            self.job = _spent_job


class JobRunner(QObject):
    """Runs jobs one at a time off the GUI thread; only the latest request reports."""

    stageReady = Signal(int, object)
    """(request id, stage) of the latest request."""
    progressed = Signal(int, int, int, str)
    """(request id, done, total, label) of the latest request."""
    errored = Signal(int, str)
    """(request id, one-line message) when the latest request failed."""
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None, *, synchronous: bool = False, name: str = "") -> None:
        super().__init__(parent)
        self.synchronous = synchronous
        self.name = name
        self._latest = 0
        self._busy = False
        self._closed = False
        self.last_error_details = ""
        """Details (a traceback) of the latest request's failure, '' when there are none."""
        self._relay = _Relay(self)
        self._relay.stage.connect(self._on_stage)
        self._relay.progress.connect(self._on_progress)
        self._relay.failed.connect(self._on_failed)
        self._relay.finished.connect(self._on_finished)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        LIVE_RUNNERS.add(self)

    @property
    def latest_id(self) -> int:
        return self._latest

    @property
    def busy(self) -> bool:
        return self._busy

    @property
    def closed(self) -> bool:
        return self._closed

    def is_current(self, rid: int) -> bool:
        return rid == self._latest and not self._closed  # an int read is atomic under the GIL

    def submit(self, job: Job) -> int:
        """Start `job`, superseding any earlier one; returns its request id."""
        if self._closed:
            raise RuntimeError("runner is shut down")
        self._latest += 1
        rid = self._latest
        task = _Task(rid, job, self._relay, self.is_current)
        self._set_busy(True)
        if self.synchronous:
            task.run()
        else:
            self._pool.start(task)
        return rid

    def cancel(self) -> None:
        """Drop the current request: it stops at its next check and reports nothing."""
        self._latest += 1
        self._set_busy(False)

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Cancel and wait for the worker thread to go idle; True if it did in time."""
        self.cancel()
        self._closed = True
        return bool(self._pool.waitForDone(timeout_ms))

    def active_threads(self) -> int:
        return self._pool.activeThreadCount()

    # -- results (GUI thread) ------------------------------------------------------------------
    @Slot(int, object)
    def _on_stage(self, rid: int, stage: object) -> None:
        if rid == self._latest and not self._closed:
            self.stageReady.emit(rid, stage)

    @Slot(int, int, int, str)
    def _on_progress(self, rid: int, done: int, total: int, label: str) -> None:
        if rid == self._latest and not self._closed:
            self.progressed.emit(rid, done, total, label)

    @Slot(int, str, str)
    def _on_failed(self, rid: int, message: str, details: str = "") -> None:
        if rid == self._latest and not self._closed:
            self.last_error_details = details
            self._set_busy(False)
            self.errored.emit(rid, message)

    @Slot(int)
    def _on_finished(self, rid: int) -> None:
        if rid == self._latest and self._busy:
            self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)
