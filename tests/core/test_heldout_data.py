"""The held-out evaluation set (benchmarks/data/heldout, issue 29): real public documents with
paraphrased questions, kept to JUDGE the app's advice rules after they are chosen, never to tune
them. These are its data checks only, and the only place the project's tests read it.

Model-free and fast, over every folder there (so a document added later is checked the same way):
the folder holds the document, its gold file, the source's licence and a provenance note; the
document is 20-45 KB; the gold file loads with the project's loader without a warning and follows
the paraphrase rules shared with the public set (tests/core/gold_checks_for_tests.py: answers 1-10
words found once, never inside their question, the seeded split, the recorded word overlap, the
`where` label); at least a third of the answers sit in a list or a table; and each document, like the
whole set, stays a paraphrase set (mean word overlap below 0.5)."""

from __future__ import annotations

import pytest

from tests.core.gold_checks_for_tests import ROOT, check_folder, check_paraphrase_gold, records

HELDOUT = ROOT / "benchmarks" / "data" / "heldout"
NAMES = sorted(p.name for p in HELDOUT.iterdir() if p.is_dir())


def gold_path(name: str):
    return HELDOUT / name / f"{name}.gold.jsonl"


def test_the_set_has_documents_and_its_mean_overlap_is_below_half():
    assert len(NAMES) >= 2, NAMES
    recs = [r for name in NAMES for r in records(gold_path(name))]
    mean = sum(r["overlap"] for r in recs) / len(recs)
    assert mean < 0.5, mean


@pytest.mark.parametrize("name", NAMES)
def test_folder_has_document_gold_licence_and_provenance(name):
    check_folder(HELDOUT / name, name, 20, 45)


@pytest.mark.parametrize("name", NAMES)
def test_gold_follows_the_paraphrase_rules_and_stays_a_paraphrase_set(name):
    recs = check_paraphrase_gold(name, HELDOUT / name / f"{name}.md", gold_path(name))
    in_lists_or_tables = sum(r["where"] in ("list", "table") for r in recs)
    assert 3 * in_lists_or_tables >= len(recs), f"{name}: {in_lists_or_tables}/{len(recs)} in lists or tables"
    mean = sum(r["overlap"] for r in recs) / len(recs)
    assert mean < 0.5, f"{name}: mean overlap {mean:.3f}"
