"""Embedder word-piece counts and truncation flags match the model's own tokenizer."""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import from_text
from inspector.core.text.wordpieces import WordPieceIndex, count_text, tokenizer
from tests.core.strategies_for_tests import any_text


@settings(max_examples=150)
@given(text=any_text, data=st.data())
def test_span_word_pieces_equal_tokenizing_the_span(text, data):
    idx = WordPieceIndex(text)
    a = data.draw(st.integers(0, len(text)))
    b = data.draw(st.integers(a, len(text)))
    assert idx.count(a, b) == len(tokenizer().encode(text[a:b], add_special_tokens=False).ids)


def test_annotate_counts_prefix_and_flags_truncation():
    body = "# Leave\n\n" + " ".join(f"word{i} parental allowance" for i in range(200))
    doc = from_text(body, "h.md")
    chunks = annotate(doc, chunk_document(doc, "fixed_tokens", {"size": 1000, "overlap": 0}))
    (c,) = chunks
    full = tokenizer().encode(c.embedded_text(doc)).ids  # with [CLS]/[SEP]
    assert c.embed_tokens == len(full) > 256
    assert c.embed_dropped == len(full) - 256
    assert "truncated_by_embedder" in c.flags
    # The embedder reads up to truncated_at: that much of the span is exactly 256 pieces with prefix.
    kept = c.prefix + "\n\n" + doc.text[c.start:c.truncated_at]
    assert len(tokenizer().encode(kept).ids) == 256
    assert c.start < c.truncated_at < c.end


def test_short_chunks_are_not_flagged_and_prefix_is_switchable():
    doc = from_text("# Title\n\nShort text.", "h.md")
    with_prefix = annotate(doc, chunk_document(doc, "paragraph", {}))
    without = annotate(doc, chunk_document(doc, "paragraph", {}), with_prefix=False)
    assert all("truncated_by_embedder" not in c.flags and c.truncated_at is None for c in with_prefix)
    assert with_prefix[1].embed_tokens == 2 + count_text("Title") + count_text("Short text.")
    assert without[1].embed_tokens == 2 + count_text("Short text.")


@settings(max_examples=100)
@given(text=any_text, data=st.data())
def test_truncation_offset_matches_tokenizing_the_chunk(text, data):
    from inspector.core.chunking.annotate import _truncation_offset
    from inspector.core.chunking.chunk import Chunk

    doc = from_text(text * 3, "t.md")
    a = data.draw(st.integers(0, len(doc.text)))
    b = data.draw(st.integers(a, len(doc.text)))
    keep = data.draw(st.integers(1, 60))
    enc = tokenizer().encode(doc.text[a:b], add_special_tokens=False)
    expected = b if keep >= len(enc.offsets) else a + enc.offsets[keep - 1][1]
    assert _truncation_offset(doc, Chunk(0, a, b, 0), keep) == expected


@settings(max_examples=100)
@given(text=any_text, step=st.integers(1, 40), batch=st.integers(1, 5), threads=st.sampled_from([1, 2]))
def test_index_built_in_short_tokenizer_calls_equals_one_call(text, step, batch, threads):
    """The index tokenizes a long document in calls cut at spaces and line breaks, `batch` slices a
    call, the calls on `threads` threads: words never cross the cuts, so the words and their pieces
    are those of one call over the whole text."""
    from inspector.core.runtime import offload
    from inspector.core.text import tokens, wordpieces

    whole = WordPieceIndex(text)
    saved = wordpieces.ENCODE_STEP, wordpieces.ENCODE_BATCH, tokens.ENCODE_THREADS, offload.cores
    omp = os.environ.pop("OMP_NUM_THREADS", None)  # xdist workers set it to one
    wordpieces.ENCODE_STEP, wordpieces.ENCODE_BATCH, tokens.ENCODE_THREADS = step, batch, threads
    offload.cores = lambda: 2  # two threads wherever the test runs
    try:
        assert tokens.encode_threads() == threads
        cut = WordPieceIndex(text)
    finally:
        wordpieces.ENCODE_STEP, wordpieces.ENCODE_BATCH, tokens.ENCODE_THREADS, offload.cores = saved
        if omp is not None:
            os.environ["OMP_NUM_THREADS"] = omp
    assert cut.word_starts == whole.word_starts and cut.word_ends == whole.word_ends
    assert cut.word_pieces_prefix.tolist() == whole.word_pieces_prefix.tolist()


def _distinct_runs_and_whole(text: str, repeats: int, step: int) -> tuple:
    """(the index of distinct runs, the text encoded whole) of `text` + "\\n" repeated, the runs
    taken `step` at a time (several steps, as a big document takes)."""
    from inspector.core.text import wordpieces

    text = (text + "\n") * repeats
    saved = wordpieces.RUN_STEP
    wordpieces.RUN_STEP = step
    try:
        got = wordpieces._deduplicated_words(text, tokenizer())
    finally:
        wordpieces.RUN_STEP = saved
    return got, wordpieces._encoded_words(text, tokenizer())


@settings(max_examples=150)
@given(text=any_text, repeats=st.integers(1, 4), step=st.integers(1, 6))
def test_index_of_distinct_runs_equals_encoding_the_whole_text(text, repeats, step):
    """The index encodes each distinct run between spaces, tabs and line breaks once and copies
    its words to every place it stands (issue 31): the words, their offsets and pieces are those
    of encoding the text itself, repeated runs, runs of control or odd characters included."""
    got, want = _distinct_runs_and_whole(text, repeats, step)
    assert [a.tolist() for a in got] == [a.tolist() for a in want]


#: Text with every kind of white space `bytes.split()` and the run expression may disagree on.
_SPACY = st.lists(st.sampled_from(list("ab \t\n.é🚀") + ["\x0b", "\x0c", "\r", "\x1c", "\x85", "\xa0",
                                                           "\u2003", "\u3000", "ab", "café "]),
                  max_size=40).map("".join)


@settings(max_examples=200)
@given(text=_SPACY, repeats=st.integers(1, 3), step=st.integers(1, 5))
def test_runs_found_by_split_or_expression_give_the_same_words(text, repeats, step):
    """The runs come from `bytes.split()` of the UTF-8 text when a step of it has no "\\r", "\\v"
    or "\\f" (issue 31: ~2x sooner than the expression), else from the expression: the words are
    those of encoding the text itself either way, other white space included."""
    got, want = _distinct_runs_and_whole(text, repeats, step)
    assert [a.tolist() for a in got] == [a.tolist() for a in want]


def test_handbook_words_from_distinct_runs_equal_the_whole_encoding():
    from pathlib import Path

    from inspector.core.text import wordpieces

    text = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    for t in (text, text.replace("\n\n", "\n\r\n", 3)):  # the split path, then the expression's
        got = wordpieces._deduplicated_words(t, tokenizer())
        want = wordpieces._encoded_words(t, tokenizer())
        assert [a.tolist() for a in got] == [a.tolist() for a in want]


def test_repeated_runs_are_encoded_once(monkeypatch):
    from inspector.core.text import wordpieces

    text = "Elterngeld café 🚀 don't\x01x\u00a0y\t14,5 — naïve\n" * 50 + "tail"
    seen: list[str] = []
    real = wordpieces._encoded_words

    def spy(t, tk):
        seen.append(t)
        return real(t, tk)

    monkeypatch.setattr(wordpieces, "_encoded_words", spy)
    idx = WordPieceIndex(text)
    assert len(seen) == 1 and len(seen[0]) < 60  # the distinct runs only, once
    for a, b in ((0, len(text)), (3, 700), (41, 95), (len(text) - 80, len(text))):
        assert idx.count(a, b) == count_text(text[a:b])


def test_runs_that_hardly_repeat_are_encoded_as_the_text_stands(monkeypatch):
    """Distinct runs above DISTINCT_AT_MOST of those seen: the table of runs would hold most of the
    text for nothing, so the text is encoded whole; the index is the same either way."""
    from inspector.core.text import wordpieces

    text = " ".join(f"id{i:05d}x" for i in range(400)) + "\nthe the the café\n"
    calls: list[int] = []
    real = wordpieces._encoded_words

    def spy(t, tk):
        calls.append(len(t))
        return real(t, tk)

    monkeypatch.setattr(wordpieces, "_encoded_words", spy)
    monkeypatch.setattr(wordpieces, "RUN_STEP", 16)
    got = wordpieces._deduplicated_words(text, tokenizer())
    assert calls == [len(text)]  # the whole text, once: no table of distinct runs
    assert [a.tolist() for a in got] == [a.tolist() for a in real(text, tokenizer())]
    calls.clear()
    monkeypatch.setattr(wordpieces, "DISTINCT_AT_MOST", 1.0)  # kept: the distinct runs only
    again = wordpieces._deduplicated_words(text, tokenizer())
    assert len(calls) == 1 and calls[0] < len(text)
    assert [a.tolist() for a in again] == [a.tolist() for a in got]


#: Printable ASCII with white space, words past the model's 100-character limit, numbers, marks,
#: cases, and text the ASCII path must leave to the tokenizer (an added token's text, any case).
_ASCII = st.lists(st.sampled_from(["Parental", "leave", "LEAVE", "e.g.", "don't", "14,5%", "x" * 101,
                                   "un" * 30 + "able", "(see §3)", "[MASK]", "[mask]", "[CLS", "]",
                                   " ", "  ", "\t", "\n", "\n\n", "a-b_c", "~`^|\\", "{}", "Q&A:", "##ing"]),
                  max_size=30).map("".join)


def _tokenizer_with(change):
    """The bundled tokenizer.json changed by `change(data)`: a second real tokenizer."""
    import json

    from tokenizers import Tokenizer

    data = json.loads(tokenizer().to_str())
    change(data)
    tk = Tokenizer.from_str(json.dumps(data))
    tk.no_truncation()
    tk.no_padding()
    return tk


@settings(max_examples=300)
@given(text=_ASCII | st.text(st.characters(min_codepoint=9, max_codepoint=0x7F), max_size=120))
def test_ascii_words_and_counts_equal_the_tokenizers(text):
    """Issue 31: for printable ASCII, BERT's words and pieces come from an expression and the
    WordPiece model per distinct word, not the tokenizer's pipeline: the same words, offsets and
    pieces, the same counts; text with an added token's text, a control character or anything
    beyond ASCII is not taken."""
    from inspector.core.text import wordpieces

    tk = tokenizer()
    fast = wordpieces.AsciiWordPieces.of(tk)
    assert fast is not None
    want = len(tk.encode(text, add_special_tokens=False).ids)
    if not fast.plain(text):
        assert fast.count(text) is None
        assert "mask" in text.lower() or "cls" in text.lower() or any(
            not (" " <= c <= "~" or c in "\t\n") for c in text)
        return
    assert fast.count(text) == want
    got = fast.words(text)
    assert [a.tolist() for a in got] == [a.tolist() for a in wordpieces._encoded_words(text, tk)]


def test_a_cased_bert_tokenizer_keeps_its_case_and_others_take_the_pipeline():
    """The ASCII path follows the normalizer's lowercase setting (a cased model's "Leave" is not
    "leave"), and is not used for a tokenizer that is not BERT's pipeline (its counts come from
    the tokenizer, still exact)."""
    from inspector.core.text import wordpieces

    def cased(data):
        data["normalizer"]["lowercase"] = False

    def whitespace(data):
        data["pre_tokenizer"] = {"type": "Whitespace"}

    text = "Parental Leave LEAVE leave, e.g. (don't) x1 Q&A:\tHandbooks done.\n" * 3
    cased_tk = _tokenizer_with(cased)
    fast = wordpieces.AsciiWordPieces.of(cased_tk)
    assert fast is not None and not fast.lowercase
    want = wordpieces._encoded_words(text, cased_tk)
    assert [a.tolist() for a in fast.words(text)] == [a.tolist() for a in want]
    assert fast.count(text) == len(cased_tk.encode(text, add_special_tokens=False).ids)
    # "Handbooks": one [UNK] to the cased vocabulary-as-is, "handbook" "##s" once lowercased.
    assert fast.count("Handbooks") == len(cased_tk.encode("Handbooks", add_special_tokens=False).ids) == 1
    assert wordpieces.AsciiWordPieces.of(tokenizer()).count("Handbooks") == 2
    other = _tokenizer_with(whitespace)
    assert wordpieces.AsciiWordPieces.of(other) is None
    idx = WordPieceIndex(text * 5, other)
    assert idx.count(0, len(text) * 5) == len(other.encode(text * 5, add_special_tokens=False).ids)


def test_runs_of_ascii_and_others_are_put_back_in_place():
    """A document of ASCII runs and runs the tokenizer must read (accents, an emoji, a control
    character, an added token's text): the index from both paths is the whole encoding's."""
    from inspector.core.text import wordpieces

    text = ("Elterngeld café 🚀 don't\x01x [MASK] x\u00a0y\t14,5 — naïve e.g. Leave\n" * 40
            + "tail [mask]")
    got = wordpieces._deduplicated_words(text, tokenizer())
    want = wordpieces._encoded_words(text, tokenizer())
    assert [a.tolist() for a in got] == [a.tolist() for a in want]


def test_added_tokens_found_in_the_normalized_text_are_left_to_the_tokenizer():
    """The tokenizer finds an added token marked `normalized` in the normalized text: "naïveté"
    in "Naivete" (accents stripped, case folded), "Zorblax" in "ZORBLAX". Such text is not taken
    by the ASCII path (found by review: it counted "Naivete" as two pieces, the tokenizer one),
    and a token with white space in it, or one taking the white space around it, turns the path
    off, and the word index too (it could match across the places the index cuts at)."""
    from tokenizers import AddedToken

    from inspector.core.text import wordpieces

    tk = _tokenizer_with(lambda data: None)
    tk.add_tokens([AddedToken("naïveté", normalized=True), AddedToken("Zorblax", normalized=True)])
    fast = wordpieces.AsciiWordPieces.of(tk)
    assert fast is not None
    text = "Mr Naivete met Ms NAIVETE and zorblax, ZORBLAX and Zorblaxes.\n" * 3
    for piece in ("Naivete", "ZORBLAX", "zorblax,", text):
        assert fast.count(piece) is None
        assert wordpieces._HFCounter(tk, True).count(piece) == len(tk.encode(piece, add_special_tokens=False).ids)
    assert WordPieceIndex(text, tk).count(0, len(text)) == len(tk.encode(text, add_special_tokens=False).ids)
    assert fast.count("Mr met Ms") == len(tk.encode("Mr met Ms", add_special_tokens=False).ids)

    spaced = _tokenizer_with(lambda data: None)
    spaced.add_tokens([AddedToken("new york", normalized=True)])
    assert wordpieces.AsciiWordPieces.of(spaced) is None
    assert wordpieces._HFCounter(spaced, True).count("new\tyork") == 1


def test_a_tokenizer_whose_added_tokens_take_white_space_is_counted_whole(tmp_path):
    """A tokenizer.json whose [MASK] takes the white space before it (lstrip) can match across a
    run boundary, so the word index (which cuts at white space) is not used for it."""
    import json

    from inspector.core.text import wordpieces

    bundled = wordpieces.model_path()
    assert wordpieces._splits_at_whitespace(bundled)
    data = json.loads((bundled / "tokenizer.json").read_text(encoding="utf-8"))
    for token in data["added_tokens"]:
        if token["content"] == "[MASK]":
            token["lstrip"] = True
    (tmp_path / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")
    assert not wordpieces._splits_at_whitespace(tmp_path)


def test_the_index_and_its_counter_share_one_table_of_word_pieces():
    """The word-piece index is built by its counter's ASCII path: each distinct word is asked of
    the model once, and the spans' ends the counter counts later are answered from that table."""
    import random
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    text = text.encode("ascii", "ignore").decode("ascii")  # every run on the ASCII path
    index = WordPieceIndex(text)
    fast = index._counter.ascii
    assert fast is not None and len(fast.pieces) > 1000  # filled while the index was built
    asked: list[str] = []
    tokenize = fast.pieces._tokenize
    fast.pieces._tokenize = lambda word: (asked.append(word), tokenize(word))[1]
    spaces = [i for i, c in enumerate(text) if c == " "]
    rng = random.Random(7)
    for _ in range(500):
        a, b = sorted(rng.sample(spaces, 2))
        a = max(0, a - rng.randrange(0, 3))  # heads and tails of a word or two around a space
        assert index.count(a, b) == count_text(text[a:b])
    whole = [w for w in asked if f" {w} " in f" {text.lower()} "]
    assert not whole, whole[:5]  # words of the document were not asked again
