"""The failures the product exists to show, on the bundled handbook."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_document
from inspector.core.text.structure import structure_of

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"


@pytest.fixture(scope="module")
def handbook():
    return load_document(HANDBOOK)


def _holding(doc, chunks, needle):
    return [c for c in chunks if needle in doc.text[c.start:c.end]]


def test_handbook_is_big_enough_and_has_the_traps(handbook):
    assert HANDBOOK.stat().st_size >= 80_000
    assert handbook.text.count("14 months") == 1
    assert handbook.text.index("14 months") - handbook.text.index("### Germany") >= 500


def test_500_char_windows_separate_germany_heading_from_14_months(handbook):
    chunks = chunk_document(handbook, "fixed_chars", {"size": 500, "overlap": 0})
    holding = _holding(handbook, chunks, "14 months")
    assert holding and all("### Germany" not in handbook.text[c.start:c.end] for c in holding)


def test_markdown_keeps_germany_heading_and_fact_together(handbook):
    chunks = chunk_document(handbook, "markdown", {})
    (c,) = _holding(handbook, chunks, "14 months")
    assert "### Germany" in handbook.text[c.start:c.end]
    assert "France" not in c.heading_path and c.heading_path[-1] == "Germany"
    assert c.prefix.endswith("Parental leave > Germany")
    assert "no_heading" not in c.flags


def test_markdown_keeps_fee_table_with_its_caveat(handbook):
    chunks = chunk_document(handbook, "markdown", {})
    caveat = handbook.text.index("within 10 days")
    (c,) = [c for c in chunks if c.start <= caveat < c.end]
    assert "| Plus" in handbook.text[c.start:c.end] or "Plus |" in handbook.text[c.start:c.end]


def test_boundary_split_fact_is_split_by_windows_but_not_by_markdown(handbook):
    windows = chunk_document(handbook, "fixed_chars", {"size": 500, "overlap": 0})
    assert not _holding(handbook, windows, "every 36 months")
    assert _holding(handbook, chunk_document(handbook, "markdown", {}), "every 36 months")


def test_markdown_splits_long_tables_between_rows_with_header_in_prefix(handbook):
    chunks = chunk_document(handbook, "markdown", {"size": 128, "hard_cap": 256})
    split = [c for c in chunks if "split_table" in c.flags]
    assert split, "the long per-diem table should be split at this size"
    tables = [b for b in structure_of(handbook).blocks if b.kind == "table"]
    continued = 0
    for c in split:
        text = handbook.text[c.start:c.end]
        # A piece that ends inside a table ends on a row boundary...
        if any(t.start < c.end < t.end for t in tables):
            assert text.endswith("|")
        # ...and a piece without the header row carries it in its context prefix.
        if "|---" not in text:
            continued += 1
            header = c.prefix.split("\n", 1)[1]
            assert header.startswith("| ") and "|---" in header
            assert text.lstrip().startswith("|")
    assert continued >= 2


def test_every_markdown_chunk_has_a_prefix_with_the_title(handbook):
    for c in chunk_document(handbook, "markdown", {}):
        assert c.prefix.startswith("Employee Handbook")
