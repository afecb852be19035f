"""Chunks as columns (`inspector.core.chunking.packed`): what crosses to the helper process and
back must be the very chunks, every field, for every strategy's output."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.chunk import FLAGS, Chunk
from inspector.core.chunking.packed import pack
from inspector.core.chunking.registry import BUILTINS, get_strategy
from inspector.core.documents.document import from_text

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = (ROOT / "sample_docs" / "handbook.md").read_text(encoding="utf-8")


def _fields(c: Chunk) -> tuple:
    return tuple(getattr(c, f) for f in Chunk.__dataclass_fields__)


@pytest.mark.parametrize("name", [s.name for s in BUILTINS if s.name != "semantic"])
def test_every_strategy_round_trips_through_a_pickle(name):
    doc = from_text(HANDBOOK, "handbook.md")
    chunks = annotate(doc, get_strategy(name)(doc, {}))
    back = pickle.loads(pickle.dumps(pack(chunks))).unpack()
    assert [_fields(c) for c in back] == [_fields(c) for c in chunks]
    assert len(pack(chunks)) == len(chunks)


opt = st.one_of(st.none(), st.integers(0, 10**12))
chunk_st = st.builds(
    Chunk, id=st.integers(0, 10**6), start=st.integers(0, 10**9), end=st.integers(0, 10**9),
    token_count=st.integers(0, 10**6), heading_path=st.lists(st.text(max_size=8), max_size=3).map(tuple),
    prefix=st.text(max_size=12), parent_id=st.one_of(st.none(), st.integers(0, 10**6)),
    flags=st.frozensets(st.sampled_from(FLAGS)), role=st.sampled_from(["chunk", "parent", "child"]),
    doc_id=st.sampled_from(["", "a.md", "dir/b.md"]), embed_tokens=opt, embed_dropped=st.integers(0, 10**6),
    truncated_at=opt, meta=st.dictionaries(st.text(max_size=4), st.integers(), max_size=2))


@settings(max_examples=60, deadline=None)
@given(st.lists(chunk_st, max_size=20))
def test_any_chunks_round_trip(chunks):
    back = pickle.loads(pickle.dumps(pack(chunks))).unpack()
    assert [_fields(c) for c in back] == [_fields(c) for c in chunks]
    assert all(type(c) is Chunk for c in back)
