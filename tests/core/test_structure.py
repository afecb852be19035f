"""Markdown structure: exact block spans, heading tree and path, title, sentences."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.documents.document import from_text
from inspector.core.text.markdown_blocks import reference_parser
from inspector.core.text.structure import (
    Heading,
    _heading_tree,
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


# -- our parse (markdown-it-py without its inline rule) against markdown-it-py's full parse (issue 31)

_LINES = st.sampled_from([
    "# Title *em* and `code` ##", "## [link](http://x) \\# not", "Setext *title*", "===", "---", "-",
    "   ### indented heading", "    code line", "```", "~~~ py", "> # quoted heading", "- # item heading",
    "1. item", "  - nested", "| a | b |", "|---|:-:|", "| *c* | `d|e` |", "<div>", "</div>", "<!-- c -->",
    "text with **strong** and _em_", "[ref]: http://example.com", "***", "#hashtag", "#\tTab", "####### seven",
    "", "", " ", "\t", "---\ntitle: 'Fm'\n---", "line\\", "Heading #", "a  \nb", "\u00a0", "é # x",
])
_markdown = st.builds("\n".join, st.lists(_LINES | st.text(alphabet="#*_`-=|>[]() \nax1\\<", max_size=12),
                                          max_size=30))


def _same_as_full_parse(text: str) -> None:
    ours = parse_markdown(text, "n")
    full = parse_markdown(text, "n", parser=reference_parser())
    assert ours == full


@settings(max_examples=300, deadline=None)
@given(_markdown | any_text)
def test_structure_equals_full_markdown_it_parse(text):
    _same_as_full_parse(text)


def test_structure_equals_full_parse_on_corpora():
    root = Path(__file__).resolve().parents[2]
    files = sorted((root / "benchmarks" / "data").rglob("*.md")) + sorted((root / "sample_docs").rglob("*.md"))
    assert len(files) >= 10
    for f in files:
        _same_as_full_parse(f.read_text(encoding="utf-8"))


def _heading_tree_by_search(raw, text_len):
    """The tree as it was built before issue 31: each section's end searched among later headings."""
    out, stack = [], []
    for idx, (level, title, a, b) in enumerate(raw):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        section_end = next((a2 for level2, _t, a2, _b in raw[idx + 1:] if level2 <= level), text_len)
        out.append(Heading(level, title, a, b, section_end, tuple(t for _l, t in stack)))
    return tuple(out)


@given(st.lists(st.integers(1, 6), max_size=60))
def test_heading_tree_in_one_pass_equals_searching_each_section_end(levels):
    raw = [(lvl, f"h{i}", 10 * i, 10 * i + 5) for i, lvl in enumerate(levels)]
    assert _heading_tree(raw, 10 * len(levels) + 3) == _heading_tree_by_search(raw, 10 * len(levels) + 3)
