"""The workbench's parts, one job each: the chunk store (remembered chunks, and the window's staged
chunking that remembers nothing), the index store, the evaluator and the window's preview → exact
staging, put together by `Workbench`, which only delegates."""

from __future__ import annotations

from pathlib import Path

import pytest

import inspector.core.workbench as workbench_pkg
from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.chunk import anchored
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_document
from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.embedding.throughput import Throughput
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import load_gold
from inspector.core.runtime.cancel import Cancelled
from inspector.core.workbench import Workbench
from inspector.core.workbench.chunk_store import ANNOTATE_BATCH, ChunkStage, ChunkStore
from inspector.core.workbench.staging import EXACT, FALLBACK, FAST_EXACT_S, RetrievalRequest, Staging

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"


@pytest.fixture(scope="module")
def doc():
    return load_document(HANDBOOK)


def _kept(stage: ChunkStage, first):
    return (stage, first)


def test_the_staged_chunking_gives_the_core_chunks_then_their_word_pieces(doc):
    store = ChunkStore()
    params = {"size": 300, "overlap": 30}
    (first, none), (complete, again) = store.stages(doc, "fixed_chars", params, with_prefix=True,
                                                    cancelled=lambda: False, shape=_kept)
    expected = chunk_document(doc, "fixed_chars", params)
    assert none is None and again == (first, None)  # `shape` is handed what it made of stage one
    assert not first.complete and complete.complete
    assert first.chunks == anchored(expected, True)  # the prefix is embedded: their section is named
    assert complete.chunks == annotate(doc, expected, with_prefix=True)
    assert complete.stats.document_tokens == first.stats.document_tokens
    assert first.headings and all(s < e for s, e, _level in first.headings)
    assert not store._cache.values()  # the window's chunking is not remembered


def test_a_superseded_staged_chunking_stops_between_batches(doc):
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2  # after the chunks and one batch of word pieces

    stages = ChunkStore().stages(doc, "fixed_chars", {"size": 100, "overlap": 0}, with_prefix=True,
                                 cancelled=cancelled, shape=_kept)
    first, _ = next(stages)
    assert len(first.chunks) > 2 * ANNOTATE_BATCH
    with pytest.raises(Cancelled):
        next(stages)


def test_the_workbench_delegates_to_its_parts(doc):
    wb = Workbench([doc], load_gold(GOLD, [doc]), embedder=HashEmbedder())
    chunks = wb.chunk(doc, "markdown")
    assert chunks is wb.chunk_store.chunk(doc, "markdown")  # one memo
    assert wb.questions() == wb.corpus.questions() and wb.documents == (doc,)
    config = EvalConfig("markdown", {}, 5, "bm25")
    assert wb.evaluate(config).hit_rate == wb.evaluator.evaluate(config).hit_rate
    assert wb.staging.chunk_store is wb.chunk_store and wb.staging.index_store is wb.index_store
    for gone in ("run_config", "chunk_corpus", "compare", "sweep", "sweep_grid", "default_index_factory"):
        assert not hasattr(workbench_pkg, gone)  # one way to each job: the Workbench's methods


def test_the_staging_remembers_reports_until_told_to_forget(doc):
    wb = Workbench([doc], load_gold(GOLD, [doc]), lazy_model=False)
    staging = Staging(wb.chunk_store, wb.index_store)
    chunks = wb.chunk(doc, "markdown")
    req = RetrievalRequest(doc, chunks, 1, "markdown", {}, True, "", 5, "dense", wb.questions())
    first, = staging.stages(req, lambda: False, lambda *_: None)
    assert first.mode == FALLBACK and first.note.startswith("BM25 answers until dense vectors exist")
    again, = staging.stages(req, lambda: False, lambda *_: None)
    assert again.report is first.report and again.index is first.index  # remembered
    staging.forget()
    wb.forget_indexes()
    third, = staging.stages(req, lambda: False, lambda *_: None)
    assert third.report is not first.report and third.index is not first.index
    assert third.report.hit_rate == first.report.hit_rate


def test_the_staging_says_when_exact_figures_come_while_dragging(doc):
    emb = HashEmbedder()
    emb.throughput = Throughput()
    wb = Workbench([doc], embedder=emb)
    chunks = wb.chunk(doc, "markdown")
    staging = Staging(wb.chunk_store, wb.index_store)
    by_doc = {doc.doc_id: chunks}
    assert staging.fast_exact_note([doc], by_doc, True) == ""  # nothing measured yet
    emb.throughput.record(10_000_000, 1.0)  # a fast GPU
    secs = wb.predict_exact([doc], by_doc, True)
    assert secs < FAST_EXACT_S
    assert staging.fast_exact_note([doc], by_doc, True) == \
        f"exact while dragging (predicted {max(1, round(secs * 1000))} ms)"
    emb.throughput = Throughput()
    emb.throughput.record(10_000, 10.0)  # slow: a full stage, not while dragging
    assert wb.predict_exact([doc], by_doc, True) >= FAST_EXACT_S
    assert staging.fast_exact_note([doc], by_doc, True) == ""
    req = RetrievalRequest(doc, chunks, 1, "markdown", {}, True, "", 5, "dense", exact=True, preview=False,
                           exact_note="exact while dragging (predicted 4 ms)")
    (res,) = staging.stages(req, lambda: False, lambda *_: None)
    assert res.mode == EXACT and res.note == "exact while dragging (predicted 4 ms)"


def test_an_embedding_view_change_builds_the_index_of_the_new_texts():
    """Settings ▸ Embedding View re-chunks with the view (same spans, same prefixes): the index, its
    hits and its report must be those of the new texts, not the index remembered for the old ones."""
    from dataclasses import replace

    from inspector.core.chunking.embed_view import with_view
    from inspector.core.documents.document import from_text

    body = "\n\n".join(f"Section {i} explains the rules; see [the guide](https://zzyzx.example.org/p{i})."
                       for i in range(6))
    doc = from_text(f"# Links\n\n{body}\n", "links.md")
    raw = chunk_document(doc, "markdown", {})
    wb = Workbench([doc], (), embedder=HashEmbedder())
    staging = Staging(wb.chunk_store, wb.index_store)
    req = RetrievalRequest(doc, raw, 1, "markdown", {}, True, "zzyzx", 5, "bm25")
    (as_written,) = staging.stages(req, lambda: False, lambda *_: None)
    clean = with_view(doc, raw, "clean")
    assert [(c.start, c.end, c.prefix) for c in clean] == [(c.start, c.end, c.prefix) for c in raw]
    (viewed,) = staging.stages(replace(req, chunks=clean, chunk_request_id=2), lambda: False, lambda *_: None)
    assert as_written.hits  # the link target's host is in the text as written...
    assert viewed.index is not as_written.index
    assert not viewed.hits  # ...and not in what the clean view sends


def test_a_document_being_chunked_is_waited_for_not_chunked_again(doc):
    """Two callers wanting the same chunks at once (opening a folder: the count job and the
    retrieval thread) get the one chunking: the second waits for the first."""
    import sys
    import threading
    import time

    from inspector.core.chunking.chunk import new_chunk
    from inspector.core.chunking.params import Strategy
    from inspector.core.chunking.registry import register_strategy, unregister

    calls: list[int] = []
    started, release = threading.Event(), threading.Event()

    def slow(d, params):
        calls.append(1)
        started.set()
        assert release.wait(30)
        return (new_chunk(0, 0, len(d.text), 1, (), "", None, frozenset(), "chunk", d.doc_id, {}),)

    register_strategy(Strategy("slow_once", slow, (), "blocks until the test releases it"))
    try:
        store = ChunkStore()
        got: list = []
        first = threading.Thread(target=lambda: got.append(store.chunk(doc, "slow_once")))
        first.start()
        assert started.wait(30)
        second = threading.Thread(target=lambda: got.append(store.chunk(doc, "slow_once")))
        second.start()

        def stack(thread):
            frame, names = sys._current_frames().get(thread.ident), []
            while frame is not None:
                names.append(frame.f_code.co_name)
                frame = frame.f_back
            return names

        deadline = time.monotonic() + 30
        while "_remembered" not in stack(second) or "wait" not in stack(second)[:3]:
            assert second.is_alive() and time.monotonic() < deadline
            time.sleep(0.005)
        assert "slow" not in stack(second)  # waiting for the first, not chunking
        release.set()
        first.join(30)
        second.join(30)
        assert len(calls) == 1 and len(got) == 2 and got[0] is got[1]
    finally:
        unregister("slow_once")
