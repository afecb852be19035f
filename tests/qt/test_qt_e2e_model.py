"""End to end with the bundled all-MiniLM-L6-v2 on the sample handbook and its gold set (slow).

The window's figures must be the CLI's for the same configuration, the Germany question must find
its chunk, a baseline must show what a naive splitter breaks, and the live preview must hand over
from pooled to exact vectors.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"
GERMANY = "How long is parental allowance paid in Germany?"
SLOW = 300_000  # ms: embedding the handbook takes a while on a small CPU

pytestmark = pytest.mark.slow


def _cli_eval(capsys, *args):
    from inspector.cli import main

    capsys.readouterr()
    assert main(["eval", str(HANDBOOK), "--gold", str(GOLD), *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_ask_germany_measure_like_the_cli_and_see_what_fixed_chars_breaks(qtbot, make_window, dense_settings, open_doc,
                                                                          wait_result, minilm, capsys):
    w = make_window(embedder=minilm, settle_ms=300)
    w.state.set_strategy("markdown")
    open_doc(w)
    w.start_model()
    qtbot.waitUntil(lambda: w.retrieval.model_state == "ready", timeout=SLOW)
    assert w.retrieval.retriever == "dense" and w.retrieval.k == 5
    w.question_bar.ask(GERMANY)
    r = wait_result(w, mode="exact", question=GERMANY, gold=True, timeout=SLOW)
    doc = w.state.document
    top = r.hits[0]
    assert "14 months" in doc.text[top.chunk.start:top.chunk.end]
    assert w.view.hits[0].rank == 1 and w.view.hits[0].chunk_id == top.chunk.id
    w.view.goto_hit(0)
    w.view.viewport().repaint()
    assert 1 in w.view.last_paint.hits  # outlined on screen
    assert w.reader.texts()[0] == top.chunk.embedded_text(doc, with_prefix=True)

    # The panel's exact figures are the CLI's for the same configuration.
    assert r.mode == "exact" and w.gold_panel.mode.text() == "k = 5 · dense · exact"
    cli = _cli_eval(capsys, "--strategy", "markdown", "--k", "5", "--retriever", "dense", "--embedding", "exact")
    assert cli["hit_rate"] == round(r.report.hit_rate, 4)
    assert cli["mrr"] == round(r.report.mrr, 4)
    assert [q["hit"] for q in cli["questions"]] == [q.hit for q in r.report.questions]

    # Pin it, switch to fixed_chars 500/0 (no prefix, its default): the Germany question breaks.
    w.gold_panel.pin_button.click()
    w.strategy_panel.set_strategy("fixed_chars")
    assert w.state.params == {"size": 500, "overlap": 0} and not w.state.with_prefix
    r2 = wait_result(w, mode="exact", gold=True, timeout=SLOW)
    assert r2.request.strategy == "fixed_chars"
    assert GERMANY in w.gold_panel.broke_questions()
    cli2 = _cli_eval(capsys, "--strategy", "fixed_chars", "--size", "500", "--overlap", "0", "--k", "5",
                     "--retriever", "dense")
    assert cli2["hit_rate"] == round(r2.report.hit_rate, 4)
    assert w.gold_panel.metric_text("hit_rate")[1] == f"{(r2.report.hit_rate - r.report.hit_rate) * 100:+.1f} pts"


def test_live_preview_hands_over_from_pooled_to_exact(qtbot, make_window, dense_settings, open_doc, wait_result,
                                                     minilm):
    w = make_window(embedder=minilm, settle_ms=500)
    w.state.set_strategy("markdown")
    open_doc(w)
    w.start_model()
    qtbot.waitUntil(lambda: w.retrieval.pooled_ready, timeout=SLOW)
    wait_result(w, mode="exact", gold=True, timeout=SLOW)
    seen = []
    w.retrieval.resultReady.connect(lambda res: seen.append((res.mode, w.gold_panel.mode.text(),
                                                             res.report.hit_rate)))
    w.strategy_panel.set_value("size", 180)
    qtbot.waitUntil(lambda: bool(seen), timeout=SLOW)
    assert seen[0][0] == "pooled" and seen[0][1].endswith("pooled preview")
    r = wait_result(w, mode="exact", gold=True, timeout=SLOW)
    assert [m for m, _t, _h in seen] == ["pooled", "exact"]
    assert seen[-1][1].endswith("exact") and r.request.params["size"] == 180
    pooled_rate, exact_rate = seen[0][2], seen[1][2]
    shown = w.gold_panel.disagreement.isVisibleTo(w.gold_panel)
    assert shown == (abs(pooled_rate - exact_rate) > 0.01)
    if shown:
        assert f"{exact_rate:.1%}" in w.gold_panel.disagreement.text()
