"""The public evaluation set (benchmarks/data/public): real documents nobody on the project wrote,
with hand-written gold questions, used to check that tuned settings carry over (issue 12).

Fast and model-free: every document folder carries its licence and provenance, every gold file loads
with the project's own loader without a warning, every answer is a short substring of its document,
the "where" label of every question is what the app's structure parser says, and the tune/test split
follows its stated rule, so nobody can quietly move a question from one half to the other."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from inspector.core.documents.document import load_document
from inspector.core.evaluation.gold import load_gold, normalize, normalized_text
from tests.core.gold_checks_for_tests import check_folder, where_of
from tests.core.gold_checks_for_tests import records as gold_records

PUBLIC = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "public"
NAMES = sorted(p.name for p in PUBLIC.iterdir() if p.is_dir())


def records(name: str) -> list[dict]:
    return gold_records(PUBLIC / name / f"{name}.gold.jsonl")


def expected_split(name: str, questions: list[str]) -> dict[str, str]:
    """The rule stated in benchmarks/data/public/README.md: rank a document's questions by
    sha256("<name>:<question>"); the first floor(n/2) are held out ("test"), the rest are "tune"."""
    order = sorted(questions, key=lambda q: hashlib.sha256(f"{name}:{q}".encode()).hexdigest())
    test = set(order[: len(order) // 2])
    return {q: "test" if q in test else "tune" for q in questions}


def test_there_are_at_least_four_documents():
    assert len(NAMES) >= 4, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_folder_has_document_gold_licence_and_provenance(name):
    check_folder(PUBLIC / name, name, 15, 120)


@pytest.mark.parametrize("name", NAMES)
def test_gold_loads_with_the_project_loader_and_every_answer_is_in_the_document(name):
    doc = load_document(PUBLIC / name / f"{name}.md")
    gold = load_gold(PUBLIC / name / f"{name}.gold.jsonl", [doc])
    assert gold.format == "jsonl"
    assert gold.warnings == (), [w.one_line() for w in gold.warnings]
    assert 25 <= len(gold) <= 40
    assert len({q.question for q in gold.questions}) == len(gold), "duplicate question"
    norm = normalized_text(doc)
    for q in gold.questions:
        assert q.source == doc.doc_id
        assert len(q.answers) == 1
        answer = q.answers[0]
        assert 1 <= len(answer.split()) <= 8, f"answer too long: {answer!r}"
        assert norm.find_all(normalize(answer)), f"{answer!r} not in {name}.md"
        # A question must not simply quote its answer.
        assert normalize(answer) not in normalize(q.question), q.question


@pytest.mark.parametrize("name", NAMES)
def test_where_labels_match_the_structure_parser_and_lists_tables_are_a_third(name):
    doc = load_document(PUBLIC / name / f"{name}.md")
    recs = records(name)
    for r in recs:
        assert r["where"] == where_of(doc, r["answer"]), r["question"]
    in_lists_or_tables = sum(r["where"] in ("list", "table") for r in recs)
    assert 3 * in_lists_or_tables >= len(recs), f"{name}: {in_lists_or_tables}/{len(recs)}"


@pytest.mark.parametrize("name", NAMES)
def test_split_is_balanced_and_follows_the_stated_rule(name):
    recs = records(name)
    assert {r["split"] for r in recs} == {"tune", "test"}
    tune = sum(r["split"] == "tune" for r in recs)
    assert abs(tune - (len(recs) - tune)) <= 1
    rule = expected_split(name, [r["question"] for r in recs])
    assert all(r["split"] == rule[r["question"]] for r in recs)
    assert all(r["source"] == f"{name}.md" for r in recs)
