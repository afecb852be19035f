"""The gold set panel: loading (and remembering) gold files, the table model, figures that match
the core's evaluation, staleness after a re-chunk, pooled -> exact, baseline deltas and fixed/broke
lists, and adding questions to the gold file (atomically).

BM25 (no vectors) and the HashEmbedder keep these fast; the real model is in test_qt_e2e_model.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from inspector.core.chunking.registry import chunk_document
from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.evaluation.compare import compare_reports
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import (
    GoldQuestion,
    load_gold,
    normalize,
    normalized_text,
)
from inspector.core.evaluation.metrics import IndexSearch, evaluate
from inspector.core.retrieval.index import build_index
from inspector.core.workbench import Workbench
from inspector.qt.panels.gold_model import (
    COL_BASELINE,
    COL_HIT,
    COL_RANK,
    MISS_ROLE,
    SORT_ROLE,
    GoldTableModel,
)
from inspector.qt.panels.gold_panel import GOLD_FILES, delta_text
from inspector.qt.settings import Settings, ini_store

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"
DATA = ROOT / "tests" / "data" / "gold"
GERMANY = "How long is parental allowance paid in Germany?"


def _bm25_report(w):
    """The gold set scored by the core alone, on the window's chunks, with BM25."""
    doc = w.state.document
    chunks = {doc.doc_id: w.state.result.chunks}
    index = build_index([doc], chunks, None, with_prefix=w.state.with_prefix)
    gold = [q for q in w.retrieval.gold.questions if q.source in (None, doc.doc_id)]
    return evaluate(gold, [doc], chunks, IndexSearch(index, retriever="bm25", multi_doc=False), w.retrieval.k)


@pytest.fixture
def bm25_window(hash_window):
    def make(**kw):
        w = hash_window(start=False, **kw)
        w.retrieval.set_retriever("bm25")
        return w
    return make


def test_gold_table_model(qtmodeltester, qapp):
    doc_gold = load_gold(GOLD, [_handbook()])
    doc = _handbook()
    chunks = {doc.doc_id: chunk_document(doc, "markdown")}
    index = build_index([doc], chunks, None)
    report = evaluate(doc_gold, [doc], chunks, IndexSearch(index, retriever="bm25", multi_doc=False), 5)
    model = GoldTableModel()
    model.set_questions(doc_gold.questions)
    qtmodeltester.check(model, force_py=True)
    model.set_results(report.questions)
    qtmodeltester.check(model, force_py=True)
    assert model.rowCount() == len(doc_gold.questions) == 64
    miss = next(i for i, r in enumerate(report.questions) if not r.hit)
    assert model.data(model.index(miss, COL_HIT)) == "miss"
    assert model.data(model.index(miss, COL_RANK)) == "–"
    hit = next(i for i, r in enumerate(report.questions) if r.hit)
    assert model.data(model.index(hit, COL_RANK)) == str(report.questions[hit].rank)
    model.set_results(report.questions, baseline=report.questions)
    assert model.data(model.index(hit, COL_BASELINE)) == "same"
    model.set_stale(True)
    assert model.data(model.index(hit, COL_HIT), Qt.ItemDataRole.ForegroundRole).color().name() == "#808080"
    qtmodeltester.check(model, force_py=True)
    model.set_results(report.questions[:3])  # a report for another gold set: not shown
    assert model.data(model.index(0, COL_HIT)) == ""


def _handbook():
    from inspector.core.documents.document import load_document

    return load_document(HANDBOOK)


def test_the_handbook_opens_with_its_gold_set(qtbot, bm25_window, open_doc, wait_result):
    w = bm25_window()
    open_doc(w)
    assert w.retrieval.gold is not None and Path(w.retrieval.gold.path) == GOLD
    r = wait_result(w, mode="exact", gold=True)
    assert w.gold_panel.model.rowCount() == 64
    expected = _bm25_report(w)
    assert r.report.hit_rate == expected.hit_rate and r.report.mrr == expected.mrr
    assert [q.hit for q in r.report.questions] == [q.hit for q in expected.questions]
    value, _delta = w.gold_panel.metric_text("hit_rate")
    assert value.startswith(f"{expected.hit_rate * 100:.1f} %") and f"({expected.hits}/64)" in value
    assert w.gold_panel.metric_text("mrr")[0] == f"{expected.mrr:.3f}"
    # 11 of the 64 questions carry reference spans: the span metrics are their means, and say so
    # beside the figure (a recall of 1.000 beside a hit rate of 95 % read as one over all 64).
    assert expected.span_questions == 11
    assert w.gold_panel.metric_text("recall")[0] == f"{expected.recall:.3f}  (11 of 64 q)"
    assert w.gold_panel.metric_text("iou")[0] == f"{expected.iou:.3f}  (11 of 64 q)"
    tip = w.gold_panel.metric_labels["recall"][0].toolTip()
    assert "11 of 64 questions that carry reference spans" in tip and "the other 53" in tip
    assert w.gold_panel.metric_labels["mrr"][0].toolTip() == ""
    assert w.gold_panel.metric_text("chunks")[0] == f"{expected.cost.chunks:,}"
    assert "k = 5 · bm25 · BM25" in w.gold_panel.mode.text()


def test_bm25_stands_in_until_the_model_loads_and_says_so(qtbot, dense_window, open_doc, wait_result):
    w = dense_window(start=False)
    open_doc(w)
    r = wait_result(w, mode="fallback", gold=True)
    assert r.retriever == "bm25" and r.report.hit_rate == _bm25_report(w).hit_rate
    assert "BM25" in w.gold_panel.mode.text()


def test_stale_until_the_new_chunks_are_scored(qtbot, bm25_window, open_doc, wait_result):
    w = bm25_window()
    open_doc(w)
    wait_result(w, gold=True)
    assert not w.retrieval.stale and not w.gold_panel.stale_label.isVisibleTo(w.gold_panel)
    flips = []
    w.retrieval.staleChanged.connect(flips.append)
    with qtbot.waitSignal(w.retrieval.staleChanged, timeout=5000, check_params_cb=lambda s: s is True):
        w.strategy_panel.set_value("size", 120)
    assert w.gold_panel.stale_label.isVisibleTo(w.gold_panel) and w.gold_panel.model.stale
    r = wait_result(w, gold=True)
    assert flips[0] is True and flips[-1] is False and not w.gold_panel.model.stale
    assert r.request.params["size"] == 120
    assert r.report.cost.chunks == len(w.state.result.chunks)
    assert r.report.hit_rate == _bm25_report(w).hit_rate


def test_pooled_preview_then_exact(qtbot, dense_window, open_doc, wait_result):
    w = dense_window(settle_ms=300)
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.pooled_ready, timeout=20_000)
    wait_result(w, mode="exact", gold=True)
    modes = []
    w.retrieval.resultReady.connect(lambda res: modes.append((res.mode, w.gold_panel.mode.text())))
    w.strategy_panel.set_value("size", 200)
    r = wait_result(w, mode="exact", gold=True)
    assert [m for m, _t in modes] == ["pooled", "exact"]
    assert modes[0][1].endswith("pooled preview") and modes[1][1].endswith("exact")
    # The exact figure is the core's on the same chunks with the same embedder.
    doc = w.state.document
    chunks = {doc.doc_id: w.state.result.chunks}
    index = build_index([doc], chunks, HashEmbedder(), with_prefix=True)
    gold = [q for q in w.retrieval.gold.questions]
    assert r.report.hit_rate == evaluate(gold, [doc], chunks, IndexSearch(index, multi_doc=False), 5).hit_rate
    # Where pooled and exact disagree by more than a point, the panel says so.
    key, pooled_rate = w.retrieval._pooled_rate
    assert key[1] == r.request.chunk_request_id  # the preview was of the same chunking
    gap = abs(pooled_rate - r.report.hit_rate)
    assert w.gold_panel.disagreement.isVisibleTo(w.gold_panel) == (gap > 0.01)
    if gap > 0.01:
        assert "pipeline will see" in w.gold_panel.disagreement.text()
    # Back to settings whose embeddings are cached: exact at once, no preview.
    modes.clear()
    w.strategy_panel.set_value("size", 256)
    wait_result(w, mode="exact", gold=True)
    assert [m for m, _t in modes] == ["exact"]


def test_selecting_a_question_asks_it_and_marks_its_answer(qtbot, bm25_window, open_doc, wait_result):
    w = bm25_window()
    open_doc(w)
    wait_result(w, gold=True)
    q = next(q for q in w.retrieval.gold.questions if q.question == GERMANY)
    w.gold_panel.select_question(q)
    r = wait_result(w, question=GERMANY)
    doc = w.state.document
    spans = normalized_text(doc).find_all(normalize("14 months"))
    assert spans and set(spans) <= set(w.view.answer_spans)
    assert set(q.references) <= set(w.view.answer_spans)
    assert w.retrieval.question == GERMANY and w.question_bar.field.text() == GERMANY
    assert [c.hit.rank for c in w.reader.cards] == [h.rank for h in r.hits]
    assert w.strip.marks("answer")
    w.view.viewport().repaint()
    a, b = w.view.answer_spans[0]
    top, bottom = w.view.y_range(a, b)
    assert 0 <= top < w.view.viewport().height()  # scrolled to the answer


def test_baseline_deltas_and_the_questions_fixed_and_broken(qtbot, bm25_window, open_doc, wait_result):
    w = bm25_window()
    open_doc(w)
    base = wait_result(w, gold=True)
    assert w.gold_panel.pin_button.isEnabled()
    w.gold_panel.pin_button.click()
    assert w.retrieval.baseline is not None and w.retrieval.baseline.report is base.report
    w.strategy_panel.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 300)
    r = wait_result(w, gold=True)
    assert r.request.strategy == "fixed_chars"
    # The same comparison made by the core alone.
    doc = w.state.document
    before = Workbench([doc], w.retrieval.gold).evaluate(EvalConfig("markdown", {}, 5, "bm25"))
    after = Workbench([doc], w.retrieval.gold).evaluate(EvalConfig("fixed_chars", {"size": 300}, 5, "bm25"))
    cmp = compare_reports(before, after)
    assert w.gold_panel.broke_questions() == [c.question.question for c in cmp.broke]
    assert w.gold_panel.fixed_questions() == [c.question.question for c in cmp.fixed]
    assert cmp.broke or cmp.fixed  # the comparison shows something
    for key in ("hit_rate", "mrr", "chunks"):
        assert w.gold_panel.metric_text(key)[1] == delta_text(key, cmp.delta(key))
    items = [w.gold_panel.changes.item(i).text().strip() for i in range(w.gold_panel.changes.count())]
    assert items[0] == f"Broke: {len(cmp.broke)}" and f"Fixed: {len(cmp.fixed)}" in items
    for ch in cmp.broke:
        assert ch.question.question in items
    row = w.retrieval.gold.questions.index(cmp.broke[0].question) if cmp.broke else None
    if row is not None:
        assert w.gold_panel.model.data(w.gold_panel.model.index(row, COL_BASELINE)) == "broke"
    w.gold_panel.clear_button.click()
    assert w.retrieval.baseline is None and w.gold_panel.metric_text("hit_rate")[1] == ""


def test_gold_file_is_remembered_per_document(qtbot, bm25_window, open_doc, wait_result, tmp_path, settings_store):
    doc = tmp_path / "handbook.md"
    shutil.copy(HANDBOOK, doc)
    other = tmp_path / "picked.jsonl"
    other.write_text(json.dumps({"question": GERMANY, "answer": "14 months"}) + "\n", encoding="utf-8")
    w = bm25_window()
    open_doc(w, doc)
    assert w.retrieval.gold is None  # no sibling gold file beside the copy
    assert w.gold_panel.open_gold(other)
    assert w.gold_panel.model.rowCount() == 1
    assert Settings(settings_store).get(GOLD_FILES) == {str(doc.resolve()): str(other.resolve())}
    w.close()
    w2 = bm25_window(store=ini_store(settings_store.fileName()))
    open_doc(w2, doc)
    assert w2.retrieval.gold is not None and Path(w2.retrieval.gold.path) == other.resolve()


def test_csv_and_chroma_gold_sets_and_a_corpus(qtbot, bm25_window, wait_result, wait_complete):
    corpus = DATA / "corpus"
    w = bm25_window()
    assert w.open_paths([str(corpus)])
    wait_complete(w)
    assert w.retrieval.gold is None
    for name, fmt in (("simple.csv", "csv"), ("chroma.csv", "chroma"), ("good.gold.jsonl", "jsonl")):
        assert w.gold_panel.open_gold(DATA / name), w.message.text()
        assert w.retrieval.gold.format == fmt
        ids = {d.doc_id for d in w.state.documents}  # a corpus: questions about any of its documents
        wanted = [q for q in w.retrieval.gold.questions if q.source is None or q.source in ids]
        assert w.gold_panel.model.questions == tuple(wanted)
        r = wait_result(w, gold=bool(wanted))
        if wanted:
            assert len(r.report.questions) == len(wanted)
    # Another document of the corpus shown: the same questions, over the whole corpus.
    w.doc_combo.setCurrentIndex(1)
    r = wait_result(w, gold=True)
    assert all(q.question.source is None or q.question.source in ids for q in r.report.questions)
    assert len(r.report.questions) == len(wanted)


def test_a_broken_gold_file_is_reported_and_the_old_set_stays(qtbot, bm25_window, open_doc, tmp_path):
    w = bm25_window()
    open_doc(w)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok?", "answer": "yes"}\n{"question": 3}\n', encoding="utf-8")
    assert not w.gold_panel.open_gold(bad)
    assert "bad.jsonl:2" in w.message.text() and "question" in w.message.text()
    assert Path(w.retrieval.gold.path) == GOLD


def test_drop_a_gold_file(qtbot, bm25_window, open_doc, tmp_path):
    from PySide6.QtCore import QMimeData, QPointF, QUrl
    from PySide6.QtGui import QDropEvent

    w = bm25_window()
    open_doc(w)
    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps({"question": GERMANY, "answer": "14 months"}) + "\n", encoding="utf-8")
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(mine))])
    w.dropEvent(QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                           Qt.KeyboardModifier.NoModifier))
    assert Path(w.retrieval.gold.path) == mine and w.state.document.doc_id == "handbook.md"


# -- adding questions ----------------------------------------------------------------------------------

def _copy_handbook(tmp_path):
    doc = tmp_path / "handbook.md"
    gold = tmp_path / "handbook.gold.jsonl"
    shutil.copy(HANDBOOK, doc)
    shutil.copy(GOLD, gold)
    return doc, gold


def _select(w, text):
    from PySide6.QtGui import QTextCursor

    doc = w.state.document
    a = doc.text.index(text)
    cursor = w.view.textCursor()
    cursor.setPosition(w.view.umap.to_utf16(a))
    cursor.setPosition(w.view.umap.to_utf16(a + len(text)), QTextCursor.MoveMode.KeepAnchor)
    w.view.setTextCursor(cursor)


def test_add_a_question_for_the_selected_answer(qtbot, bm25_window, open_doc, wait_result, tmp_path, monkeypatch):
    doc_path, gold_path = _copy_handbook(tmp_path)
    w = bm25_window()
    open_doc(w, doc_path)
    wait_result(w, gold=True)
    assert w.add_question_action in w.view.context_actions
    _select(w, "25 days")
    from PySide6.QtWidgets import QInputDialog

    monkeypatch.setattr(QInputDialog, "getText", staticmethod(lambda *a, **k: ("Paternity leave in France?", True)))
    before = gold_path.read_text(encoding="utf-8")
    w.add_question_action.trigger()
    after = gold_path.read_text(encoding="utf-8")
    assert after.startswith(before) and after.count("\n") == before.count("\n") + 1
    last = json.loads(after.splitlines()[-1])
    assert last == {"question": "Paternity leave in France?", "answer": "25 days", "source": "handbook.md"}
    reloaded = load_gold(gold_path, [w.state.document])
    assert len(reloaded.questions) == 65 and not reloaded.questions[-1].warnings
    assert w.gold_panel.model.rowCount() == 65
    r = wait_result(w, gold=True)
    assert len(r.report.questions) == 65


def test_a_failed_write_leaves_the_gold_file_intact(qtbot, bm25_window, open_doc, wait_result, tmp_path,
                                                    monkeypatch):
    doc_path, gold_path = _copy_handbook(tmp_path)
    w = bm25_window()
    open_doc(w, doc_path)
    wait_result(w, gold=True)
    before = gold_path.read_bytes()

    def refuse(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    assert not w.add_question(question="Paternity leave in France?", answer="25 days")
    assert gold_path.read_bytes() == before
    assert "No space left on device" in w.message.text()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []  # no temporary left
    assert len(w.retrieval.gold.questions) == 64


def test_without_a_gold_file_the_user_names_one(qtbot, bm25_window, open_doc, wait_result, tmp_path, monkeypatch):
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nThe office opens at 8 am. Parking costs 4 euros a day.\n", encoding="utf-8")
    w = bm25_window()
    open_doc(w, doc)
    target = tmp_path / "answers.jsonl"
    from PySide6.QtWidgets import QFileDialog

    asked = []

    def save_dialog(parent, title, suggestion, filt):
        asked.append(suggestion)
        return str(target), filt

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(save_dialog))
    _select(w, "8 am")
    assert w.add_question(question="When does the office open?")
    assert asked and asked[0].endswith("notes.gold.jsonl")
    assert load_gold(target, [w.state.document]).questions[0].answers == ("8 am",)
    assert Path(w.retrieval.gold.path) == target
    assert w.gold_files.remembered(w.state.document) == target.resolve()


def test_reader_saves_a_question_with_its_relevant_chunk(qtbot, bm25_window, open_doc, wait_result, tmp_path):
    doc_path, gold_path = _copy_handbook(tmp_path)
    w = bm25_window()
    open_doc(w, doc_path)
    w.question_bar.ask("Who approves a sabbatical?")
    r = wait_result(w, question="Who approves a sabbatical?")
    w.reader.judge(1, "relevant")
    w.reader.judge(2, "not")
    assert w.reader.judgements()[1] == "relevant" and w.reader.judgements()[2] == "not"
    q = w.reader.gold_question()
    top = r.hits[0].chunk
    assert q == GoldQuestion("Who approves a sabbatical?", source="handbook.md", references=((top.start, top.end),))
    w.reader.save_button.click()
    last = json.loads(gold_path.read_text(encoding="utf-8").splitlines()[-1])
    assert last["references"] == [{"start": top.start, "end": top.end}]
    assert len(load_gold(gold_path, [w.state.document]).questions) == 65


def test_figures_carry_intervals_budget_and_the_other_retrievers(qtbot, dense_window, open_doc, wait_result):
    """Hit rate and MRR with their bootstrap interval; a context budget adds Hit@budget (as the
    core's evaluate computes it); the same chunks are scored by dense, BM25 and hybrid."""
    from inspector.core.evaluation.report import INTERVAL_SEED
    from inspector.core.evaluation.uncertainty import report_intervals

    w = dense_window()
    open_doc(w)
    assert w.gold_panel.open_gold(GOLD)
    r = wait_result(w, gold=True)
    panel = w.gold_panel
    ci = report_intervals(r.report, seed=INTERVAL_SEED)["hit_rate_ci"]
    assert ci[0] <= r.report.hit_rate <= ci[1]
    assert panel.ci_labels["hit_rate"].text() == f"[{ci[0] * 100:.0f}–{ci[1] * 100:.0f} %]"
    assert panel.ci_labels["mrr"].text().startswith("[")
    assert not panel.metric_labels["hit_at_budget"][1].isVisibleTo(panel)
    assert set(r.alternatives) == {"dense", "bm25", "hybrid"}
    assert r.alternatives["dense"] is r.report
    text = panel.retrievers.text()
    assert "Dense" in text and "BM25" in text and "Hybrid" in text and "<b>Dense" in text
    bm25 = r.alternatives["bm25"]
    assert f"BM25 {bm25.hit_rate * 100:.1f} %" in text
    # A budget: Hit@budget shown, equal to the core's evaluation of the same chunks at that budget.
    panel.budget_spin.setValue(300)
    r = wait_result(w, gold=True)
    assert r.request.budget == 300 and r.report.budget == 300
    assert panel.metric_labels["hit_at_budget"][1].isVisibleTo(panel)
    assert panel.metric_text("hit_at_budget")[0] == f"{r.report.hit_at_budget * 100:.1f} %"
    assert r.report.hit_at_budget <= r.report.hit_rate
    assert panel.metric_text("context_tokens_mean")[0] == f"{r.report.context_tokens_mean:,.0f}"


def test_a_baseline_change_within_noise_says_so(bm25_window, open_doc, wait_result):
    """Pinned markdown vs markdown with another size on the handbook's 64 questions: a change of a
    question or two is within noise, and the panel says so instead of colouring it a win."""
    w = bm25_window()
    open_doc(w)
    assert w.gold_panel.open_gold(GOLD)
    wait_result(w, gold=True)
    w.retrieval.pin_baseline()
    w.state.set_params({**w.state.params, "size": 128})
    r = wait_result(w, gold=True)
    assert r.request.params["size"] == 128
    d = w.retrieval.paired["hit_rate"]
    assert d.n == len(r.report.questions)
    assert abs(d.delta - (r.report.hit_rate - w.retrieval.baseline.report.hit_rate)) < 1e-9
    value, delta = w.gold_panel.metric_text("hit_rate")
    assert d.delta != 0  # BM25 on the handbook: size 128 changes one questions' outcome
    if d.delta != 0:
        assert d.verdict == "within noise"
        assert delta.endswith("· noise")
        assert "within noise" in w.gold_panel.baseline_label.text()
    # Issue 29: the comparison states what each side hands the LLM per question.
    before, after = w.retrieval.baseline.report.context_tokens_mean, r.report.context_tokens_mean
    assert (f"Context per question: {before:,.0f} → {after:,.0f} tokens ({after - before:+,.0f})"
            in w.gold_panel.baseline_label.text())
    assert w.gold_panel.metric_text("context_tokens_mean")[1] == f"{after - before:+,.0f}"


def test_marking_results_stale_neither_sorts_nor_filters_again(qapp):
    """Every re-chunk marks the gold table's results stale (grey): only the colour changes, so the
    sorting proxy must not sort or filter every row again (each comparison a Python call that
    waits for the GIL while a worker chunks: ~0.8 s of frozen window per slider move in a soak)."""
    from inspector.qt.panels.gold_model import GoldFilterProxy

    doc_gold = load_gold(GOLD, [_handbook()])
    doc = _handbook()
    chunks = {doc.doc_id: chunk_document(doc, "markdown")}
    report = evaluate(doc_gold, [doc], chunks, IndexSearch(build_index([doc], chunks, None), retriever="bm25",
                                                            multi_doc=False), 5)
    model = GoldTableModel()
    model.set_questions(doc_gold.questions)
    model.set_results(report.questions)
    proxy = GoldFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_misses_only(True)
    proxy.sort(COL_HIT, Qt.SortOrder.AscendingOrder)
    shown = proxy.rowCount()
    asked = []
    real = model.data

    def counting(index, role=Qt.ItemDataRole.DisplayRole):
        asked.append(role)
        return real(index, role)

    model.data = counting
    repaints = []
    model.appearanceChanged.connect(lambda: repaints.append(1))
    model.set_stale(True)
    assert asked.count(MISS_ROLE) == 0 and asked.count(SORT_ROLE) == 0 and repaints == [1]
    assert proxy.rowCount() == shown
    model.set_results(report.questions)  # new outcomes do sort and filter again
    assert asked.count(MISS_ROLE) > 0


def _figures_cut(panel) -> list[str]:
    """The figure labels (values, changes, intervals) shown in part: narrower than their text, or
    reaching past the visible part of the figures' column."""
    from PySide6.QtCore import QPoint

    viewport = panel.summary_scroll.viewport()
    cut = []
    for key, (_name, value, delta) in panel.metric_labels.items():
        for label in (value, delta, panel.ci_labels[key]):
            if not label.isVisibleTo(panel) or not label.text():
                continue
            need = label.fontMetrics().horizontalAdvance(label.text())
            left = label.mapTo(viewport, QPoint(0, 0)).x()
            if need > label.contentsRect().width() or left < 0 or left + label.width() > viewport.width():
                cut.append(f"{key}: {label.text()!r} needs {need} px, has {label.contentsRect().width()} "
                           f"at x={left} in a {viewport.width()} px column")
    return cut


def test_figures_are_never_cut_at_any_width_of_the_panel(qtbot, dense_window, open_doc, wait_result):
    """Issue 26: with the embedding map open the gold panel narrowed and its hit rate read
    "8.3 % (53/60)", the first digit of 88.3 % cut off. At every width the panel can take, from its
    minimum up, with and without a baseline (the change column), every figure is wholly shown."""
    from PySide6.QtWidgets import QApplication

    from inspector.qt.panels.gold_panel import GoldPanel

    w = dense_window(size=(1400, 900))
    panel = GoldPanel(w.retrieval)  # a second panel on the window's state, free to take any width
    qtbot.addWidget(panel)
    panel.show()
    open_doc(w)
    r = wait_result(w, gold=True)
    value, _delta = panel.metric_text("hit_rate")
    assert f"({r.report.hits}/{len(r.report.questions)})" in value
    for pinned in (False, True):
        if pinned:
            w.retrieval.pin_baseline()
            w.state.set_params({**w.state.params, "size": 128})
            wait_result(w, gold=True)
            qtbot.waitUntil(lambda: w.retrieval.comparison is not None, timeout=10_000)
            assert any(d.text() for _n, _v, d in panel.metric_labels.values())
        widths = set()
        for width in range(120, 1401, 11):
            panel.resize(width, 320)
            QApplication.processEvents()
            widths.add(panel.width())
            assert not _figures_cut(panel), (panel.width(), _figures_cut(panel))
        assert min(widths) < 700 and max(widths) >= 1390  # the sweep reached the narrow end
    # The report's case: the map beside the gold set in a 1400x900 window.
    w.embedding_map_dock.show()
    w.gold_dock.raise_()
    qtbot.waitUntil(lambda: w.gold_panel.isVisible(), timeout=5000)
    qtbot.wait(50)
    assert not _figures_cut(w.gold_panel)


def test_a_span_metric_s_verdict_counts_questions_with_spans(qapp):
    """The delta's tooltip: "about N questions would" tell two settings apart, and for recall,
    precision and IoU "N questions with reference spans (it has 11)", the questions they are
    measured on, not the gold set's 64."""
    from inspector.core.evaluation.uncertainty import PairedDelta
    from inspector.qt.panels.gold_panel import verdict_text

    recall = PairedDelta("recall", 11, 1.0, 0.727, -0.273, (-0.55, 0.0), "within noise", questions_needed=24)
    verdict, tip = verdict_text("recall", recall)
    assert verdict == "within noise"
    assert tip.endswith("about 24 questions with reference spans would (it has 11), at this difference")
    hits = PairedDelta("hit_rate", 64, 0.953, 0.875, -0.078, (-0.16, 0.0), "within noise", 0.12, 1, 6, 139)
    assert verdict_text("hit_rate", hits)[1].endswith("about 139 questions would, at this difference")
