"""Pooled chunk vectors: weighted sums of piece vectors, truncated where the embedder stops
reading, exact where the cache knows the chunk, cached on disk, exact for a single piece."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.annotate import annotate, read_ends
from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import from_text
from inspector.core.embedding.cache import EmbeddingCache, text_key
from inspector.core.embedding.embedder import HashEmbedder, cache_namespace
from inspector.core.retrieval.pooled import (
    FORMAT_VERSION,
    PieceScheme,
    PieceTable,
    PooledVectors,
    VectorPieceEncoder,
    build_piece_table,
    chunk_vectors,
    index_vectors,
    piece_spans,
)


class FakePieces:
    """Deterministic piece encoder: content mean from the text's letters, count = words, a
    [CLS]+[SEP] sum from the text's length; reads `max_seq_length` word pieces like MiniLM."""

    model_id = "fake-pieces"
    dim = 4

    def __init__(self, max_seq_length=None):
        self.calls = 0
        self.max_seq_length = max_seq_length

    def encode_pieces(self, texts):
        self.calls += 1
        means = np.array([[t.count("a") + 1, t.count("e"), len(t) % 7, 1.0] for t in texts], dtype=np.float32)
        counts = np.array([len(t.split()) for t in texts], dtype=np.int64)
        specials = np.array([[0.5, 0.0, 0.0, len(t) % 3] for t in texts], dtype=np.float32)
        return means, counts, specials


def _table(spans, means, counts, specials=None, window=0):
    scheme = PieceScheme(window=window, stride=max(1, window // 2)) if window else PieceScheme()
    return PieceTable(np.array([s for s, _ in spans]), np.array([e for _, e in spans]),
                      np.array(means, dtype=np.float32), np.array(counts), "m", "x",
                      None if specials is None else np.array(specials, dtype=np.float32), scheme)


def _chunk(a, b, prefix=""):
    return Chunk(id=0, start=a, end=b, token_count=1, prefix=prefix)


def _unit(v):
    v = np.asarray(v, dtype=np.float64)
    return v / np.linalg.norm(v)


def test_weighted_mean_on_hand_built_vectors():
    # Three pieces of 10 characters each.
    table = _table([(0, 10), (10, 20), (20, 30)], [[1, 0], [0, 1], [1, 1]], [2, 6, 4])
    pv = PooledVectors(table)
    # Whole pieces 0 and 1: (2*[1,0] + 6*[0,1]) -> [2, 6] normalized.
    assert np.allclose(pv.vectors([_chunk(0, 20)], with_prefix=False)[0], _unit([2, 6]))
    # Half of piece 1 and all of piece 2: 0.5*6*[0,1] + 4*[1,1] = [4, 7].
    assert np.allclose(pv.vectors([_chunk(15, 30)], with_prefix=False)[0], _unit([4, 7]))
    # Inside one piece: its own direction.
    assert np.allclose(pv.vectors([_chunk(12, 14)], with_prefix=False)[0], [0, 1])


def test_one_special_pair_per_chunk_is_the_weighted_mean_of_the_pieces():
    table = _table([(0, 10), (10, 20)], [[1, 0], [0, 1]], [2, 6], specials=[[4, 0], [0, 8]])
    # One pair: (2*[4,0] + 6*[0,8]) / 8 = [1, 6]; content [2, 6]; sum [3, 12].
    assert np.allclose(PooledVectors(table, specials="mean").vectors([_chunk(0, 20)])[0], _unit([3, 12]))
    # "each": every piece brings its own pair: [2, 6] + [4, 0] + [0, 8].
    assert np.allclose(PooledVectors(table, specials="each").vectors([_chunk(0, 20)])[0], _unit([6, 14]))
    # A chunk that is exactly one piece: its content and its pair, as the model pooled it.
    for mode in ("mean", "each"):
        assert np.allclose(PooledVectors(table, specials=mode).vectors([_chunk(10, 20)])[0], _unit([0, 6 + 8]))
    # Pieces sharing one context (late chunking) share its pair: "mean" adds it once.
    shared = PieceTable(table.starts, table.ends, table.means, table.counts, "m", "x",
                        np.array([[2, 2]], dtype=np.float32), PieceScheme(), np.array([0, 0]))
    assert np.allclose(PooledVectors(shared, specials="mean").vectors([_chunk(0, 20)])[0], _unit([4, 8]))


def _reference(table, a, b, mode):
    """Loop over pieces: what the sparse product must reproduce. "mean": one special pair, the
    mean weighted by covered counts; "each": every piece's pair weighted by its share."""
    content = np.zeros(table.means.shape[1])
    sp = np.zeros_like(content)
    cnt = 0.0
    for s, e, m, c, p in zip(table.starts, table.ends, table.means, table.counts, table.specials, strict=True):
        share = max(0, min(e, b) - max(s, a)) / (e - s)
        content += share * c * m
        sp += share * (c if mode == "mean" else 1) * p
        cnt += share * c
    v = content + ((sp / cnt if cnt else 0) if mode == "mean" else sp)
    n = np.linalg.norm(v)
    return v / n if n else v


@settings(max_examples=200, deadline=None)
@given(bounds=st.lists(st.integers(1, 12), min_size=1, max_size=8),
       gaps=st.lists(st.integers(0, 3), min_size=8, max_size=8),
       seed=st.integers(0, 2 ** 16), span=st.tuples(st.integers(0, 150), st.integers(0, 150)),
       mode=st.sampled_from(["mean", "each"]))
def test_sparse_sums_match_a_loop_over_pieces(bounds, gaps, seed, span, mode):
    rng = np.random.default_rng(seed)
    spans, pos = [], 0
    for length, gap in zip(bounds, gaps, strict=False):  # eight gaps, one per piece at most
        pos += gap
        spans.append((pos, pos + length))
        pos += length
    n = len(spans)
    table = _table(spans, rng.normal(size=(n, 3)), rng.integers(1, 9, size=n), rng.normal(size=(n, 3)))
    a, b = min(span), max(span)
    got = PooledVectors(table, specials=mode).vectors([_chunk(a, b)], with_prefix=False)[0]
    assert np.allclose(got, _reference(table, a, b, mode), atol=1e-5)


def test_prefix_is_one_more_weighted_piece():
    enc = FakePieces()
    doc = from_text("alpha beta gamma delta " * 20, "d.txt")
    table = build_piece_table(doc, enc, piece_tokens=5)
    pv = PooledVectors(table, enc, doc=doc)
    c = _chunk(0, 30, prefix="area")
    body_only = PooledVectors(table, enc, doc=doc, specials="each")
    assert pv.specials_mode == "each"  # the default
    pm, pc, psp = enc.encode_pieces(["area"])
    # "each" mode makes the prefix exactly one more piece: content and its own pair.
    raw = []
    for s, e, m, n, p in zip(table.starts, table.ends, table.means, table.counts, table.specials, strict=True):
        share = max(0, min(e, 30) - max(s, 0)) / (e - s)
        raw.append(share * (n * m.astype(np.float64) + p))
    want = _unit(np.sum(raw, axis=0) + pc[0] * pm[0] + psp[0])
    assert np.allclose(body_only.vectors([c])[0], want, atol=1e-6)
    assert not np.allclose(pv.vectors([c])[0], pv.vectors([c], with_prefix=False)[0])


def test_piece_table_is_cached_on_disk_and_corrupt_files_are_recomputed(tmp_path):
    enc = FakePieces()
    doc = from_text("Parental leave in Germany lasts 14 months. " * 40, "d.md")
    t1 = build_piece_table(doc, enc, piece_tokens=10, cache_dir=tmp_path)
    calls = enc.calls
    t2 = build_piece_table(doc, enc, piece_tokens=10, cache_dir=tmp_path)
    assert enc.calls == calls and np.array_equal(t1.means, t2.means)
    assert np.array_equal(t1.specials, t2.specials) and t2.scheme == t1.scheme
    (path,) = list(tmp_path.rglob("*.npz"))
    assert path.name.endswith(f"-v{FORMAT_VERSION}.npz")
    data = path.read_bytes()
    path.write_bytes(data[:100])  # truncated by a crash
    t3 = build_piece_table(doc, enc, piece_tokens=10, cache_dir=tmp_path)
    assert enc.calls > calls and np.array_equal(t1.means, t3.means)
    # A flipped byte inside the stored arrays: the zip's checksum refuses it.
    calls = enc.calls
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    t4 = build_piece_table(doc, enc, piece_tokens=10, cache_dir=tmp_path)
    assert enc.calls > calls and np.array_equal(t1.means, t4.means)


def test_a_stored_table_of_another_scheme_or_document_is_not_used(tmp_path):
    enc = FakePieces()
    doc = from_text("Parental leave in Germany lasts 14 months. " * 40, "d.md")
    other = from_text("France grants sixteen weeks of maternity leave. " * 40, "e.md")
    build_piece_table(doc, enc, piece_tokens=10, cache_dir=tmp_path)
    (path,) = list(tmp_path.rglob("*.npz"))
    # The other document's file name, this document's content: the recorded sha tells them apart.
    theirs = path.with_name(path.name.replace(doc.sha256, other.sha256))
    theirs.write_bytes(path.read_bytes())
    calls = enc.calls
    t = build_piece_table(other, enc, piece_tokens=10, cache_dir=tmp_path)
    assert enc.calls > calls and t.ends.max() <= len(other.text)
    assert t.doc_sha == other.sha256


@pytest.mark.parametrize("pieces", ["grid", "sentences"])
def test_pieces_cover_the_document_and_any_strategy_gets_vectors(pieces):
    enc = FakePieces()
    doc = from_text("# T\n\nSome words here. " + "word " * 500 + "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", "d.md")
    spans = piece_spans(doc, 25, pieces)
    assert all(a < b for a, b in spans) and all(b0 <= a1 for (_, b0), (a1, _) in itertools.pairwise(spans))
    covered = set()
    for a, b in spans:
        covered.update(range(a, b))
    assert all(i in covered for i, ch in enumerate(doc.text) if not ch.isspace())
    pv = PooledVectors(build_piece_table(doc, enc, scheme=PieceScheme(pieces, 25)), enc, doc=doc)
    for name in ("fixed_chars", "markdown", "sentences", "parent_child"):
        chunks = chunk_document(doc, name, {})
        vecs = pv.vectors(chunks)
        assert vecs.shape == (len(chunks), enc.dim)
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0)


# -- truncation ---------------------------------------------------------------------------------

LONG = ("# Leave\n\n" + " ".join(f"Employees in region{i} receive allowance number {i * 7}." for i in range(120)))


@pytest.mark.parametrize("prefix", ["", "Handbook > Leave > Germany and the rest of the long heading path"])
def test_a_truncated_chunk_pools_only_what_the_embedder_reads(prefix):
    doc = from_text(LONG, "d.md")
    enc = FakePieces(max_seq_length=256)
    pv = PooledVectors(build_piece_table(doc, enc, piece_tokens=7), enc, doc=doc)
    long = Chunk(id=0, start=9, end=len(doc.text), token_count=1, prefix=prefix)
    (annotated,) = annotate(doc, [long], with_prefix=True, limit=256)
    assert annotated.truncated_at is not None and annotated.truncated_at < long.end
    head = Chunk(id=1, start=long.start, end=annotated.truncated_at, token_count=1, prefix=prefix)
    v_long, v_head = pv.vectors([long, head])
    assert np.allclose(v_long, v_head)
    # Not mirroring truncation reads the whole span, and gets another vector.
    free = PooledVectors(pv.tables, enc, doc=doc, truncate=False).vectors([long])[0]
    assert not np.allclose(free, v_head)
    # A chunk the embedder reads whole is unchanged.
    short = Chunk(id=2, start=9, end=200, token_count=1, prefix=prefix)
    untruncated = PooledVectors(pv.tables, enc, doc=doc, truncate=False)
    assert np.allclose(pv.vectors([short])[0], untruncated.vectors([short])[0])


def test_read_ends_agree_with_annotate_for_every_strategy():
    doc = from_text(LONG + "\n\n## More\n\n" + LONG[10:], "d.md")
    for name, params in (("fixed_tokens", {"size": 400, "overlap": 50}),
                         ("markdown", {"size": 300, "fit_embedder": False}),
                         ("sentences", {"size": 350}), ("fixed_chars", {"size": 1500})):
        chunks = chunk_document(doc, name, params)
        for with_prefix in (True, False):
            want = [c.truncated_at if c.truncated_at is not None else c.end
                    for c in annotate(doc, chunks, with_prefix=with_prefix, limit=256)]
            got = read_ends(doc, chunks, with_prefix=with_prefix, limit=256)
            assert list(got) == want
        assert any(c.truncated_at for c in annotate(doc, chunks, limit=256))


# -- exact vectors from the cache ---------------------------------------------------------------

def test_cached_exact_vectors_replace_pooled_ones(tmp_path):
    emb = HashEmbedder(dim=16)
    enc = VectorPieceEncoder(emb)
    doc = from_text("# Leave\n\n" + " ".join(f"Leave in region {i} lasts {i} months." for i in range(40)), "d.md")
    pv = PooledVectors(build_piece_table(doc, enc, piece_tokens=10), enc, doc=doc)
    chunks = chunk_document(doc, "markdown", {"size": 40})
    assert len(chunks) >= 3
    cache = EmbeddingCache(tmp_path)
    known = chunks[1]
    exact = emb.encode([known.embedded_text(doc, with_prefix=True)])
    cache.put_many(cache_namespace(emb), [text_key(known.embedded_text(doc, with_prefix=True))], exact)
    cv = chunk_vectors({doc.doc_id: chunks}, {doc.doc_id: pv}, with_prefix=True, cache=cache)
    assert list(cv.exact) == [c is known for c in chunks]
    assert np.allclose(cv.vectors[1], exact[0])
    pooled = pv.vectors(chunks)
    assert np.allclose(np.delete(cv.vectors, 1, axis=0), np.delete(pooled, 1, axis=0))
    assert not np.allclose(cv.vectors[1], pooled[1])
    # The key is the exact embedded text: without the prefix the cached vector does not apply.
    plain = chunk_vectors({doc.doc_id: chunks}, {doc.doc_id: pv}, with_prefix=False, cache=cache)
    assert not plain.exact.any()
    # The old call still works (no cache: pooled only).
    assert np.allclose(index_vectors({doc.doc_id: chunks}, {doc.doc_id: pv}, with_prefix=True), pooled)


def test_cached_vectors_come_from_the_cache_on_disk(tmp_path):
    emb = HashEmbedder(dim=16)
    enc = VectorPieceEncoder(emb)
    doc = from_text(" ".join(f"Leave in region {i} lasts {i} months." for i in range(40)), "d.txt")
    pv = PooledVectors(build_piece_table(doc, enc, piece_tokens=10), enc, doc=doc)
    chunks = chunk_document(doc, "fixed_tokens", {"size": 32, "overlap": 0})
    from inspector.core.embedding.embedder import embed_texts

    embed_texts(emb, [c.embedded_text(doc, with_prefix=False) for c in chunks[:2]], EmbeddingCache(tmp_path))
    cv = chunk_vectors({doc.doc_id: chunks}, {doc.doc_id: pv}, with_prefix=False,
                       cache=EmbeddingCache(tmp_path))  # a fresh cache reads the segment written
    assert list(cv.exact) == [i < 2 for i in range(len(chunks))]
    assert 0 < cv.exact_share < 1


# -- several windows ----------------------------------------------------------------------------

def test_several_windows_blend_by_chunk_length():
    # Two late tables over the same 4 pieces of 10 characters, 16 content tokens each.
    spans = [(0, 10), (10, 20), (20, 30), (30, 40)]
    small = _table(spans, [[1, 0]] * 4, [16] * 4, window=32)
    large = _table(spans, [[0, 1]] * 4, [16] * 4, window=128)
    pv = PooledVectors([large, small])
    assert pv.table is small  # sorted by window
    # One piece: 16 + 2 word pieces read, below the small window: its vector only.
    assert np.allclose(pv.vectors([_chunk(0, 10)], with_prefix=False)[0], [1, 0])
    # Two pieces: 34 read, a little above 32: mostly the small window.
    v = pv.vectors([_chunk(0, 20)], with_prefix=False)[0]
    t = (np.log2(34) - 5) / 2
    assert np.allclose(v, _unit([1 - t, t])) and v[0] > 0.9
    # All four pieces: 64 + 2 word pieces, between 32 and 128: both, by log length.
    v = pv.vectors([_chunk(0, 40)], with_prefix=False)[0]
    t = (np.log2(66) - 5) / 2
    assert np.allclose(v, _unit([1 - t, t]))
    with pytest.raises(ValueError):
        PooledVectors([small, _table(spans, [[0, 1]] * 4, [16] * 4)])  # a table without a window


# -- the real model -----------------------------------------------------------------------------

TEXT = ("Employees based in Germany receive parental allowance for up to 14 months. "
        "France grants sixteen weeks of maternity leave.")


@pytest.mark.slow
def test_single_piece_chunk_equals_exact_embedding(minilm):
    from inspector.core.retrieval.pooled import MiniLMPieceEncoder

    doc = from_text(TEXT, "d.txt")
    enc = MiniLMPieceEncoder(minilm)
    table = build_piece_table(doc, enc, piece_tokens=25)
    pv = PooledVectors(table, enc, doc=doc)
    a, b = int(table.starts[0]), int(table.ends[0])
    pooled = pv.vectors([_chunk(a, b)], with_prefix=False)[0]
    exact = minilm.encode([doc.text[a:b]])[0]
    assert np.allclose(pooled, exact, atol=1e-4)


@pytest.mark.slow
def test_late_chunking_of_a_document_shorter_than_a_window_is_exact(minilm):
    from inspector.core.retrieval.pooled import MiniLMPieceEncoder

    doc = from_text(TEXT, "d.txt")
    enc = MiniLMPieceEncoder(minilm)
    tables = [build_piece_table(doc, enc, scheme=PieceScheme("grid", 5, w, w // 2)) for w in (64, 128)]
    assert len(tables[0]) > 3  # many pieces, one window: every token saw the whole text
    whole = _chunk(0, len(doc.text))
    exact = minilm.encode([doc.text])[0]
    for pv in (PooledVectors(tables[0], enc, doc=doc, specials="mean"),
               PooledVectors(tables, enc, doc=doc, specials="mean")):
        assert np.allclose(pv.vectors([whole], with_prefix=False)[0], exact, atol=1e-4)


@pytest.mark.slow
def test_late_chunking_takes_every_token_once(minilm):
    from inspector.core.retrieval.pooled import MiniLMPieceEncoder
    from inspector.core.text.wordpieces import count_text

    doc = from_text(" ".join([TEXT] * 12), "d.txt")
    enc = MiniLMPieceEncoder(minilm)
    table = build_piece_table(doc, enc, scheme=PieceScheme("grid", 12, 64, 24))
    assert int(table.counts.sum()) == count_text(doc.text) > 200  # several windows
    assert all(int(c) == count_text(doc.text[a:b])
               for a, b, c in zip(table.starts, table.ends, table.counts, strict=True))
    assert np.isfinite(table.means).all() and np.isfinite(table.specials).all()


WORDY = ("Übergangsgeld and naïve unbelievably-long words: Elterngeldanspruch (§ 4 BEEG) lasts 14 "
         "months; co-operation, e-mail, 3.5% and 🚀 rockets. ") * 6


@settings(max_examples=150, deadline=None)
@given(a=st.integers(0, len(WORDY)), b=st.integers(0, len(WORDY)), limit=st.integers(3, 60),
       prefix=st.sampled_from(["", "Handbook > Leave"]))
def test_read_ends_match_annotate_on_any_span(a, b, limit, prefix):
    doc = from_text(WORDY, "w.txt")
    a, b = min(a, b), max(a, b)
    if a == b:
        b = min(len(WORDY), a + 1)
    c = Chunk(id=0, start=a, end=b, token_count=1, prefix=prefix)
    (ann,) = annotate(doc, [c], with_prefix=True, limit=limit)
    want = ann.truncated_at if ann.truncated_at is not None else b
    assert read_ends(doc, [c], with_prefix=True, limit=limit)[0] == want


@pytest.mark.slow
def test_late_chunking_takes_each_token_from_the_window_where_it_is_most_central(minilm):
    from inspector.core.retrieval.pooled import MiniLMPieceEncoder
    from inspector.core.text.wordpieces import tokenizer

    doc = from_text(" ".join([TEXT] * 8), "d.txt")
    enc = MiniLMPieceEncoder(minilm)
    window, stride = 64, 24
    table = build_piece_table(doc, enc, scheme=PieceScheme("grid", 6, window, stride))
    ids = tokenizer().encode(doc.text, add_special_tokens=False)
    starts = np.array([a for a, _ in ids.offsets])
    body = window - 2
    wins = list(range(0, len(ids.ids) - body + 1, stride))
    if wins[-1] + body < len(ids.ids):
        wins.append(len(ids.ids) - body)
    assert len(table.specials) == len(wins) >= 4
    # Recompute one piece in the middle by hand: each of its tokens from the window whose centre
    # is nearest, run through the model alone.
    p = len(table) // 2
    toks = np.flatnonzero((starts >= table.starts[p]) & (starts < table.ends[p]))
    cls_id, sep_id = tokenizer().token_to_id("[CLS]"), tokenizer().token_to_id("[SEP]")
    want = np.zeros(enc.dim)
    for t in toks:
        w = min(wins, key=lambda w0: (abs(t - (w0 + (body - 1) / 2)), -w0))
        seq = np.asarray([[cls_id, *ids.ids[w:w + body], sep_id]], dtype=np.int64)
        h = minilm.token_states(seq, np.ones_like(seq))[0]  # the model alone (torch or OpenVINO)
        want += h[1 + t - w]
    assert table.counts[p] == len(toks)
    assert np.allclose(table.means[p] * table.counts[p], want, atol=2e-3)
