"""The evaluation report as Markdown (the CLI's --format markdown and the window's export): the
line that says what answered names BM25 for a BM25 configuration, never embeddings (issue 26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.report import report_markdown, retrieval_line
from inspector.core.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"


@pytest.fixture(scope="module")
def report():
    wb = Workbench()
    wb.open([HANDBOOK])
    wb.load_gold(GOLD)
    return wb.evaluate(EvalConfig("markdown", {}, 5, "bm25"))


def _line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("- Retrieval: "))


def test_a_bm25_report_says_bm25(report):
    bm25 = EvalConfig("markdown", {}, 5, "bm25")
    # The window passes its stage's mode ("exact" for a BM25 stage): still no embeddings.
    for mode in (None, "exact"):
        text = report_markdown(report, bm25, mode=mode)
        assert _line(text) == "- Retrieval: BM25 keyword scores (no embeddings)"
        assert "embeddings" not in text.replace("(no embeddings)", "")


def test_dense_hybrid_pooled_and_the_stand_in_are_named(report):
    dense = EvalConfig("markdown", {}, 5, "dense")
    assert _line(report_markdown(report, dense)) == "- Retrieval: dense, exact embeddings"
    assert _line(report_markdown(report, dense, mode="pooled")) == "- Retrieval: dense, pooled preview (approximate)"
    # The CLI passes no mode: a pooled configuration is not reported as exact.
    pooled = EvalConfig("markdown", {}, 5, "hybrid", embedding="pooled")
    assert _line(report_markdown(report, pooled)) == "- Retrieval: hybrid: BM25 + pooled preview (approximate)"
    # BM25 standing in for dense while the model loaded (the window's FALLBACK stage).
    assert retrieval_line(EvalConfig("markdown", {}, 5, "bm25"), "fallback").startswith("BM25 stand-in")


def test_span_metrics_say_whose_means_they_are(report):
    """The sample gold set gives reference spans for 11 of its 64 questions: recall, precision and
    IoU are means over those 11, and every report that writes them says so beside them (a recall
    of 1.000 beside a hit rate of 95 % had read as a figure over all 64). A set with spans for
    every question, or for none, writes them without it."""
    from dataclasses import replace

    from inspector.core.evaluation.report import report_dict, summary_line
    from inspector.core.viewmodel.html_export import _figures

    assert (report.span_questions, len(report.questions)) == (11, 64)
    assert report.span_scope() == "11 of 64 questions"
    assert report_dict(report)["span_questions"] == 11
    md = report_markdown(report, None)
    assert f"| Recall@5 (11 of 64 questions) | {report.recall:.3f} |" in md
    assert "| IoU (11 of 64 questions) |" in md
    assert "recall, precision and IoU: over the 11 of 64 questions with reference spans" in summary_line(report)
    assert "Recall@5 (11 of 64 questions)" in "".join(_figures(report, "BM25"))
    spans_only = replace(report, questions=tuple(q for q in report.questions if q.recall is not None))
    none = replace(report, questions=tuple(q for q in report.questions if q.recall is None))
    for whole in (spans_only, none):
        assert whole.span_scope() == ""
        assert "questions)" not in report_markdown(whole, None)
        assert "reference spans" not in summary_line(whole)


def test_questions_needed_are_counted_among_the_questions_a_metric_is_measured_on():
    """Comparing recursive 128 with markdown on the sample gold set (11 of 64 questions with spans):
    the recall's "~N questions would tell them apart" counts questions with reference spans and
    says how many were compared; said of questions at large, it read as met by the set's 64."""
    from inspector.core.evaluation.report import comparison_json, comparison_text

    wb = Workbench()
    wb.open([HANDBOOK])
    wb.load_gold(GOLD)
    cmp = wb.compare(EvalConfig("markdown", {}, 5, "bm25"), EvalConfig("recursive", {"size": 128}, 5, "bm25"))
    paired = comparison_json(cmp)["paired"]
    assert paired["recall"]["questions"] == 11 and paired["hit_rate"]["questions"] == 64
    lines = {line.split(":")[0].strip(): line for line in comparison_text(cmp).splitlines()
             if line.strip().startswith(("hit_rate:", "recall:"))}
    assert paired["recall"]["verdict"] == "within noise" and paired["recall"]["questions_needed"]
    assert f"~{paired['recall']['questions_needed']:,} questions with reference spans would tell them apart " \
           "at this difference; 11 compared)" in lines["recall"]
    if paired["hit_rate"]["verdict"] == "within noise":
        assert "reference spans" not in lines["hit_rate"] and "questions would tell them apart" in lines["hit_rate"]
