"""On plain text with the same separators, length function and settings, `recursive` puts its
boundaries exactly where LangChain's RecursiveCharacterTextSplitter does."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.recursive import DEFAULT_SEPARATORS, recursive_spans
from inspector.core.documents.document import from_text
from inspector.core.text.tokens import count_text, token_index
from tests.core.strategies_for_tests import paragraph

splitters = pytest.importorskip("langchain_text_splitters")

PLAIN = st.builds(lambda ps, seps: "".join(p + s for p, s in zip(ps, seps, strict=False)),
                  st.lists(paragraph, min_size=1, max_size=12),
                  st.lists(st.sampled_from(["\n\n", "\n", " ", "\n\n\n", ". "]), min_size=12, max_size=12))


def _langchain(text, size, overlap, length, separators, is_regex):
    lc = splitters.RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=overlap, length_function=length, separators=list(separators),
        is_separator_regex=is_regex, keep_separator=True, strip_whitespace=True)
    return lc.split_text(text)


@settings(max_examples=120)
@given(text=PLAIN, size=st.integers(4, 120), data=st.data())
def test_same_chunks_as_langchain_token_length(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    doc = from_text(text, "t.txt")
    index = token_index(doc)
    ours = recursive_spans(doc.text, 0, len(doc.text), index.count, size, overlap)
    theirs = _langchain(doc.text, size, overlap, count_text, DEFAULT_SEPARATORS, True)
    assert [doc.text[a:b] for a, b in ours] == theirs
    # A level's splits measured at once (the strategy's way: `TokenIndex.counts`), memo emptied.
    index._memo.clear()
    assert recursive_spans(doc.text, 0, len(doc.text), index.count, size, overlap, lengths=index.counts) == ours


@settings(max_examples=120)
@given(text=PLAIN, size=st.integers(8, 600), data=st.data())
def test_same_chunks_as_langchain_defaults_in_characters(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    seps = ["\n\n", "\n", " ", ""]  # LangChain's own defaults, literal
    ours = recursive_spans(text, 0, len(text), lambda a, b: b - a, size, overlap,
                           [re.escape(s) for s in seps])
    assert [text[a:b] for a, b in ours] == _langchain(text, size, overlap, len, seps, False)


def test_start_indices_match_on_repeated_text():
    # LangChain recovers start_index with str.find; on repeated text ours are the true positions.
    text = "Same line here.\n\n" * 30
    spans = recursive_spans(text, 0, len(text), lambda a, b: b - a, 40, 0)
    assert [text[a:b] for a, b in spans] == _langchain(text, 40, 0, len, DEFAULT_SEPARATORS, True)
    assert [a for a, _ in spans] == sorted({a for a, _ in spans})
