"""The public set's paraphrased questions (benchmarks/data/public/*/<name>.paraphrase.gold.jsonl,
issue 29): questions written to avoid their answer's wording, so a retriever that only matches words
is tested on what users ask. Model-free: every file loads with the project's loader, every answer is
a short substring found once in its document, the split follows the public set's rule, the recorded
word overlap is what `benchmarks/overlap.py` computes, and the set as a whole stays a paraphrase set
(mean overlap below 0.5, where the original questions sit at 0.70-0.77)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.core.documents.document import load_document
from inspector.core.evaluation.gold import load_gold, normalize, normalized_text

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = ROOT / "benchmarks" / "data" / "public"
NAMES = sorted(p.name for p in PUBLIC.iterdir() if p.is_dir())

_spec = importlib.util.spec_from_file_location("bench_overlap", ROOT / "benchmarks" / "overlap.py")
assert _spec is not None and _spec.loader is not None
overlap_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(overlap_mod)


def records(name: str) -> list[dict]:
    path = PUBLIC / name / f"{name}.paraphrase.gold.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_at_least_100_paraphrased_questions_and_mean_overlap_below_half():
    recs = [r for name in NAMES for r in records(name)]
    assert len(recs) >= 100
    mean = sum(r["overlap"] for r in recs) / len(recs)
    assert mean < 0.5, mean


@pytest.mark.parametrize("name", NAMES)
def test_paraphrase_gold_loads_answers_once_split_by_rule_overlap_recorded(name):
    doc = load_document(PUBLIC / name / f"{name}.md")
    gold = load_gold(PUBLIC / name / f"{name}.paraphrase.gold.jsonl", [doc])
    assert gold.warnings == (), [w.one_line() for w in gold.warnings]
    assert len(gold) >= 20
    norm = normalized_text(doc)
    recs = records(name)
    rule = overlap_mod.split_of(name, [r["question"] for r in recs])
    for r in recs:
        answer = normalize(r["answer"])
        assert 1 <= len(answer.split()) <= 10, r["answer"]
        assert len(norm.find_all(answer)) == 1, f"{r['answer']!r} not once in {name}.md"
        assert answer not in normalize(r["question"])
        assert r["split"] == rule[r["question"]]
        assert r["source"] == f"{name}.md"
        assert r["overlap"] == round(overlap_mod.overlap(r["question"], doc.text, r["answer"]), 3)
    tune = sum(r["split"] == "tune" for r in recs)
    assert abs(2 * tune - len(recs)) <= 1


def test_overlap_counts_content_words_near_the_answer():
    text = "x " * 400 + "Employees get 15 days of annual leave each year." + " y" * 400
    # All content words near the answer: 1.0; none: 0.0; stop words are not counted.
    assert overlap_mod.overlap("How many days of annual leave?", text, "15 days") == 1.0
    assert overlap_mod.overlap("What is the vacation allowance?", text, "15 days") == 0.0
    assert overlap_mod.overlap("annual zebra", text, "15 days") == 0.5
    assert overlap_mod.overlap("annual", text, "not there") is None
    # Beyond the window a word does not count.
    far = "leave " + "z " * 400 + "the answer"
    assert overlap_mod.overlap("leave", far, "the answer") == 0.0


@given(st.text(alphabet="abc XYZ.,", max_size=60))
def test_overlap_is_a_share_or_none(question):
    value = overlap_mod.overlap(question, "abc xyz cab. " * 5, "xyz")
    assert value is None or 0.0 <= value <= 1.0
