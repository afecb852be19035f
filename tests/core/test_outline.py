"""The outline read off a Markdown text's lines (`inspector.core.text.outline`, issue 31) is the
reference parse's wherever the scanner answers: the same top-level headings (level, title,
span), tables' spans and front-matter title as markdown-it-py's; and the chunkers that use it
give the same chunks as with the parsed structure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text
from inspector.core.text import outline, structure, structurecache
from inspector.core.text.markdown_blocks import reference_parser
from inspector.core.text.structure import outline_of, outline_of_structure, structure_of
from inspector.core.workbench.chunk_store import ChunkStore
from tests.core.strategies_for_tests import any_text
from tests.core.test_structure import _LINES
from tests.core.test_structure_fast import _TRICKY, _after_table, _odd

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
KEPT = structurecache.FILES

_REFERENCE = reference_parser().disable("inline")

# Lines of lists, quotes, tables, HTML blocks and paragraphs in the arrangements the scanner reads
# (and those it must leave to the parser): lazy lines, indented headings, tables in and after
# paragraphs, rows that end a table, comments that hide a heading.
_SCANNED = st.sampled_from([
    "", "", "text", "Text more", "# H", "## H2 ##", "   ### h3", "- a", "* b", "+ c", "  - sub", "   - sub", "  more",
    "1. one", "2. two", "1) x", "10. y", "-     code", "| a | b |", "|---|---|", "| 1 | 2 |", "a | b", "--- | ---",
    "| - | - |", "- a | b", "# a | b", "---", "===", "==", "--", "-", "***", "* * *", "- - -", "___", "```", "```py",
    "~~~", "``` a`b", "    code", "  ```", "> q", "> # quoted", ">  - item", "[x]: /u", "[x] y", "  # in",
    "Setext", "<b>x</b> y", "<unk> z", "<span>", "<div>", "</div>", "<!-- c -->", "<!--", "-->", "x # y #", "#", "# #",
    "Text\xa0", "\xa0", "| a |\xa0", "\ttab", "-\tx", "2008 net | 7.0", "\t- x", "  \t# h", "\t| a |", "\t```",
])
# Lists, lazy lines and what may follow them, densely: where two readings of a line part.
_LISTED = st.sampled_from([
    "", "", "- a", "* b", "+ c", "1. d", "2) e", "3. f", "lazy", "  cont", "   cont", "    deep", "- a | b", "* a | b",
    "1. a | b", "--|--", "--- | ---", "| x |", "x | y", "# h", "  # h", "---", "===", "***", "> q", "```", "~~~",
    "    code", "\t- t", "<div>", "<!-- c -->", "[r]: /u",
])
_scanned_markdown = st.builds("\n".join, st.lists(_SCANNED, max_size=25)) | st.builds(
    "\n".join, st.lists(_LISTED, max_size=25))
_mixed_markdown = st.builds("\n".join, st.lists(_LINES | _TRICKY | _SCANNED | _odd, max_size=30))


def _reference(text: str):
    blocks, headings, fm_title = structure._markdown_parts(text, _REFERENCE)
    return headings, [(b.start, b.end) for b in blocks if b.kind == "table"], fm_title


def _same_as_reference(text: str) -> bool:
    """Whether the scanner answered; where it did, its answer is the reference's."""
    got = outline.outline(text)
    if got is None:
        return False
    assert got == _reference(text), text
    return True


# Derandomized, as the compiled parser's comparison (test_structure_fast.py): the scanner leaves to
# the parser whatever it does not read, and searches of 10,000s of documents run off the suite
# (benchmarks/README.md, issue 31) looked for more.
@settings(max_examples=400, deadline=None, derandomize=True)
@given(_scanned_markdown | _mixed_markdown | _after_table | any_text)
def test_the_outline_is_the_reference_parse_wherever_it_answers(text):
    _same_as_reference(text)
    _same_as_reference(text * 2)  # each line also after the text's last (a list's next marker, say)


def test_the_outline_answers_for_the_corpora_and_is_their_parse():
    files = sorted((ROOT / "benchmarks" / "data").rglob("*.md")) + sorted((ROOT / "sample_docs").rglob("*.md"))
    assert len(files) >= 10
    answered = [f.name for f in files if _same_as_reference(f.read_text(encoding="utf-8"))]
    # The sample handbook, Chroma's five corpora, the held-out handbooks and docling's conversions
    # with their HTML comments: a fast path for the documents users open, not for a few.
    for name in ("handbook.md", "finance.md", "pubmed.md", "wikitexts.md", "chatlogs.md", "state_of_the_union.md",
                 "turing_way_version_control.md", "civicactions_benefits_expenses.md", "normal_4pages.md",
                 "redp5110_sampled.md", "tts_leave.md", "gds_way_operations.md"):
        assert name in answered, name
    assert len(answered) >= len(files) * 0.9


@pytest.mark.parametrize(("text", "expected"), [
    ("Title\n===\n\ntext", [(1, "Title", 0, 9)]),
    ("two\nlines\n---\n", [(2, "two\nlines", 0, 13)]),
    ("- item\n---\n", []),  # a rule after the list, not an underline
    ("- item\n  # inside\n\n# Out", [(1, "Out", 19, 24)]),
    ("text\n# H #  ", [(1, "H", 5, 10)]),
    ("```\n# not\n```\n# yes", [(1, "yes", 14, 19)]),
    ("<!-- image\n# not\n-->\n# yes", [(1, "yes", 21, 26)]),
    ("<div>\n# not yet\n\n# yes", [(1, "yes", 17, 22)]),
    ("> # quoted\n\n## H", [(2, "H", 12, 16)]),
    ("    # code\n# H", [(1, "H", 11, 14)]),
    ("\t# code\n  \t# code\n# H", [(1, "H", 18, 21)]),  # a tab: four columns or more
    ("text\n\t# lazy\n# H", [(1, "H", 13, 16)]),
])
def test_headings_hidden_and_made(text, expected):
    assert outline.outline(text)[0] == expected
    assert _same_as_reference(text)


@pytest.mark.parametrize(("text", "tables"), [
    ("lead\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter", [(5, 34)]),  # a table interrupts a paragraph
    ("| a | b |\n|---|\n", []),  # columns differ: no table
    ("| a |\n|---|\n| 1 |\n- item", [(0, 17)]),  # a list item ends it
    ("| a |\n|---|\n2008 | 7.0\n", [(0, 22)]),  # a row without a pipe in front
    ("- a\n\n| a |\n|---|", [(5, 16)]),
    ("* b\n- a | b\n--- | ---", [(4, 21)]),  # another list's marker: a table first
    ("* b\n* a | b\n--- | ---", []),  # the same list's next item
    ("text\n2) a | b\n--|--", [(5, 19)]),  # a table interrupts, though "2)" would not (found by a search)
])
def test_tables(text, tables):
    assert outline.outline(text)[1] == tables
    assert _same_as_reference(text)


@pytest.mark.parametrize("text", [
    "- item\nlazy\n---",  # a setext underline of the list's paragraph or of one after it
    "- item\nlazy\n  # where",  # a heading in the item, or after a paragraph after the list
    "- a\n| a |\n|---|",  # a table going on lazily with the item's paragraph
    "[a]: /url\ntext\n---",  # a link reference definition, then a setext heading
    "> q\nlazy",  # a quote going on lazily
    "-\n\n  x",  # an empty item
    "-\tafter the marker",  # tab stops inside an item
    "---\n- not plain front matter\n---\n",
])
def test_what_it_leaves_to_the_parser(text):
    assert outline.outline(text) is None


def test_its_constants_are_markdown_it_pys():
    from markdown_it.common.html_blocks import block_names
    from markdown_it.common.html_re import HTML_OPEN_CLOSE_TAG_STR
    from markdown_it.common.utils import MD_TRIM_CHARS
    from markdown_it.rules_block.html_block import HTML_SEQUENCES

    assert set(outline.MD_TRIM) == set(MD_TRIM_CHARS)
    assert all(c.isspace() for c in outline.MD_TRIM)  # so a title trimmed by both is `str.strip`'s
    assert block_names == outline.BLOCK_NAMES
    assert outline.OPEN_CLOSE_TAG == HTML_OPEN_CLOSE_TAG_STR
    assert [(a.pattern, a.flags, b.pattern, c) for a, b, c in outline.HTML_SEQUENCES] == \
        [(a.pattern, a.flags, b.pattern, c) for a, b, c in HTML_SEQUENCES]


def _no_parse(monkeypatch) -> None:
    def refuse(*_a, **_k):
        raise AssertionError("parsed")

    monkeypatch.setattr(structure, "_markdown_parts", refuse)
    monkeypatch.setattr(structure, "_kept_markdown", refuse)


def test_outline_of_scans_without_a_parse_and_equals_the_structures(monkeypatch):
    text = HANDBOOK.read_text(encoding="utf-8")
    full = outline_of_structure(structure.parse_markdown(text, "h.md"))
    structure._OUTLINES.clear()
    structure._STRUCTURES.clear()
    with monkeypatch.context() as m:
        _no_parse(m)
        assert outline_of(from_text(text, "h.md")) == full
    assert full.headings and full.tables and full.title == "Employee Handbook"


def test_outline_of_parses_what_the_scanner_leaves(monkeypatch):
    text = "# A\n\n- item\nlazy\n---\n\n| a |\n|---|\n"
    assert outline.outline(text) is None
    structure._OUTLINES.clear()
    doc = from_text(text, "x.md")
    assert outline_of(doc) == outline_of_structure(structure_of(doc))


def test_outline_of_reads_a_kept_structure_instead_of_scanning(kept, monkeypatch):
    text = HANDBOOK.read_text(encoding="utf-8")
    parsed = structure_of(from_text(text, "h.md"))
    assert list(kept.glob(f"*{KEPT.suffix}"))
    structure._STRUCTURES.clear()
    structure._OUTLINES.clear()
    with monkeypatch.context() as m:
        m.setattr(outline, "outline", lambda _text: pytest.fail("scanned"))
        assert outline_of(from_text(text, "h.md")) == outline_of_structure(parsed)


def test_a_plain_text_document_has_no_outline_to_read():
    doc = from_text("# not a heading in plain text\n\n| a |\n|---|", "notes.txt")
    assert doc.kind != "markdown"
    assert outline_of(doc) == outline_of_structure(structure_of(doc))


def _chunks_both_ways(text: str, name: str, params: dict) -> None:
    strategy = get_strategy(name)
    structure._OUTLINES.clear()
    structure._STRUCTURES.clear()
    scanned = strategy(from_text(text, "d.md"), params)
    structure._OUTLINES.clear()
    structure._STRUCTURES.clear()
    structure_of(from_text(text, "d.md"))  # parsed first: the outline is the structure's
    assert strategy(from_text(text, "d.md"), params) == scanned


@pytest.mark.parametrize("name", ["recursive", "fixed_tokens", "fixed_chars", "paragraph", "sentences"])
def test_chunks_from_the_outline_equal_chunks_from_the_structure(name):
    text = HANDBOOK.read_text(encoding="utf-8")
    assert outline.outline(text) is not None
    params = get_strategy(name).defaults()
    _chunks_both_ways(text, name, params)
    chunks = get_strategy(name)(from_text(text, "d.md"), params)
    assert any(c.heading_path for c in chunks) and any("split_table" in c.flags for c in chunks) \
        or name in ("paragraph", "sentences")


@settings(max_examples=40, deadline=None, derandomize=True)
@given(text=_scanned_markdown.filter(lambda t: re.search(r"\S", t) is not None))
def test_chunks_from_the_outline_equal_chunks_from_the_structure_on_generated_text(text):
    _chunks_both_ways(text * 3, "recursive", {"size": 16, "overlap": 4})


@pytest.mark.parametrize("strategy", ["recursive", "fixed_tokens"])
def test_the_windows_chunk_stage_takes_its_headings_from_the_outline(monkeypatch, strategy):
    """The window's first stage (`helper_jobs.chunk_stage`, and `ChunkStore`'s in-process twin)
    shows the headings beside the chunks: for a strategy that reads no blocks, no parse for them."""
    from inspector.core.chunking import helper_jobs

    text = HANDBOOK.read_text(encoding="utf-8")
    doc = from_text(text, "h.md")
    expected = tuple((h.start, h.end, h.level) for h in structure.parse_markdown(text, "h.md").headings)
    structure._OUTLINES.clear()
    structure._STRUCTURES.clear()
    with monkeypatch.context() as m:
        _no_parse(m)
        stage = helper_jobs.chunk_stage(helper_jobs.doc_key(doc), doc, strategy, {}, None, True)
        structure._OUTLINES.clear()
        first = next(iter(ChunkStore().stages(doc, strategy, {}, with_prefix=True, cancelled=lambda: False,
                                              shape=lambda s, _f: s)))
    assert stage.headings == first.headings == expected and len(expected) > 100


def _heading_tree_by_hand(raw: list[tuple[int, str, int, int]], text_len: int) -> tuple[structure.Heading, ...]:
    """The reference: each heading's path from the open headings above it, its section's end the
    next heading of its level or above (a search over the later ones), made with `Heading(...)`."""
    out = []
    for k, (level, title, a, b) in enumerate(raw):
        path: list[str] = [title]
        need = level
        for lv, t, _a, _b in reversed(raw[:k]):
            if lv < need:
                path.insert(0, t)
                need = lv
        end = next((a2 for lv, _t, a2, _b in raw[k + 1:] if lv <= level), text_len)
        out.append(structure.Heading(level, title, a, b, end, tuple(path)))
    return tuple(out)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(levels=st.lists(st.integers(1, 6), max_size=30))
def test_the_heading_tree_is_the_reference(levels):
    raw = [(lv, f"h{k}", 10 * k, 10 * k + 5) for k, lv in enumerate(levels)]
    made = structure._heading_tree(raw, 10 * len(raw) + 3)
    assert made == _heading_tree_by_hand(raw, 10 * len(raw) + 3)
    assert all(type(h) is structure.Heading for h in made)


def test_an_outline_pickles_to_the_same_outline():
    """The helper process sends the outline with the window's first stage (`Outline.__reduce__`:
    its raw headings, the tree made again on loading)."""
    import pickle

    texts = [HANDBOOK.read_text(encoding="utf-8"), "no heading at all", "# One\n\n## Two\n\n# Three\ntext\n",
             *(p.read_text(encoding="utf-8") for p in sorted((ROOT / "benchmarks" / "data").rglob("*.md"))[:6])]
    for k, text in enumerate(texts):
        structure._OUTLINES.clear()
        made = outline_of(from_text(text, f"d{k}.md"))
        again = pickle.loads(pickle.dumps(made))
        assert again == made and again.heading_path_at(len(text) - 1) == made.heading_path_at(len(text) - 1)
        assert [h.section_end for h in again.headings] == [h.section_end for h in made.headings]
    assert len(outline_of(from_text(texts[0], "d0.md")).headings) > 100


def test_an_outline_remembered_is_answered_without_a_scan(monkeypatch):
    """`remember_outline` (the helper's outline, kept by the window's process): `outline_of`
    answers it, neither scanning nor parsing; one already there is kept."""
    text = HANDBOOK.read_text(encoding="utf-8")
    doc = from_text(text, "h.md")
    structure._OUTLINES.clear()
    made = outline_of(doc)
    structure._OUTLINES.clear()
    structure._STRUCTURES.clear()
    with monkeypatch.context() as m:
        _no_parse(m)
        m.setattr(outline, "outline", lambda _t: pytest.fail("scanned"))
        structure.remember_outline(doc, made)
        assert outline_of(doc) is made
        structure.remember_outline(doc, structure.Outline((), "other", (), ()))
        assert outline_of(doc) is made
