"""Bring your own splitter: alignment of foreign pieces back onto the text, callables, LangChain
splitters, strategy files and entry points as strategies."""

from __future__ import annotations

import importlib.metadata
import itertools
import re
import textwrap
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking import external
from inspector.core.chunking.common import trim
from inspector.core.chunking.external import (
    ExternalStrategyError,
    align_chunks,
    langchain_strategy,
    last_alignment_report,
    load_entry_point_strategies,
    load_strategy_file,
    remove_external,
    strategy_from_callable,
)
from inspector.core.chunking.params import Param
from inspector.core.chunking.recursive import recursive_spans
from inspector.core.chunking.registry import get_strategy, strategies
from inspector.core.documents.document import from_text
from inspector.core.errors import InputError
from inspector.core.text.tokens import count_text
from tests.core.strategies_for_tests import any_text

# ----------------------------------------------------------------------------- generators

REPEATED = st.builds(lambda unit, k: unit * k,
                     st.sampled_from(["abc ", "a", "ab\n", "x y ", "Same line.\n\n", "aa a"]),
                     st.integers(1, 60))
TEXTS = any_text | REPEATED


def _squash(s: str) -> str:
    return re.sub(r"\s+", "", s)


@st.composite
def tiling(draw):
    """A text cut into consecutive pieces, each possibly stripped or whitespace-collapsed."""
    text = draw(TEXTS)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=30))) | {0, len(text)})
    spans = [trim(text, a, b) for a, b in itertools.pairwise(cuts)]
    spans = [s for s in spans if s[0] < s[1]]
    how = draw(st.sampled_from(["exact", "strip", "collapse"]))
    pieces = []
    for a, b in spans:
        raw = text[a:b] if how == "exact" else text[a:b] + draw(st.sampled_from(["", " ", "\n"]))
        pieces.append(raw.strip() if how == "strip" else " ".join(raw.split()) if how == "collapse" else raw)
    return text, spans, pieces


@st.composite
def overlapping(draw):
    """Pieces with non-decreasing starts and arbitrary ends (overlaps and gaps)."""
    text = draw(TEXTS)
    n = len(text)
    starts = sorted(draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=20))) if n else []
    spans = []
    for a in starts:
        b = draw(st.integers(a + 1, n))
        a, b = trim(text, a, b)
        if a < b:
            spans.append((a, b))
    spans.sort(key=lambda s: s[0])
    return text, spans


# ----------------------------------------------------------------------------- align_chunks


@settings(max_examples=150)
@given(tiling())
def test_tiling_pieces_land_on_their_own_spans(case):
    # Consecutive pieces are recovered exactly, even on heavy repetition ("abc abc abc").
    text, spans, pieces = case
    result = align_chunks(text, pieces)
    assert result.unaligned == ()
    assert list(result.spans) == spans
    assert result.indices == tuple(range(len(pieces)))


@settings(max_examples=150)
@given(overlapping())
def test_overlapping_pieces_all_align_in_order_with_equal_text(case):
    # With overlaps and gaps on repeated text the place can be ambiguous; the text never is.
    text, spans = case
    pieces = [text[a:b] for a, b in spans]
    result = align_chunks(text, pieces)
    assert result.unaligned == ()
    assert [_squash(text[a:b]) for a, b in result.spans] == [_squash(p) for p in pieces]
    starts = [a for a, _ in result.spans]
    assert starts == sorted(starts)


def test_repeated_text_is_never_placed_by_a_search_from_zero():
    text = "abc abc abc"
    assert align_chunks(text, ["abc", "abc", "abc"]).spans == ((0, 3), (4, 7), (8, 11))
    assert align_chunks("aaaa", ["aa", "aa"]).spans == ((0, 2), (2, 4))
    # Overlap: the second piece starts inside the first.
    assert align_chunks("one two three four", ["one two three", "three four"]).spans == ((0, 13), (8, 18))


def test_whitespace_changes_by_the_splitter_are_tolerated():
    text = "Title\n\nFirst   line\nsecond line.\n\n\nNext paragraph."
    result = align_chunks(text, ["Title", "First line  \nsecond line.", "Next paragraph."])
    assert [text[a:b] for a, b in result.spans] == [
        "Title", "First   line\nsecond line.", "Next paragraph."]


def test_unplaceable_pieces_are_reported_not_dropped():
    text = "alpha beta gamma. alpha beta gamma. delta."
    pieces = ["alpha beta gamma.", "not in the text", "   ", "delta.", "alpha beta gamma.",
              (0, 5), (5, 500), (True, 3), "x" * 100, (7, 7), (5, 6), 42]
    result = align_chunks(text, pieces)
    reasons = {u.index: u.reason for u in result.unaligned}
    assert result.indices == (0, 3, 5)
    assert set(reasons) == {1, 2, 4, 6, 7, 8, 9, 10, 11}
    assert "not found" in reasons[1] and "whitespace" in reasons[2]
    assert "ambiguous" in reasons[4]  # before the cursor and twice in the text
    assert "outside" in reasons[6] and "integers" in reasons[7] and "whitespace" in reasons[10]
    assert next(u for u in result.unaligned if u.index == 8).preview == "x" * 60


def test_parents_then_children_use_unique_text_before_the_cursor():
    text = "First part here. Second part here. Third part here."
    parent = text
    children = ["First part here.", "Second part here.", "Third part here."]
    result = align_chunks(text, [parent, *children])
    assert result.unaligned == ()
    assert result.spans == ((0, len(text)), (0, 16), (17, 34), (35, 51))


def test_spans_are_validated_and_kept():
    text = "  hello world  "
    result = align_chunks(text, [(0, 7), (8, 13)])
    assert result.spans == ((0, 7), (8, 13)) and result.unaligned == ()


def test_a_megabyte_with_five_thousand_pieces_aligns_fast():
    words = ["leave", "policy", "refund", "days", "the", "a", "Germany", "14"]
    text = " ".join(words[(i * 7 + i // 3) % len(words)] for i in range(170_000))[:1_000_000]
    step = len(text) // 5000
    spans = [trim(text, k * step, (k + 1) * step) for k in range(5000)]
    spans = [s for s in spans if s[0] < s[1]]
    pieces = [" ".join(text[a:b].split()) for a, b in spans]
    t0 = time.perf_counter()
    result = align_chunks(text, pieces)
    elapsed = time.perf_counter() - t0
    assert list(result.spans) == spans
    assert elapsed < 3.0, f"{elapsed:.2f} s"


# ----------------------------------------------------------------------------- LangChain


try:
    import langchain_text_splitters as splitters
except ImportError:  # an optional test dependency
    splitters = None
needs_langchain = pytest.mark.skipif(splitters is None, reason="langchain-text-splitters not installed")

PARAS = ["Same line here.", "Refunds are issued within 14 days.", "Leave is granted.\nA second line.",
         "ab ab ab."]
REPEATED_DOC = st.lists(st.sampled_from(PARAS), min_size=2, max_size=30).map("\n\n".join)


@needs_langchain
@settings(max_examples=80)
@given(text=REPEATED_DOC, size=st.integers(10, 200), data=st.data())
def test_langchain_recursive_chunks_align_exactly_on_repeated_paragraphs(text, size, data):
    overlap = data.draw(st.integers(1, size - 1))
    lc = splitters.RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap,
                                                  strip_whitespace=True)
    chunks = lc.split_text(text)
    result = align_chunks(text, chunks)
    assert result.unaligned == ()
    assert [text[a:b] for a, b in result.spans] == chunks


@needs_langchain
@settings(max_examples=60)
@given(text=REPEATED_DOC, size=st.integers(10, 200))
def test_langchain_without_overlap_lands_on_the_true_positions(text, size):
    # `recursive_spans` reproduces LangChain's chunks as true spans (test_recursive_langchain).
    seps = ["\n\n", "\n", " ", ""]
    chunks = splitters.RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=0).split_text(text)
    truth = recursive_spans(text, 0, len(text), lambda a, b: b - a, size, 0, [re.escape(s) for s in seps])
    assert list(align_chunks(text, chunks).spans) == truth


@pytest.fixture
def cleanup():
    names: list[str] = []
    yield names
    for name in names:
        remove_external(name)


@needs_langchain
def test_langchain_splitter_becomes_a_strategy(cleanup):
    doc = from_text("# Guide\n\nIntro text.\n\n## Leave\n\nLeave text here.\n\n## Refunds\n\nRefund text.\n",
                    "guide.md")
    splitter = splitters.MarkdownHeaderTextSplitter([("#", "h1"), ("##", "h2")])
    strat = langchain_strategy(splitter, name="test_lc_md")
    cleanup.append(strat.name)
    assert get_strategy("test_lc_md") is strat
    chunks = strat(doc)
    assert [c.text(doc) for c in chunks] == ["Intro text.", "Leave text here.", "Refund text."]
    assert [c.heading_path for c in chunks] == [("Guide",), ("Guide", "Leave"), ("Guide", "Refunds")]
    assert last_alignment_report("test_lc_md", doc.doc_id).ok


@needs_langchain
def test_ready_made_langchain_strategies(cleanup):
    made = external.register_langchain_strategies()
    cleanup.extend(s.name for s in made)
    assert {s.name for s in made} == {"lc_recursive", "lc_markdown_header"}
    doc = from_text("# T\n\n" + "\n\n".join(PARAS * 20), "t.md")
    chunks = get_strategy("lc_recursive")(doc, {"size": 120, "overlap": 40})
    expected = splitters.RecursiveCharacterTextSplitter(chunk_size=120, chunk_overlap=40).split_text(doc.text)
    assert [c.text(doc) for c in chunks] == expected
    with pytest.raises(ValueError, match="overlap"):
        get_strategy("lc_recursive").validate({"size": 100, "overlap": 100})


# ----------------------------------------------------------------------------- callables


def test_callable_strategy_builds_real_chunks_and_reports_leftovers(cleanup):
    doc = from_text("# Guide\n\n## Leave\n\nLeave is 14 weeks. Apply early.\n\n## Pay\n\nPaid monthly.\n",
                    "guide.md")

    def split(text: str, keep: int) -> list:
        pieces = [p for p in text.split("\n\n") if p.strip()]
        return pieces[:keep] + ["this text is not in the document"]

    strat = strategy_from_callable("test_split", split, (Param("keep", "pieces", 10, 1, 100),),
                                   "split on blank lines")
    cleanup.append("test_split")
    chunks = strat(doc, {"keep": 10})
    assert [c.text(doc) for c in chunks] == ["# Guide", "## Leave", "Leave is 14 weeks. Apply early.",
                                             "## Pay", "Paid monthly."]
    for c in chunks:
        assert c.token_count == count_text(c.text(doc)) and c.doc_id == "guide.md"
    assert chunks[2].heading_path == ("Guide", "Leave") and chunks[2].prefix == "Guide > Leave"
    report = last_alignment_report("test_split", "guide.md")
    assert report is not None and report.pieces == 6
    assert [(u.index, u.preview) for u in report.unaligned] == [(5, "this text is not in the document")]
    assert "piece 5 not aligned" in report.lines()[0]
    assert len(strat(doc, {"keep": 1})) == 1


def test_callable_errors_name_the_strategy(cleanup):
    doc = from_text("some text", "t.txt")
    s1 = strategy_from_callable("test_str", lambda text: text)
    s2 = strategy_from_callable("test_raise", lambda text: 1 / 0)
    cleanup.extend(["test_str", "test_raise"])
    with pytest.raises(ExternalStrategyError, match="test_str.*list of strings"):
        s1(doc)
    with pytest.raises(ExternalStrategyError, match="test_raise.*ZeroDivisionError"):
        s2(doc)


def test_builtin_names_cannot_be_shadowed():
    with pytest.raises(ValueError, match="built-in"):
        strategy_from_callable("markdown", lambda text: [text])
    assert strategies()["markdown"].name == "markdown" and not external.is_external("markdown")


# ----------------------------------------------------------------------------- strategy files


def test_strategy_file_registers_declared_and_decorated_functions(tmp_path, cleanup):
    path = tmp_path / "my_splitters.py"
    path.write_text(textwrap.dedent('''
        from inspector.core.chunking.params import Param
        from inspector.core.chunking.external import chunk_strategy

        def by_line(text):
            return [ln for ln in text.splitlines() if ln.strip()]

        @chunk_strategy("test_words", params=(Param("n", "words", 2, 1, 50),))
        def words(text, n):
            ws = text.split()
            return [" ".join(ws[i:i + n]) for i in range(0, len(ws), n)]

        CHUNK_INSPECTOR_STRATEGIES = {"test_lines": by_line}
    '''), encoding="utf-8")
    made = load_strategy_file(path)
    cleanup.extend(s.name for s in made)
    assert sorted(s.name for s in made) == ["test_lines", "test_words"]
    doc = from_text("one two three\nfour five", "t.txt")
    assert [c.text(doc) for c in get_strategy("test_lines")(doc)] == ["one two three", "four five"]
    assert [c.text(doc) for c in get_strategy("test_words")(doc, {"n": 3})] == ["one two three", "four five"]
    # Loading again (after an edit) replaces the strategies.
    path.write_text("CHUNK_INSPECTOR_STRATEGIES = {'test_lines': lambda text: [text.strip()]}\n")
    load_strategy_file(path)
    assert len(get_strategy("test_lines")(doc)) == 1


@pytest.mark.parametrize("source, problem, line", [
    ("def f(:\n    pass\n", "syntax error", 1),
    ("x = 1\nraise RuntimeError('boom')\n", "raised RuntimeError: boom", 2),
    ("x = 1\n", "declares no strategies", None),
    ("CHUNK_INSPECTOR_STRATEGIES = [1]\n", "must be a dict", None),
    ("CHUNK_INSPECTOR_STRATEGIES = {'test_bad': 3}\n", "not a function", None),
])
def test_strategy_file_problems_name_file_and_line(tmp_path, source, problem, line):
    path = tmp_path / "bad.py"
    path.write_text(source, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_strategy_file(path)
    assert info.value.path == str(path) and problem in info.value.problem
    assert info.value.line == line


# ----------------------------------------------------------------------------- entry points


def test_entry_points_register_and_report_failures(tmp_path, monkeypatch, cleanup):
    (tmp_path / "ci_test_plugin.py").write_text(
        "def split(text):\n    return text.split('. ')\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = importlib.metadata.EntryPoints([
        importlib.metadata.EntryPoint("test_ep_ok", "ci_test_plugin:split", external.ENTRY_POINT_GROUP),
        importlib.metadata.EntryPoint("test_ep_missing", "ci_test_plugin:nope", external.ENTRY_POINT_GROUP),
        importlib.metadata.EntryPoint("test_ep_nomodule", "no_such_module_xyz:f", external.ENTRY_POINT_GROUP),
    ])
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group=None: eps.select(group=group) if group else eps)
    report = load_entry_point_strategies()
    cleanup.extend(s.name for s in report.strategies)
    assert [s.name for s in report.strategies] == ["test_ep_ok"]
    assert [p.path.split(" = ")[0] for p in report.problems] == [
        "entry point test_ep_missing", "entry point test_ep_nomodule"]
    doc = from_text("One. Two. Three.", "t.txt")
    assert [c.text(doc) for c in get_strategy("test_ep_ok")(doc)] == ["One", "Two", "Three."]
