"""End to end with the real all-MiniLM-L6-v2 on the sample handbook and its gold set (slow)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from inspector.core.documents.document import load_document
from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import GoldQuestion, load_gold
from inspector.core.evaluation.metrics import IndexSearch, evaluate
from inspector.core.retrieval.index import build_index
from inspector.core.workbench import Workbench

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
FIXED_500 = ("fixed_chars", {"size": 500, "overlap": 0})
MARKDOWN = ("markdown", {})
PARAGRAPH = ("paragraph", {})


@pytest.fixture(scope="module")
def handbook():
    return load_document(ROOT / "sample_docs" / "handbook.md")


@pytest.fixture(scope="module")
def gold(handbook):
    return load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [handbook])


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return EmbeddingCache(tmp_path_factory.mktemp("e2e-cache"), persist=False)


@pytest.fixture(scope="module")
def score(handbook, gold, minilm, cache):
    """score(strategy, params, k, with_prefix=None: the strategy default) -> Report, each embedded once."""
    reports = {}

    def run(strategy, params, k, with_prefix=None):
        key = (strategy, tuple(sorted(params.items())), k, with_prefix)
        if key not in reports:
            cfg = EvalConfig(strategy, params, k, "dense", with_prefix)
            reports[key] = Workbench([handbook], gold, embedder=minilm, cache=cache).evaluate(cfg)
        return reports[key]

    return run


def germany(report):
    return next(r for r in report.questions
                if "Germany" in r.question.question and "14 months" in r.question.answers)


def test_germany_question_hits_with_markdown_at_k1(score):
    res = germany(score(*MARKDOWN, 1))
    assert res.hit and res.rank == 1


def test_germany_question_misses_fixed_500_at_k1_without_prefix(score):
    """Without the heading prefix, the 500-character window that holds "14 months" does not say
    Germany, and another window outranks it; the markdown chunk still wins."""
    res = germany(score(*FIXED_500, 1, with_prefix=False))
    assert not res.hit
    assert res.diagnosis is not None and res.diagnosis.kind in ("ranking", "split")
    assert germany(score(*MARKDOWN, 1, with_prefix=False)).hit


def test_germany_question_misses_fixed_500_at_k1(score):
    # fixed_chars embeds raw windows by default, as a naive pipeline does: the window holding
    # "14 months" lost its "Germany" heading.
    assert not germany(score(*FIXED_500, 1)).hit


def test_markdown_scores_a_higher_hit_rate_than_paragraph_and_fixed_500(score):
    md, para, fixed = score(*MARKDOWN, 5), score(*PARAGRAPH, 5), score(*FIXED_500, 5)
    assert md.hit_rate > para.hit_rate, (md.hit_rate, para.hit_rate)
    assert md.hit_rate > fixed.hit_rate, (md.hit_rate, fixed.hit_rate)


def test_hundred_questions_with_warm_embeddings(handbook, gold, minilm, cache, score):
    score(*MARKDOWN, 5)  # the chunk vectors are in the cache
    questions = [GoldQuestion(question=f"{x.question} ({i})", answers=x.answers, source=x.source,
                              references=x.references)
                 for i, x in enumerate((gold.questions * 2)[:100])]
    cfg = EvalConfig(*MARKDOWN)
    chunks = Workbench([handbook]).chunks_for(cfg)
    index = build_index([handbook], chunks, minilm, cache=cache)
    IndexSearch(index).embed(questions)  # the question vectors go into the cache as well
    search = IndexSearch(index)  # a fresh searcher: vectors come from the cache, not the model
    t = time.perf_counter()
    report = evaluate(questions, [handbook], chunks, search, k=5)
    took = time.perf_counter() - t
    assert len(report.questions) == 100
    assert took < 0.2, f"100 questions took {took * 1000:.0f} ms"
