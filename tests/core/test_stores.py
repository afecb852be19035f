"""The user's vector store: real Chroma, LanceDB and Qdrant stores filled in the test the way
LangChain's integrations fill them, read back, placed on the handbook and scored against the
stored vectors.

The pipeline is LangChain's: `RecursiveCharacterTextSplitter(add_start_index=True)` over the
sample handbook, records with metadata {"source": path, "start_index": n}, one vector a record
(HashEmbedder where the model is not the point, the bundled MiniLM where it is), random UUIDs as
ids (as LangChain's uuid4, so a store's order is not the document's). No network: every store is
a local folder, and Chroma is always given the vectors (its default embedding function would
download a model).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from inspector.core.chunking.external import langchain_strategy
from inspector.core.documents.document import Document, from_text, load_document
from inspector.core.embedding.cache import EmbeddingCache
from inspector.core.embedding.embedder import HashEmbedder, embed_texts
from inspector.core.errors import InputError
from inspector.core.evaluation.gold import load_gold
from inspector.core.evaluation.metrics import IndexSearch, evaluate
from inspector.core.retrieval.index import build_index
from inspector.core.stores import (
    INSTALL_HINT,
    NO_SOURCE,
    NO_TEXT,
    SOURCE_AMBIGUOUS,
    SOURCE_NOT_OPENED,
    TEXT_NOT_FOUND,
    StoreSpec,
    parse_store_spec,
    place_records,
    placed_vectors,
    ranking_note,
    read_store,
    store_index,
)
from tests.support.stores import (  # noqa: E402
    CHROMA_SETTINGS,
    WRITERS,
    Records,
    langchain_records,
    splitter,
    write_chroma,
    write_lancedb,
    write_qdrant,
)

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"
KINDS = ("chroma", "lancedb", "qdrant")


@pytest.fixture(scope="module")
def handbook() -> Document:
    return load_document(HANDBOOK)


@pytest.fixture(scope="module")
def hashed() -> Records:
    return langchain_records(HANDBOOK, HashEmbedder())


@pytest.fixture(scope="module")
def stores(tmp_path_factory, hashed) -> dict[str, str]:
    """The three stores filled once with the hashed handbook: kind -> spec."""
    base = tmp_path_factory.mktemp("stores")
    return {kind: WRITERS[kind](base / kind, hashed) for kind in KINDS}


def by_id(recs: Records) -> dict[str, int]:
    return {i: n for n, i in enumerate(recs.ids)}


# -- spec --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, kind, location, collection", [
    ("chroma:./chroma_db:langchain", "chroma", "./chroma_db", "langchain"),
    ("lancedb:/data/lance:vectorstore", "lancedb", "/data/lance", "vectorstore"),
    ("qdrant:qdrant_data:docs", "qdrant", "qdrant_data", "docs"),
    # The collection is the text after the LAST ':', so locations keep their own colons.
    (r"chroma:C:\stores\chroma:docs", "chroma", r"C:\stores\chroma", "docs"),
    ("qdrant:http://localhost:6333:docs", "qdrant", "http://localhost:6333", "docs"),
    ("qdrant:https://q.example.com:443:my_docs", "qdrant", "https://q.example.com:443", "my_docs"),
    (" CHROMA:db:c ", "chroma", "db", "c"),
])
def test_spec_parsing(spec, kind, location, collection):
    parsed = parse_store_spec(spec)
    assert parsed == StoreSpec(kind, location, collection)
    assert parsed.is_url == location.startswith("http")
    assert parse_store_spec(str(parsed)) == parsed


@pytest.mark.parametrize("spec, says", [
    ("chroma", "not a store spec"),
    ("pinecone:idx:docs", "unknown store kind 'pinecone'"),
    ("chroma:./chroma_db", "names no collection"),
    ("lancedb:./lance", "names no table"),
    ("chroma::docs", "names no collection"),
    ("qdrant:./q:", "the text after the last ':' is empty"),
    (r"chroma:C:\stores\chroma", "looks like a path"),
    ("chroma:http://host:8000:docs", "not from a URL"),
    ("qdrant:grpc://host:6334:docs", "starts with http:// or https://"),
])
def test_bad_specs_say_what_is_wrong(spec, says):
    with pytest.raises(InputError, match=says) as info:
        parse_store_spec(spec)
    assert "\n" not in str(info.value)


# -- reading back ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_each_store_reads_back_what_langchain_wrote(stores, hashed, kind):
    coll = read_store(stores[kind])
    assert (coll.kind, coll.name, len(coll), coll.total, coll.dim) == (
        kind, {"chroma": "langchain", "lancedb": "vectorstore", "qdrant": "langchain"}[kind],
        len(hashed.ids), len(hashed.ids), 256)
    assert coll.vectors is not None and coll.vectors.dtype == np.float32
    assert sorted(coll.ids) == sorted(hashed.ids)
    where = by_id(hashed)
    for row, ident in enumerate(coll.ids):
        n = where[ident]
        assert coll.texts[row] == hashed.texts[n]
        assert coll.metadatas[row] == hashed.metadatas[n]
        np.testing.assert_allclose(coll.vectors[row], hashed.vectors[n], atol=1e-6)
    assert coll.metric == {"chroma": "l2", "lancedb": None, "qdrant": "cosine"}[kind]
    assert coll.text_field == {"chroma": "documents", "lancedb": "text", "qdrant": "page_content"}[kind]
    assert ranking_note(coll) is None  # unit vectors rank alike under every metric


@pytest.mark.parametrize("kind", KINDS)
def test_limit_reads_the_first_records(stores, hashed, kind):
    coll = read_store(stores[kind], limit=5)
    assert len(coll) == 5 and coll.total == len(hashed.ids)
    assert coll.vectors is not None and coll.vectors.shape == (5, 256)


# -- placing and scoring ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_every_record_lands_on_its_start_index(stores, hashed, handbook, kind):
    coll = read_store(stores[kind])
    placement = place_records(coll, [handbook])
    assert placement.unplaced == () and placement.warnings == ()
    assert placement.placed == placement.records == len(hashed.ids)
    where = by_id(hashed)
    chunks = placement.chunks[handbook.doc_id]
    for c in chunks:
        row = placement.row_of(c)
        n = where[coll.ids[row]]
        assert c.text(handbook) == hashed.texts[n]
        assert c.start == hashed.metadatas[n]["start_index"]
        assert c.meta["store_id"] == coll.ids[row] and c.meta["store_row"] == row
    # The store's order is by random UUID (Qdrant) or insertion: the chunks come out in the
    # document's order all the same, as the project's own LangChain strategy makes them.
    ours = langchain_strategy(splitter(), register=False)(handbook, {})
    assert [(c.start, c.end) for c in chunks] == [(c.start, c.end) for c in ours]


@pytest.mark.parametrize("kind", KINDS)
def test_scoring_against_stored_vectors_equals_our_pipeline(stores, handbook, kind):
    """The gold set scored against the store's vectors gives what the project's own pipeline
    gives over the same chunks, embedding them itself with the same model."""
    emb = HashEmbedder()
    coll = read_store(stores[kind])
    placement = place_records(coll, [handbook])
    gold = load_gold(GOLD, [handbook])
    index = store_index([handbook], placement, coll, emb)
    theirs = evaluate(gold, [handbook], placement.chunks, IndexSearch(index), k=5)

    ours_chunks = {handbook.doc_id: langchain_strategy(splitter(), register=False)(handbook, {})}
    ours_index = build_index([handbook], ours_chunks, emb, with_prefix=False)
    ours = evaluate(gold, [handbook], ours_chunks, IndexSearch(ours_index), k=5)
    assert 0 < theirs.hit_rate < 1  # a figure that can move, not a ceiling or a floor
    assert theirs.hit_rate == ours.hit_rate and theirs.mrr == pytest.approx(ours.mrr)
    assert [q.rank for q in theirs.questions] == [q.rank for q in ours.questions]
    # The index's rows are the stored vectors of the placed chunks, not recomputed ones.
    np.testing.assert_allclose(index.vectors, placed_vectors(placement, coll), atol=1e-6)


def test_another_model_is_compared_with_the_store_s_vectors_by_that_name(stores, handbook):
    """"Compare with model" on a store's chunks: the first figures are the store's vectors (the
    window's model embeds the questions alone), and say so; the index's model's name alone read as
    if that model had embedded the chunks."""
    from inspector.core.evaluation.model_compare import model_figures

    coll = read_store(stores["chroma"])
    placement = place_records(coll, [handbook])
    index = store_index([handbook], placement, coll, HashEmbedder())
    assert index.stored_in == coll.label
    fig = model_figures(index, load_gold(GOLD, [handbook]), HashEmbedder(dim=128), k=5)
    assert fig.first_model["stored_in"] == coll.label and "stored_in" not in fig.second_model
    own = build_index([handbook], placement.chunks, HashEmbedder(), with_prefix=False)
    assert own.stored_in is None  # the app's own vectors


@pytest.mark.slow
def test_langchain_minilm_chroma_pipeline_scores_like_ours(tmp_path, handbook, minilm):
    """The LangChain + Chroma user's story with the real model: their store, their vectors (the
    bundled MiniLM as their embedding model, 384 dimensions), their hit rate; equal to what this
    app's own pipeline measures over the same chunks and vectors. The chunks are embedded once
    (a memory cache hands this app's pipeline the same vectors: that it would compute the same
    ones itself is the HashEmbedder tests' business, and MiniLM is slow on a busy CPU)."""
    cache = EmbeddingCache(tmp_path / "cache", persist=False)

    class LangChainSide:  # LangChain's embed_documents: the model, through the shared cache
        def encode(self, texts):
            return embed_texts(minilm, texts, cache)

    recs = langchain_records(HANDBOOK, LangChainSide())
    coll = read_store(write_chroma(tmp_path / "chroma_db", recs))
    assert coll.dim == 384
    placement = place_records(coll, [handbook])
    assert placement.unplaced == ()
    gold = load_gold(GOLD, [handbook])
    theirs = evaluate(gold, [handbook], placement.chunks,
                      IndexSearch(store_index([handbook], placement, coll, minilm, cache=cache)), k=5)
    ours_chunks = {handbook.doc_id: langchain_strategy(splitter(), register=False)(handbook, {})}
    ours_index = build_index([handbook], ours_chunks, minilm, with_prefix=False, cache=cache)
    ours = evaluate(gold, [handbook], ours_chunks, IndexSearch(ours_index), k=5)
    assert theirs.hit_rate >= 0.6
    assert theirs.hit_rate == ours.hit_rate
    assert [q.rank for q in theirs.questions] == [q.rank for q in ours.questions]


def test_unplaced_records_are_reported_with_their_reason(tmp_path, hashed, handbook):
    """A record of another file, one whose text was edited, one without a source while two
    documents are open, one without text: each reported, never dropped, the rest placed."""
    other = from_text("# Other\n\nSomething else entirely.\n", "notes.md")
    edited = hashed.texts[10].replace("the", "THE", 1)
    assert edited != hashed.texts[10]
    extra = Records(
        ids=["elsewhere", "edited", "sourceless", "blank"],
        texts=["Refunds take 14 days.", edited, hashed.texts[3], "   "],
        metadatas=[{"source": "/elsewhere/other.md"}, {"source": str(HANDBOOK), "start_index": 4},
                   {"page": 1}, {"source": str(HANDBOOK)}],
        vectors=HashEmbedder().encode(["a", "b", "c", "d"]))
    recs = Records(hashed.ids + extra.ids, hashed.texts + extra.texts, hashed.metadatas + extra.metadatas,
                   np.vstack([hashed.vectors, extra.vectors]))
    coll = read_store(write_chroma(tmp_path / "db", recs))
    placement = place_records(coll, [handbook, other])
    got = {u.id: u for u in placement.unplaced}
    assert {i: u.reason for i, u in got.items()} == {
        "elsewhere": SOURCE_NOT_OPENED, "edited": TEXT_NOT_FOUND, "sourceless": NO_SOURCE, "blank": NO_TEXT}
    assert "'/elsewhere/other.md'" in got["elsewhere"].detail
    assert got["edited"].preview == edited[:60] and got["edited"].source == str(HANDBOOK)
    assert "'source'" in got["sourceless"].detail
    assert placement.placed == len(hashed.ids) and placement.records == len(recs.ids)
    assert placement.chunks[other.doc_id] == ()
    # The edited record's start_index pointed at text that is not its own: said so.
    assert any("start_index of 1 record does not match" in w for w in placement.warnings)
    assert placement.summary() == (f"placed {len(hashed.ids)} of {len(recs.ids)} records on 1 document; "
                                   "not placed: 1 source not opened, 1 text not found, 1 no source, 1 no text")


def test_sources_match_by_trailing_path_and_ambiguity_is_reported(tmp_path):
    text = "# A\n\nAlpha paragraph one.\n"
    hr = Document(text=text, name="handbook.md", path="/corpus/hr/handbook.md", doc_id="hr/handbook.md")
    it = Document(text=text, name="handbook.md", path="/corpus/it/handbook.md", doc_id="it/handbook.md")
    emb = HashEmbedder(dim=16)
    recs = Records(["win", "posix", "bare"], ["Alpha paragraph one."] * 3,
                   [{"source": r"C:\Users\ann\docs\hr\handbook.md"}, {"source": "/home/ann/docs/it/handbook.md"},
                    {"source": "handbook.md"}], emb.encode(["x"] * 3))
    coll = read_store(write_chroma(tmp_path / "db", recs))
    placement = place_records(coll, [hr, it])
    assert [coll.ids[placement.row_of(c)] for c in placement.chunks["hr/handbook.md"]] == ["win"]
    assert [coll.ids[placement.row_of(c)] for c in placement.chunks["it/handbook.md"]] == ["posix"]
    (bare,) = placement.unplaced
    assert bare.reason == SOURCE_AMBIGUOUS and "hr/handbook.md" in bare.detail and "it/handbook.md" in bare.detail


def test_a_repeated_text_keeps_one_row_per_record(tmp_path):
    """Two records with the same text (a paragraph the document holds twice) become two chunks
    on the two places, each with its own stored vector, in a store whose order is random and
    without start_index as well as with it."""
    para = "Same paragraph about leave and refunds, repeated word for word in both sections."
    text = f"# Handbook\n\n## Leave\n\n{para}\n\nLeave is 14 weeks.\n\n## Refunds\n\n{para}\n\nRefunds take 14 days.\n"
    doc = from_text(text, "handbook.md")
    emb = HashEmbedder(dim=32)
    src = Path("/docs/handbook.md")
    pieces = [para, "Leave is 14 weeks.", para, "Refunds take 14 days."]
    starts = [text.index(para), text.index("Leave is"), text.rindex(para), text.index("Refunds take")]
    vectors = np.random.default_rng(3).normal(size=(4, 32)).astype(np.float32)  # distinct rows for twins
    for with_start in (True, False):
        metas = [{"source": str(src), **({"start_index": s} if with_start else {})} for s in starts]
        recs = Records([str(uuid.UUID(int=n * 7919 + 13, version=4)) for n in (9, 2, 5, 1)], pieces, metas, vectors)
        folder = tmp_path / f"q{with_start}"
        coll = read_store(write_qdrant(folder, recs))
        placement = place_records(coll, [doc])
        assert placement.unplaced == () and placement.warnings == ()
        chunks = placement.chunks[doc.doc_id]
        assert [c.start for c in chunks] == sorted(starts)
        twins = [c for c in chunks if c.text(doc) == para]
        assert len(twins) == 2 and twins[0].start != twins[1].start
        rows = [placement.row_of(c) for c in twins]
        assert len(set(rows)) == 2
        index = store_index([doc], placement, coll, emb)
        assert index.vectors is not None and coll.vectors is not None
        for i, c in enumerate(index.entries):
            row = placement.row_of(c)
            np.testing.assert_allclose(index.vectors[i], coll.vectors[row] / np.linalg.norm(coll.vectors[row]),
                                       atol=1e-6)


def test_start_index_is_checked_when_the_document_changed(tmp_path, hashed, handbook):
    """The handbook gained a line at the top after it was indexed: every start_index is off by
    its length; the records are placed by their text and the warning says so."""
    moved = Document(text="Draft, revised.\n\n" + handbook.text, name=handbook.name, path=handbook.path,
                     doc_id=handbook.doc_id)
    coll = read_store(write_lancedb(tmp_path / "lance", hashed))
    placement = place_records(coll, [moved])
    assert placement.unplaced == ()
    assert all(c.start == coll.metadatas[placement.row_of(c)]["start_index"] + len("Draft, revised.\n\n")
               for c in placement.chunks[moved.doc_id])
    (warning,) = placement.warnings
    assert f"the start_index of {len(hashed.ids)} records does not match" in warning


def test_source_key_maps_another_metadata_key(tmp_path, hashed, handbook):
    metas = [{"doc": {"path": str(HANDBOOK)}, "start_index": m["start_index"]} for m in hashed.metadatas]
    recs = Records(hashed.ids[:20], hashed.texts[:20], metas[:20], hashed.vectors[:20])
    spec = write_qdrant(tmp_path / "q", recs)
    two = [handbook, from_text("# Other\n", "other.md")]
    assert {u.reason for u in place_records(read_store(spec), two).unplaced} == {NO_SOURCE}
    coll = read_store(spec, source_key="doc.path")
    assert coll.source_key == "doc.path"
    placement = place_records(coll, two)
    assert placement.unplaced == () and placement.placed == 20
    with pytest.raises(InputError, match=r"no record .* has the metadata key 'file'; the keys there: 'doc', "
                                         r"'start_index'"):
        read_store(spec, source_key="file")


# -- what a store may hold ---------------------------------------------------------------------------

def test_qdrant_hybrid_collection_reads_its_dense_vector(tmp_path, hashed):
    coll = read_store(write_qdrant(tmp_path / "q", Records(hashed.ids[:8], hashed.texts[:8], hashed.metadatas[:8],
                                                           hashed.vectors[:8]), sparse=True))
    assert coll.vectors is not None and coll.vectors.shape == (8, 256) and coll.vector_field == ""


def test_qdrant_named_vectors_one_is_read_several_are_named(tmp_path):
    from qdrant_client import QdrantClient, models

    folder = tmp_path / "q"
    client = QdrantClient(path=str(folder))
    try:
        dot = models.Distance.DOT
        client.create_collection("one", vectors_config={"dense": models.VectorParams(size=3, distance=dot)})
        client.upsert("one", [models.PointStruct(id=1, vector={"dense": [0.5, 1.0, 2.0]},
                                                 payload={"text": "plain payload", "source": "a.md"})])
        client.create_collection("two", vectors_config={
            "title": models.VectorParams(size=3, distance=dot), "body": models.VectorParams(size=4, distance=dot)})
        client.upsert("two", [models.PointStruct(id=1, vector={"title": [1, 0, 0], "body": [0, 1, 0, 0]},
                                                 payload={"text": "x"})])
    finally:
        client.close()
    coll = read_store(f"qdrant:{folder}:one")
    assert (coll.vector_field, coll.metric, coll.texts, coll.metadatas) == ("dense", "ip", ("plain payload",),
                                                                            ({"source": "a.md"},))
    assert coll.ids == ("1",)
    assert "inner product" in (ranking_note(coll) or "")  # not unit length, ranked by dot product
    with pytest.raises(InputError, match=r"several named vectors \('body', 'title'\)"):
        read_store(f"qdrant:{folder}:two")


def test_lancedb_flat_columns_are_the_metadata(tmp_path):
    import lancedb

    db = lancedb.connect(str(tmp_path / "lance"))
    db.create_table("chunks", data=[{"embedding": [0.0, 1.0], "page_content": "Alpha.", "source": "a.md",
                                     "start_index": 0}])
    coll = read_store(f"lancedb:{tmp_path / 'lance'}:chunks")
    assert (coll.ids, coll.texts, coll.metadatas, coll.vector_field, coll.text_field) == (
        ("0",), ("Alpha.",), ({"source": "a.md", "start_index": 0},), "embedding", "page_content")


# -- errors ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_a_missing_folder_is_named_and_not_created(tmp_path, kind):
    gone = tmp_path / "nowhere"
    with pytest.raises(InputError, match="no such folder") as info:
        read_store(f"{kind}:{gone}:docs")
    assert str(gone) in str(info.value)
    assert not gone.exists()


@pytest.mark.parametrize("kind, says", [("chroma", "not a Chroma folder: it holds no chroma.sqlite3"),
                                        ("qdrant", "not a Qdrant folder: it holds no meta.json")])
def test_a_folder_that_is_no_store_is_left_alone(tmp_path, kind, says):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(InputError, match=says):
        read_store(f"{kind}:{tmp_path}:docs")
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("kind", KINDS)
def test_an_unknown_collection_lists_the_ones_there(stores, kind):
    location = parse_store_spec(stores[kind]).location
    there = {"chroma": "'langchain'", "lancedb": "'vectorstore'", "qdrant": "'langchain'"}[kind]
    what = "table" if kind == "lancedb" else "collection"
    with pytest.raises(InputError, match=f"no .* {what} 'docs'; the {what}s there: {there}"):
        read_store(f"{kind}:{location}:docs")


@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_collection_is_an_error(tmp_path, kind):
    empty = Records([], [], [], np.zeros((0, 4), np.float32))
    if kind == "chroma":
        spec = write_chroma(tmp_path / "db", empty)
    elif kind == "qdrant":
        spec = write_qdrant(tmp_path / "db", empty)
    else:
        import lancedb
        import pyarrow as pa

        schema = pa.schema([("vector", pa.list_(pa.float32(), 4)), ("id", pa.string()), ("text", pa.string())])
        lancedb.connect(str(tmp_path / "db")).create_table("vectorstore", schema=schema)
        spec = f"lancedb:{tmp_path / 'db'}:vectorstore"
    with pytest.raises(InputError, match="is empty: it holds no records"):
        read_store(spec)


def test_no_text_field_names_the_fields_there(tmp_path):
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(tmp_path / "q"))
    try:
        client.create_collection("c", vectors_config=models.VectorParams(size=2, distance=models.Distance.COSINE))
        client.upsert("c", [models.PointStruct(id=1, vector=[1.0, 0.0], payload={"body": "x", "file": "a.md"})])
    finally:
        client.close()
    with pytest.raises(InputError, match=r"stores no chunk text \(looked for 'page_content', 'text'.*the fields "
                                         r"there: 'body', 'file'"):
        read_store(f"qdrant:{tmp_path / 'q'}:c")

    import lancedb

    lancedb.connect(str(tmp_path / "l")).create_table("t", data=[{"vector": [1.0, 0.0], "body": "x"}])
    with pytest.raises(InputError, match=r"the fields there: 'body \(string\)', 'vector"):
        read_store(f"lancedb:{tmp_path / 'l'}:t")

    import chromadb
    from chromadb.config import Settings

    client2 = chromadb.PersistentClient(path=str(tmp_path / "c"), settings=Settings(**CHROMA_SETTINGS))
    try:
        client2.create_collection("col", embedding_function=None).add(ids=["1"], embeddings=[[1.0, 0.0]],
                                                                     metadatas=[{"file": "a.md"}])
    finally:
        client2.close()
    with pytest.raises(InputError, match=r"the fields there: 'documents \(all empty\)', 'file'"):
        read_store(f"chroma:{tmp_path / 'c'}:col")


def test_chroma_text_kept_in_metadata_is_read(tmp_path):
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(tmp_path / "c"), settings=Settings(**CHROMA_SETTINGS))
    try:
        client.create_collection("col", embedding_function=None).add(
            ids=["1"], embeddings=[[1.0, 0.0]], metadatas=[{"text": "Alpha.", "source": "a.md"}])
    finally:
        client.close()
    coll = read_store(f"chroma:{tmp_path / 'c'}:col")
    assert (coll.texts, coll.metadatas, coll.text_field) == (("Alpha.",), ({"source": "a.md"},), "metadata.text")


@pytest.mark.parametrize("kind, module, package", [("chroma", "chromadb", "chromadb"),
                                                   ("lancedb", "lancedb", "lancedb"),
                                                   ("qdrant", "qdrant_client", "qdrant-client")])
def test_a_missing_client_says_how_to_install_it(stores, monkeypatch, kind, module, package):
    monkeypatch.setitem(sys.modules, module, None)  # what `import` sees when the package is absent
    with pytest.raises(InputError, match=f"needs the {package} package: {INSTALL_HINT}".replace("[", r"\[")
                       .replace("]", r"\]")):
        read_store(stores[kind])


def test_a_qdrant_folder_held_by_another_process_is_a_clear_error(tmp_path, hashed):
    spec = write_qdrant(tmp_path / "q", Records(hashed.ids[:3], hashed.texts[:3], hashed.metadatas[:3],
                                                hashed.vectors[:3]))
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(f"""
            import sys
            from qdrant_client import QdrantClient
            client = QdrantClient(path={str(tmp_path / 'q')!r})
            print("open", flush=True)
            sys.stdin.read()
            client.close()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(InputError, match="in use by another process") as info:
            read_store(spec)
        assert "\n" not in str(info.value)
    finally:
        holder.communicate("", timeout=60)
    assert len(read_store(spec)) == 3  # free again once the other program let go


class QdrantReplay(ThreadingHTTPServer):
    """A Qdrant server on 127.0.0.1 for the three REST calls the reader makes, answering with the
    JSON of what a local Qdrant holds (the client's own models, dumped: the server's wire
    format), and 401 to a request without the right api-key header."""

    def __init__(self, folder: Path, name: str, key: str) -> None:
        from qdrant_client import QdrantClient

        client = QdrantClient(path=str(folder))
        try:
            self.info = client.get_collection(name).model_dump(mode="json")
            points, _ = client.scroll(name, limit=10_000, with_payload=True, with_vectors=True)
        finally:
            client.close()
        self.points = [p.model_dump(mode="json") for p in points]
        self.name, self.key, self.keys_seen = name, key, []
        super().__init__(("127.0.0.1", 0), _QdrantHandler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _QdrantHandler(BaseHTTPRequestHandler):
    server: QdrantReplay

    def log_message(self, *args: Any) -> None:
        pass

    def _answer(self, status: int, result: Any) -> None:
        body = json.dumps({"result": result, "status": "ok" if status == 200 else {"error": "no"},
                           "time": 0.0}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _route(self) -> None:
        self.server.keys_seen.append(self.headers.get("api-key"))
        if self.headers.get("api-key") != self.server.key:
            return self._answer(401, None)
        path = self.path.split("?")[0]
        if path == "/collections":
            return self._answer(200, {"collections": [{"name": self.server.name}]})
        if path == f"/collections/{self.server.name}":
            return self._answer(200, self.server.info)
        if path == f"/collections/{self.server.name}/points/scroll":
            ask = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            return self._answer(200, {"points": self.server.points[:ask.get("limit", 10)], "next_page_offset": None})
        return self._answer(404, None)

    do_GET = do_POST = _route


@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_a_qdrant_server_is_read_by_url_and_its_key_never_shown(tmp_path, hashed, monkeypatch):
    recs = Records(hashed.ids[:12], hashed.texts[:12], hashed.metadatas[:12], hashed.vectors[:12])
    write_qdrant(tmp_path / "q", recs, "docs")
    server = QdrantReplay(tmp_path / "q", "docs", key="s3cret-key-123")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("QDRANT_API_KEY", "s3cret-key-123")
        coll = read_store(f"qdrant:{server.url}:docs")
        assert sorted(coll.ids) == sorted(recs.ids) and coll.dim == 256 and coll.metric == "cosine"
        where = by_id(recs)
        assert all(coll.texts[r] == recs.texts[where[i]] for r, i in enumerate(coll.ids))
        monkeypatch.setenv("QDRANT_API_KEY", "wrong-key-456")
        with pytest.raises(InputError, match=r"could not read the Qdrant store: .*401") as info:
            read_store(f"qdrant:{server.url}:docs")
        assert "wrong-key-456" not in str(info.value) and "\n" not in str(info.value)
        assert "wrong-key-456" in server.keys_seen  # sent to the server, shown to nobody
    finally:
        server.shutdown()
        server.server_close()


def test_vector_sizes_that_differ_are_a_clear_error(stores, handbook):
    coll = read_store(stores["chroma"])
    placement = place_records(coll, [handbook])
    with pytest.raises(InputError) as info:
        store_index([handbook], placement, coll, HashEmbedder(dim=384))
    assert info.value.problem == ("the store's vectors have 256 dimensions; the embedder "
                                  "hash-embedder-v1(dim=384,w=1.0,t=0.5) gives 384: choose the model that "
                                  "filled the store with --embedder")


def test_a_store_without_vectors_cannot_be_scored(tmp_path, handbook):
    import lancedb

    lancedb.connect(str(tmp_path / "l")).create_table(
        "t", data=[{"text": handbook.text[:40], "source": str(HANDBOOK)}])
    coll = read_store(f"lancedb:{tmp_path / 'l'}:t")
    assert coll.vectors is None and coll.dim is None
    placement = place_records(coll, [handbook])
    assert placement.placed == 1
    with pytest.raises(InputError, match="holds no vectors to score against"):
        store_index([handbook], placement, coll, HashEmbedder())


# -- read only ---------------------------------------------------------------------------------------

def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("kind", KINDS)
def test_reading_changes_nothing_in_the_store(tmp_path, hashed, kind):
    """Not a byte of the user's folder changes (Chroma's client writes on every start: it is
    given a copy)."""
    recs = Records(hashed.ids[:30], hashed.texts[:30], hashed.metadatas[:30], hashed.vectors[:30])
    spec = WRITERS[kind](tmp_path / "store", recs)
    before = _files(tmp_path / "store")
    assert len(read_store(spec)) == 30
    assert len(read_store(spec, limit=3)) == 3
    assert _files(tmp_path / "store") == before


def test_no_client_is_imported_until_a_store_is_read():
    code = ("import sys, inspector.core.stores as s; "
            "print(sorted(m for m in ('chromadb', 'lancedb', 'qdrant_client', 'pyarrow') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT).stdout.strip()
    assert out == "[]"
