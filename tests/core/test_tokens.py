"""Exact cl100k counts from cached document boundaries equal encoding the span itself."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.documents.document import from_text
from inspector.core.text.tokens import (
    TokenIndex,
    count_text,
    encoding,
    token_index,
    utf8_offsets,
)
from tests.core.strategies_for_tests import any_text


@settings(max_examples=200)
@given(text=any_text, data=st.data())
def test_span_count_equals_encoding_the_span(text, data):
    idx = TokenIndex(text)
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    assert idx.count(a, b) == len(encoding().encode(text[a:b], disallowed_special=()))


def test_span_counts_on_long_mixed_text():
    text = ("Parental leave in Germany: 14 months of Elterngeld. café 🚀🚀 naïve\n\n  | a | b |\n"
            "<|endoftext|> 1234567 'll 's\t\t  \n") * 300
    idx = TokenIndex(text)
    rng = random.Random(7)
    for _ in range(500):
        a = rng.randrange(len(text))
        b = min(len(text), a + rng.randrange(1, 2000))
        assert idx.count(a, b) == count_text(text[a:b])


def test_token_boundaries_inside_multibyte_characters_are_floored():
    text = "🚀" * 5 + "x"
    idx = TokenIndex(text)
    assert all(0 <= idx.char_of_token(i) <= len(text) for i in range(len(idx) + 1))
    assert idx.char_of_token(len(idx)) == len(text)
    assert list(utf8_offsets("a🚀b")) == [0, 1, 5, 6]


def test_index_is_cached_per_content():
    doc = from_text("hello world " * 10)
    assert token_index(doc) is token_index(from_text("hello world " * 10))


RUNS = st.lists(st.sampled_from(["1234567890123", "  ", "abc ", "\n", "9999999999999999 x", "hello", "'s",
                                 " 🚀", "\t\n  ", "١٢٣٤٥٦٧", "    ", "\n\n\n", " .", "...", "x" * 40]),
                min_size=1, max_size=200).map("".join)


@settings(max_examples=300)
@given(text=RUNS, data=st.data())
def test_span_count_exact_on_digit_and_whitespace_runs(text, data):
    # Long digit runs are cut three at a time and whitespace runs look ahead through the whole run:
    # the places where a span's cut can differ from the document's.
    idx = TokenIndex(text)
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    assert idx.count(a, b) == count_text(text[a:b])
