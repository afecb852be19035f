"""What the view shows of a text: huge lines cut into blocks by inserted breaks that live only in
the offset map (every position round-trips to the document's code points), the long-word
decision, slice-at-a-time conversions equal to the whole-text ones, and the recursive strategy's
character-level merge by prefix sums equal to LangChain's one-split-at-a-time merge."""

from __future__ import annotations

import hashlib
import itertools
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking import recursive as rec
from inspector.core.documents.document import from_text
from inspector.core.runtime.slices import codepoints, decode_utf8, int_list_array, searchsorted, sha256_text
from inspector.core.text.tokens import token_index
from inspector.core.viewmodel.display_text import display_breaks, has_long_word, make_display_text
from inspector.core.viewmodel.offsets import Utf16Map

chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
texts = st.text(st.sampled_from("ab \n🚀é中.") | chars, max_size=300)


@settings(max_examples=200, deadline=None)
@given(text=texts, data=st.data())
def test_breaks_round_trip_and_show_the_same_characters(text, data):
    breaks = sorted(set(data.draw(st.lists(st.integers(1, max(1, len(text) - 1)), max_size=6)))) if len(text) > 1 \
        else []
    shown = "\n".join(text[a:b] for a, b in zip([0, *breaks], [*breaks, len(text)], strict=True)) if breaks else text
    u = Utf16Map(text, breaks)
    units = shown.encode("utf-16-le")
    assert u.length16 * 2 == len(units)
    for cp in range(len(text) + 1):
        u16 = u.to_utf16(cp)
        assert u.to_codepoint(u16) == cp
        if cp < len(text):  # the same character sits there in what Qt is given
            assert units[2 * u16:2 * u16 + len(text[cp].encode("utf-16-le"))].decode("utf-16-le") == text[cp]
    for _k, b in enumerate(breaks):  # the unit inserted before a break maps to the break
        inserted = u.to_utf16(b) - 1
        assert units[2 * inserted:2 * inserted + 2] == b"\n\x00" and u.to_codepoint(inserted) == b
    cps = list(range(len(text) + 1))
    assert u.to_utf16_array(cps).tolist() == [u.to_utf16(c) for c in cps]
    u16s = list(range(u.length16 + 1))
    assert u.to_codepoint_array(u16s).tolist() == [u.to_codepoint(x) for x in u16s]


def test_long_lines_are_cut_short_lines_are_not():
    line = "word " * 9_000  # 45,000 characters, spaces throughout
    text = "# Title\n\n" + line + "\nshort line\n" + "x" * 25_000 + "\n"
    breaks = display_breaks(text).tolist()
    start = text.index(line)
    assert all(start < b < start + len(line) or text.index("x") < b < len(text) for b in breaks)
    # Within each line at most PIECE characters between breaks, cut after whitespace where there is some.
    pos = 0
    for src in text.split("\n"):
        cuts = [pos, *[b for b in breaks if pos < b < pos + len(src)], pos + len(src)]
        assert all(b - a <= 10_000 for a, b in itertools.pairwise(cuts))
        pos += len(src) + 1
    assert all(text[b - 1] == " " for b in breaks if b < start + len(line))
    d = make_display_text(text)
    assert d.text.replace("\n", "") == text.replace("\n", "") and d.text.count("\n") == text.count("\n") + len(breaks)
    assert not display_breaks("short\n" * 10).size


def test_long_word():
    assert has_long_word("a " + "x" * 10_000 + " b") and not has_long_word("a " + "x" * 9_999 + " b")
    assert has_long_word("x" * 10_000) and has_long_word(" " * 4_999 + "é" * 10_000)
    assert not has_long_word("word\u3000" * 5_000)  # an ideographic space is whitespace
    assert make_display_text("y" * 30_000).long_word and not make_display_text("a b " * 10_000).long_word


@given(text=st.text(chars, max_size=50))
def test_slices_equal_the_whole_text_versions(text):
    from inspector.core.runtime import slices

    old = slices.STEP
    slices.STEP = 7  # many slices, cut everywhere
    try:
        expected = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        assert codepoints(text).tolist() == expected.tolist()
        assert sha256_text(text) == hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        values = [ord(c) for c in text]
        assert int_list_array(values).tolist() == values
        hay = np.sort(np.asarray(values or [0], dtype=np.int64))
        needles = np.asarray(values, dtype=np.int64)
        for side in ("left", "right"):
            assert searchsorted(hay, needles, side).tolist() == np.searchsorted(hay, needles, side=side).tolist()
    finally:
        slices.STEP = old


@given(text=st.text(chars, max_size=40), damage=st.lists(st.tuples(st.integers(0, 200), st.sampled_from(
    [0xFF, 0xFE, 0xC3, 0x80, 0xE9, 0xF0])), max_size=2))
def test_sliced_utf8_decoding_equals_decoding_at_once(text, damage):
    from inspector.core.runtime import slices

    data = bytearray(text.encode("utf-8", "surrogatepass"))
    for at, byte in damage:
        if data:
            data[at % len(data)] = byte
    old = slices.STEP
    slices.STEP = 5
    try:
        try:
            expected, where = bytes(data).decode("utf-8"), None
        except UnicodeDecodeError as exc:
            expected, where = None, exc.start
        try:
            got, at = decode_utf8(bytes(data)), None
        except UnicodeDecodeError as exc:
            got, at = None, exc.start
        assert (got, at) == (expected, where)
    finally:
        slices.STEP = old


@settings(max_examples=150, deadline=None)
@given(text=st.text(st.sampled_from("ab é🚀\n.!x中") | chars, max_size=400), size=st.integers(2, 40),
       data=st.data())
def test_recursive_character_merge_equals_the_one_split_at_a_time_merge(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    doc = from_text(text, "t.txt")
    for length in (token_index(doc).count, lambda a, b: b - a):
        for seps in (("",), rec.DEFAULT_SEPARATORS):
            try:
                rec.FAST_CHARACTERS = False
                slow = rec.recursive_spans(doc.text, 0, len(doc.text), length, size, overlap, seps)
            finally:
                rec.FAST_CHARACTERS = True
            fast = rec.recursive_spans(doc.text, 0, len(doc.text), length, size, overlap, seps)
            assert fast == slow


def test_a_megabyte_line_without_spaces_is_merged_without_a_split_per_character(monkeypatch):
    """The per-character path asks the length of every character (a million calls); the prefix-sum
    merge asks once per distinct character."""
    text = "abcdefghij" * 20_000
    calls = []

    def length(a, b):
        calls.append((a, b))
        return b - a

    spans = rec.recursive_spans(text, 0, len(text), length, 256, 32)
    assert len(calls) <= 10 and spans[0] == (0, 256) and spans[1][0] == 256 - 32
    assert all(re.fullmatch("[a-j]+", text[a:b]) for a, b in spans)
