"""Application entry point: QApplication, a palette that follows the system, the window, the file.

The window shows first (issue 31): nothing is imported before it that its first paint does not
need, the document is opened from the event loop right after and chunked on the worker thread,
the helper process starts once the first chunks are painted, and the embedding model loads on
another worker thread once the event loop runs (BM25 answers until then; the launch probe,
CHUNK_INSPECTOR_SMOKE, skips it).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from typing import cast

_T0 = time.perf_counter()

from inspector.qt.palette import apply_palette, dark_palette, set_theme, theme_choice  # noqa: E402

__all__ = ["apply_palette", "dark_palette", "set_theme", "theme_choice", "create_app", "run_app", "start_helper",
           "start_helper_after_first_chunks"]


#: How often a thread holding the GIL is asked to hand it over (Python's default: 5 ms). While a
#: slider is dragged the workers (chunking, scoring, the hit-rate trace) run Python as the GUI
#: thread paints, and PySide lets go of the GIL around every Qt call (a QPainter.fillRect, a
#: virtual it looks up): each time the GUI thread waits up to this long to get it back. On a 1 MB
#: document, two loaded cores, the event loop's p95 lag during a drag fell from ~119 ms (5 ms) to
#: ~65 ms (1 ms; benchmarks/slider_drag.py); 1,000 fillRect calls beside a worker tokenizing in
#: Python took 100-131 ms at 5 ms, 42-55 ms at 1 ms, 26-28 ms at 0.5 ms and 15-20 ms at 0.25 ms
#: (14 ms alone), and the soak's longest pauses were spent painting the gutter so. A thread only
#: waits this long when another one wants the GIL, so the workers lose little.
GIL_SWITCH_S = 0.00025


def create_app(argv0: str = "chunk-inspector"):
    from PySide6.QtWidgets import QApplication

    sys.setswitchinterval(GIL_SWITCH_S)
    from inspector.core.api import heap

    heap.configure()  # large blocks mapped on their own, given back when freed (issue 17's soak)

    # The window's process makes only a QApplication (Qt's stubs say QCoreApplication).
    app = cast("QApplication | None", QApplication.instance())
    if app is None:
        app = QApplication([argv0])
    app.setApplicationName("Chunk Inspector")
    app.setOrganizationName("ChunkInspector")
    app.setDesktopFileName("chunk-inspector")
    app.setStyle("Fusion")
    apply_palette(app)
    app.styleHints().colorSchemeChanged.connect(lambda _s: apply_palette(app))
    return app


def start_helper(app) -> None:
    """Large pure-Python jobs (chunking a document, BM25 over a big corpus) run in a helper
    process from now on, so the GUI thread never waits for the GIL behind them
    (`inspector.core.runtime.offload`). It starts now, off the GUI thread (its imports take about a
    second; jobs stay in this process meanwhile), and stops when the application quits; the app
    calls it after its first paint (`start_helper_after_first_chunks`). The app
    and the GUI benchmarks call it; tests that build windows do not, unless they say so."""
    from inspector.core.api import helper_warm_up, offload

    helper = offload.enable(warm_up=helper_warm_up)  # the helper imports what its jobs use first
    helper.warm_later()
    app.aboutToQuit.connect(helper.shutdown)
    app.aboutToQuit.connect(offload.shutdown_corpus_pool)  # a folder's documents, chunked in processes


#: This long after the first complete chunks arrive, the helper process starts (their paint
#: comes first).
HELPER_SETTLE_MS = 200


def start_helper_after_first_chunks(app, window) -> None:
    """`start_helper` once the window's first complete chunks are painted, or at once when the
    documents opened are large enough for the helper's jobs (`Offload.min_chars`: a large
    document's re-chunking should not wait for its start), but not when the window is already
    gone. Issue 31: its spawn and imports (a core and about a second) took the first paint's CPU,
    and the launch's small document was chunked in this process anyway."""
    from PySide6.QtCore import QTimer

    started = {"done": False}

    def start() -> None:
        if started["done"]:
            return
        started["done"] = True
        window.state.chunksChanged.disconnect(on_chunks)
        window.state.documentsChanged.disconnect(on_documents)
        if window.isVisible():
            start_helper(app)

    def on_chunks(result) -> None:
        if result is not None and result.complete:  # with their word pieces, painted in this turn
            QTimer.singleShot(HELPER_SETTLE_MS, start)

    def on_documents(docs) -> None:
        from inspector.core.api import offload

        if sum(len(d.text) for d in docs) >= offload.default().min_chars:
            start()

    window.state.chunksChanged.connect(on_chunks)
    window.state.documentsChanged.connect(on_documents)


def run_app(argv: Sequence[str]) -> int:
    """Open the window on the given files/folders, else the bundled handbook; run until closed."""
    app = create_app(sys.argv[0] if sys.argv else "chunk-inspector")
    from PySide6.QtCore import QTimer

    from inspector.qt.actions.file_actions import open_later, sample_path
    from inspector.qt.main_window import MainWindow
    from inspector.qt.settings import default_store, ini_store

    paths = [a for a in argv if not a.startswith("-")] or [str(sample_path())]
    # CHUNK_INSPECTOR_SETTINGS points at an INI file to use instead of the user's settings.
    store_path = os.environ.get("CHUNK_INSPECTOR_SETTINGS")
    window = MainWindow(ini_store(store_path) if store_path else default_store())
    window.show()
    start_helper_after_first_chunks(app, window)
    if os.environ.get("CHUNK_INSPECTOR_SMOKE"):
        _smoke(app, window)
    else:
        # The embedding model (torch, ~100 MB of weights) loads on a worker thread once the window
        # is up and the document is on its way; BM25 answers questions until it is ready.
        QTimer.singleShot(0, window.start_model)
    open_later(window, paths)
    return app.exec()


def _smoke(app, window) -> None:
    """CHUNK_INSPECTOR_SMOKE=1: print when the window is visible and when the first chunks are
    painted, then quit (the launch benchmark and a subprocess test use it)."""
    from PySide6.QtCore import QTimer

    def shown() -> None:
        print(f"visible {time.perf_counter() - _T0:.3f}", flush=True)
        listing = os.environ.get("CHUNK_INSPECTOR_MODULES")
        if listing:  # what the first paint imported (benchmarks/startup.py, a launch test)
            from inspector.core.api import atomic_write_text

            atomic_write_text(listing, "\n".join(sorted(sys.modules)))

    QTimer.singleShot(0, shown)
    done = {"chunks": False}

    def on_chunks(result) -> None:
        if result is not None and result.complete and not done["chunks"]:
            done["chunks"] = True
            window.view.viewport().repaint()
            print(f"chunks {time.perf_counter() - _T0:.3f} {len(result.chunks)} {result.request.strategy}",
                  flush=True)
            QTimer.singleShot(0, window.close)

    window.state.chunksChanged.connect(on_chunks)
    def on_error(message: str) -> None:
        if message:
            print(f"error {message}", flush=True)
            if window.state.result is None:
                QTimer.singleShot(0, window.close)

    window.state.errorChanged.connect(on_error)
    QTimer.singleShot(60_000, window.close)
