"""The sweep dialog: a tiny grid scored in the background equals the core's sweep, is drawn as a
heatmap, and a cell click applies its configuration to the strategy panel; cancel stops it."""

from __future__ import annotations

import threading
import time

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.evaluation.sweep import grid
from inspector.core.workbench import Workbench
from inspector.qt.dialogs.heatmap import Cell, Heatmap
from inspector.qt.dialogs.sweep_dialog import build_cells, parse_ints, suggest_grid


def _dialog(w):
    w.open_sweep()
    d = w.sweep_dialog
    d.runner.synchronous = False
    return d


def test_parse_and_suggest():
    assert parse_ints("400, 200 200,800") == [200, 400, 800]
    assert suggest_grid("fixed_chars", {"size": 500, "overlap": 0}) == ([250, 500, 750, 1000], [0, 25, 50])
    sizes, overlaps = suggest_grid("sentences", {"size": 256})
    assert overlaps == [0, 1, 2]  # overlap in sentences, size in tokens
    assert suggest_grid("paragraph", {}) == ([], [0])
    # The roles say which parameters: parent_child's parent_size and child_overlap, semantic's max_size.
    assert suggest_grid("parent_child", {"parent_size": 512}) == ([256, 512, 768, 1024], [0, 26, 51])
    assert suggest_grid("semantic", {"max_size": 256}) == ([128, 256, 384, 512], [0])
    cells, configs, skipped = build_cells(["fixed_chars"], [100, 200], [0, 150], k=5, retriever="bm25",
                                          embedding="exact")
    assert len(cells) == 4 and len(configs) == 3 and len(skipped) == 1  # overlap 150 >= size 100
    assert cells[("fixed_chars", 100, 150)].config is None and "overlap" in cells[("fixed_chars", 100, 150)].reason


def test_tiny_grid_matches_the_core_and_a_click_applies_it(qtbot, dense_window, open_doc, wait_result):
    w = dense_window()
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.pooled_ready, timeout=20_000)
    # Pooled rows use a chunk's exact vector when the cache has it: let the window's own exact
    # stage finish first, so the dialog and the core below see the same cache.
    wait_result(w, gold=True)
    d = _dialog(w)
    assert d.strategies() == ["markdown"]  # starts from the window's strategy
    d.set_strategies(["fixed_chars", "markdown"])
    d.sizes.setText("300, 600")
    d.overlaps.setText("0, 50")
    d.confirm.setValue(1)
    with qtbot.waitSignal(d.finished_sweep, timeout=60_000) as blocker:
        assert d.run()
    result = blocker.args[0]
    # The core's sweep of the same grid, with the same embedder, gives the same figures.
    configs, _skipped = grid(["fixed_chars", "markdown"], [300, 600], [0, 50], [5], retriever="dense",
                             embedding="pooled")
    core = Workbench([w.state.document], w.retrieval.gold_questions, embedder=HashEmbedder(),
                     cache=w.retrieval.workbench.cache).sweep(configs, confirm=1)
    # The dialog also scores the window's current settings (markdown defaults, not in this grid):
    # the recommendation is measured against them.
    grid_rows = [r for r in result.rows if r.config in set(configs)]
    extra = [r for r in result.rows if r.config not in set(configs)]
    assert len(extra) == 1 and extra[0].current and extra[0].config.strategy == "markdown"
    assert result.recommendation is not None and result.recommendation.current == extra[0].config
    assert {r.config: round(r.report.hit_rate, 9) for r in grid_rows} == \
        {r.config: round(r.report.hit_rate, 9) for r in core.rows}
    confirmed = [r for r in result.rows if r.exact is not None]
    assert confirmed == [result.rows[0]]  # --confirm 1: the best pooled row, scored exactly
    from dataclasses import replace

    exact = Workbench([w.state.document], w.retrieval.gold_questions, embedder=HashEmbedder()).evaluate(
        replace(result.rows[0].config, embedding="exact"))
    assert confirmed[0].exact.hit_rate == exact.hit_rate
    # 2 strategies x 2 sizes x 2 overlaps, but markdown has no overlap: its overlap-50 points are skipped.
    assert sum(1 for c in d.cells.values() if c.row is not None) == 6
    assert "no overlap parameter" in d.cells[("markdown", 300, 50)].reason
    d.show()
    qtbot.waitExposed(d)
    d.heatmap.repaint()
    assert len(d.heatmap.cell_rects()) == 6
    rect, cell = next((r, c) for r, c in d.heatmap.cell_rects() if c.strategy == "fixed_chars" and c.size == 600
                      and c.overlap == 50)
    qtbot.mouseClick(d.heatmap, Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    assert w.state.strategy == "fixed_chars"
    assert w.state.params == {"size": 600, "overlap": 50}
    assert w.strategy_panel.values() == {"size": 600, "overlap": 50}
    assert w.state.with_prefix == cell.config.with_prefix is False
    r = wait_result(w, gold=True)
    assert r.request.params == {"size": 600, "overlap": 50}
    d.close()


def test_bm25_sweep_needs_no_model(qtbot, hash_window, open_doc):
    w = hash_window(start=False)
    open_doc(w)
    d = _dialog(w)
    d.retriever.setCurrentIndex(d.retriever.findData("dense"))
    assert d.run() == 0 and "not ready" in d.status.text()
    d.retriever.setCurrentIndex(d.retriever.findData("bm25"))
    d.sizes.setText("128 256")
    d.overlaps.setText("")
    with qtbot.waitSignal(d.finished_sweep, timeout=60_000) as blocker:
        assert d.run()
    assert len(blocker.args[0].rows) == 2 and all(r.exact is None for r in blocker.args[0].rows)
    assert "Best:" in d.status.text()
    # Issue 29: the best row and the advice state their context tokens per question, and the
    # findings on the current settings are listed before the statistics.
    assert "context tokens per question" in d.status.text() and "Recommendation:" in d.status.text()
    assert d.findings.isVisible() == d.isVisible() and d.findings.text().startswith(
        "Findings on your current settings")


def test_sizes_in_different_units_are_said_so(qtbot, hash_window, open_doc):
    """A grid's sizes go to each strategy in its own unit: ticking fixed_chars (characters) beside
    recursive (tokens) says so under the form, with this document's characters per token, and
    each strategy's column names its unit; strategies that agree say nothing."""
    from inspector.core.api import unit_note, units_sentence

    assert unit_note("fixed_chars") == "characters" and unit_note("recursive") == "tokens"
    assert unit_note("sentences") == "tokens, overlap in sentences" and unit_note("paragraph") == ""
    assert units_sentence(["recursive", "markdown", "sentences"], [256]) == ""
    assert units_sentence(["fixed_chars", "recursive"], [128], 4.0) == (
        "Sizes are in each strategy's own unit: characters for fixed_chars; tokens for recursive. This "
        "document has 4.0 characters a token: 128 tokens are about 512 characters, 128 characters about "
        "32 tokens.")
    w = hash_window(start=False)
    open_doc(w)
    d = _dialog(w)
    d.show()
    d.set_strategies(["recursive", "markdown"])
    assert not d.units.isVisible()
    d.set_strategies(["fixed_chars", "recursive"])
    d.sizes.setText("256")
    doc, stats = w.state.document, w.state.result.stats
    ratio = len(doc.text) / stats.document_tokens
    assert d.units.isVisible() and d.units.text() == units_sentence(["fixed_chars", "recursive"], [256], ratio)
    assert f"{ratio:.1f} characters a token: 256 tokens are about {round(256 * ratio):,} characters" in d.units.text()
    d.set_strategies(["fixed_chars"])
    assert not d.units.isVisible()


class SlowHash(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.batch_size = 4
        self.calls = 0
        self.lock = threading.Lock()

    def encode(self, texts):
        time.sleep(0.02)
        with self.lock:
            self.calls += 1
        return super().encode(texts)


def test_cancel_stops_the_sweep(qtbot, dense_window, open_doc, monkeypatch):
    from inspector.qt.controllers.retrieval import RetrievalController

    monkeypatch.setattr(RetrievalController, "_build_pooled", lambda self: None)
    emb = SlowHash()
    w = dense_window(embedder=emb, settle_ms=60_000)
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    d = _dialog(w)
    d.vectors.setCurrentIndex(d.vectors.findData("exact"))
    d.sizes.setText("100 150 200 250")
    d.overlaps.setText("0")
    got = []
    d.finished_sweep.connect(got.append)
    assert d.run()
    qtbot.waitUntil(lambda: emb.calls > 2, timeout=10_000)
    assert d.cancel_button.isEnabled()
    d.cancel_button.click()
    assert d.status.text() == "Cancelled." and not d.progress.isVisible()
    qtbot.waitUntil(lambda: d.runner.active_threads() == 0, timeout=10_000)
    calls = emb.calls
    # The cancelled job has left its one thread; what it sent before stopping is delivered now,
    # and nothing is embedded or reported after it.
    QApplication.sendPostedEvents()
    QApplication.processEvents()
    assert d.runner.active_threads() == 0 and not d.runner.busy
    assert emb.calls == calls and got == []
    assert d.run_button.isEnabled()


def test_heatmap_paints_cells(qtbot):
    from inspector.core.evaluation.config import EvalConfig
    from inspector.core.evaluation.metrics import IndexCost, Report
    from inspector.core.evaluation.sweep import SweepRow

    def row(size, rate):
        cfg = EvalConfig("fixed_chars", {"size": size, "overlap": 0}, 5, "bm25")
        return cfg, SweepRow(cfg, Report(5, rate, rate, None, None, None, (), IndexCost(10, 100, 100)))

    cells = {}
    for size, rate in ((100, 0.5), (200, 0.9)):
        cfg, r = row(size, rate)
        cells[("fixed_chars", size, 0)] = Cell("fixed_chars", size, 0, cfg, r)
    h = Heatmap()
    qtbot.addWidget(h)
    h.resize(400, 220)
    h.set_grid(["fixed_chars"], [100, 200], [0], cells)
    img = h.grab().toImage()
    assert len(h.cell_rects()) == 2 and h.rate_range() == (0.5, 0.9)
    assert h.best == cells[("fixed_chars", 200, 0)].config
    (r1, _c1), (r2, _c2) = h.cell_rects()
    assert img.pixelColor(int(r1.left()) + 3, int(r1.top()) + 3) != img.pixelColor(int(r2.left()) + 3,
                                                                                   int(r2.top()) + 3)


def test_a_corpus_sweep_scores_every_document_like_the_gold_panel_and_the_cli(qtbot, hash_window, wait_complete,
                                                                             wait_result, tmp_path):
    """In corpus mode the sweep covers the whole corpus: questions about the document that is not
    shown are scored, not diagnosed "absent" (it used to sweep the shown document only: 0.5 here)."""
    import json

    from inspector.core.evaluation.gold import load_gold
    from inspector.core.workbench import Workbench

    folder = tmp_path / "two"
    folder.mkdir()
    (folder / "a.md").write_text("# Refunds\n\nRefunds are issued within 14 days of the request.\n\n"
                                 "## Receipts\n\nReceipts are required for every refund.\n", encoding="utf-8")
    (folder / "b.md").write_text("# Wildlife\n\nZebras migrate across the savanna every spring.\n\n"
                                 "## Lions\n\nLions hunt at night in small prides.\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps(q) for q in (
        {"question": "Do zebras migrate in spring?", "answer": "every spring", "source": "b.md"},
        {"question": "When do lions hunt?", "answer": "at night", "source": "b.md"},
        {"question": "How fast are refunds issued?", "answer": "within 14 days", "source": "a.md"},
        {"question": "What is required for a refund?", "answer": "Receipts are required", "source": "a.md"},
    )) + "\n", encoding="utf-8")
    w = hash_window(start=False)
    w.retrieval.set_retriever("bm25")
    assert w.open_paths([str(folder)])
    wait_complete(w)
    assert w.state.document.doc_id == "a.md" and len(w.state.documents) == 2
    assert w.gold_panel.open_gold(gold), w.message.text()
    panel = wait_result(w, gold=True).report
    d = _dialog(w)
    d.retriever.setCurrentIndex(d.retriever.findData("bm25"))
    d.sizes.setText("")
    d.overlaps.setText("")
    with qtbot.waitSignal(d.finished_sweep, timeout=60_000) as blocker:
        assert d.run()
    row = blocker.args[0].rows[0]
    wb = Workbench(w.state.documents)
    wb.set_gold(load_gold(gold, w.state.documents))
    cli = wb.evaluate(row.config)
    assert row.report.hit_rate == cli.hit_rate == panel.hit_rate == 1.0
    assert not any(q.diagnosis and q.diagnosis.kind == "absent" for q in row.report.questions)
    d.close()


def test_findings_and_advice_sentences_name_the_fix_and_the_cost():
    """A broken start: the findings name the fix, the advice the context tokens and what settles it."""
    from pathlib import Path

    from inspector.core.chunking.registry import chunk_document
    from inspector.core.documents.document import load_document
    from inspector.core.evaluation.config import EvalConfig
    from inspector.core.evaluation.findings import findings
    from inspector.core.evaluation.sweep import Recommendation
    from inspector.qt.dialogs.sweep_dialog import findings_sentences, recommendation_sentence

    doc = load_document(Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md")
    broken = EvalConfig("fixed_tokens", {"size": 512, "overlap": 0}, retriever="dense")
    good = EvalConfig("markdown", {}, retriever="dense")
    found = findings([doc], {doc.doc_id: chunk_document(doc, "fixed_tokens", broken.params)}, broken)
    rec = Recommendation(config=good, current=broken, keep_current=True, gain=0.05, gain_ci=(-0.02, 0.12),
                         p_value=0.3, metric="hit_rate", basis="exact", in_sample=0.8, cross_validated=0.75,
                         optimism=0.05, questions=30, folds=5, findings=found, p_better=0.8,
                         questions_to_confirm=90, reason="unsure", current_context_tokens=1500.0,
                         candidate_context_tokens=600.0)
    text = findings_sentences(rec)
    assert text.splitlines()[1].startswith("• truncated by embedder (") and "Fix: size <= " in text
    sentence = recommendation_sentence(rec)
    assert "1,500 context tokens per question" in sentence and "-900 against yours" in sentence
    assert "P(better) 0.80" in sentence and "about 90 questions (now 30, 60 more)" in sentence


def test_findings_sentences_say_whom_the_cut_affects():
    """Issue 29: with BM25 the cut is listed as no reason to switch; with hybrid as a partial one,
    and a switch for it says it was also likely better."""
    from dataclasses import replace

    from inspector.core.evaluation.config import EvalConfig
    from inspector.core.evaluation.findings import Finding
    from inspector.core.evaluation.sweep import Recommendation
    from inspector.qt.dialogs.sweep_dialog import findings_sentences, recommendation_sentence

    cut = Finding("truncated_by_embedder", 0.9, "46 of 50 chunks are cut", "size <= 224 tokens")
    texts = {}
    for retriever, affects in (("bm25", "none"), ("hybrid", "partial"), ("dense", "full")):
        broken = EvalConfig("fixed_tokens", {"size": 512, "overlap": 0}, retriever=retriever)
        rec = Recommendation(config=replace(broken, strategy="markdown", params={}), current=broken,
                             keep_current=False, gain=0.02, gain_ci=(-0.02, 0.06), p_value=0.3,
                             metric="hit_rate", basis="exact", in_sample=0.8, cross_validated=0.75,
                             optimism=0.05, questions=30, folds=5,
                             findings=(replace(cut, affects=affects, retriever=retriever),),
                             fixes=("truncated_by_embedder",), p_better=0.8, reason="fixes")
        texts[retriever] = (findings_sentences(rec), recommendation_sentence(rec))
    assert "(does not affect bm25: it reads the whole chunk, so it is no reason to switch)" in texts["bm25"][0]
    assert "(partly affects hybrid: only its dense half reads the cut vector" in texts["hybrid"][0]
    assert "46 of 50 chunks are cut. Fix: size <= 224 tokens." in texts["dense"][0]
    assert "only partly affects hybrid and is likely better" in texts["hybrid"][1]
    assert "fixes a fault of your chunks and is not estimated worse" in texts["dense"][1]


def test_findings_sentences_give_the_gold_set_s_figures_on_the_cut():
    """Issue 29: beside the cut, how the start's questions answered only in its unread tails
    scored against the others."""
    from inspector.core.evaluation.config import EvalConfig
    from inspector.core.evaluation.findings import CutEvidence, Finding, with_evidence
    from inspector.core.evaluation.sweep import Recommendation
    from inspector.qt.dialogs.sweep_dialog import findings_sentences

    cut = Finding("truncated_by_embedder", 0.9, "46 of 50 chunks are cut", "size <= 224 tokens",
                  affects="full", retriever="dense")
    broken = EvalConfig("fixed_tokens", {"size": 512, "overlap": 0}, retriever="dense")

    def sentences(found):
        rec = Recommendation(config=broken, current=broken, keep_current=True, gain=0.0, gain_ci=(-0.02, 0.02),
                             p_value=1.0, metric="hit_rate", basis="exact", in_sample=0.8, cross_validated=0.8,
                             optimism=0.0, questions=30, folds=5, findings=found, p_better=0.5, reason="unsure")
        return findings_sentences(rec)

    text = sentences(with_evidence((cut,), CutEvidence(2, 10, 18, 20)))
    assert ("46 of 50 chunks are cut (on the gold set, questions answered only in the text it never reads were "
            "hit 2 of 10 (20%), the others 18 of 20 (90%): the others +70 pts, 95% interval [+40, +95])."
            " Fix:") in text
    assert "46 of 50 chunks are cut. Fix:" in sentences((cut,))
