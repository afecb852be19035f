"""Code point <-> UTF-16 offsets: the single place where units change."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.viewmodel.offsets import Utf16Map


def _utf16_len(s: str) -> int:
    return len(s.encode("utf-16-le", "surrogatepass")) // 2


def test_rocket_between_letters():
    m = Utf16Map("a🚀b")
    assert [m.to_utf16(i) for i in range(4)] == [0, 1, 3, 4]
    assert [m.to_codepoint(u) for u in range(5)] == [0, 1, 1, 2, 3]  # 2 is inside the pair: floored
    assert m.length == 3 and m.length16 == 4 and m.has_astral


def test_ascii_is_identity():
    m = Utf16Map("plain text\nwith lines")
    assert not m.has_astral
    assert m.to_utf16(7) == 7 and m.to_codepoint(7) == 7
    assert m.to_utf16_array([0, 3, 21]).tolist() == [0, 3, 21]


def test_bmp_non_ascii_takes_one_unit():
    m = Utf16Map("München €5 ß")
    assert not m.has_astral
    assert m.to_utf16(12) == 12


def test_consecutive_astral_characters():
    text = "🚀🚀x🎉"
    m = Utf16Map(text)
    assert [m.to_utf16(i) for i in range(len(text) + 1)] == [0, 2, 4, 5, 7]
    assert m.length16 == _utf16_len(text)


unicode_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60) | st.text(
    st.sampled_from("ab\n é€🚀🎉𝄞\U0010FFFF"), max_size=60)


@settings(max_examples=300, deadline=None)
@given(unicode_text)
def test_round_trip_matches_python_utf16(text):
    m = Utf16Map(text)
    assert m.length16 == _utf16_len(text)
    for cp in range(len(text) + 1):
        u = m.to_utf16(cp)
        assert u == _utf16_len(text[:cp])
        assert m.to_codepoint(u) == cp
    cps = np.arange(len(text) + 1)
    assert m.to_utf16_array(cps).tolist() == [m.to_utf16(int(c)) for c in cps]
    us = np.arange(m.length16 + 1)
    assert m.to_codepoint_array(us).tolist() == [m.to_codepoint(int(u)) for u in us]


@settings(max_examples=200, deadline=None)
@given(unicode_text)
def test_every_utf16_position_floors_to_a_character_start(text):
    m = Utf16Map(text)
    for u in range(m.length16 + 1):
        cp = m.to_codepoint(u)
        assert 0 <= cp <= len(text)
        assert m.to_utf16(cp) <= u  # floored, never past the unit asked about
        assert u - m.to_utf16(cp) <= 1


def test_line_index_matches_counting_newlines():
    from inspector.core.viewmodel.offsets import LineIndex

    for text in ("", "one line", "a\nb\n\nc🚀\nd", "\n\n"):
        li = LineIndex(text)
        assert li.line_count == text.count("\n") + 1
        for cp in range(len(text) + 1):
            assert li.line_of(cp) == text[:cp].count("\n")
        assert li.line_of_array(range(len(text) + 1)).tolist() == [text[:cp].count("\n") for cp in range(len(text) + 1)]
