"""Pooled chunk vectors: the weighted mean of piece vectors, cached, exact for a single piece."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import from_text
from inspector.core.retrieval.pooled import (
    PieceTable,
    PooledVectors,
    build_piece_table,
    piece_spans,
)


class FakePieces:
    """Deterministic piece encoder: mean vector from the text's letters, count = len(words) + 2."""

    model_id = "fake-pieces"
    dim = 4

    def __init__(self):
        self.calls = 0

    def encode_pieces(self, texts):
        self.calls += 1
        means = np.array([[t.count("a") + 1, t.count("e"), len(t) % 7, 1.0] for t in texts], dtype=np.float32)
        counts = np.array([len(t.split()) + 2 for t in texts], dtype=np.int64)
        return means, counts


def _table(spans, means, counts):
    return PieceTable(np.array([s for s, _ in spans]), np.array([e for _, e in spans]),
                      np.array(means, dtype=np.float32), np.array(counts), "m", "x")


def _chunk(a, b, prefix=""):
    return Chunk(id=0, start=a, end=b, token_count=1, prefix=prefix)


def test_weighted_mean_on_hand_built_vectors():
    # Three pieces of 10 characters each.
    table = _table([(0, 10), (10, 20), (20, 30)], [[1, 0], [0, 1], [1, 1]], [2, 6, 4])
    pv = PooledVectors(table)
    # Whole pieces 0 and 1: (2*[1,0] + 6*[0,1]) -> [2, 6] normalized.
    v = pv.vectors([_chunk(0, 20)], with_prefix=False)[0]
    assert np.allclose(v, np.array([2, 6]) / np.linalg.norm([2, 6]))
    # Half of piece 1 and all of piece 2: 0.5*6*[0,1] + 4*[1,1] = [4, 7].
    v = pv.vectors([_chunk(15, 30)], with_prefix=False)[0]
    assert np.allclose(v, np.array([4, 7]) / np.linalg.norm([4, 7]))
    # Inside one piece: its own direction.
    v = pv.vectors([_chunk(12, 14)], with_prefix=False)[0]
    assert np.allclose(v, [0, 1])


def test_prefix_is_one_more_weighted_piece():
    enc = FakePieces()
    doc = from_text("alpha beta gamma delta " * 20, "d.txt")
    table = build_piece_table(doc, enc, piece_tokens=5)
    pv = PooledVectors(table, enc)
    c = _chunk(0, 30, prefix="area")
    with_p = pv.vectors([c])[0]
    without = pv.vectors([c], with_prefix=False)[0]
    pm, pc = enc.encode_pieces(["area"])
    # Reconstruct: direction of (sum over pieces) + pc * prefix mean.
    raw = pv.vectors([c], with_prefix=False)[0]
    assert not np.allclose(with_p, without)
    assert np.isclose(np.linalg.norm(with_p), 1.0) and np.isclose(np.linalg.norm(raw), 1.0)


def test_piece_table_is_cached_on_disk_and_corrupt_files_are_recomputed(tmp_path):
    enc = FakePieces()
    doc = from_text("Parental leave in Germany lasts 14 months. " * 40, "d.md")
    t1 = build_piece_table(doc, enc, piece_tokens=10, cache_dir=tmp_path)
    calls = enc.calls
    t2 = build_piece_table(doc, enc, piece_tokens=10, cache_dir=tmp_path)
    assert enc.calls == calls and np.array_equal(t1.means, t2.means)
    (path,) = list(tmp_path.rglob("*.npz"))
    path.write_bytes(path.read_bytes()[:100])  # truncated by a crash
    t3 = build_piece_table(doc, enc, piece_tokens=10, cache_dir=tmp_path)
    assert enc.calls > calls and np.array_equal(t1.means, t3.means)


def test_pieces_cover_the_document_and_any_strategy_gets_vectors():
    enc = FakePieces()
    doc = from_text("# T\n\n" + "word " * 500 + "\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", "d.md")
    spans = piece_spans(doc, 25)
    covered = set()
    for a, b in spans:
        covered.update(range(a, b))
    assert all(i in covered for i, ch in enumerate(doc.text) if not ch.isspace())
    pv = PooledVectors(build_piece_table(doc, enc, piece_tokens=25), enc)
    for name in ("fixed_chars", "markdown", "sentences", "parent_child"):
        chunks = chunk_document(doc, name, {})
        vecs = pv.vectors(chunks)
        assert vecs.shape == (len(chunks), enc.dim)
        assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0)


@pytest.mark.slow
def test_single_piece_chunk_equals_exact_embedding(minilm):
    from inspector.core.retrieval.pooled import MiniLMPieceEncoder

    doc = from_text("Employees based in Germany receive parental allowance for up to 14 months. "
                    "France grants sixteen weeks of maternity leave.", "d.txt")
    enc = MiniLMPieceEncoder(minilm)
    table = build_piece_table(doc, enc, piece_tokens=25)
    pv = PooledVectors(table, enc)
    a, b = int(table.starts[0]), int(table.ends[0])
    pooled = pv.vectors([_chunk(a, b)], with_prefix=False)[0]
    exact = minilm.encode([doc.text[a:b]])[0]
    assert np.allclose(pooled, exact, atol=1e-4)
