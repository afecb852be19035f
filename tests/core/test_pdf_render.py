"""The PDF page view's core (issue 30): a page drawn to pixels, and where a chunk's text lies on it."""

from __future__ import annotations

import pytest

from inspector.core.documents.pdf_render import merge_line_boxes, render_pdf_page, text_boxes
from inspector.core.errors import InputError
from tests.pdf_fixture import grid, make_layout_pdf, text_lines

BODY = ["Employees in Germany get fourteen weeks of parental leave, paid in full by",
        "the company, and may take it in up to three parts within the first three years."]


def _pdf(tmp_path):
    page = ([("text", 72, 60, 18, "B", "Leave handbook")] + text_lines(72, 100, BODY)
            + grid(72, 300, [150, 200], [["Item", "Limit"], ["Hotel", "150 EUR per night"]]))
    path = tmp_path / "leave.pdf"
    path.write_bytes(make_layout_pdf([page]))
    return path


def test_a_chunks_words_are_found_line_by_line_where_the_page_draws_them(tmp_path):
    path = _pdf(tmp_path)
    # Markdown syntax and case do not matter; each line of matched words is one box.
    boxes = text_boxes(path, 1, "| item | LIMIT |\n|---|---|\n| Hotel | 150 EUR per night |")
    assert len(boxes) == 2
    for x0, top, x1, bottom in boxes:
        assert 72 / 612 - 0.01 < x0 < x1 < 1 and 300 / 792 < top < bottom < 340 / 792
    # Glyph boxes: a little below where each line is set.
    body = text_boxes(path, 1, "# Leave handbook\n\n" + " ".join(BODY))
    assert [round(b[1] * 792) for b in body] == pytest.approx([60, 100, 112], abs=6)
    assert text_boxes(path, 1, "nothing of the sort appears here") == []
    assert text_boxes(path, 1, "   ") == []


def test_boxes_on_one_line_merge_and_the_next_line_starts_a_new_one():
    words = [(0.1, 0.1, 0.2, 0.12), (0.22, 0.1, 0.3, 0.12), (0.1, 0.13, 0.25, 0.15)]
    assert merge_line_boxes(words) == [(0.1, 0.1, 0.3, 0.12), (0.1, 0.13, 0.25, 0.15)]


def test_a_file_that_is_not_a_pdf_names_itself(tmp_path):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"not a pdf")
    with pytest.raises(InputError, match="broken.pdf"):
        text_boxes(bad, 1, "some words")
    with pytest.raises(InputError, match="broken.pdf"):
        render_pdf_page(bad, 1)
