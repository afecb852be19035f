"""Nothing lost: every action that replaces what the user had says what it replaced, and Edit ▸ Undo
brings it back (documents, gold set, baseline, strategy and parameters, and a gold file a question
was appended to); a baseline survives a gold set that grew; a guessed encoding is announced; and
embedding for superseded chunks stops when new chunks are requested, not when they arrive.

BM25 and a HashEmbedder keep these fast (no model).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path

import pytest

from inspector.core.chunking.params import Strategy
from inspector.core.chunking.recursive import recursive
from inspector.core.chunking.registry import register_strategy, unregister
from inspector.core.documents.document import load_document
from inspector.core.embedding.embedder import HashEmbedder
from inspector.qt.actions.plugin_actions import IMPORTED

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"


def _copy_handbook(tmp_path: Path) -> tuple[Path, Path]:
    doc, gold = tmp_path / "handbook.md", tmp_path / "handbook.gold.jsonl"
    shutil.copy(HANDBOOK, doc)
    shutil.copy(GOLD, gold)
    return doc, gold


@pytest.fixture
def bm25_window(hash_window):
    def make(**kw):
        w = hash_window(start=False, **kw)
        w.retrieval.set_retriever("bm25")
        return w
    return make


def _told(qtbot, w, needle: str) -> str:
    """Wait until the status bar (or its details) mentions `needle`; returns the line and details."""
    qtbot.waitUntil(lambda: needle in w.message.text() or needle in w.messages.details, timeout=5_000)
    return w.message.text() + "\n" + w.messages.details


def test_opening_another_document_says_what_it_replaced_and_undo_brings_it_all_back(
        qtbot, bm25_window, open_doc, wait_result, wait_complete, tmp_path):
    doc_path, _gold = _copy_handbook(tmp_path)
    w = bm25_window()
    open_doc(w, doc_path)
    wait_result(w, gold=True)
    w.state.set_params({"size": 200})
    wait_result(w, gold=True)
    baseline = w.retrieval.pin_baseline()
    doc, gold = w.state.document, w.retrieval.gold
    assert baseline is not None and gold is not None and len(gold.questions) == 64

    other = tmp_path / "notes.md"
    other.write_text("# Notes\n\nThe office opens at 8 am.\n", encoding="utf-8")
    assert w.open_paths([str(other)])
    told = _told(qtbot, w, "Edit ▸ Undo")
    assert ("Replaced handbook.md, its gold set handbook.gold.jsonl (64 questions) and the pinned baseline"
            in told)
    assert w.retrieval.gold is None and w.retrieval.baseline is None
    assert w.history.undo_action.isEnabled() and w.history.undo_action.text() == "&Undo Open notes.md"

    w.history.undo_action.trigger()
    assert w.state.document is doc and w.retrieval.gold is gold and w.retrieval.baseline is baseline
    assert w.state.params["size"] == 200 and w.state.strategy == "markdown"
    r = wait_complete(w)
    assert r.document is doc and w.view.toPlainText() == doc.text
    assert w.gold_panel.model.rowCount() == 64
    assert w.message.text().startswith("Undid Open notes.md.")
    wait_result(w, gold=True)  # retrieval follows the chunks asynchronously
    qtbot.waitUntil(lambda: w.retrieval.comparison is not None, timeout=10_000)  # compared again
    # Redo goes forward again; and the gold file goes with the document next time it opens.
    assert w.history.redo_action.isEnabled()
    w.history.redo_action.trigger()
    assert w.state.document.name == "notes.md" and w.retrieval.gold is None
    assert w.gold_files.remembered(doc) == Path(gold.path).resolve()


def test_loading_another_gold_set_can_be_undone(qtbot, bm25_window, open_doc, wait_result, tmp_path):
    doc_path, gold_path = _copy_handbook(tmp_path)
    w = bm25_window()
    open_doc(w, doc_path)
    wait_result(w, gold=True)
    gold = w.retrieval.gold
    small = tmp_path / "ten.gold.jsonl"
    small.write_text("".join(gold_path.read_text(encoding="utf-8").splitlines(keepends=True)[:10]),
                     encoding="utf-8")
    assert w.gold_panel.open_gold(small)  # the panel's own Load… path: observed, not announced by it
    assert len(w.retrieval.gold.questions) == 10
    assert "Replaced the gold set handbook.gold.jsonl (64 questions)" in _told(qtbot, w, "Edit ▸ Undo")
    assert w.history.undo()
    assert w.retrieval.gold is gold and w.gold_panel.model.rowCount() == 64


def test_a_saved_question_keeps_the_baseline_and_undo_puts_the_gold_file_back(
        qtbot, bm25_window, open_doc, wait_result, tmp_path):
    doc_path, gold_path = _copy_handbook(tmp_path)
    w = bm25_window()
    open_doc(w, doc_path)
    wait_result(w, gold=True)
    baseline = w.retrieval.pin_baseline()
    gold, before = w.retrieval.gold, gold_path.read_bytes()

    assert w.add_question(question="Paternity leave in France?", answer="25 days")
    assert len(w.retrieval.gold.questions) == 65
    assert w.retrieval.baseline is baseline  # the gold set grew: the baseline stays
    wait_result(w, gold=True)
    cmp = w.retrieval.comparison
    assert cmp is not None and cmp.compared == 64
    assert cmp.note() == "compared on 64 of 65 questions (the ones both gold sets share)"
    assert "compared on 64 of 65 questions" in w.gold_panel.baseline_label.text()
    # The new question has no baseline outcome; every other one is matched by its text.
    base = w.retrieval.baseline_results()
    assert base is not None and len(base) == 65 and base[-1] is None
    assert [b.question.question for b in base[:-1]] == [q.question.question for q in baseline.report.questions]

    after = gold_path.read_bytes()
    w.history.history.flush()
    assert w.history.history.undo_label().startswith("Add question")
    text = w.history.undo()
    assert gold_path.read_bytes() == before and "handbook.gold.jsonl was put back" in text
    assert w.retrieval.gold is gold and w.retrieval.baseline is baseline
    w.history.redo()
    assert gold_path.read_bytes() == after and len(w.retrieval.gold.questions) == 65


def test_a_gold_file_changed_on_disk_since_is_left_alone(qtbot, bm25_window, open_doc, wait_result, tmp_path):
    doc_path, gold_path = _copy_handbook(tmp_path)
    w = bm25_window()
    open_doc(w, doc_path)
    wait_result(w, gold=True)
    assert w.add_question(question="Paternity leave in France?", answer="25 days")
    edited = gold_path.read_bytes() + json.dumps({"question": "Q?", "answer": "25 days"}).encode() + b"\n"
    gold_path.write_bytes(edited)
    text = w.history.undo()
    assert "changed on disk since, so it was left as it is" in text
    assert gold_path.read_bytes() == edited
    assert len(w.retrieval.gold.questions) == 64  # the window's gold set went back all the same


def test_importing_chunks_and_pinning_can_be_undone(qtbot, make_window, open_doc, wait_complete, tmp_path):
    w = make_window()
    open_doc(w)
    w.state.set_params({"size": 320})
    wait_complete(w)
    path = tmp_path / "chunks.jsonl"
    path.write_text(json.dumps({"text": w.state.document.text[:300]}) + "\n", encoding="utf-8")
    try:
        assert w.plugins.import_chunks(path)
        assert w.state.strategy == IMPORTED
        w.history.history.flush()
        assert w.history.history.undo_label() == "Import chunks from chunks.jsonl"
        w.history.undo()
        assert w.state.strategy == "markdown" and w.state.params["size"] == 320
        assert wait_complete(w).request.strategy == "markdown"
    finally:
        from inspector.core.chunking.external import remove_external

        remove_external(IMPORTED)


def test_a_second_pin_can_be_undone_to_the_first(qtbot, bm25_window, open_doc, wait_result):
    w = bm25_window()
    open_doc(w)
    wait_result(w, gold=True)
    first = w.retrieval.pin_baseline()
    w.state.set_params({"size": 128})
    wait_result(w, gold=True)
    w.pin_action.trigger()
    second = w.retrieval.baseline
    assert second is not first
    assert "the pinned baseline" in _told(qtbot, w, "Edit ▸ Undo")
    w.history.undo()
    assert w.retrieval.baseline is first
    assert w.state.params["size"] == 128  # Undo puts back the settings of the moment before the pin


def test_a_guessed_encoding_is_announced_in_the_status_bar(qtbot, make_window, wait_complete, tmp_path):
    path = tmp_path / "menu.md"
    path.write_bytes(b"# Menu\n\nToday:\ncrepe \xe9 la carte.\n")  # Latin-1, line 4, column 7
    enc = load_document(path).encoding
    w = make_window()
    assert w.open_paths([str(path)])
    wait_complete(w)
    assert w.messages.kind == "warning"
    assert w.message.text() == f"menu.md: Read as {enc}: not valid UTF-8 at line 4, column 7"
    assert w.state.document.meta["decoded_as"]["line"] == 4


# -- superseded background work -----------------------------------------------------------------------

class SlowCountingEmbedder(HashEmbedder):
    """A HashEmbedder that takes its time per batch and counts its calls (from any thread)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.batch_size = 4
        self.calls = 0
        self._lock = threading.Lock()

    def encode(self, texts):
        with self._lock:
            self.calls += 1
        time.sleep(self.delay)
        return super().encode(texts)


@pytest.mark.timeout(120)
def test_switching_to_a_slow_strategy_stops_embedding_the_old_chunks(qtbot, dense_window, open_doc, tmp_path):
    """Exact embeddings of the current chunks are running when the user switches to a strategy that
    takes long: the embedder is called no more from the moment the new chunking starts, long
    before it ends (the old chunks' vectors would be thrown away anyway)."""
    release = threading.Event()
    started = threading.Event()

    def slow(doc, params):
        started.set()
        release.wait(30)  # a `semantic` that takes its time
        return recursive(doc, {"size": 256, "overlap": 0})

    register_strategy(Strategy("slow_demo", slow, (), "waits until released", prefix_default=False))
    emb = SlowCountingEmbedder(delay=0.05)
    w = None
    try:
        w = dense_window(embedder=emb, settle_ms=0)
        open_doc(w)
        qtbot.waitUntil(lambda: w.retrieval.pooled_ready, timeout=60_000)
        w.state.set_strategy("fixed_chars")
        w.state.set_params({"size": 200, "overlap": 0})  # ~190 new chunks: ~50 batches, seconds of work
        qtbot.waitUntil(lambda: w.retrieval.runner.busy and w.retrieval._submitted is not None
                        and w.retrieval._submitted.exact and emb.calls > 2, timeout=30_000)
        w.state.set_strategy("slow_demo")
        assert started.wait(10)
        # The batch in flight when the switch came ends: the embedding jobs leave their threads.
        qtbot.waitUntil(lambda: w.retrieval.runner.active_threads() == 0
                        and w.retrieval.pooled_runner.active_threads() == 0, timeout=10_000)
        calls = emb.calls
        qtbot.wait(1000)  # ~20 batches' worth of time, with the slow strategy still running
        assert not release.is_set()
        assert emb.calls == calls, "the old chunks were still being embedded"
        assert not w.embed_progress.isVisible()
    finally:
        release.set()
        if w is not None:  # let the slow chunks arrive and leave the strategy before it goes:
            # queued signals naming it would otherwise reach the panels after unregister
            qtbot.waitUntil(lambda: w.state.result is not None and w.state.result.complete
                            and w.state.result.request.strategy == "slow_demo", timeout=30_000)
            w.state.set_strategy("recursive")
            qtbot.waitUntil(lambda: w.state.result is not None and w.state.result.complete
                            and w.state.result.request.strategy == "recursive", timeout=30_000)
            qtbot.wait(50)
        unregister("slow_demo")
