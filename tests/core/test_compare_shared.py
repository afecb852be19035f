"""A baseline pinned before the gold set grew or shrank stays comparable: both reports are restricted
to the questions they share (matched by question text and answers, not by position), every figure
is recomputed on those, and the comparison says how many were compared."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.documents.document import load_document
from inspector.core.evaluation.compare import compare_reports, compare_shared, question_key, shared_reports
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.gold import GoldQuestion, load_gold
from inspector.core.evaluation.uncertainty import paired_deltas
from inspector.core.workbench import Workbench

ROOT = Path(__file__).resolve().parents[2]
DOC = load_document(ROOT / "sample_docs" / "handbook.md")
GOLD = load_gold(ROOT / "sample_docs" / "handbook.gold.jsonl", [DOC])
A = EvalConfig("markdown", {}, 3, "bm25")
B = EvalConfig("fixed_chars", {"size": 300, "overlap": 0}, 3, "bm25")


def _report(config: EvalConfig, questions) -> object:
    wb = Workbench([DOC], list(questions))
    return wb.evaluate(config)


@pytest.fixture(scope="module")
def full():
    return _report(A, GOLD.questions), _report(B, GOLD.questions)


def test_same_questions_compare_as_before(full):
    a, b = full
    assert compare_shared(a, b) == compare_reports(a, b)
    assert compare_shared(a, b).note() == ""


def test_a_gold_set_that_grew_is_compared_on_the_old_questions(full):
    a, _b = full
    extra = GoldQuestion("Paternity leave in France?", ("25 days",), "handbook.md")
    grown = _report(B, (*GOLD.questions, extra))
    cmp = compare_shared(a, grown)
    assert cmp.compared == 64 and cmp.after_total == 65 and cmp.before_total == 64
    assert cmp.note() == "compared on 64 of 65 questions (the ones both gold sets share)"
    on_64 = _report(B, GOLD.questions)
    assert cmp.after.hit_rate == pytest.approx(on_64.hit_rate)
    assert cmp.after.mrr == pytest.approx(on_64.mrr)
    assert cmp.delta("hit_rate") == pytest.approx(on_64.hit_rate - a.hit_rate)
    assert set(paired_deltas(cmp.before, cmp.after)) >= {"hit_rate", "mrr"}


def test_a_gold_set_that_shrank_and_was_reordered(full):
    a, _b = full
    kept = list(GOLD.questions[10:40])[::-1]
    shrunk = _report(B, kept)
    cmp = compare_shared(a, shrunk)
    assert cmp.compared == 30 and cmp.note() == "compared on 30 of 64 questions (the ones both gold sets share)"
    assert [r.question.question for r in cmp.before.questions] == [q.question for q in kept]
    assert [question_key(r.question) for r in cmp.before.questions] == \
        [question_key(r.question) for r in cmp.after.questions]
    want = sum(1 for r in a.questions if r.question in kept and r.hit) / 30
    assert cmp.before.hit_rate == pytest.approx(want)


def test_nothing_in_common():
    a = _report(A, GOLD.questions[:5])
    b = _report(B, GOLD.questions[5:9])
    before, after = shared_reports(a, b)
    assert before.questions == () == after.questions
    assert compare_shared(a, b) is None  # nothing in common: nothing to compare


@settings(max_examples=25, deadline=None)
@given(keep=st.lists(st.integers(0, 63), max_size=20), extra=st.integers(0, 3))
def test_every_shared_question_pairs_with_itself(full, keep, extra):
    """Any subset (with repeats) plus new questions: pairs hold the same question, and the number
    compared is the size of the multiset intersection."""
    a, _b = full
    qs = [GOLD.questions[i] for i in keep] + [GoldQuestion(f"new {i}?", ("leave",)) for i in range(extra)]
    after = _report(B, qs)
    before, after_sub = shared_reports(a, after)
    assert [question_key(x.question) for x in before.questions] == \
        [question_key(y.question) for y in after_sub.questions]
    assert len({question_key(q) for q in GOLD.questions}) == 64  # no question twice in the file
    assert len(after_sub.questions) == len(set(keep))  # a repeat pairs once: the baseline asked it once
