"""Fuzzing with random Unicode: astral characters, combining marks, right-to-left text, every kind
of line break (\\r\\n, \\r, \\n, U+2028/2029, U+0085), BOMs and Markdown syntax, through the
loader (bytes -> Document), the Markdown structure, every chunker, and the code-point <-> UTF-16
conversion the view uses. Offsets stay valid and round-trip.
"""

from __future__ import annotations

import codecs

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import Document, from_text, normalize_newlines
from inspector.core.documents.encoding import decode_bytes
from inspector.core.text.structure import line_starts, parse_markdown, sentence_spans
from tests.core.test_bad_inputs import check_spans, chunkers

SPECIAL = [
    "\r\n", "\r", "\n", "\n\n", "\u2028", "\u2029", "\x85", "\t", " ", "\u00a0", "\u200b", "\ufeff",
    "🚀", "👨\u200d👩\u200d👧", "🇮🇱", "𝔘", "\U0010fffd", "e\u0301", "\u0301", "q\u0307\u0323", "נ\u05b8",
    "שלום", "مرحبا", "\u202e", "\u202c", "中文", "﷽", "ß", "İ",
    "# ", "## ", "- ", "1. ", "> ", "| a | b |\n|---|---|\n", "```", "~~~", "---\n", "***", "<div>", "[x](y)",
    ".", "!", "?", "…", "。", "e.g.", "14", "word", "Word",
]
#: Characters that can come out of decoding bytes (no surrogates, no NUL: NUL means binary).
chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
unicode_text = st.lists(st.sampled_from(SPECIAL) | st.text(chars, min_size=1, max_size=6),
                        max_size=60).map("".join)

BINARY_STARTS = (b"%PDF", b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"PK\x03\x04", b"\x7fELF")


# -- loader --------------------------------------------------------------------------------------

ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-be-bom", "utf-32"]


@given(text=unicode_text, encoding=st.sampled_from(ENCODINGS))
def test_bytes_decode_back_to_the_text_and_newlines_normalize(text, encoding):
    data = codecs.BOM_UTF16_BE + text.encode("utf-16-be") if encoding == "utf-16-be-bom" else text.encode(encoding)
    assume(not data.startswith(BINARY_STARTS))
    decoded, _enc = decode_bytes(data, "fuzz.md")
    # A BOM at the start is the encoding's mark, not text: only that one is dropped.
    expected = text[1:] if encoding == "utf-8" and text.startswith("\ufeff") else text
    assert decoded == expected
    doc = Document(text=normalize_newlines(decoded), name="fuzz.md")
    assert "\r" not in doc.text
    breaks = expected.count("\n") + expected.count("\r") - expected.count("\r\n")
    assert doc.text.count("\n") == breaks
    # Nothing but CR changes: the other line separators stay, so offsets mean what the file says.
    assert doc.text.replace("\n", "") == expected.replace("\r", "").replace("\n", "")


@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_decode_or_raise_input_error(data):
    from inspector.core.errors import InputError

    try:
        text, enc = decode_bytes(data, "fuzz.bin")
    except InputError as exc:
        assert exc.path == "fuzz.bin" and exc.problem
        return
    assert isinstance(text, str) and enc


# -- structure -----------------------------------------------------------------------------------

@given(text=unicode_text)
def test_markdown_blocks_and_headings_are_valid_spans(text):
    text = normalize_newlines(text)
    n = len(text)
    ls = line_starts(text)
    assert ls[0] == 0 and ls == sorted(ls) and ls[-1] == n
    s = parse_markdown(text, "fuzz.md")
    prev_end = 0
    for b in s.blocks:
        assert 0 <= b.start <= b.end <= n
        assert b.start >= prev_end, "top-level blocks overlap or go backwards"
        prev_end = b.end
        for c in b.children:
            assert b.start <= c.start <= c.end <= max(b.end, c.end) <= n
    for h in s.headings:
        assert 0 <= h.start < h.end <= h.section_end <= n
        assert h.path[-1] == h.title
    for off in range(0, n + 1, max(1, n // 20)):
        s.heading_path_at(off)
    for a, b in sentence_spans(text, markdown=True):
        assert 0 <= a < b <= n and not text[a:b].isspace()


@given(text=unicode_text)
def test_structure_never_crashes_on_unnormalized_text(text):
    """Documents are normalized, but a caller handing raw text must get spans in bounds."""
    s = parse_markdown(text)
    assert all(0 <= b.start <= b.end <= len(text) for b in s.blocks)


# -- chunkers ------------------------------------------------------------------------------------

@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", chunkers())
@settings(max_examples=40)
@given(text=unicode_text, kind=st.sampled_from(["fuzz.md", "fuzz.txt"]))
def test_every_chunker_keeps_the_span_contract_on_random_unicode(name, text, kind):
    doc = from_text(text, kind)
    chunks = chunk_document(doc, name)
    check_spans(doc, chunks)


# -- code points <-> UTF-16 ----------------------------------------------------------------------

@given(text=unicode_text)
def test_utf16_offsets_round_trip(text):
    offsets = pytest.importorskip("inspector.core.viewmodel.offsets")
    m = offsets.Utf16Map(text)
    units = text.encode("utf-16-le")
    assert m.length == len(text) and m.length16 == len(units) // 2
    cps = list(range(len(text) + 1))
    u16 = [m.to_utf16(cp) for cp in cps]
    for cp in cps:
        assert u16[cp] == len(text[:cp].encode("utf-16-le")) // 2
        assert m.to_codepoint(u16[cp]) == cp
    # Any UTF-16 position maps to the character it falls in (inside a surrogate pair: its start).
    for u in range(m.length16 + 1):
        cp = m.to_codepoint(u)
        assert u16[cp] <= u and (cp == len(text) or u < u16[cp + 1])
    assert m.to_utf16_array(cps).tolist() == u16
    assert m.to_codepoint_array(list(range(m.length16 + 1))).tolist() == [
        m.to_codepoint(u) for u in range(m.length16 + 1)]


@settings(max_examples=30)
@given(text=unicode_text)
def test_chunk_spans_survive_the_trip_to_utf16_and_back(text):
    offsets = pytest.importorskip("inspector.core.viewmodel.offsets")
    doc = from_text(text)
    m = offsets.Utf16Map(doc.text)
    units = doc.text.encode("utf-16-le")
    for c in chunk_document(doc, "fixed_chars", {"size": 7, "overlap": 3}):
        a16, b16 = m.to_utf16(c.start), m.to_utf16(c.end)
        assert units[2 * a16:2 * b16].decode("utf-16-le") == doc.text[c.start:c.end]
        assert (m.to_codepoint(a16), m.to_codepoint(b16)) == (c.start, c.end)
