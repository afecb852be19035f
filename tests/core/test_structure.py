"""Markdown structure: exact block spans, heading tree and path, title, sentences."""

from __future__ import annotations

from hypothesis import given

from inspector.core.documents.document import from_text
from inspector.core.text.structure import (
    paragraph_spans,
    parse_markdown,
    sentence_spans,
    structure_of,
)
from tests.core.strategies_for_tests import any_text

SRC = """---
title: "Employee handbook"
---
# Handbook

Intro text.

## Parental leave

### France

Sixteen weeks.

### Germany

| Country | Months |
|---|---|
| Germany | 14 |

- one
  - nested
- two

```python
print("x")
```

> quote

<div>raw</div>
"""


def test_blocks_have_exact_spans():
    s = parse_markdown(SRC, "h.md")
    kinds = [b.kind for b in s.blocks]
    assert kinds == ["front_matter", "heading", "paragraph", "heading", "heading", "paragraph", "heading",
                     "table", "list", "code", "blockquote", "html"]
    table = s.blocks[7]
    assert SRC[table.start:table.end] == "| Country | Months |\n|---|---|\n| Germany | 14 |"
    assert [SRC[c.start:c.end] for c in table.children] == ["| Country | Months |", "| Germany | 14 |"]
    lst = s.blocks[8]
    assert [SRC[c.start:c.end] for c in lst.children] == ["- one\n  - nested", "- two"]
    assert s.blocks[9].info == "python"


def test_heading_tree_path_and_title():
    s = parse_markdown(SRC, "h.md")
    assert s.title == "Employee handbook"
    at = SRC.index("| Germany | 14 |")
    assert s.heading_path_at(at) == ("Handbook", "Parental leave", "Germany")
    assert s.heading_path_at(SRC.index("Sixteen")) == ("Handbook", "Parental leave", "France")
    assert s.heading_path_at(0) == ()
    france = [h for h in s.headings if h.title == "France"][0]
    assert SRC[france.section_end:].startswith("### Germany")


def test_title_falls_back_to_h1_then_file_name():
    assert structure_of(from_text("# Top\n\ntext", "x.md")).title == "Top"
    assert structure_of(from_text("## Not h1\n\ntext", "x.md")).title == "x.md"
    assert structure_of(from_text("plain", "notes.txt")).title == "notes.txt"


def test_sentences_and_paragraphs():
    text = "Dr. Smith arrived. He said e.g. hello! Was it 3.5 km? Yes.\n\nNew para."
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Dr. Smith arrived.", "He said e.g. hello!", "Was it 3.5 km?", "Yes.", "New para."]
    assert [text[a:b] for a, b in paragraph_spans(text)] == [text.split("\n\n", maxsplit=1)[0], "New para."]


@given(any_text)
def test_structure_spans_valid_on_random_markdown(text):
    doc = from_text(text)
    s = structure_of(doc)
    for b in s.blocks:
        assert 0 <= b.start <= b.end <= len(doc.text)
        for c in b.children:
            assert b.start <= c.start <= c.end <= b.end
    for a, b in sentence_spans(doc.text, markdown=True):
        assert 0 <= a < b <= len(doc.text) and not doc.text[a:b].isspace()
