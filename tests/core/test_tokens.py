"""Exact cl100k counts from cached document boundaries equal encoding the span itself."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.documents.document import from_text
from inspector.core.text.tokens import (
    TokenIndex,
    _encode_in_slices,
    count_text,
    encoding,
    odd_characters,
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


def _oracle_offset_after(text: str, a: int, b: int, n: int) -> int:
    """Encode text[a:b] on its own, keep n tokens, map their bytes back to a (floored) offset."""
    enc = encoding()
    ids = enc.encode(text[a:b], disallowed_special=())
    if n >= len(ids):
        return b
    nbytes = sum(len(enc.decode_single_token_bytes(t)) for t in ids[:n])
    offsets = list(utf8_offsets(text[a:b]))
    return a + max(i for i, o in enumerate(offsets) if o <= nbytes)


@settings(max_examples=300)
@given(text=any_text | RUNS, data=st.data())
def test_offset_after_n_tokens_equals_cutting_the_encoded_span(text, data):
    idx = TokenIndex(text)
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    n = data.draw(st.integers(0, idx.count(a, b) + 2))
    assert idx.offset_after(a, b, n) == _oracle_offset_after(text, a, b, n)


def test_offset_after_on_long_mixed_text_uses_the_document_middle():
    text = ("Parental leave in Germany: 14 months of Elterngeld. café 🚀🚀 naïve\n\n  | a | b |\n"
            "1234567 'll 's\t\t  \n") * 200
    idx = TokenIndex(text)
    rng = random.Random(11)
    for _ in range(300):
        a = rng.randrange(len(text))
        b = min(len(text), a + rng.randrange(30, 3000))
        n = rng.randrange(0, idx.count(a, b) + 1)
        assert idx.offset_after(a, b, n) == _oracle_offset_after(text, a, b, n)


def test_offset_after_by_hand():
    idx = TokenIndex("hello world, hello again")
    # cl100k: "hello", " world", ",", " hello", " again"
    assert idx.offset_after(0, 24, 2) == len("hello world")
    assert idx.offset_after(0, 24, 0) == 0
    assert idx.offset_after(0, 24, 99) == 24
    assert idx.offset_after(6, 24, 1) == len("hello world")  # "world" alone is one token


@settings(max_examples=300)
@given(text=any_text | RUNS, step=st.integers(1, 40))
def test_a_document_encoded_in_slices_equals_one_encode(text, step):
    """A big document is tokenized a slice at a time (so no single tiktoken call holds the GIL
    for long); the slices, cut at piece boundaries after a non-space character, must give
    exactly the tokens of one whole encode, whatever the slice length."""
    import pytest

    from inspector.core.text import tokens

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tokens, "ENCODE_SLICE", step)
        index = TokenIndex(text)
    assert index.tokens.tolist() == encoding().encode_ordinary(text)


def test_a_big_document_in_slices_equals_one_encode():
    from inspector.core.text import tokens

    handbook = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"
    base = (handbook.read_text(encoding="utf-8") + "\n  12345678 \t\n\n") * 3
    assert len(base) > 2 * tokens.ENCODE_SLICE
    assert TokenIndex(base).tokens.tolist() == encoding().encode_ordinary(base)


#: Code points unassigned in Python's Unicode database that the `regex` module (a newer Unicode)
#: calls letters or digits: tiktoken's own expression cuts around them unlike ours.
ODD = ["\U0003d000", "\u0558", "\u088f", "\U000323b0"]
ODD_RUNS = st.lists(st.sampled_from(["0", ":", "L", " ", "\n", "abc", "123456", ". ", *ODD]),
                    min_size=1, max_size=80).map("".join)


def test_a_span_ending_beside_an_odd_character_counts_as_encoded_alone():
    """Found by hypothesis in the sentences chunker: 'leave … 0\\U0003d000:L' counted 26 tokens, 27
    encoded alone ("\\U0003d000:" is one piece to tiktoken, ":L" one to the `regex` module)."""
    text = "leave leave leave 0:0¸Ē0𒍀 0Ø0\U0003d000:L."
    idx = TokenIndex(text)
    assert idx.count(0, 32) == count_text(text[:32]) == 27
    assert all(idx.count(a, b) == count_text(text[a:b]) for a in range(len(text)) for b in range(a, len(text) + 1))


@settings(max_examples=300)
@given(text=ODD_RUNS | RUNS, data=st.data())
def test_span_count_and_offsets_exact_around_odd_characters(text, data):
    idx = TokenIndex(text)
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    assert idx.count(a, b) == count_text(text[a:b])
    n = data.draw(st.integers(0, idx.count(a, b) + 2))
    assert idx.offset_after(a, b, n) == _oracle_offset_after(text, a, b, n)


@settings(max_examples=200)
@given(text=ODD_RUNS, step=st.integers(1, 40))
def test_a_document_with_odd_characters_encoded_in_slices_equals_one_encode(text, step):
    import pytest

    from inspector.core.text import tokens

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(tokens, "ENCODE_SLICE", step)
        index = TokenIndex(text)
    assert index.tokens.tolist() == encoding().encode_ordinary(text)


# -- piece boundaries from token boundaries are the expression's (issue 31) ----------------------

PIECE_RUNS = st.lists(st.sampled_from([
    "'s", "'S", "'ll", "'VE", "'re", "'d", "'m", "'t", "''", "don't", "it's", "ſ", "K", " ", "  ", "\t", "\n", "\r",
    "\n\n", " \n", "\u00a0", "\u2028", "\u0085", "\x0b", "\x1c", "1", "12", "1234567", "٣", "²", "Ⅻ", "a", "word",
    "Elterngeld", "unbelievably", "(", "((", "...", ".\n", "!?", "#", "##", "-", "—", "🚀", "中文", "é", "e\u0301",
    "\U0001d400", "\U0001f600x", "|", "`", "**", "__", "_a",
]), min_size=1, max_size=60).map("".join)


def _with_every_piece(index: TokenIndex) -> TokenIndex:
    """A copy of `index` holding every piece boundary (the expression's) and the document's tokens
    before each, as the index was built before `sure_piece_bounds` (issue 31): the reference the
    index with sure boundaries only must count like."""
    from inspector.core.text import tokens

    text = index.text
    ref = copy.copy(index)
    ref._memo = {}
    ref.pieces = tokens.regex_piece_bounds(text)
    ref._blocks = tokens.piece_blocks(ref.pieces, len(text))
    byte_starts = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(tokens._token_byte_lengths()[index.tokens], out=byte_starts[1:])
    piece_bytes = utf8_offsets(text)[np.frombuffer(ref.pieces, dtype=np.int64)]
    ref._piece_tokens = tokens.int_array(np.searchsorted(byte_starts, piece_bytes, "left"))
    return ref


def _pieces_hold(text: str) -> None:
    from inspector.core.text import tokens

    index = TokenIndex(text)
    every = list(tokens.regex_piece_bounds(text))
    pieces = list(index.pieces)
    if index._odd is not None:  # odd characters: the expression's own boundaries, all of them
        assert pieces == every
    # Sorted, from 0 to the end, each a boundary of the expression's.
    assert pieces[0] == 0 and pieces[-1] == len(text) and pieces == sorted(set(pieces))
    assert set(pieces) <= set(every)
    # The tokens before each: the first token starting there.
    for p, t in zip(pieces, index._piece_tokens, strict=True):
        assert index.char_of_token(t) == p and (t == 0 or index.char_of_token(t - 1) < p)


@settings(max_examples=400)
@given(text=PIECE_RUNS | any_text | RUNS | st.text(max_size=200))
def test_piece_bounds_from_tokens_are_the_expressions(text):
    _pieces_hold(text)


def test_piece_bounds_from_tokens_are_the_expressions_on_corpora():
    root = Path(__file__).resolve().parents[2]
    files = sorted((root / "benchmarks" / "data").rglob("*.md")) + sorted((root / "sample_docs").rglob("*.*"))
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in files if f.suffix in (".md", ".txt")]
    assert len(texts) >= 10
    for text in texts:
        _pieces_hold(text)


@settings(max_examples=300)
@given(text=PIECE_RUNS | any_text | RUNS, data=st.data())
def test_sure_pieces_count_like_every_piece(text, data):
    """Counts and cuts from the sure boundaries equal those from every boundary (the index before
    issue 31's change) and encoding the span itself."""
    index = TokenIndex(text)
    ref = _with_every_piece(index)
    for _ in range(8):
        a = data.draw(st.integers(0, len(text)))
        b = data.draw(st.integers(a, len(text)))
        n = data.draw(st.integers(0, 40))
        assert index.count(a, b) == ref.count(a, b) == count_text(text[a:b])
        assert index.offset_after(a, b, n) == ref.offset_after(a, b, n) == _oracle_offset_after(text, a, b, n)


#: Short texts where a span's head, up to the first sure boundary its own cut meets, ends in a
#: whitespace run before a character that is not whitespace: encoded on its own, that run is one
#: piece (the first was found by hypothesis: "\n" then two spaces before a number).
HEAD_TEXTS = ["\t\n  12345678901239999999999999999 x", "a\n   \n  word 123 'sam  \t\nfoo  bar",
              "x  \n\n   1234567 don't  stop\n\n\n  99", "  (( 12  ab\n \u00a0 \u3000 7 'll\t\t\tq"]


def test_every_span_of_short_texts_counts_exactly():
    for text in HEAD_TEXTS:
        index = TokenIndex(text)
        for a in range(len(text)):
            for b in range(a + 1, len(text) + 1):
                assert index.count(a, b) == count_text(text[a:b]), (text, a, b)
                for n in (1, 3, 7):
                    assert index.offset_after(a, b, n) == _oracle_offset_after(text, a, b, n), (text, a, b, n)


def test_sure_pieces_count_like_every_piece_on_the_handbook():
    root = Path(__file__).resolve().parents[2]
    text = (root / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    index = TokenIndex(text)
    ref = _with_every_piece(index)
    assert len(index.pieces) < len(ref.pieces)  # the sure ones leave some out
    rng = random.Random(31)
    for _ in range(3000):
        a = rng.randrange(len(text))
        b = min(len(text), a + rng.randrange(1, 3000))
        assert index.count(a, b) == ref.count(a, b) == count_text(text[a:b])
        n = rng.randrange(0, 600)
        assert index.offset_after(a, b, n) == ref.offset_after(a, b, n)


@settings(max_examples=300)
@given(text=PIECE_RUNS | any_text | RUNS | ODD_RUNS, data=st.data())
def test_spans_ending_where_a_document_piece_ends_count_exactly(text, data):
    """A span that ends on a document piece boundary after a character that is not whitespace takes
    its last tokens from the document (nothing encoded afresh at its end): the count and the offsets
    are still those of the span encoded on its own."""
    index = TokenIndex(text)
    ends = [b for b in index.pieces if b > 0]
    if not ends:
        return
    b = data.draw(st.sampled_from(ends))
    a = data.draw(st.integers(0, b - 1))
    assert index.count(a, b) == count_text(text[a:b]), (a, b)
    n = data.draw(st.integers(0, 80))
    assert index.offset_after(a, b, n) == _oracle_offset_after(text, a, b, n), (a, b, n)


def test_spans_ending_where_a_document_piece_ends_on_the_corpora():
    root = Path(__file__).resolve().parents[2]
    text = (root / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    index = TokenIndex(text)
    rng = random.Random(5)
    ends = list(index.pieces)
    for _ in range(3000):
        b = ends[rng.randrange(1, len(ends))]
        a = max(0, b - rng.randrange(1, 3000))
        assert index.count(a, b) == count_text(text[a:b]), (a, b)


#: Span starts `TokenIndex.counts` reads a head at (`_head_end`): runs of line breaks, one space
#: and words after them, words cut by a trim, and the cases beside them it must leave to `count`.
HEAD_RUNS = st.lists(st.sampled_from([
    "\n", "\n\n", "\n\n\n", " ", "  ", "\t", "\r\n", "\n ", "\n  ", "the", "The", "a", "word", "don't", "it's",
    "'s", "'ll", "café", "naïve", "Straße", "中文", "é", "e\u0301", "\u00a0", ".", ". ", "?\n", ")", "=", " = ",
    "12", "1234", "x1", "#", "- ", "\u2028", "🚀",
]), min_size=1, max_size=40).map("".join)


def _spans_of_every_kind(text: str, index: TokenIndex, data) -> list[tuple[int, int]]:
    """Spans drawn as the chunkers make them: anywhere, trimmed, starting at a piece boundary or
    just after one, ending on one, empty."""
    from inspector.core.chunking.common import trim

    n = len(text)
    bounds = list(index.pieces)
    spans = []
    for _ in range(data.draw(st.integers(1, 24))):
        how = data.draw(st.sampled_from(["any", "trimmed", "from a bound", "after a bound", "to a bound"]))
        a = data.draw(st.integers(0, n))
        b = data.draw(st.integers(a, n))
        if how == "trimmed":
            a, b = trim(text, a, b)
        elif how == "from a bound":
            a = data.draw(st.sampled_from(bounds))
            b = data.draw(st.integers(a, n))
        elif how == "after a bound":
            a = min(n, data.draw(st.sampled_from(bounds)) + data.draw(st.integers(1, 3)))
            b = data.draw(st.integers(a, n))
        elif how == "to a bound":
            b = data.draw(st.sampled_from(bounds))
            a = data.draw(st.integers(0, b))
        spans.append((a, b))
    return spans


@settings(max_examples=400)
@given(text=HEAD_RUNS | PIECE_RUNS | any_text | RUNS | ODD_RUNS, data=st.data())
def test_many_spans_counted_at_once_count_as_each_encoded(text, data):
    """`counts` (the recursive chunker's and `make`'s) gives every span's count encoded on its
    own, and what `count` gives, with the memo read and written alike."""
    index = TokenIndex(text)
    spans = _spans_of_every_kind(text, index, data)
    want = [count_text(text[a:b]) for a, b in spans]
    assert index.counts(spans) == want
    assert index.counts(spans) == want  # from the memo
    assert [index.count(a, b) for a, b in spans] == want
    fresh = TokenIndex(text)
    assert [fresh.count(a, b) for a, b in spans] == want
    assert fresh.counts(spans * 2) == want * 2


def test_every_span_of_short_texts_counted_at_once_counts_exactly():
    texts = [*HEAD_TEXTS, "x.\n\n The end. the cat\n\n\nWord's\n don't  it's\n Ünter",
             "a. b\n = c\n\nStraße the\n\n 12"]
    for text in texts:
        index = TokenIndex(text)
        spans = [(a, b) for a in range(len(text) + 1) for b in range(a, len(text) + 1)]
        assert index.counts(spans) == [count_text(text[a:b]) for a, b in spans], text


def _counted_at_once_as_the_recursive_chunker_asks(text: str) -> tuple[int, int]:
    """(spans counted, spans `counts` left to `count`), after checking every count."""
    from inspector.core.chunking.common import trim
    from inspector.core.chunking.recursive import recursive_spans

    asked: list[tuple[int, int]] = []
    index = TokenIndex(text)

    def length(a: int, b: int) -> int:
        asked.append((a, b))
        return index.count(a, b)

    recursive_spans(text, 0, len(text), length, 200, 0)
    rng = random.Random(7)
    trimmed = [trim(text, a, min(len(text), a + rng.randrange(1, 800)))
               for a in (rng.randrange(len(text)) for _ in range(3000))]
    spans = asked + trimmed
    fresh = TokenIndex(text)
    left: list[tuple[int, int]] = []
    real_count = TokenIndex.count

    def count(self, a, b):
        left.append((a, b))
        return real_count(self, a, b)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(TokenIndex, "count", count)
        got = fresh.counts(spans)
    assert got == [count_text(text[a:b]) for a, b in spans]
    return len(spans), len(left)


@pytest.mark.parametrize("name", ["sample_docs/handbook.md", "benchmarks/data/chroma/corpora/pubmed.md"])
def test_counted_at_once_on_the_corpora_as_the_recursive_chunker_asks(name):
    """Every span the recursive chunker measures on the handbook and one of Chroma's corpora, and
    spans trimmed anywhere: the heads `counts` reads (line breaks, a space and a word, a trimmed
    word) are all there, and most spans are taken without `count`."""
    text = (Path(__file__).resolve().parents[2] / name).read_text(encoding="utf-8")[:200_000]
    spans, left = _counted_at_once_as_the_recursive_chunker_asks(text)
    assert left < spans / 5, (spans, left)


def test_every_character_class_is_the_expressions():
    """The class table read by sure_piece_bounds agrees with the `regex` module on every code point
    below U+10000 (and a few above)."""
    import regex

    from inspector.core.text import tokens

    table = tokens._bmp_classes()
    for cp in list(range(0, 0x10000, 7)) + [0x1D400, 0x1F600, 0x3D000, 0x10FFFF]:
        ch = chr(cp)
        want = (tokens._NL if ch in "\r\n" else tokens._S if regex.fullmatch(r"\s", ch)
                else tokens._L if regex.fullmatch(r"\p{L}", ch) else tokens._N if regex.fullmatch(r"\p{N}", ch)
                else tokens._P)
        got = int(table[cp]) if cp < 0x10000 else tokens._class_of(ch)
        assert got == want, hex(cp)


_ANY_CHARS = st.text(alphabet=st.characters(codec=None), max_size=60) | st.sampled_from(
    ["x\ud800y", "a\U0003d000b\u0558", "🚀é\n"])


@given(_ANY_CHARS)
def test_offsets_odd_characters_and_ids_from_arrays_equal_the_per_character_reference(text):
    """Issue 31 computes these from arrays (UTF-8 lead bytes, unique code points, tiktoken's
    buffer): the same as a length per character, a set of the text, the list encode."""
    lengths = [len(c.encode("utf-8", "surrogatepass")) for c in text]
    assert utf8_offsets(text).tolist() == [0, *np.cumsum(lengths).tolist()]
    import unicodedata

    odd = sorted(i for i, c in enumerate(text) if unicodedata.category(c) == "Cn")
    assert list(odd_characters(text) or []) == odd
    assert _encode_in_slices(text).tolist() == encoding().encode_ordinary(text)


def test_the_token_byte_lengths_read_off_the_ranks_are_the_decoded_ones():
    """Issue 31: the table is read off the encoding's ranks and special tokens; every id's length
    is what `decode_single_token_bytes` gives (0 for the holes)."""
    from inspector.core.text import tokens

    fast, decoded = tokens._token_byte_lengths(), tokens._decoded_byte_lengths()
    assert fast.shape == decoded.shape == (tokens.encoding().n_vocab,)
    assert (fast == decoded).all()
    assert fast[tokens.encoding().eot_token] == len("<|endoftext|>")


@given(_ANY_CHARS | any_text, st.data())
def test_the_utf8_map_equals_the_offset_of_every_character(text, data):
    """The token index converts offsets through the continuation bytes (`Utf8Map`, issue 31), not an
    array of every character's byte offset: the same answers, byte offsets inside a multi-byte
    character floored to its start."""
    from inspector.core.text.tokens import Utf8Map

    ref = utf8_offsets(text)
    umap = Utf8Map(text)
    assert umap.nbytes == int(ref[-1])
    chars = np.asarray(data.draw(st.lists(st.integers(0, len(text)), max_size=20)), dtype=np.int64)
    assert umap.byte_of(chars).tolist() == ref[chars].tolist()
    nbytes = np.asarray(data.draw(st.lists(st.integers(0, int(ref[-1])), max_size=20)), dtype=np.int64)
    assert umap.char_at(nbytes).tolist() == (np.searchsorted(ref, nbytes, side="right") - 1).tolist()
    every = np.arange(len(text) + 1)
    assert umap.byte_of(every).tolist() == ref.tolist()


_CUT_DENSE = st.lists(st.sampled_from(["\n", "\r", " ", "  ", "\t", "\x1c", "\xa0", "\u2028", "a", "Z", "é", "7",
                                       "42", ".", "'s", "=", "@-@", "\U0003d000", "\u0558", "戦"]),
                      max_size=80).map("".join)


@given(_CUT_DENSE | _ANY_CHARS)
def test_every_line_cut_is_a_piece_boundary(text):
    """Slices (and the caller's tail of a one-slice text) end after a line break `_line_cut`
    accepts: the text encodes there to the two sides' own encodes, joined, with odd and
    unusual whitespace characters around (issue 31; the cut after a line break followed by one
    space and a character that is not whitespace is Wikipedia's line start)."""
    from inspector.core.text.tokens import _line_cut

    enc = encoding()
    whole = enc.encode_ordinary(text)
    for i, ch in enumerate(text):
        if ch == "\n" and _line_cut(text, i):
            assert enc.encode_ordinary(text[:i + 1]) + enc.encode_ordinary(text[i + 1:]) == whole, i


def test_a_line_cut_before_a_space_and_a_word_is_taken():
    """The space after a line break no longer hides the cut, and two spaces or a second line
    break still do (those whitespace runs may be one piece with the line break)."""
    from inspector.core.text.tokens import _line_cut

    text = " = Title = \n The game .\n  two\n \nthree\n \n"
    assert [i for i, ch in enumerate(text) if ch == "\n" and _line_cut(text, i)] == [
        text.index("\n The"), text.index("\n \nthree") + 2]


def test_slices_encoded_on_threads_equal_one_encode(monkeypatch):
    """Issue 31: a long document's slices are encoded on ENCODE_THREADS threads (tiktoken lets go
    of the GIL); the tokens are the one whole encode's, in order, with one thread or two."""
    import threading

    from inspector.core.runtime import offload
    from inspector.core.text import tokens

    handbook = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"
    text = handbook.read_text(encoding="utf-8") + "\n\n café 12345 \u00e9t\u00e9\n" * 50
    whole = encoding().encode_ordinary(text)
    monkeypatch.setattr(tokens, "ENCODE_SLICE", 4096)  # dozens of slices
    monkeypatch.setattr(offload, "cores", lambda: 2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # one thread per xdist worker otherwise
    seen: set[str] = set()
    encode_array = tokens._encode_array

    def recording(part: str):
        seen.add(threading.current_thread().name)
        return encode_array(part)

    monkeypatch.setattr(tokens, "_encode_array", recording)
    for threads, on_pool in ((2, True), (1, False)):
        seen.clear()
        monkeypatch.setattr(tokens, "ENCODE_THREADS", threads)
        assert _encode_in_slices(text).tolist() == whole
        assert all(name.startswith("encode") for name in seen) is on_pool, seen


def test_work_meanwhile_runs_once_on_the_calling_thread_while_the_slices_encode(monkeypatch):
    """Issue 31: `token_index(doc, meanwhile)` calls `meanwhile` (the structure's parse, which holds
    the GIL) once, on the calling thread, while the slices encode on the encoding threads (one
    slice per thread, so no thread waits for the GIL between slices); with one thread, before the
    encode; with the index cached, at once. The tokens stay the one whole encode's."""
    import threading

    from inspector.core.documents.document import from_text
    from inspector.core.runtime import offload
    from inspector.core.text import tokens

    handbook = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"
    long_text = handbook.read_text(encoding="utf-8") + "\n\n café 12345 \u00e9t\u00e9\n" * 50
    monkeypatch.setattr(tokens, "ENCODE_SLICE", 4096)
    monkeypatch.setattr(offload, "cores", lambda: 2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    encode_array = tokens._encode_array
    slices: list[str] = []
    encoding_started = threading.Event()

    def recording(part: str):
        slices.append(threading.current_thread().name)
        encoding_started.set()
        return encode_array(part)

    monkeypatch.setattr(tokens, "_encode_array", recording)
    monkeypatch.setattr(tokens, "OVERLAP_AT_LEAST", 1000)
    for text in (long_text, long_text[:3000]):
        whole = encoding().encode_ordinary(text)
        for threads in (2, 1):
            monkeypatch.setattr(tokens, "ENCODE_THREADS", threads)
            slices.clear()
            encoding_started.clear()
            calls: list[tuple[str, bool]] = []

            def meanwhile(threads: int = threads, calls: list[tuple[str, bool]] = calls) -> None:
                # With threads, the slices were handed out before: the first one starts meanwhile
                # (and this thread encodes nothing before this work is done).
                me = threading.current_thread().name
                overlapped = threads > 1 and encoding_started.wait(30) and me not in slices
                calls.append((me, overlapped))

            tokens._INDEXES.clear()
            doc = from_text(text, "meanwhile.md")
            index = tokens.token_index(doc, meanwhile)
            assert index.tokens.tolist() == whole
            assert calls == [(threading.current_thread().name, threads > 1)]
            if threads > 1:
                assert slices and all(name.startswith("encode") for name in slices)
                assert len(slices) <= threads + 1  # about one slice per thread, not dozens
            calls.clear()
            assert tokens.token_index(doc, meanwhile) is index  # cached: called at once, still once
            assert len(calls) == 1
    # A text shorter than OVERLAP_AT_LEAST: meanwhile first, then the encode on this thread.
    monkeypatch.setattr(tokens, "OVERLAP_AT_LEAST", 5000)
    monkeypatch.setattr(tokens, "ENCODE_THREADS", 2)
    order: list[str] = []
    slices.clear()
    tokens._INDEXES.clear()
    short = from_text(long_text[:3000], "short.md")
    index = tokens.token_index(short, lambda: order.append("meanwhile" if not slices else "after"))
    assert order == ["meanwhile"] and slices == [threading.current_thread().name]
    assert index.tokens.tolist() == encoding().encode_ordinary(short.text)


def test_a_one_slice_texts_tail_goes_to_whoever_comes_first(monkeypatch):
    """Issue 31: a one-slice text's tail (`TAIL_SHARE`) is encoded by the calling thread when its
    work meanwhile ends before the encoding thread's head (the outline alone), by the encoding
    thread when the head ends first (a parse and a word-piece index: the tail was left to encode
    after them); once either way, the tokens the whole encode's."""
    import threading

    from inspector.core.text import tokens

    text = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    assert tokens.OVERLAP_AT_LEAST <= len(text) <= tokens.ENCODE_SLICE
    cut = tokens._tail_cut(text)
    assert len(text) // 2 <= cut < len(text)
    whole = encoding().encode_ordinary(text)
    _encodes_begun_on_two_threads(monkeypatch)
    encode_array = tokens._encode_array
    head_may_end = threading.Event()
    encoded: list[tuple[str, int]] = []

    def held(part: str):
        if len(part) == cut:  # the head, on the encoding thread: held until the tail is encoded
            head_may_end.wait(10)
        encoded.append((threading.current_thread().name, len(part)))
        out = encode_array(part)
        head_may_end.set()
        return out

    monkeypatch.setattr(tokens, "_encode_array", held)
    me = threading.current_thread().name
    # The work meanwhile ends first (the head is held): the caller takes the tail.
    got = tokens._encode_in_slices(text, None, lambda: None, tail=True)
    assert got.tolist() == whole
    assert encoded[0] == (me, len(text) - cut) and encoded[1][0].startswith("encode") and len(encoded) == 2
    # The head ends first: the encoding thread takes the tail, the caller encodes nothing.
    head_may_end.set()
    encoded.clear()
    seen_by_then: list[int] = []

    def slow_meanwhile() -> None:
        # the encoding thread has done the head and the tail before this work ends
        for _ in range(1000):
            if len(encoded) == 2:
                break
            threading.Event().wait(0.01)
        seen_by_then.append(len(encoded))

    got = tokens._encode_in_slices(text, None, slow_meanwhile, tail=True)
    assert got.tolist() == whole
    assert seen_by_then == [2] and [name for name, _n in encoded] == [encoded[0][0]] * 2 != [me] * 2
    assert [n for _name, n in encoded] == [cut, len(text) - cut]


def test_the_tail_is_shared_after_the_outline_alone_not_after_a_parse(monkeypatch):
    """The chunkers' context lets its thread take a share of a one-slice text's encode after the
    outline (recursive, fixed_tokens); after the structure's parse (markdown's blocks) the
    encoding thread encodes the text whole (the compiled parser holds the GIL: the thread, done
    with the head, waited for it to begin the tail)."""
    from inspector.core.chunking.common import SpanContext
    from inspector.core.text import structure, tokens

    text = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    _encodes_begun_on_two_threads(monkeypatch)
    encode_array = tokens._encode_array
    parts: list[int] = []

    def recording(part: str):
        parts.append(len(part))
        return encode_array(part)

    monkeypatch.setattr(tokens, "_encode_array", recording)
    for blocks, expected in ((False, [tokens._tail_cut(text), len(text) - tokens._tail_cut(text)]),
                             (True, [len(text)])):
        tokens._INDEXES.clear()
        structure._STRUCTURES.clear()
        structure._OUTLINES.clear()
        parts.clear()
        ctx = SpanContext(from_text(text, "handbook.md"), blocks=blocks)
        assert sorted(parts) == sorted(expected), blocks
        assert ctx.tokens.tokens.tolist() == encoding().encode_ordinary(text)


def _encodes_begun_on_two_threads(monkeypatch):
    """Two encoding threads, the caller's wait for the first raised (a slow thread start on a
    loaded host is waited for), and an event set when a slice begins encoding."""
    import threading

    from inspector.core.runtime import offload
    from inspector.core.text import tokens

    monkeypatch.setattr(offload, "cores", lambda: 2)
    monkeypatch.setattr(tokens, "ENCODE_THREADS", 2)
    monkeypatch.setattr(tokens, "START_WAIT", 10.0)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    encode_array = tokens._encode_array
    begun = threading.Event()

    def recording(part: str):
        begun.set()
        return encode_array(part)

    monkeypatch.setattr(tokens, "_encode_array", recording)
    return begun


def test_the_first_slice_begins_encoding_before_the_work_meanwhile(monkeypatch):
    """Issue 31: the caller waits until the first encoding thread has begun its slice before the
    work meanwhile (the parse) takes the GIL; before, the thread waited for Python's 5 ms switch
    interval or the parse's end, and the two ran one after the other. Checked without waiting in
    `meanwhile` (five builds; without the wait the slice had begun in 1 of 5, checked). The wait's
    bound is raised here so that a slow thread start on a loaded host is waited for; four of five,
    because a thread descheduled for 5 ms between its start and the encode may still lose the GIL
    to the caller."""

    from inspector.core.documents.document import from_text
    from inspector.core.text import tokens

    text = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    assert len(text) >= tokens.OVERLAP_AT_LEAST
    begun = _encodes_begun_on_two_threads(monkeypatch)
    seen: list[bool] = []
    for k in range(5):
        begun.clear()
        tokens._INDEXES.clear()
        doc = from_text(text + f"\n\nBuild {k}.\n", "first-slice.md")
        index = tokens.token_index(doc, lambda: seen.append(begun.is_set()))
        assert index.tokens.tolist() == encoding().encode_ordinary(doc.text)
    assert sum(seen) >= 4, seen


def test_the_other_slices_are_handed_over_after_the_first_has_begun(monkeypatch):
    """With work meanwhile, only the first slice is handed to the encoding threads before the wait
    for its start; the others after it. Handed over before, a second slice took the GIL before the
    caller as often as not, and on a text whose parse is the longer part two encodes beside the
    parse from its start slowed it (issue 31). Five builds of a text of three slices, four of five
    (as the first-slice test: a thread descheduled between its start and its encode)."""
    import threading

    from inspector.core.documents.document import from_text
    from inspector.core.runtime import offload
    from inspector.core.text import tokens

    handbook = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"
    text = handbook.read_text(encoding="utf-8") * 3
    monkeypatch.setattr(offload, "cores", lambda: 2)
    monkeypatch.setattr(tokens, "ENCODE_THREADS", 2)
    monkeypatch.setattr(tokens, "ENCODE_SLICE", len(text) // 3)
    monkeypatch.setattr(tokens, "START_WAIT", 10.0)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    encode_array = tokens._encode_array
    begun = threading.Event()

    def recording(part: str):
        begun.set()
        return encode_array(part)

    pool = tokens.encode_pool()
    seen: list[list[bool]] = []

    class Recording:
        def submit(self, fn, *args):
            seen[-1].append(begun.is_set())
            return pool.submit(fn, *args)

    monkeypatch.setattr(tokens, "_encode_array", recording)
    monkeypatch.setattr(tokens, "encode_pool", lambda workers=None: Recording())
    for k in range(5):
        begun.clear()
        seen.append([])
        tokens._INDEXES.clear()
        doc = from_text(text + f"\n\nBuild {k}.\n", "handed-over.md")
        index = tokens.token_index(doc, lambda: None)
        assert index.tokens.tolist() == encoding().encode_ordinary(doc.text)
    assert all(len(s) >= 2 and not s[0] for s in seen), seen  # slices after the first
    assert sum(all(s[1:]) for s in seen) >= 4, seen


def test_an_error_meanwhile_reaches_the_caller_after_the_slices(monkeypatch):
    """An error in the work done meanwhile reaches the caller once the slices are back (none is
    left encoding), nothing is cached, and the next build works."""
    import concurrent.futures
    import threading

    from inspector.core.documents.document import from_text
    from inspector.core.runtime import offload
    from inspector.core.text import tokens

    monkeypatch.setattr(tokens, "ENCODE_SLICE", 4096)
    monkeypatch.setattr(tokens, "ENCODE_THREADS", 2)
    monkeypatch.setattr(offload, "cores", lambda: 2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    doc = from_text("A sentence of the handbook, 2024.\n" * 2000, "error.md")
    encode_array = tokens._encode_array
    real_wait = concurrent.futures.wait
    caller_waits = threading.Event()
    started: list[int] = []
    finished: list[int] = []

    def waiting(futures, *args, **kwargs):
        caller_waits.set()
        return real_wait(futures, *args, **kwargs)

    def held(part: str):
        # Still encoding when the error is raised: a slice ends only once the caller waits for
        # it (the bound only keeps a broken build from hanging the test).
        started.append(len(part))
        caller_waits.wait(30)
        finished.append(len(part))
        return encode_array(part)

    def failing() -> None:
        raise ValueError("the parse failed")

    monkeypatch.setattr(concurrent.futures, "wait", waiting)
    monkeypatch.setattr(tokens, "_encode_array", held)
    tokens._INDEXES.clear()
    with pytest.raises(ValueError, match="the parse failed"):
        tokens.token_index(doc, failing)
    assert started and len(finished) == len(started)  # every slice was done before the error came
    assert tokens._INDEXES.lookup(doc.sha256) is None
    monkeypatch.setattr(tokens, "_encode_array", encode_array)
    assert len(tokens.token_index(doc)) == len(encoding().encode_ordinary(doc.text))


def test_span_context_makes_the_outline_while_the_text_encodes_and_parses_on_demand(monkeypatch):
    """The chunkers' context takes the document's outline (issue 31: read off the lines, no parse)
    from the work run meanwhile, the same Outline `outline_of` caches; its `structure` is parsed
    only when asked for, and then is the Structure `structure_of` caches."""
    from inspector.core.chunking.common import SpanContext
    from inspector.core.documents.document import from_text
    from inspector.core.text import structure, tokens

    text = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    doc = from_text(text, "handbook.md")
    tokens._INDEXES.clear()
    structure._STRUCTURES.clear()
    structure._OUTLINES.clear()
    ctx = SpanContext(doc)
    assert ctx.outline is structure.outline_of(doc)
    assert ctx.outline.headings and ctx.tokens is tokens.token_index(doc)
    assert structure._STRUCTURES.lookup((doc.sha256, doc.kind, doc.name)) is None  # not parsed
    assert ctx.structure is structure.structure_of(doc)
    assert structure.outline_of_structure(ctx.structure) == ctx.outline
    tokens._INDEXES.clear()
    structure._STRUCTURES.clear()
    assert SpanContext(doc, blocks=True).structure is structure._STRUCTURES.lookup((doc.sha256, doc.kind, doc.name))


def test_a_one_slice_texts_facts_are_read_while_it_encodes(monkeypatch):
    """Issue 31: a text of one slice (the sample handbook) starts encoding before its code points,
    odd characters, UTF-8 map and classes are read; they are read on the calling thread after the
    work meanwhile, and the index is the one built alone. Four builds of five, as the test of the
    first slice above (a thread descheduled between its start and the encode may lose the GIL)."""

    from inspector.core.text import tokens

    text = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    assert tokens.OVERLAP_AT_LEAST <= len(text) <= tokens.ENCODE_SLICE
    alone = tokens.TokenIndex(text)
    begun = _encodes_begun_on_two_threads(monkeypatch)
    read_facts = tokens._TextFacts.__init__
    events: list[tuple[str, bool]] = []

    def facts(self, *args, **kwargs):
        events.append(("facts", begun.is_set()))
        read_facts(self, *args, **kwargs)

    monkeypatch.setattr(tokens._TextFacts, "__init__", facts)
    for _ in range(5):
        begun.clear()
        index = tokens.TokenIndex(text, lambda: events.append(("meanwhile", begun.is_set())))
        for name, array_alone in alone.arrays().items():
            assert np.array_equal(array_alone, index.arrays()[name]), name
    assert [e for e, _b in events] == ["meanwhile", "facts"] * 5
    assert sum(b for e, b in events if e == "facts") >= 4, events
    monkeypatch.setattr(tokens, "FACTS_BESIDE_THE_ENCODE", False)
    events.clear()
    tokens.TokenIndex(text, lambda: events.append(("meanwhile", begun.is_set())))
    assert [e for e, _b in events] == ["facts", "meanwhile"]  # read first, as a longer text's are


@settings(max_examples=60, deadline=None)
@given(text=any_text | ODD_RUNS | PIECE_RUNS, slice_chars=st.sampled_from([64, 1 << 17]))
def test_an_index_built_with_work_meanwhile_is_the_index_built_alone(text, slice_chars):
    """An index built with work meanwhile (the outline, the parse: on the calling thread while the
    slices encode, or before them) is the index built alone, with one slice or many. With one
    slice the text's facts (code points, odd characters, UTF-8 map, classes) are read meanwhile
    too (`_TextFacts`)."""
    from inspector.core.runtime import offload
    from inspector.core.text import tokens

    ran: list[int] = []
    with pytest.MonkeyPatch.context() as m:
        m.setattr(tokens, "ENCODE_SLICE", slice_chars)
        m.setattr(tokens, "OVERLAP_AT_LEAST", 16)
        m.setattr(offload, "cores", lambda: 2)
        m.delenv("OMP_NUM_THREADS", raising=False)
        alone = tokens.TokenIndex(text)
        beside = tokens.TokenIndex(text, lambda: ran.append(1))
    assert ran == [1]
    for name, array_alone in alone.arrays().items():
        assert np.array_equal(array_alone, beside.arrays()[name]), name


def test_a_forked_child_encodes_on_threads_of_its_own(monkeypatch):
    """The encoding threads do not survive a fork: a child given the parent's pool would queue its
    slices for threads that are not there and wait forever. It makes its own."""
    import os
    import signal
    import time

    from inspector.core.runtime import offload
    from inspector.core.text import tokens

    monkeypatch.setattr(tokens, "ENCODE_SLICE", 4096)
    monkeypatch.setattr(tokens, "ENCODE_THREADS", 2)
    monkeypatch.setattr(offload, "cores", lambda: 2)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    text = "A sentence of the handbook, 2024.\n" * 2000
    expected = len(encoding().encode_ordinary(text))
    assert len(_encode_in_slices(text)) == expected  # the parent's pool is made and used
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only when its own encode came back right
        os._exit(0 if len(_encode_in_slices(text)) == expected else 1)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise AssertionError("the forked child's encode never came back")
    assert os.waitstatus_to_exitcode(status) == 0


def test_encode_threads_follow_the_cores_and_omp_num_threads(monkeypatch):
    """Two threads at most, no more than the cores, and no more than OMP_NUM_THREADS (a Ray
    worker's CPUs, or a user's limit); a value that is not a positive number is ignored."""
    from inspector.core.runtime import offload
    from inspector.core.text import tokens

    monkeypatch.setattr(tokens, "ENCODE_THREADS", 2)
    monkeypatch.setattr(offload, "cores", lambda: 8)
    for value, expected in ((None, 2), ("1", 1), ("4", 2), ("0", 2), ("lots", 2)):
        if value is None:
            monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
        else:
            monkeypatch.setenv("OMP_NUM_THREADS", value)
        assert tokens.encode_threads() == expected, value
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(offload, "cores", lambda: 1)
    assert tokens.encode_threads() == 1 and tokens.encode_pool() is None


# -- spans that begin with line breaks (issue 31: their head found without the expression) -------

@settings(max_examples=300)
@given(text=PIECE_RUNS | RUNS | any_text, data=st.data())
def test_spans_beginning_with_line_breaks_count_exactly(text, data):
    """A span opening on a run of line breaks (a paragraph the recursive chunker split off at a
    blank line) counts and cuts as the span encoded on its own, whatever follows the run."""
    starts = [a for a in range(len(text)) if text[a] == "\n"]
    if not starts:
        return
    index = TokenIndex(text)
    for _ in range(6):
        a = data.draw(st.sampled_from(starts))
        b = data.draw(st.integers(a + 1, len(text)))
        assert index.count(a, b) == count_text(text[a:b]), (a, b)
        n = data.draw(st.integers(0, 40))
        assert index.offset_after(a, b, n) == _oracle_offset_after(text, a, b, n), (a, b, n)


def test_paragraph_heads_of_line_breaks_need_no_expression(monkeypatch):
    """The handbook's paragraphs split off at their blank lines count exactly, and the head of
    each is found without running the piece expression."""
    from inspector.core.text import tokens

    root = Path(__file__).resolve().parents[2]
    text = (root / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    index = TokenIndex(text)
    cuts = [i for i in range(1, len(text) - 2) if text[i:i + 2] == "\n\n" and text[i - 1] != "\n"]
    spans = list(zip(cuts, cuts[1:], strict=False))
    ran = []
    real = tokens._piece_regex()

    class Counting:
        def finditer(self, *args):
            ran.append(args[1:])
            return real.finditer(*args)

    monkeypatch.setattr(tokens, "_piece_regex", lambda: Counting())
    assert len(spans) > 100
    for a, b in spans:
        assert index.count(a, b) == count_text(text[a:b]), (a, b)
    # Only heads whose line breaks are followed by white space (an indented line) run it.
    assert all(text[a:b].lstrip("\n")[:1].isspace() for a, b in ((s, s + 40) for s, _e in ran)), ran[:3]


def _bisections_hold(text: str) -> None:
    import bisect

    from inspector.core.text import tokens

    index = TokenIndex(text)
    p, blocks = index.pieces, index._blocks
    for x in range(len(text) + 1):
        k = x >> tokens.PIECE_SHIFT
        assert bisect.bisect_left(p, x, blocks[k], blocks[k + 1]) == bisect.bisect_left(p, x), x
        assert bisect.bisect_right(p, x, blocks[k], blocks[k + 1]) == bisect.bisect_right(p, x), x


@settings(max_examples=60)
@given(text=st.lists(PIECE_RUNS | RUNS, min_size=1, max_size=40).map("".join))
def test_bisections_inside_a_block_equal_bisections_over_every_piece(text):
    """`piece_blocks`: for every offset, the bisection bounded by its block's entries finds what one
    over all the piece boundaries finds (`TokenIndex._sync` bisects that way)."""
    _bisections_hold(text)


def test_bisections_inside_a_block_on_the_handbook():
    _bisections_hold((Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8"))
