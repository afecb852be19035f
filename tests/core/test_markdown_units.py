"""The markdown strategy remembers where each block may be split (its sentences, rows, items or
lines) per document: a slider drag finds them made. The chunks are the same as with nothing
remembered, whatever sizes came before."""

from __future__ import annotations

from pathlib import Path

from inspector.core.chunking import markdown as markdown_mod
from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text

ROOT = Path(__file__).resolve().parents[2]


def _fresh(doc, params):
    markdown_mod._UNITS.clear()
    return get_strategy("markdown")(doc, params)


def test_a_drag_over_remembered_units_gives_the_chunks_of_a_fresh_start():
    text = (ROOT / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    # Long paragraphs too (the handbook's are short): Chroma's state of the union address.
    text += "\n\n" + (ROOT / "benchmarks" / "data" / "chroma" / "corpora" / "state_of_the_union.md").read_text(
        encoding="utf-8")[:20_000]
    doc = from_text(text, "handbook.md")
    md = get_strategy("markdown")
    markdown_mod._UNITS.clear()
    for size in (64, 200, 96, 512, 40, 128):
        params = {"size": size, "hard_cap": 2 * size}
        warm = md(doc, params)
        assert warm == _fresh(doc, params), size
    assert markdown_mod._UNITS  # something was remembered


def test_units_are_remembered_per_document_content():
    """Two documents with blocks at the same offsets split at their own sentences."""
    one = "The first sentence of the leave policy runs on for a while here. " * 6
    two = "Short one. " + "Another sentence that is long enough to matter for the budget. " * 5
    two = two.rstrip() + "x" * (len(one) - len(two)) + " "  # the same length: the same block offsets
    assert len(two) == len(one)
    a = from_text(f"# A\n\n{one}\n", "a.md")
    b = from_text(f"# A\n\n{two}\n", "b.md")
    md = get_strategy("markdown")
    markdown_mod._UNITS.clear()
    params = {"size": 16, "hard_cap": 32, "min_tokens": 0}
    got_a, got_b = md(a, params), md(b, params)
    assert got_a == _fresh(a, params) and got_b == _fresh(b, params)
    assert [a.text[c.start:c.end] for c in got_a] != [b.text[c.start:c.end] for c in got_b]
