"""The chunk runner: latest request wins, stale results dropped, errors emitted, clean shutdown."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_document
from inspector.core.viewmodel.segments import SpanIndex
from inspector.qt.controllers.chunk_jobs import (
    ChunkRequest,
    ChunkRunner,
    compute_chunks,
)

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"


@pytest.fixture(scope="module")
def doc():
    return load_document(HANDBOOK)


class _Gate:
    """A fake job whose first request blocks until released; records which requests ran."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.ran: list[int] = []
        self.blocked = threading.Event()

    def job(self, rid, request, cancelled):
        self.ran.append(rid)
        if rid == 1:
            self.blocked.set()
            assert self.release.wait(10)
        yield ("stage", rid, request.params, cancelled())


def _result_stub(rid, complete=True):
    class R:
        pass

    r = R()
    r.request_id, r.complete = rid, complete
    return r


def test_latest_request_wins_and_stale_results_are_dropped(qtbot, doc):
    gate = _Gate()

    def job(rid, request, cancelled):
        for _item in gate.job(rid, request, cancelled):
            yield _result_stub(rid)

    runner = ChunkRunner(job=job)
    got = []
    runner.resultReady.connect(lambda r: got.append(r.request_id))
    first = runner.submit(ChunkRequest(doc, "fixed_chars", {"size": 100}))
    assert gate.blocked.wait(10)
    runner.submit(ChunkRequest(doc, "fixed_chars", {"size": 200}))
    last = runner.submit(ChunkRequest(doc, "fixed_chars", {"size": 300}))
    assert runner.busy
    with qtbot.waitSignal(runner.busyChanged, timeout=10_000, check_params_cb=lambda b: b is False):
        gate.release.set()
    # Request 1 finished its work but was superseded: its result never arrives. Request 2 was
    # superseded before it started and did not run at all.
    assert got == [last]
    assert first in gate.ran and 2 not in gate.ran and last in gate.ran
    runner.shutdown()


def test_a_superseded_job_stops_between_stages(qtbot, doc):
    stages = []
    release = threading.Event()

    def job(rid, request, cancelled):
        stages.append((rid, "first"))
        release.wait(10)
        yield _result_stub(rid, complete=False)
        if cancelled():
            return
        stages.append((rid, "second"))
        yield _result_stub(rid)

    runner = ChunkRunner(job=job)
    runner.submit(ChunkRequest(doc, "fixed_chars", {}))
    qtbot.waitUntil(lambda: stages == [(1, "first")], timeout=5000)
    runner.submit(ChunkRequest(doc, "fixed_chars", {"size": 10}))
    release.set()
    qtbot.waitUntil(lambda: not runner.busy, timeout=10_000)
    assert (1, "second") not in stages and (2, "second") in stages
    runner.shutdown()


def test_exceptions_are_emitted_not_swallowed(qtbot, doc):
    def job(rid, request, cancelled):
        raise RuntimeError("boom in the worker")
        yield  # pragma: no cover

    runner = ChunkRunner(job=job)
    with qtbot.waitSignal(runner.errored, timeout=5000) as blocker:
        rid = runner.submit(ChunkRequest(doc, "fixed_chars", {}))
    assert blocker.args == [rid, "RuntimeError: boom in the worker"]
    assert not runner.busy
    runner.shutdown()


def test_bad_parameters_arrive_as_a_plain_message(qtbot, doc):
    runner = ChunkRunner(synchronous=True)
    errors = []
    runner.errored.connect(lambda rid, msg: errors.append(msg))
    runner.submit(ChunkRequest(doc, "fixed_chars", {"size": 100, "overlap": 100}))
    assert errors and "overlap" in errors[0] and "must be smaller" in errors[0]


def test_synchronous_mode_delivers_both_stages_before_submit_returns(doc):
    runner = ChunkRunner(synchronous=True)
    got = []
    runner.resultReady.connect(got.append)
    rid = runner.submit(ChunkRequest(doc, "markdown", {"size": 300, "hard_cap": 600}))
    assert [r.complete for r in got] == [False, True]
    assert all(r.request_id == rid for r in got)
    assert not runner.busy


def test_results_match_the_core(doc):
    params = {"size": 500, "overlap": 50}
    stages = list(compute_chunks(1, ChunkRequest(doc, "fixed_chars", params), lambda: False))
    expected = chunk_document(doc, "fixed_chars", params)
    first, done = stages
    assert [(c.start, c.end) for c in first.chunks] == [(c.start, c.end) for c in expected]
    assert first.index.segments == SpanIndex([(c.start, c.end) for c in expected]).segments
    assert any(len(s.chunk_ids) == 2 for s in first.index.segments)  # the overlap is in the runs
    assert done.complete and all(c.embed_tokens is not None for c in done.chunks)
    assert first.line_count == doc.text.count("\n") + 1
    assert first.start_lines[5] == doc.text[:first.index.starts[5]].count("\n")


def test_parents_are_kept_out_of_the_painted_runs(doc):
    stages = list(compute_chunks(1, ChunkRequest(doc, "parent_child", {}), lambda: False))
    r = stages[-1]
    parents = [c for c in r.chunks if c.role == "parent"]
    assert parents and len(r.parents) == len(parents)
    assert all(r.chunk(cid).role != "parent" for s in r.index.segments for cid in s.chunk_ids)
    assert r.stats.parents == len(parents)


def test_shutdown_waits_for_the_worker_and_refuses_new_work(qtbot, doc):
    started = threading.Event()

    def job(rid, request, cancelled):
        started.set()
        for _ in range(200):
            if cancelled():
                return
            threading.Event().wait(0.01)
        yield _result_stub(rid)

    runner = ChunkRunner(job=job)
    got = []
    runner.resultReady.connect(got.append)
    runner.submit(ChunkRequest(doc, "fixed_chars", {}))
    assert started.wait(5)
    assert runner.shutdown(5000)
    assert runner.active_threads() == 0 and got == []
    with pytest.raises(RuntimeError):
        runner.submit(ChunkRequest(doc, "fixed_chars", {}))


@pytest.fixture
def helper(monkeypatch):
    from inspector.core.chunking import helper_jobs
    from inspector.core.runtime import offload

    h = offload.Offload(min_chars=0, enabled=True, warm_up=helper_jobs.warm_up)
    monkeypatch.setattr(offload, "_DEFAULT", h)
    yield h
    h.shutdown()


def _result_fields(r):
    return ([tuple(getattr(c, f) for f in c.__dataclass_fields__) for c in r.chunks], r.stats, r.headings,
            r.index.segments, r.parents.segments, r.start_lines, r.parent_lines, r.line_count, r.complete,
            r.ids.tolist())


@pytest.mark.parametrize("strategy,params", [("markdown", {}), ("parent_child", {}), ("recursive", {"size": 96}),
                                             ("fixed_tokens", {"size": 64, "overlap": 16})])
def test_a_document_chunked_in_the_helper_gives_the_same_stages(doc, helper, strategy, params):
    from inspector.core.runtime import offload

    calls = helper.calls
    there = list(compute_chunks(1, ChunkRequest(doc, strategy, params), lambda: False))
    assert helper.calls == calls + 2 + (calls == 0)  # two stages (and the document, sent once)
    offload._DEFAULT = offload.Offload()
    here = list(compute_chunks(1, ChunkRequest(doc, strategy, params), lambda: False))
    assert [_result_fields(r) for r in there] == [_result_fields(r) for r in here]


@pytest.mark.parametrize("strategy", ["recursive", "markdown"])
def test_the_helpers_outline_is_kept_here_and_the_gui_thread_scans_nothing(doc, helper, monkeypatch, strategy):
    """The helper sends the outline with its first stage, and this process keeps it: the heading
    filter's completions (GUI thread) read it without scanning or parsing the text again."""
    from inspector.core.text import outline, structure

    expected = structure.outline_of_structure(structure.parse_markdown(doc.text, doc.name))
    structure._OUTLINES.clear()
    structure._STRUCTURES.clear()
    stages = list(compute_chunks(1, ChunkRequest(doc, strategy, {}), lambda: False))
    assert helper.calls >= 2 and stages[-1].complete
    with monkeypatch.context() as m:
        m.setattr(outline, "outline", lambda _t: pytest.fail("scanned"))
        m.setattr(structure, "_markdown_parts", lambda *_a, **_k: pytest.fail("parsed"))
        m.setattr(structure, "_kept_markdown", lambda *_a, **_k: pytest.fail("parsed"))
        kept = structure.outline_of(doc)
    assert kept == expected and len(kept.headings) > 100
    shown = [(m.start, m.end, m.level) for m in stages[0].headings]
    assert shown == [(h.start, h.end, h.level) for h in expected.headings]


def test_a_document_shipped_through_a_file_gives_the_same_stages(doc, helper, monkeypatch):
    """A large document's text goes to the helper through a file (`offload.ship`), not the pipe."""
    from inspector.core.runtime import offload

    monkeypatch.setattr(offload, "SHIP_MIN_CHARS", 1)
    shipped: list[str] = []
    real = offload.ShippedText.__init__

    def spy(self, text):
        real(self, text)
        shipped.append(self.path)

    monkeypatch.setattr(offload.ShippedText, "__init__", spy)
    there = list(compute_chunks(1, ChunkRequest(doc, "markdown", {}), lambda: False))
    assert len(shipped) == 1 and not os.path.exists(shipped[0])  # sent once, then removed
    offload._DEFAULT = offload.Offload()
    here = list(compute_chunks(1, ChunkRequest(doc, "markdown", {}), lambda: False))
    assert [_result_fields(r) for r in there] == [_result_fields(r) for r in here]


def test_semantic_and_small_documents_stay_in_this_process(doc, helper):
    from inspector.core.documents.document import from_text
    from inspector.core.workbench.chunk_store import HELPER_FROM_CHARS

    small = from_text(doc.text[:HELPER_FROM_CHARS - 1], "small.md")
    list(compute_chunks(1, ChunkRequest(small, "markdown", {}), lambda: False))
    assert helper.calls == 0
    from inspector.core.chunking.helper_jobs import can_run

    assert not can_run("semantic") and can_run("markdown") and not can_run("no such strategy")


def test_a_stale_request_in_the_helper_is_cancelled(doc, helper):
    from inspector.core.runtime.cancel import Cancelled, cancel_scope

    with cancel_scope(lambda: True), pytest.raises(Cancelled):
        list(compute_chunks(1, ChunkRequest(doc, "markdown", {}), lambda: True))
    # The helper is still usable afterwards.
    assert list(compute_chunks(2, ChunkRequest(doc, "markdown", {}), lambda: False))[-1].complete


def test_the_window_shows_the_helpers_chunks(qtbot, make_window, open_doc, helper):
    # The app's set-up (`start_helper`): the window's chunking goes to the helper process, and what
    # it shows (spans, word pieces, statistics) is the core's own result for the document.
    from inspector.core.chunking.annotate import annotate

    w = make_window()
    w.state.set_strategy("recursive")
    r = open_doc(w)
    assert helper.calls >= 2
    expected = annotate(r.document, chunk_document(r.document, "recursive", dict(r.request.params)),
                        with_prefix=r.request.with_prefix)
    assert [(c.start, c.end, c.token_count, c.embed_tokens, c.flags, c.prefix) for c in r.chunks] == \
        [(c.start, c.end, c.token_count, c.embed_tokens, c.flags, c.prefix) for c in expected]
    helper.recent.clear()
    w.strategy_panel.set_value("size", 128)
    qtbot.waitUntil(lambda: w.state.result is not None and w.state.result.complete
                    and dict(w.state.result.request.params).get("size") == 128, timeout=20_000)
    stages = [name for name in helper.recent if name.endswith("_stage")]
    assert stages == ["chunk_stage", "annotate_stage"]  # both stages; the document was not sent again


def test_a_finished_task_lets_go_of_its_job():
    """The soak's probe found finished tasks kept alive beside idle runners (56-67 of them), each
    holding its job's request (documents, chunks). Whatever keeps a task, its job is let go."""
    import gc
    import weakref

    from inspector.qt.runner import JobRunner, _Task

    class Held:
        pass

    runner = JobRunner(name="test", synchronous=True)
    held = Held()
    ref = weakref.ref(held)

    def job(cancelled, progress, held=held):
        yield held

    task = _Task(1, job, runner._relay, lambda rid: True)
    del job, held
    task.run()
    gc.collect()
    assert ref() is None  # the task is still referenced here; what its job held is gone
    assert list(task.job(lambda: False, lambda *a: None)) == []
    runner.shutdown()


def test_tqdm_is_not_imported_by_a_task_but_made_quiet_when_a_job_imports_it():
    """Issue 31: a task no longer imports tqdm before its job (the window's first chunking needs
    none); whichever job imports it gets it with the monitor thread off. A fresh interpreter: this
    suite's conftest imports tqdm itself."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    code = ("import io, sys, threading\n"
            "from inspector.qt.runner import _no_tqdm_monitor\n"
            "_no_tqdm_monitor()\n"
            "assert 'tqdm' not in sys.modules\n"
            "_no_tqdm_monitor()  # installed once\n"
            "import tqdm\n"
            "assert tqdm.tqdm.monitor_interval == 0\n"
            "for _ in tqdm.tqdm(range(3), file=io.StringIO()):\n"
            "    pass\n"
            "assert tqdm.tqdm.monitor is None and threading.active_count() == 1, threading.enumerate()\n"
            "_no_tqdm_monitor()\n"
            "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(root), "QT_QPA_PLATFORM": "offscreen"})
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr
