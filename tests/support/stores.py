"""A LangChain-style pipeline that fills real vector stores in a test: split the text with
LangChain's `RecursiveCharacterTextSplitter(add_start_index=True)`, embed, and write the records the
way LangChain's Chroma, LanceDB and Qdrant integrations do (ids as random UUIDs, so a store's order
is not the document's). Chroma is always given the vectors (its default embedding function would
download a model)."""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

CHUNK_SIZE = 800
OVERLAP = 100


# -- the LangChain-style pipeline ------------------------------------------------------------------

@dataclass
class Records:
    """What a LangChain pipeline hands its vector store: ids, page contents, metadata, vectors."""

    ids: list[str]
    texts: list[str]
    metadatas: list[dict[str, Any]]
    vectors: np.ndarray


def splitter():
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    return RecursiveCharacterTextSplitter(chunk_size=CHUNK_SIZE, chunk_overlap=OVERLAP, add_start_index=True)


def langchain_records(path: Path, embedder: Any, *, seed: int = 7, text: str | None = None) -> Records:
    """Split as LangChain does (TextLoader's text, `create_documents` with the source metadata),
    embed with `embedder` (LangChain's `embed_documents`), ids as random UUIDs."""
    content = path.read_text(encoding="utf-8") if text is None else text
    docs = splitter().create_documents([content], metadatas=[{"source": str(path)}])
    rng = random.Random(seed)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in docs]
    texts = [d.page_content for d in docs]
    return Records(ids, texts, [dict(d.metadata) for d in docs], np.asarray(embedder.encode(texts), np.float32))


CHROMA_SETTINGS: dict[str, Any] = {"anonymized_telemetry": False, "allow_reset": False}


def write_chroma(folder: Path, recs: Records, name: str = "langchain") -> str:
    """As langchain_chroma.Chroma.add_texts: one collection (LangChain's default name), no
    embedding function (the vectors are given), `upsert(ids, documents, metadatas, embeddings)`."""
    import chromadb
    from chromadb.config import Settings

    # The same settings as the reader: Chroma refuses two clients of one folder with different
    # settings in one process (the user's pipeline runs in another process).
    client = chromadb.PersistentClient(path=str(folder), settings=Settings(**CHROMA_SETTINGS))
    try:
        col = client.get_or_create_collection(name, embedding_function=None)
        if recs.ids:
            col.upsert(ids=recs.ids, documents=recs.texts, metadatas=recs.metadatas, embeddings=recs.vectors)
    finally:
        client.close()
    return f"chroma:{folder}:{name}"


def write_lancedb(folder: Path, recs: Records, name: str = "vectorstore") -> str:
    """As langchain_community's LanceDB.add_texts: rows {vector, id, text, metadata} given to
    `create_table` (LangChain's default table name)."""
    import lancedb

    db = lancedb.connect(str(folder))
    rows = [{"vector": [float(x) for x in v], "id": i, "text": t, "metadata": m}
            for i, t, m, v in zip(recs.ids, recs.texts, recs.metadatas, recs.vectors, strict=True)]
    db.create_table(name, data=rows)
    return f"lancedb:{folder}:{name}"


def write_qdrant(folder: Path, recs: Records, name: str = "langchain", *, sparse: bool = False) -> str:
    """As langchain_qdrant.QdrantVectorStore: a collection whose dense vector is named "" (the
    unnamed one), cosine; points {page_content, metadata} upserted in batches of 64. `sparse`
    adds LangChain's hybrid-mode sparse vector beside it."""
    from qdrant_client import QdrantClient, models

    client = QdrantClient(path=str(folder))
    try:
        dim = recs.vectors.shape[1]
        client.create_collection(
            name, vectors_config={"": models.VectorParams(size=dim, distance=models.Distance.COSINE)},
            sparse_vectors_config={"langchain-sparse": models.SparseVectorParams()} if sparse else None)
        for b in range(0, len(recs.ids), 64):
            points = []
            for i in range(b, min(b + 64, len(recs.ids))):
                vector: dict[str, Any] = {"": recs.vectors[i].tolist()}
                if sparse:
                    vector["langchain-sparse"] = models.SparseVector(indices=[i % 50, 60], values=[0.5, 0.1])
                points.append(models.PointStruct(id=recs.ids[i], vector=vector,
                                                 payload={"page_content": recs.texts[i],
                                                          "metadata": recs.metadatas[i]}))
            client.upsert(name, points=points)
    finally:
        client.close()
    return f"qdrant:{folder}:{name}"


WRITERS = {"chroma": write_chroma, "lancedb": write_lancedb, "qdrant": write_qdrant}
