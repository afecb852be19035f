"""Asking a question: hits outlined on the text and listed in the Reader, exactly as the index
returns them; BM25 while the model loads; progress and cancellation while chunks are embedded.

The "model" here is the deterministic HashEmbedder (fast); the real model is in test_qt_e2e_model.
"""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import Qt

from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.retrieval.index import build_index

GERMANY = "How long is parental allowance paid in Germany?"


def _expected_hits(w, question, k, retriever, embedder):
    """The same search done with the core alone, on the chunks the window shows."""
    doc = w.state.document
    chunks = w.state.result.chunks
    index = build_index([doc], {doc.doc_id: chunks}, embedder if retriever != "bm25" else None,
                        with_prefix=w.state.with_prefix)
    return index.search(question, k, retriever)


def _marks(hits):
    return [(h.rank, h.chunk.id, h.chunk.start, h.chunk.end, round(h.score, 5)) for h in hits]


def _view_marks(view):
    return [(m.rank, m.chunk_id, m.start, m.end, round(m.score, 5)) for m in view.hits]


def test_question_outlines_exactly_what_the_index_returns(qtbot, dense_window, open_doc, wait_result):
    w = dense_window()
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    w.question_bar.field.setText(GERMANY)
    qtbot.keyClick(w.question_bar.field, Qt.Key.Key_Return)
    r = wait_result(w, mode="exact", question=GERMANY)
    expected = _expected_hits(w, GERMANY, 5, "dense", HashEmbedder())
    assert len(expected) == 5
    assert _view_marks(w.view) == _marks(expected) == _marks(r.hits)
    # #1 is revealed, outlined and badged: the last paint drew it.
    w.view.viewport().repaint()
    assert 1 in w.view.last_paint.hits
    top, bottom = w.view.y_range(w.view.hits[0].start, w.view.hits[0].end)
    assert bottom > 0 and top < w.view.viewport().height()
    # The overview strip marks where each hit is.
    assert len(w.strip.marks("hits")) == 5
    assert w.question_bar.mode.text() == "exact"
    assert w.question_bar.hit_label.text() == "hit 1/5"


def test_reader_shows_the_embedded_texts_in_rank_order(qtbot, hash_window, open_doc, wait_result):
    w = hash_window()
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    w.question_bar.ask(GERMANY)
    r = wait_result(w, mode="exact", question=GERMANY)
    doc = w.state.document
    assert w.state.with_prefix  # markdown embeds its prefix: the cards must show it
    assert w.reader.texts() == [h.chunk.embedded_text(doc, with_prefix=True) for h in r.hits]
    assert [c.hit.rank for c in w.reader.cards] == [1, 2, 3, 4, 5]
    w.strategy_panel.prefix.setChecked(False)
    r = wait_result(w, mode="exact", question=GERMANY)
    assert not r.request.with_prefix
    assert w.reader.texts() == [h.chunk.embedded_text(doc, with_prefix=False) for h in r.hits]


def test_parent_child_returns_parents(qtbot, dense_window, open_doc, wait_result):
    w = dense_window()
    w.state.set_strategy("parent_child")
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    w.question_bar.ask(GERMANY)
    r = wait_result(w, mode="exact", question=GERMANY)
    assert r.hits and all(h.chunk.role == "parent" and h.matched.role == "child" for h in r.hits)
    assert _view_marks(w.view) == _marks(_expected_hits(w, GERMANY, 5, "dense", HashEmbedder()))
    doc = w.state.document
    assert w.reader.texts() == [h.chunk.embedded_text(doc, with_prefix=w.state.with_prefix) for h in r.hits]


def test_a_first_window_starts_on_the_default_retriever(hash_window, tmp_path):
    from inspector.core.evaluation.config import DEFAULT_RETRIEVER
    from inspector.qt.controllers.retrieval import ASK_RETRIEVER
    from inspector.qt.settings import ini_store

    w = hash_window(start=False, store=ini_store(str(tmp_path / "first-run.ini")))  # nothing remembered
    assert ASK_RETRIEVER.default == DEFAULT_RETRIEVER == "dense"  # issue 29 (benchmarks/README)
    assert w.retrieval.retriever == DEFAULT_RETRIEVER == w.question_bar.retriever.currentData()


def test_k_and_retriever_controls(qtbot, hash_window, open_doc, wait_result):
    w = hash_window()
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    w.question_bar.ask(GERMANY)
    wait_result(w, question=GERMANY)
    w.question_bar.k_spin.setValue(3)
    r = wait_result(w, question=GERMANY)
    assert r.request.k == 3 and len(w.view.hits) == 3 and len(w.reader.cards) == 3
    for retriever in ("bm25", "hybrid"):
        w.question_bar.retriever.setCurrentIndex(w.question_bar.retriever.findData(retriever))
        r = wait_result(w, question=GERMANY)
        assert r.retriever == retriever
        assert _view_marks(w.view) == _marks(_expected_hits(w, GERMANY, 3, retriever, HashEmbedder()))
    assert w.question_bar.mode.text() == "exact" or w.question_bar.mode.text() == "BM25"


def test_next_and_previous_hit(qtbot, hash_window, open_doc, wait_result):
    w = hash_window(size=(1200, 500))
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    w.question_bar.ask(GERMANY)
    wait_result(w, question=GERMANY)
    hits = w.view.hits
    for i in (1, 2):
        w.next_hit_action.trigger()
        assert w.view.current_hit == i
        top, bottom = w.view.y_range(hits[i].start, hits[i].end)
        assert 0 <= top < w.view.viewport().height()
        assert w.question_bar.hit_label.text() == f"hit {i + 1}/5"
    w.prev_hit_action.trigger()
    assert w.view.current_hit == 1
    w.question_bar.clear()
    qtbot.waitUntil(lambda: w.view.hits == (), timeout=5000)
    assert not w.question_bar.next_button.isEnabled() and w.reader.cards == []


def test_the_reader_says_when_a_filter_keeps_no_chunk(qtbot, hash_window, open_doc, wait_result):
    """A heading filter that keeps no chunk: the Reader says so and names the filter, where its
    header still read the previous answer's "Top 5" above no card."""
    w = hash_window()
    open_doc(w)
    w.question_bar.ask(GERMANY)
    wait_result(w, question=GERMANY)
    qtbot.waitUntil(lambda: "Top 5" in w.reader.header.text(), timeout=5000)
    w.question_bar.set_filters("no such heading")
    r = wait_result(w, question=GERMANY)
    assert r.hits == ()
    qtbot.waitUntil(lambda: "No chunk returned" in w.reader.header.text(), timeout=5000)
    header = w.reader.header.text()
    assert "Top" not in header and "no such heading" in header, header
    assert w.reader.cards == []


def test_bm25_answers_until_the_model_is_ready(qtbot, dense_window, open_doc, wait_result):
    w = dense_window(start=False)
    open_doc(w)
    w.question_bar.ask(GERMANY)
    r = wait_result(w, mode="fallback", question=GERMANY)
    assert r.retriever == "bm25" and w.retrieval.retriever == "dense"
    assert _view_marks(w.view) == _marks(_expected_hits(w, GERMANY, 5, "bm25", None))
    assert "BM25" in w.question_bar.mode.text()
    assert "BM25" in w.reader.header.text()
    with qtbot.waitSignal(w.retrieval.modelStateChanged, timeout=10_000, check_params_cb=lambda s: s == "ready"):
        w.start_model()
    assert w.model_label.text().startswith("Model ready")
    r = wait_result(w, mode="exact", question=GERMANY)
    assert r.retriever == "dense" and w.question_bar.mode.text() == "exact"


class SlowEmbedder(HashEmbedder):
    """Takes its time per batch and counts what it embeds, so a test can see a job stop."""

    def __init__(self, delay: float = 0.03) -> None:
        super().__init__()
        self.batch_size = 8
        self.delay = delay
        self.encoded = 0
        self.lock = threading.Lock()

    def encode(self, texts):
        time.sleep(self.delay)
        with self.lock:
            self.encoded += len(texts)
        return super().encode(texts)


def test_embedding_shows_progress_and_a_newer_request_cancels_it(qtbot, dense_window, open_doc, wait_result,
                                                                 monkeypatch):
    from inspector.qt.controllers.retrieval import RetrievalController

    # No live-preview vectors here (previews are BM25), so only the exact job calls the embedder.
    monkeypatch.setattr(RetrievalController, "_build_pooled", lambda self: None)
    emb = SlowEmbedder()
    w = dense_window(embedder=emb, settle_ms=60_000)  # no exact pass by itself: only when asked
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    n = len([c for c in w.state.result.chunks if c.role != "parent"])
    seen = []
    w.retrieval.progressChanged.connect(lambda d, t, label: seen.append((d, t, label)))
    w.question_bar.ask(GERMANY)
    qtbot.waitUntil(lambda: any(t == n and d > 0 for d, t, _l in seen), timeout=10_000)
    assert w.embed_progress.isVisible() and f"/{n}" in w.embed_progress.text()
    assert any("Embedding" in label for _d, t, label in seen if t)
    # A re-chunk supersedes the exact job: it stops at its next batch, long before the end.
    w.strategy_panel.set_value("size", 300)
    qtbot.waitUntil(lambda: not w.retrieval.runner.busy, timeout=10_000)
    # The superseded job has left the runner's one thread: the embedder is called no more.
    qtbot.waitUntil(lambda: w.retrieval.runner.active_threads() == 0, timeout=10_000)
    stopped_at = emb.encoded
    assert stopped_at < n
    qtbot.waitUntil(lambda: not w.embed_progress.isVisible(), timeout=5000)
    r = wait_result(w, mode="fallback", question=GERMANY)
    assert r.request.params["size"] == 300


def test_heading_filter_restricts_the_hits_like_the_core(qtbot, dense_window, open_doc, wait_result):
    w = dense_window()
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    w.question_bar.ask(GERMANY)
    unfiltered = wait_result(w, mode="exact", question=GERMANY)
    assert any(h.chunk.heading_path[-1:] != ("Germany",) for h in unfiltered.hits)
    # The title may be left out: "Parental leave > France" means "Employee Handbook > ... > France".
    w.question_bar.set_filters("Parental leave > France")
    r = wait_result(w, mode="exact", question=GERMANY)
    assert r.request.heading_prefix == ("Employee Handbook", "Parental leave", "France")
    assert r.hits and all(h.matched.heading_path[:3] == r.request.heading_prefix for h in r.hits)
    doc = w.state.document
    index = build_index([doc], {doc.doc_id: w.state.result.chunks}, HashEmbedder(),
                        with_prefix=w.state.with_prefix)
    expected = index.search(GERMANY, 5, "dense", heading_prefix=r.request.heading_prefix)
    assert _marks(r.hits) == _marks(expected)
    assert _view_marks(w.view) == _marks(expected)
    # Clearing the filter brings every hit back; the gold set is never filtered.
    w.question_bar.set_filters("")
    r = wait_result(w, mode="exact", question=GERMANY)
    assert r.request.heading_prefix is None and _marks(r.hits) == _marks(unfiltered.hits)
