"""Embedders, the persistent embedding cache and `embed_texts` (HashEmbedder; one slow MiniLM test)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import from_text
from inspector.core.embedding import cache as cache_mod
from inspector.core.embedding.cache import (
    SEGMENT_SUFFIX,
    EmbeddingCache,
    decode_segment,
    encode_segment,
    text_key,
)
from inspector.core.embedding.embedder import (
    Cancelled,
    Embedder,
    HashEmbedder,
    MiniLMEmbedder,
    cache_namespace,
    embed_query,
    embed_texts,
)
from tests.core.embedders_for_tests import Counting

ROOT = Path(__file__).resolve().parents[2]


TEXTS = [f"sentence number {i} about {'leave' if i % 2 else 'refunds'} and topic {i % 7}" for i in range(40)]


def _segments(c: EmbeddingCache, emb) -> list[Path]:
    return sorted(c.model_folder(cache_namespace(emb)).glob(f"*{SEGMENT_SUFFIX}"))


# -- HashEmbedder ----------------------------------------------------------------------------
def test_hash_embedder_is_deterministic_normalized_and_lexical():
    emb = HashEmbedder()
    a = emb.encode(["Parental leave in Germany", "parental LEAVE in germany", "Expense refunds", ""])
    assert a.shape == (4, 256) and a.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(a, HashEmbedder().encode(["Parental leave in Germany", "parental LEAVE in germany",
                                                             "Expense refunds", ""]))
    assert a[0] @ a[1] == pytest.approx(1.0, abs=1e-6)  # case does not matter
    q = emb.encode(["how long is parental leave"])[0]
    assert q @ a[0] > q @ a[2]
    assert isinstance(emb, Embedder)


def test_importing_the_core_does_not_import_torch():
    code = ("import sys; import inspector.core.embedding.embedder, inspector.core.retrieval.index, "
            "inspector.core.chunking.semantic, inspector.core.embedding.cache; "
            "bad = [m for m in ('torch', 'sentence_transformers', 'transformers', 'PySide6') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_minilm_config_is_read_without_loading_the_model():
    emb = MiniLMEmbedder()
    assert (emb.dim, emb.max_seq_length, emb.loaded) == (384, 256, False)


# -- segment format --------------------------------------------------------------------------
def test_segment_round_trip_and_damage_detection():
    keys = [text_key(t) for t in TEXTS[:5]]
    vecs = HashEmbedder(dim=8).encode(TEXTS[:5])
    data = encode_segment(keys, vecs)
    k2, v2, intact = decode_segment(data, 8)
    assert intact and k2 == keys
    np.testing.assert_array_equal(v2, vecs)
    # Truncated in the middle of the fourth record: three records survive.
    rec = (len(data) - 20) // 5
    k3, v3, intact = decode_segment(data[:20 + 3 * rec + rec // 2], 8)
    assert not intact and k3 == keys[:3]
    # One flipped byte inside the second vector: that record alone is dropped.
    bad = bytearray(data)
    bad[20 + rec + 32 + 5] ^= 0xFF
    k4, _, intact = decode_segment(bytes(bad), 8)
    assert not intact and k4 == keys[:1] + keys[2:]
    # A broken header, another dimension, or nothing at all: no records, no exception.
    assert decode_segment(b"XX" + data[2:], 8)[0] == []
    assert decode_segment(data, 16)[0] == []
    assert decode_segment(b"", 8)[0] == []


# -- cache and embed_texts -------------------------------------------------------------------
def test_cache_round_trip_across_instances(tmp_path):
    emb = Counting(HashEmbedder())
    first = embed_texts(emb, TEXTS, EmbeddingCache(tmp_path))
    assert len(emb.texts) == len(TEXTS)
    again = Counting(HashEmbedder())
    fresh = EmbeddingCache(tmp_path)  # a new process, as far as the cache can tell
    second = embed_texts(again, TEXTS, fresh)
    assert again.calls == []
    np.testing.assert_array_equal(first, second)
    assert fresh.hits == len(TEXTS)


def test_identical_texts_are_embedded_once_and_batched_longest_first(tmp_path):
    emb = Counting(HashEmbedder())
    texts = ["b", "a much longer text", "b", "cc", "a much longer text"] * 3
    out = embed_texts(emb, texts, None, batch_size=2)
    assert emb.calls == [["a much longer text", "cc"], ["b"]]
    np.testing.assert_array_equal(out, HashEmbedder().encode(texts))


@pytest.mark.parametrize("damage", ["truncate", "garble", "header", "empty", "unreadable"])
def test_damaged_cache_files_are_detected_and_recomputed(tmp_path, damage):
    base = HashEmbedder()
    reference = base.encode(TEXTS)
    embed_texts(base, TEXTS, EmbeddingCache(tmp_path))
    [seg] = _segments(EmbeddingCache(tmp_path), base)
    data = seg.read_bytes()
    rec = (len(data) - 20) // len(TEXTS)
    if damage == "truncate":
        seg.write_bytes(data[:20 + 10 * rec + 7])  # 10 whole records survive
    elif damage == "garble":
        bad = bytearray(data)
        for r in (3, 17):
            bad[20 + r * rec + 40] ^= 0x5A
        seg.write_bytes(bytes(bad))
    elif damage == "header":
        seg.write_bytes(b"garbage!" + data[8:])
    elif damage == "empty":
        seg.write_bytes(b"")
    else:
        (seg.parent / f"seg-unreadable{SEGMENT_SUFFIX}").mkdir()  # reading it raises OSError
    expected_missing = {"truncate": len(TEXTS) - 10, "garble": 2, "header": len(TEXTS), "empty": len(TEXTS),
                        "unreadable": 0}[damage]

    emb = Counting(base)
    c = EmbeddingCache(tmp_path)
    out = embed_texts(emb, TEXTS, c)
    np.testing.assert_allclose(out, reference, atol=1e-6)
    assert len(emb.texts) == expected_missing
    assert c.damaged == 1
    if damage == "garble":
        order = decode_segment(data, base.dim)[0]  # records are stored in embedding order
        by_key = {text_key(t): t for t in TEXTS}
        assert sorted(emb.texts) == sorted([by_key[order[3]], by_key[order[17]]])
    # Whatever was damaged has been replaced: a third reader finds everything, intact.
    third = Counting(base)
    c3 = EmbeddingCache(tmp_path)
    np.testing.assert_allclose(embed_texts(third, TEXTS, c3), reference, atol=1e-6)
    assert third.calls == []
    assert c3.damaged == (1 if damage == "unreadable" else 0)


def test_only_texts_missing_after_changing_the_overlap_are_embedded(tmp_path):
    text = " ".join(f"Sentence {i} says something about topic {i % 11} and rule {i % 5}." for i in range(300))
    doc = from_text(text, "t.txt")
    c = EmbeddingCache(tmp_path)
    emb = Counting(HashEmbedder())
    before = [ch.embedded_text(doc) for ch in chunk_document(doc, "fixed_tokens", {"size": 64, "overlap": 0})]
    embed_texts(emb, before, c)
    assert len(emb.texts) == len(set(before))
    emb.calls.clear()
    after = [ch.embedded_text(doc) for ch in chunk_document(doc, "fixed_tokens", {"size": 64, "overlap": 32})]
    out = embed_texts(emb, after, c)
    assert sorted(emb.texts) == sorted(set(after) - set(before))
    assert 0 < len(emb.texts) < len(after)
    np.testing.assert_allclose(out, HashEmbedder().encode(after), atol=1e-6)


def test_progress_and_cancel(tmp_path):
    emb = Counting(HashEmbedder())
    c = EmbeddingCache(tmp_path)
    embed_texts(emb, TEXTS[:10], c)
    seen: list[tuple[int, int]] = []
    embed_texts(emb, TEXTS, c, progress=lambda d, t: seen.append((d, t)), batch_size=8)
    assert seen[0] == (10, 40) and seen[-1] == (40, 40)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) == 1 + 4

    emb2 = Counting(HashEmbedder(dim=64))
    c2 = EmbeddingCache(tmp_path / "other")
    asked = []

    def cancel():
        asked.append(1)
        return len(asked) > 2  # two batches, then stop

    with pytest.raises(Cancelled):
        embed_texts(emb2, TEXTS, c2, cancel=cancel, batch_size=8)
    assert len(emb2.texts) == 16
    # What was computed before the cancel is on disk: a new run embeds only the rest.
    emb3 = Counting(HashEmbedder(dim=64))
    embed_texts(emb3, TEXTS, EmbeddingCache(tmp_path / "other"))
    assert len(emb3.texts) == len(TEXTS) - 16


def test_models_do_not_share_vectors_and_clear_forgets(tmp_path):
    c = EmbeddingCache(tmp_path)
    embed_texts(HashEmbedder(dim=32), TEXTS, c)
    other = Counting(HashEmbedder(dim=32, trigram_weight=0.0))
    embed_texts(other, TEXTS, c)
    assert len(other.texts) == len(TEXTS)
    c.clear()
    again = Counting(HashEmbedder(dim=32))
    embed_texts(again, TEXTS, EmbeddingCache(tmp_path))
    assert len(again.texts) == len(TEXTS)


def test_many_segments_are_compacted(tmp_path, monkeypatch):
    emb = HashEmbedder(dim=16)
    writer = EmbeddingCache(tmp_path)
    limit = cache_mod.MAX_SEGMENTS
    monkeypatch.setattr(cache_mod, "MAX_SEGMENTS", 10_000)  # a writer that never merges (several processes)
    for i in range(limit + 3):
        embed_texts(emb, TEXTS[i:i + 1], writer)  # one flush, one segment each
    monkeypatch.undo()
    assert len(_segments(writer, emb)) == cache_mod.MAX_SEGMENTS + 3
    c = EmbeddingCache(tmp_path)
    assert len(c.get_many(cache_namespace(emb), [text_key(t) for t in TEXTS], 16)) == cache_mod.MAX_SEGMENTS + 3
    assert len(_segments(c, emb)) == 1


def test_query_embedding_is_cached_in_memory_without_a_file(tmp_path):
    emb = Counting(HashEmbedder())
    c = EmbeddingCache(tmp_path)
    v = embed_query(emb, "how long is parental leave", c)
    w = embed_query(emb, "how long is parental leave", c)
    assert len(emb.calls) == 1 and v.shape == (256,)
    np.testing.assert_array_equal(v, w)
    assert _segments(c, emb) == [] and c.pending_count() == 1


def test_default_cache_folder_follows_the_environment(tmp_path, monkeypatch):
    from inspector.core.runtime import cachedir

    monkeypatch.setenv(cachedir.ENV_VAR, str(tmp_path / "here"))
    assert cachedir.default_cache_dir() == tmp_path / "here"
    assert EmbeddingCache().folder == tmp_path / "here" / "embeddings"


def test_unwritable_cache_degrades_to_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    emb = Counting(HashEmbedder())
    c = EmbeddingCache(blocker)  # <file>/embeddings cannot be created
    embed_texts(emb, TEXTS, c)
    embed_texts(emb, TEXTS, c)
    assert len(emb.texts) == len(TEXTS)


# -- the real model --------------------------------------------------------------------------
@pytest.mark.slow
def test_minilm_embeds_meaning(minilm, tmp_path):
    germany = "Employee Handbook > Parental leave > Germany\n\nEmployees in Germany receive 14 months of Elterngeld."
    france = "Employee Handbook > Parental leave > France\n\nIn France the congé de naissance lasts 10 weeks."
    refunds = "Employee Handbook > Expenses\n\nSubmit receipts within 30 days to get a refund."
    vecs = embed_texts(minilm, [germany, france, refunds], EmbeddingCache(tmp_path))
    q = embed_query(minilm, "parental leave Germany")
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32 and q.shape == (384,)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert q @ vecs[0] > q @ vecs[1] > q @ vecs[2]
    # Served from the cache, the vectors are the same ones.
    np.testing.assert_allclose(embed_texts(minilm, [germany], EmbeddingCache(tmp_path))[0], vecs[0], atol=1e-6)
