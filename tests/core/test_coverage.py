"""Gold coverage: sections of a document with the gold questions that ask about each."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from inspector.core.documents.document import Document, load_document
from inspector.core.evaluation.coverage import STRETCHES, coverage, question_positions, sections_of
from inspector.core.evaluation.gold import GoldQuestion, load_gold

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"

TEXT = """# Guide

Intro text about the guide.

## Travel

### Trains

Take the train for trips under 600 km.

### Flights

Economy class for flights under six hours.

## Leave

Twenty-five days of leave a year.
"""


def _doc() -> Document:
    return Document(text=TEXT, name="guide.md")


def test_sections_and_what_counts_as_own_text():
    secs = sections_of(_doc())
    assert [(s.title, s.level, s.has_text) for s in secs] == [
        ("Guide", 1, True), ("Travel", 2, False), ("Trains", 3, True), ("Flights", 3, True), ("Leave", 2, True)]
    travel = secs[1]
    assert travel.section_end == secs[4].start and travel.end == secs[2].start
    assert secs[-1].end == len(TEXT)


def test_counts_own_text_and_totals_with_subsections():
    doc = _doc()
    t = TEXT.index("600 km")
    qs = [GoldQuestion("Train distance?", answers=("600 km",), source="guide.md"),
          GoldQuestion("Train rule?", references=((t - 10, t + 6),), source="guide.md"),
          GoldQuestion("Leave?", answers=("Twenty-five days",)),
          GoldQuestion("Elsewhere?", answers=("600 km",), source="other.md"),
          GoldQuestion("Stale?", answers=("no such text",), source="guide.md")]
    cov = coverage(doc, qs)
    by = {s.title: s for s in cov.sections}
    assert (by["Trains"].count, by["Trains"].questions) == (2, (0, 1))
    assert (by["Leave"].count, by["Leave"].total) == (1, 1)
    assert (by["Travel"].count, by["Travel"].total) == (0, 2)
    assert by["Guide"].total == 3 and by["Guide"].count == 0
    assert [s.title for s in cov.uncovered] == ["Guide", "Flights"]  # Travel has no text of its own
    assert (cov.placed, cov.unplaced) == (3, 1)
    assert cov.section_at(t).title == "Trains" and cov.section_at(0).title == "Guide"


def test_an_answer_found_twice_counts_in_both_sections():
    text = "# A\n\nThe code is 1234.\n\n# B\n\nAgain the code is 1234.\n"
    doc = Document(text=text, name="x.md")
    cov = coverage(doc, [GoldQuestion("Code?", answers=("code is 1234",))])
    assert [s.count for s in cov.sections] == [1, 1]
    assert question_positions(doc, GoldQuestion("Code?", answers=("code is 1234",))) == [
        text.index("code is 1234"), text.rindex("code is 1234")]


def test_text_without_headings_is_cut_into_stretches():
    paras = [f"Paragraph number {i} talks about topic {i} at some length." for i in range(40)]
    text = "\n\n".join(paras) + "\n"
    doc = Document(text=text, name="plain.txt", kind="text")
    secs = sections_of(doc)
    assert len(secs) == STRETCHES
    starts = {text.index(p) for p in paras}
    assert all(s.start in starts for s in secs)
    assert secs[0].start == 0 and secs[-1].end == len(text)
    assert all(a.end == b.start for a, b in itertools.pairwise(secs))
    assert secs[0].title.startswith("Paragraph number 0")
    q = GoldQuestion("Topic 39?", answers=("topic 39",))
    cov = coverage(doc, [q])
    assert [s.count for s in cov.sections] == [0] * (STRETCHES - 1) + [1]
    assert sections_of(Document(text="", name="e.txt", kind="text")) == ()


def test_handbook_with_its_gold_set():
    doc = load_document(HANDBOOK)
    gold = load_gold(GOLD, [doc])
    cov = coverage(doc, gold.questions)
    assert cov.placed == len(gold.questions) and cov.unplaced == 0
    top = cov.sections[0]
    assert top.title == "Employee Handbook" and top.total == len(gold.questions)
    assert sum(s.count for s in cov.sections) >= len(gold.questions)
    assert all(s.total >= s.count for s in cov.sections)
    germany = next(s for s in cov.sections if s.path[-2:] == ("Parental leave", "Germany"))
    assert germany.count >= 1 and not germany.uncovered
    assert any(s.title == "What we do" and s.uncovered for s in cov.sections)
    assert not any(s.uncovered and not s.has_text for s in cov.sections)


@pytest.mark.parametrize("source", [None, "guide.md"])
def test_positions_prefer_references(source):
    doc = _doc()
    q = GoldQuestion("Q?", answers=("600 km",), references=((5, 9),), source=source)
    assert question_positions(doc, q) == [5]
