"""GUI test fixtures: offscreen Qt, a private settings file, and a check that no thread leaks.

`_no_dangling_threads` is napari's `_dangling_qthreads` idea: every QThread started during a test,
every chunk runner's pool, Qt's global pool and every new Python thread must be idle when the test
ends, or the test fails (after stopping them, so one leak does not cascade).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import traceback
import weakref
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from inspector.core.text.tokens import ENCODE_THREAD_PREFIX  # noqa: E402

try:  # bm25s builds (disabled) tqdm bars; the first one would start tqdm's never-ending monitor
    import tqdm  # noqa: E402  thread in a test, which the leak check below reports. The window's

    tqdm.tqdm.monitor_interval = 0  # workers switch it off the same way (inspector.qt.runner).
except ImportError:  # pragma: no cover
    pass

ROOT = Path(__file__).resolve().parents[2]
#: Seconds the threads a test leaves still running get, together, to end before they count as leaked.
LEAK_GRACE_S = 10.0
HANDBOOK = ROOT / "sample_docs" / "handbook.md"


@pytest.fixture(autouse=True)
def _no_dangling_threads(monkeypatch, qtbot):
    from PySide6.QtCore import QThread, QThreadPool

    from inspector.qt import runner as runner_module

    started: weakref.WeakKeyDictionary[QThread, str] = weakref.WeakKeyDictionary()
    base_start = QThread.start

    def tracking_start(self, *args):
        started[self] = "".join(traceback.format_stack(limit=12))
        return base_start(self, *args)

    monkeypatch.setattr(QThread, "start", tracking_start)
    before = {t.ident for t in threading.enumerate()}
    yield
    problems: list[str] = []
    for thread, where in list(started.items()):
        try:
            running = thread.isRunning()
        except RuntimeError:  # C++ object already deleted: not running
            continue
        if running:
            problems.append(f"QThread still running, started at:\n{where}")
            thread.quit()
            thread.wait(2000)
    for runner in list(runner_module.LIVE_RUNNERS):
        try:
            active = runner.active_threads()
        except RuntimeError:
            continue
        if active:
            problems.append(f"chunk runner {runner!r} still has {active} active thread(s)")
            runner.shutdown(5000)
    pool = QThreadPool.globalInstance()
    if pool.activeThreadCount():
        problems.append(f"global QThreadPool has {pool.activeThreadCount()} active thread(s)")
        pool.waitForDone(5000)
    # The encoding threads (`tokens.encode_pool`) live as long as the process, made by the first
    # long text encoded in it: whichever test that is on its xdist worker (this file run alone, the
    # first test to chunk the handbook) is not leaking them.
    leaked = [t for t in threading.enumerate() if t.ident not in before and t.is_alive()
              and not isinstance(t, threading._DummyThread)  # type: ignore[attr-defined]
              and not t.name.startswith(ENCODE_THREAD_PREFIX + "_")]
    # A thread that is ending gets until a shared deadline: a process pool's queue feeder
    # (`QueueFeederThread`) ends once the pool has flushed its queue, which on the two loaded test
    # workers took over the 2 s each thread used to get (a false leak, seen in test_qt_corpus);
    # a real leak never ends and still fails, 10 s later.
    deadline = time.monotonic() + LEAK_GRACE_S
    for t in leaked:
        t.join(max(0.0, deadline - time.monotonic()))
        if t.is_alive():
            problems.append(f"Python thread {t.name!r} still alive")
    if problems:
        pytest.fail("leaked threads:\n" + "\n".join(problems))


@pytest.fixture
def settings_store(tmp_path):
    """A QSettings on a temporary INI file: tests never read or write the user's settings.

    It remembers BM25 as the retriever chosen last, so a test window answers without the model,
    as the suite was written for; the app's first-run default is dense since issue 29
    (`DEFAULT_RETRIEVER`), which `test_a_first_window_starts_on_the_default_retriever` checks on
    a store without it, and `dense_settings` opens on dense."""
    from inspector.qt.controllers.retrieval import ASK_RETRIEVER
    from inspector.qt.settings import Settings, ini_store

    store = ini_store(str(tmp_path / "settings.ini"))
    Settings(store).set(ASK_RETRIEVER, "bm25")
    return store


@pytest.fixture
def make_window(qtbot, settings_store):
    """Factory for main windows on the private settings store (closed at the end of the test)."""
    from inspector.qt.controllers.chunk_jobs import ChunkRunner
    from inspector.qt.main_window import MainWindow

    made = []

    def make(*, synchronous: bool = False, debounce_ms: int = 0, store=None, size=(1200, 800), **retrieval):
        """`retrieval` goes to MainWindow: embedder, embedding_cache, settle_ms, synchronous_retrieval."""
        w = MainWindow(store if store is not None else settings_store,
                       runner=ChunkRunner(synchronous=synchronous), debounce_ms=debounce_ms, **retrieval)
        qtbot.addWidget(w)
        w.resize(*size)
        w.show()
        qtbot.waitExposed(w)
        made.append(w)
        return w

    yield make
    for w in made:
        with contextlib.suppress(RuntimeError):
            w.close()


def _wait_complete(qtbot, window, timeout: int = 20_000):
    def done() -> bool:
        r = window.state.result
        return r is not None and r.complete and r.request_id == window.runner.latest_id \
            and not window.controller.pending
    qtbot.waitUntil(done, timeout=timeout)
    return window.state.result


@pytest.fixture
def wait_complete(qtbot):
    """wait_complete(window): wait until the state holds complete chunks of the latest request."""
    return lambda window, timeout=20_000: _wait_complete(qtbot, window, timeout)


@pytest.fixture(scope="session")
def minilm():
    """The bundled all-MiniLM-L6-v2, loaded once per session (slow tests only)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from inspector.core.embedding.embedder import MiniLMEmbedder

    emb = MiniLMEmbedder()
    emb.load()
    return emb


@pytest.fixture
def hash_window(make_window, tmp_path):
    """hash_window(**kw): a window whose "model" is the deterministic HashEmbedder with a private
    in-memory cache, loaded at once; settings rest after 50 ms. Fast, for GUI tests."""
    from inspector.core.embedding.cache import EmbeddingCache
    from inspector.core.embedding.embedder import HashEmbedder

    def make(*, start: bool = True, **kw):
        kw.setdefault("embedder", HashEmbedder())
        kw.setdefault("embedding_cache", EmbeddingCache(tmp_path / "emb-cache", persist=False))
        kw.setdefault("settle_ms", 50)
        w = make_window(**kw)
        if start:
            w.start_model()
        return w
    return make


@pytest.fixture
def dense_settings(settings_store):
    """The private settings remember "dense" as the retriever chosen last, so a window opens on the
    dense path. Test windows otherwise open on BM25 (`settings_store`); tests of what only dense and hybrid
    do (pooled previews, embedding progress, exact vectors, BM25 standing in while the model
    loads) ask for dense as a user would have."""
    from inspector.qt.controllers.retrieval import ASK_RETRIEVER
    from inspector.qt.settings import Settings

    Settings(settings_store).set(ASK_RETRIEVER, "dense")
    return settings_store


@pytest.fixture
def dense_window(dense_settings, hash_window):
    """hash_window(**kw) opening on the dense retriever (see `dense_settings`)."""
    return hash_window


def wait_retrieval(qtbot, window, *, mode: str | None = "exact", question: str | None = None,
                   gold: bool | None = None, timeout: int = 20_000):
    """Wait until the window shows a retrieval result for its current chunks (in `mode`)."""
    def done() -> bool:
        r = window.retrieval.result
        chunks = window.state.result
        if r is None or chunks is None or r.request.chunk_request_id != chunks.request_id:
            return False
        if window.controller.pending or window.runner.busy or window.retrieval.runner.busy:
            return False
        if mode is not None and r.mode != mode:
            return False
        if question is not None and r.request.question != question:
            return False
        return not (gold is not None and (r.report is not None) != gold)
    qtbot.waitUntil(done, timeout=timeout)
    return window.retrieval.result


@pytest.fixture
def wait_result(qtbot):
    """wait_result(window, mode="exact", question=None, gold=None): the settled retrieval result."""
    return lambda window, **kw: wait_retrieval(qtbot, window, **kw)


@pytest.fixture
def open_doc(qtbot):
    """open_doc(window, path=handbook): open a file and wait for its complete chunks."""
    def run(window, path=HANDBOOK, timeout=20_000):
        assert window.open_paths([str(path)])
        return _wait_complete(qtbot, window, timeout)
    return run
