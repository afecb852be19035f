"""The recursive chunker's separators found by faster expressions (`recursive._SHIFTED`) split
exactly where the separators themselves do."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking import recursive
from inspector.core.chunking.recursive import _SHIFTED, DEFAULT_SEPARATORS, _found, _separator_pieces

#: Marks, white space of several kinds and letters, in runs: every way a mark can meet a space.
TEXT = st.lists(st.sampled_from([".", "!", "?", " ", "  ", "\n", "\t", "\u00a0", "a", "Ab", "..", "?!", "\n\n"]),
                max_size=40).map("".join)


def _reference(sub: str, a: int, b: int, separator: str) -> list[tuple[int, int]]:
    cuts = [a, *(a + m.start() for m in re.finditer(separator, sub)), b]
    return [(x, y) for x, y in zip(cuts, cuts[1:], strict=False) if x < y]


def test_the_sentence_separator_is_found_the_faster_way():
    assert DEFAULT_SEPARATORS[2] in _SHIFTED


@settings(max_examples=400)
@given(text=TEXT, before=st.text(alphabet=".! a\n", max_size=3))
def test_shifted_separators_split_where_the_separators_do(text, before):
    # `before`: text ahead of the slice, which a look-behind must not see (the slice is searched).
    a, b = len(before), len(before) + len(text)
    for separator in _SHIFTED:
        assert _separator_pieces(text, a, b, separator) == _reference(text, a, b, separator)
        assert _found(separator, text) == (re.search(separator, text) is not None)


def test_chunks_are_the_same_without_the_shift(monkeypatch):
    text = "One. Two!  Three?\tFour.\nFive... six?! Seven.\u00a0Eight. " * 40
    length = lambda a, b: b - a  # noqa: E731
    fast = recursive.recursive_spans(text, 0, len(text), length, 30, 5)
    monkeypatch.setattr(recursive, "_SHIFTED", {})
    assert recursive.recursive_spans(text, 0, len(text), length, 30, 5) == fast
