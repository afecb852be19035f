"""The embedding cache's memory is bounded: segment files are indexed (keys and rows), vectors are
read on demand and checked again, a byte-capped LRU sits in front, compaction streams.

HashEmbedder-free where possible: vectors are a pure function of the key (`_vec`), so a vector
served for the wrong key, a stale one or a half-read one shows as a mismatch."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inspector.core.embedding import cache as cache_mod
from inspector.core.embedding.cache import (
    ENTRY_OVERHEAD,
    SEGMENT_SUFFIX,
    EmbeddingCache,
    decode_segment,
    text_key,
)
from inspector.core.embedding.embedder import HashEmbedder, cache_namespace, embed_texts
from tests.core.embedders_for_tests import Counting, run_threads

MODEL = "test-model"


@functools.cache
def _key(i: int) -> bytes:
    return hashlib.sha256(f"text {i}".encode()).digest()


@functools.cache
def _vec(i: int, dim: int) -> np.ndarray:
    v = np.random.default_rng(i).standard_normal(dim).astype(np.float32)
    v.setflags(write=False)
    return v


def _put(cache: EmbeddingCache, ids, dim: int) -> None:
    ids = list(ids)
    cache.put_many(MODEL, [_key(i) for i in ids], np.stack([_vec(i, dim) for i in ids]) if ids
                   else np.zeros((0, dim), np.float32))


def _segment_files(cache: EmbeddingCache, model: str = MODEL) -> list[Path]:
    return sorted(cache.model_folder(model).glob(f"*{SEGMENT_SUFFIX}"))


def _check(found: dict[bytes, np.ndarray], ids, dim: int) -> None:
    assert set(found) == {_key(i) for i in ids}
    for i in ids:
        v = found[_key(i)]
        assert v.dtype == np.float32 and v.shape == (dim,) and not v.flags.writeable
        assert np.array_equal(v, _vec(i, dim)), i


# -- the bound --------------------------------------------------------------------------------------
def test_memory_layer_never_exceeds_its_bound_while_a_far_larger_cache_is_written_and_read(tmp_path):
    dim, n, bound = 64, 6000, 256 * 1024
    per_entry = dim * 4 + ENTRY_OVERHEAD
    assert n * per_entry > 10 * bound
    writer = EmbeddingCache(tmp_path, memory_bytes=bound)
    rng = np.random.default_rng(1)
    for start in range(0, n, 150):  # 40 flushes: the writer also merges segments as it goes
        _put(writer, range(start, start + 150), dim)
        writer.flush()
        ids = {int(i) for i in rng.integers(0, start + 150, 200)}  # from memory or disk
        _check(writer.get_many(MODEL, [_key(i) for i in ids], dim), ids, dim)
        stats = writer.memory_stats()
        assert stats.memory_bytes <= bound and stats.memory_entries * per_entry == stats.memory_bytes
        assert stats.segments <= cache_mod.MAX_SEGMENTS + 1
    assert writer.count(MODEL) == n
    assert len(_segment_files(writer)) == writer.memory_stats().segments  # merged files are gone

    warm = EmbeddingCache(tmp_path, memory_bytes=bound)  # first calls import lazily: not the cache
    _check(warm.get_many(MODEL, [_key(i) for i in range(0, n, 7)], dim), range(0, n, 7), dim)
    assert warm.memory_stats().disk_keys == n
    tracemalloc.start(4)  # the cache allocates in its own frames (or one numpy frame below)
    try:
        reader = EmbeddingCache(tmp_path, memory_bytes=bound)  # a new process, as far as it can tell
        before = tracemalloc.take_snapshot()
        order = rng.permutation(n)
        for at in range(0, n, 300):
            ids = order[at:at + 300].tolist()
            _check(reader.get_many(MODEL, [_key(i) for i in ids], dim), ids, dim)
            assert reader.memory_stats().memory_bytes <= bound
        # Everything again: half of it twice in a row (the second time from memory).
        for at in range(0, n, 500):
            ids = order[at:at + 500].tolist()
            for _ in range(2):
                _check(reader.get_many(MODEL, [_key(i) for i in ids], dim), ids, dim)
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    in_cache = [tracemalloc.Filter(True, cache_mod.__file__, all_frames=True)]
    held = sum(d.size_diff for d in after.filter_traces(in_cache).compare_to(before.filter_traces(in_cache),
                                                                               "filename"))
    stats = reader.memory_stats()
    assert stats.memory_bytes <= bound and stats.disk_keys == n and reader.count(MODEL) == n
    assert reader.hits == 3 * n and reader.misses == 0
    # What the cache's code allocated and still holds is the bound plus the indexes, not the cache
    # (~3 MB as a dict of arrays): the bound is counted honestly.
    assert 0 < held <= bound + stats.index_bytes + 64 * 1024, (held, stats)


def test_a_zero_bound_serves_everything_from_disk(tmp_path):
    _put(w := EmbeddingCache(tmp_path), range(50), 16)
    w.flush()
    c = EmbeddingCache(tmp_path, memory_bytes=0)
    for _ in range(2):
        _check(c.get_many(MODEL, [_key(i) for i in range(50)], 16), range(50), 16)
    assert c.memory_stats().memory_entries == 0 and c.hits == 100


def test_returned_vectors_are_owned_copies_and_no_file_stays_open(tmp_path):
    _put(w := EmbeddingCache(tmp_path), range(20), 8)
    w.flush()
    c = EmbeddingCache(tmp_path, memory_bytes=0)
    found = c.get_many(MODEL, [_key(i) for i in range(20)], 8)
    assert all(v.base is None and not v.flags.writeable for v in found.values())
    if sys.platform.startswith("linux"):
        fds = Path("/proc/self/fd")
        open_files = {os.path.realpath(fds / f) for f in os.listdir(fds) if (fds / f).exists()}
        assert not {str(p.resolve()) for p in _segment_files(c)} & open_files
    c.clear(MODEL)  # on Windows this would fail on a file still open or mapped
    assert _segment_files(c) == [] and c.count(MODEL) == 0
    _check(found, range(20), 8)  # what was returned does not depend on the files


def test_pending_vectors_are_held_until_flush_then_served_from_the_new_segment(tmp_path):
    c = EmbeddingCache(tmp_path, memory_bytes=0)
    _put(c, range(30), 8)
    assert c.pending_count() == 30 and c.memory_stats().pending_bytes == 30 * 8 * 4
    _check(c.get_many(MODEL, [_key(i) for i in range(30)], 8), range(30), 8)
    c.flush()
    stats = c.memory_stats()
    assert c.pending_count() == 0 and stats.memory_entries == 0 and stats.disk_keys == 30
    assert ((MODEL, _key(3)) in c) and ((MODEL, _key(99)) not in c)
    _check(c.get_many(MODEL, [_key(i) for i in range(30)], 8), range(30), 8)
    _put(c, range(25, 35), 8)  # the first five are on disk already: skipped
    assert c.pending_count() == 5 and c.count(MODEL) == 35


def test_memory_only_cache_is_bounded_too(tmp_path):
    per_entry = 8 * 4 + ENTRY_OVERHEAD
    c = EmbeddingCache(tmp_path, persist=False, memory_bytes=10 * per_entry)
    _put(c, range(30), 8)
    c.flush()
    assert c.memory_stats().memory_entries == 10 and c.count(MODEL) == 10
    _check(c.get_many(MODEL, [_key(i) for i in range(20, 30)], 8), range(20, 30), 8)  # the most recent
    assert not c.get_many(MODEL, [_key(i) for i in range(20)], 8)
    assert not (tmp_path / "embeddings").exists()


# -- damage -----------------------------------------------------------------------------------------
TEXTS = [f"sentence {i} on topic {i % 5}" for i in range(40)]


@pytest.mark.parametrize("chunk", [3000, cache_mod.READ_CHUNK], ids=["2-records-a-read", "default-reads"])
@pytest.mark.parametrize("damage", ["garble", "truncate", "delete", "swap"])
def test_a_file_damaged_after_load_yields_misses_never_wrong_vectors(tmp_path, monkeypatch, damage, chunk):
    monkeypatch.setattr(cache_mod, "READ_CHUNK", chunk)
    base = HashEmbedder()
    reference = base.encode(TEXTS)
    embed_texts(base, TEXTS, EmbeddingCache(tmp_path / "a"))
    [seg] = _segment_files(EmbeddingCache(tmp_path / "a"), cache_namespace(base))
    embed_texts(base, [t + " (other)" for t in TEXTS], EmbeddingCache(tmp_path / "b"))
    [other] = _segment_files(EmbeddingCache(tmp_path / "b"), cache_namespace(base))
    data = seg.read_bytes()
    rec = (len(data) - 20) // len(TEXTS)
    order = decode_segment(data, base.dim)[0]  # records in file order

    c = EmbeddingCache(tmp_path / "a", memory_bytes=0)  # every vector from the file
    c.get_many(cache_namespace(base), [text_key("nothing")], base.dim)  # loads the index only
    if damage == "garble":
        bad = bytearray(data)
        for r in (3, 17):
            bad[20 + r * rec + 40] ^= 0x5A
        seg.write_bytes(bytes(bad))
        expect = {order[3], order[17]}
    elif damage == "truncate":
        seg.write_bytes(data[:20 + 10 * rec + 7])  # 10 whole records left
        expect = set(order[10:])
    elif damage == "delete":
        seg.unlink()
        expect = set(order)
    else:  # another segment of the same size and dimension: valid checksums, other keys
        shutil.copyfile(other, seg)
        expect = set(order)

    emb = Counting(base)
    out = embed_texts(emb, TEXTS, c)
    np.testing.assert_allclose(out, reference, atol=1e-6)  # never a wrong vector
    assert {text_key(t) for t in emb.texts} == expect and len(emb.texts) == len(expect)
    assert c.damaged == 1
    # The recomputed vectors were written again: a new reader embeds nothing.
    again = Counting(base)
    np.testing.assert_allclose(embed_texts(again, TEXTS, EmbeddingCache(tmp_path / "a")), reference, atol=1e-6)
    assert again.texts == []


def test_truncated_file_read_in_small_pieces_keeps_its_whole_records(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_mod, "READ_CHUNK", 3000)  # ~2 records of 1060 bytes per read
    base = HashEmbedder()
    embed_texts(base, TEXTS, EmbeddingCache(tmp_path))
    [seg] = _segment_files(EmbeddingCache(tmp_path), cache_namespace(base))
    data = seg.read_bytes()
    rec = (len(data) - 20) // len(TEXTS)
    seg.write_bytes(data[:20 + 23 * rec + rec // 2])
    emb = Counting(base)
    c = EmbeddingCache(tmp_path, memory_bytes=0)
    np.testing.assert_allclose(embed_texts(emb, TEXTS, c), base.encode(TEXTS), atol=1e-6)
    assert len(emb.texts) == len(TEXTS) - 23 and c.damaged == 1


# -- compaction -------------------------------------------------------------------------------------
def test_load_compaction_streams_every_vector_once_and_removes_the_old_files(tmp_path, monkeypatch):
    dim = 24
    limit = cache_mod.MAX_SEGMENTS
    monkeypatch.setattr(cache_mod, "MAX_SEGMENTS", 10_000)  # two writers that never merge
    a, b = EmbeddingCache(tmp_path), EmbeddingCache(tmp_path)
    for c in (a, b):
        c.get_many(MODEL, [], dim)  # both load now: neither sees what the other writes
    for i in range(10):
        _put(a, range(i * 10, i * 10 + 10), dim)  # keys 0..99
        a.flush()
        _put(b, range(50 + i * 10, 60 + i * 10), dim)  # keys 50..149: 50 of them twice on disk
        b.flush()
    old = _segment_files(a)
    assert len(old) == 20 > limit
    monkeypatch.setattr(cache_mod, "MAX_SEGMENTS", limit)
    monkeypatch.setattr(cache_mod, "READ_CHUNK", 1000)  # merged ~10 records at a time

    c = EmbeddingCache(tmp_path, memory_bytes=0)
    assert c.count(MODEL) == 0  # not loaded yet
    _check(c.get_many(MODEL, [_key(i) for i in range(150)], dim), range(150), dim)
    assert c.count(MODEL) == 150 and c.damaged == 0
    [new] = _segment_files(c)
    assert new not in old and not any(p.exists() for p in old)
    keys, vecs, intact = decode_segment(new.read_bytes(), dim)
    assert intact and sorted(keys) == sorted(_key(i) for i in range(150))  # each key once
    fresh = EmbeddingCache(tmp_path)
    _check(fresh.get_many(MODEL, [_key(i) for i in range(150)], dim), range(150), dim)


def test_two_segments_with_one_key_count_it_once(tmp_path):
    a, b = EmbeddingCache(tmp_path), EmbeddingCache(tmp_path)
    for c in (a, b):
        c.get_many(MODEL, [], 8)  # both load now: neither sees what the other writes
    for c in (a, b):
        _put(c, range(5), 8)
        c.flush()
    assert len(_segment_files(a)) == 2
    assert EmbeddingCache(tmp_path).count(MODEL) == 0  # nothing loaded
    c = EmbeddingCache(tmp_path)
    c.get_many(MODEL, [], 8)
    assert c.count(MODEL) == 5 and c.memory_stats().disk_keys == 5


def test_flushes_merge_segments_as_they_go(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_mod, "MAX_SEGMENTS", 4)
    c = EmbeddingCache(tmp_path, memory_bytes=0)
    for i in range(30):
        _put(c, range(i * 7, i * 7 + 7), 8)
        c.flush()
        assert c.memory_stats().segments <= 5 and len(_segment_files(c)) == c.memory_stats().segments
    _check(c.get_many(MODEL, [_key(i) for i in range(210)], 8), range(210), 8)
    assert c.count(MODEL) == 210


# -- threads ----------------------------------------------------------------------------------------
def test_cache_hammered_from_threads_serves_only_right_vectors(tmp_path):
    dim = 16
    c = EmbeddingCache(tmp_path, memory_bytes=40 * (dim * 4 + ENTRY_OVERHEAD))
    errors: list[BaseException] = []

    def run(seed: int) -> None:
        rng = np.random.default_rng(seed)
        try:
            for _ in range(60):
                ids = sorted({int(i) for i in rng.integers(0, 300, 25)})
                if rng.random() < 0.5:
                    _put(c, ids, dim)
                if rng.random() < 0.2:
                    c.flush()
                found = c.get_many(MODEL, [_key(i) for i in ids], dim)
                for i in ids:
                    if _key(i) in found:
                        np.testing.assert_array_equal(found[_key(i)], _vec(i, dim))
                assert c.memory_stats().memory_bytes <= c.memory_bytes
        except BaseException as exc:  # noqa: BLE001  (reported below)
            errors.append(exc)

    run_threads(run)
    assert not errors, errors
    c.flush()
    n = c.count(MODEL)
    fresh = EmbeddingCache(tmp_path)
    fresh.get_many(MODEL, [], dim)
    assert fresh.count(MODEL) == n


# -- a model of it ----------------------------------------------------------------------------------
IDS = st.lists(st.integers(0, 11), max_size=6)
OPS = st.lists(st.one_of(st.tuples(st.just("put"), IDS), st.tuples(st.just("get"), IDS),
                         st.tuples(st.just("other"), IDS), st.just(("flush", [])),
                         st.just(("reopen", []))), max_size=30)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, entries=st.sampled_from([0, 3, 100]), max_segments=st.sampled_from([2, 16]))
def test_cache_behaves_like_a_dict_model(ops, entries, max_segments):
    """put / flush / get / reopen (pending lost, as in a crash) / a second process writing:
    the cache serves exactly what the model says, with the vector put, and counts each key once."""
    dim = 8
    bound = entries * (dim * 4 + ENTRY_OVERHEAD)
    saved = cache_mod.MAX_SEGMENTS
    cache_mod.MAX_SEGMENTS = max_segments
    try:
        with tempfile.TemporaryDirectory() as tmp:
            c = EmbeddingCache(tmp, memory_bytes=bound)
            c.get_many(MODEL, [], dim)
            files: set[int] = set()  # keys in some segment file
            seen: set[int] = set()  # keys in the files `c` indexed
            pending: set[int] = set()
            for op, ids in ops:
                if op == "put":
                    _put(c, ids, dim)
                    pending |= set(ids) - seen
                elif op == "flush":
                    c.flush()
                    files |= pending
                    seen |= pending
                    pending = set()
                elif op == "get":
                    _check(c.get_many(MODEL, [_key(i) for i in ids], dim), set(ids) & (seen | pending), dim)
                elif op == "reopen":
                    c = EmbeddingCache(tmp, memory_bytes=bound)
                    c.get_many(MODEL, [], dim)
                    seen, pending = set(files), set()
                else:  # another process: loads, writes, never merges (that would pull files from `c`)
                    cache_mod.MAX_SEGMENTS = 10_000
                    other = EmbeddingCache(tmp)
                    _put(other, ids, dim)
                    other.flush()
                    cache_mod.MAX_SEGMENTS = max_segments
                    files |= set(ids)
                assert c.count(MODEL) == len(seen | pending)
                assert c.memory_stats().memory_bytes <= bound
            c.flush()
            files |= pending
            last = EmbeddingCache(tmp)
            _check(last.get_many(MODEL, [_key(i) for i in range(12)], dim), files, dim)
            assert last.count(MODEL) == len(files)
    finally:
        cache_mod.MAX_SEGMENTS = saved


@settings(max_examples=150, deadline=None)
@given(rows=st.sets(st.integers(0, 59), max_size=60), cut=st.integers(0, 60 * 52 + 20),
       chunk=st.sampled_from([52, 200, 1 << 20]), gap=st.sampled_from([1, 100, 1 << 15]))
def test_reading_records_in_coalesced_pieces_returns_exactly_those_asked_for(rows, cut, chunk, gap):
    """Any rows, any truncation, any read size and gap: each record read is the one at its row,
    and a row is marked read exactly when the (shortened) file holds it whole."""
    dim = 4  # 52-byte records
    keys = [_key(i) for i in range(60)]
    data = cache_mod.encode_segment(keys, np.stack([_vec(i, dim) for i in range(60)]))
    wanted = np.array(sorted(rows), dtype=np.int64)
    saved = cache_mod.READ_CHUNK, cache_mod._GAP_BYTES
    cache_mod.READ_CHUNK, cache_mod._GAP_BYTES = chunk, gap
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "seg.emb"
            path.write_bytes(data[:20 + cut])
            with open(path, "rb", buffering=0) as fh:
                recs, got = cache_mod._read_records(fh, cache_mod._record_dtype(dim), wanted)
    finally:
        cache_mod.READ_CHUNK, cache_mod._GAP_BYTES = saved
    assert got.tolist() == [r < cut // 52 for r in wanted.tolist()]
    for r, rec, ok in zip(wanted.tolist(), recs, got, strict=True):
        if ok:
            assert bytes(rec["key"]).ljust(32, b"\0") == keys[r]
            assert np.array_equal(rec["vec"], _vec(r, dim))
