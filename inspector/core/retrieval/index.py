"""Retrieval over chunks: dense (cosine), BM25, and their reciprocal-rank fusion.

An `Index` holds the chunks a retriever can match (role "chunk" or "child"; parents are what a
parent_child pipeline *returns*, never what it matches), their embedded texts and one normalized
vector per chunk. A search answers `Hit`s: what the model would receive (`chunk`: the parent for
children) and what matched (`matched`), ranked from 1.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from inspector.core.chunking.chunk import Chunk, embedded
from inspector.core.documents.document import Document
from inspector.core.embedding.cache import VectorCache
from inspector.core.embedding.embedder import Embedder, embed_query, embed_texts
from inspector.core.retrieval.kinds import RETRIEVERS, Retriever
from inspector.core.runtime import offload
from inspector.core.runtime.cancel import Cancelled, check_cancelled
from inspector.core.runtime.lru import SizedLRU
from inspector.core.text.heading_filter import heading_matches, resolve_heading_filter

RRF_K = 60
"""The constant of reciprocal rank fusion: score = sum over rankings of 1 / (RRF_K + rank)."""

_TOKEN_RE = re.compile(r"\w+")


def bm25_tokens(text: str) -> list[str]:
    """The BM25 tokenizer, for chunks and queries alike: lowercase runs of word characters."""
    return _TOKEN_RE.findall(text.lower())


def bm25_corpus(texts: Iterable[str]) -> tuple[list[list[int]], dict[str, int]]:
    """(token ids of each text, vocabulary) for `bm25s.BM25.index`: what it builds from lists of
    token strings, made one text at a time. Why: the strings of every text at once were the
    largest allocation of a session (7.8 million strings, 491 MB, for heavily overlapping
    chunks), and glibc kept most of it after they were freed. An id list holds references to the
    vocabulary's own int objects (8 bytes a token)."""
    vocab: dict[str, int] = {}
    ids: list[list[int]] = []
    setdefault = vocab.setdefault
    for n, text in enumerate(texts):
        if not n % 256:
            check_cancelled()
        ids.append([setdefault(tok, len(vocab)) for tok in _TOKEN_RE.findall(text.lower())])
    return ids, vocab


def bm25_model(texts: Iterable[str]) -> Any:
    """A bm25s index over `texts` (tokenized by `bm25_tokens`)."""
    import bm25s

    model = bm25s.BM25()
    model.index(bm25_corpus(texts), show_progress=False)
    return model


def bm25_model_of_spans(doc_texts: Mapping[str, str], spans: Sequence[tuple]) -> Any:
    """`bm25_model` over the embedded texts of `spans` (doc id, start, end, prefix, embedding view,
    table header: `Chunk.embedded_text`'s parts), made one at a
    time from the documents' texts: what the helper process is sent instead of the texts, which
    with a large overlap add up to many times the documents."""
    if any(t is None for t in doc_texts.values()):  # a shipped text the caller gave up on
        raise Cancelled()
    return bm25_model(_span_text(doc_texts, span) for span in spans)


def _span_text(doc_texts: Mapping[str, str], span: tuple) -> str:
    """The embedded text of one span (doc id, start, end, prefix[, view, table header])."""
    doc_id, start, end, prefix = span[:4]
    if len(span) > 4 and span[4]:
        from inspector.core.text.embed_view import view_text

        return embedded(*view_text(doc_texts[doc_id], start, end, prefix, span[4], span[5]))
    return embedded(prefix, doc_texts[doc_id][start:end])


@dataclass(frozen=True, slots=True)
class Hit:
    """One ranked result of a search."""

    chunk: Chunk
    """What the model receives: the matched chunk, or its parent for parent_child children."""
    matched: Chunk
    """The chunk whose vector (or words) matched the query."""
    rank: int
    """1-based position in the results (parents counted once each)."""
    score: float
    """Cosine similarity (dense), BM25 score (bm25) or fused reciprocal-rank score (hybrid)."""
    retriever: str
    """"dense", "bm25" or "hybrid"; "+rerank" is appended when a reranker ordered the hits."""
    rank_before: int | None = None
    """The retriever's rank of this hit before a reranker reordered the list (None: not reranked;
    `inspector.core.retrieval.rerank.rerank_hits` sets it)."""


def _top(scores: np.ndarray, need: int) -> np.ndarray:
    """Positions of the `need` highest scores, best first; ties go to the lower position, so the
    order is deterministic even where argpartition's choice among equal scores is not."""
    n = len(scores)
    if need <= 0 or n == 0:
        return np.zeros(0, dtype=np.int64)
    if need >= n:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, need - 1)[:need]
    sel = np.flatnonzero(scores >= scores[part].min())
    return sel[np.lexsort((sel, -scores[sel]))][:need]


class SearchIndex(Protocol):
    """What scoring a gold set asks of an index: ranked hits for a query (`Index` is the app's; a
    Workbench's `index_factory` may make any other). A dense one also has an `embedder`, looked up
    with getattr."""

    def search(self, query: str, k: int = 5, retriever: Retriever = "dense",
               docs: Collection[str] | None = None, heading_prefix: Sequence[str] | None = None,
               *, query_vector: np.ndarray | None = None) -> list[Hit]: ...


class Index:
    """Chunks of one or more documents, searchable by dense, BM25 and hybrid retrieval.

    Build it with `build_index`. Rows of `vectors` follow `entries`. Whether a chunk is longer
    than the embedder reads (max_seq_length word pieces) is not this class's business:
    `inspector.core.text.wordpieces.annotate` sets `truncated_by_embedder` and `embed_dropped` on the
    chunks before they are indexed; the vectors here are simply what the model produces.
    """

    def __init__(self, docs: Mapping[str, Document], entries: Sequence[Chunk],
                 parents: Mapping[tuple[str, int], Chunk],
                 vectors: np.ndarray | None, embedder: Embedder | None, *, with_prefix: bool = True,
                 cache: VectorCache | None = None) -> None:
        self.docs: dict[str, Document] = dict(docs)
        """Documents by doc_id."""
        self.entries: tuple[Chunk, ...] = tuple(entries)
        """The matchable chunks (roles "chunk" and "child"), in matrix row order."""
        self.parents: dict[tuple[str, int], Chunk] = dict(parents)
        """Parents of parent_child children by (doc_id, id)."""
        self.vectors = vectors
        """(len(entries), dim) float32, rows L2-normalized; None without an embedder."""
        self.embedder = embedder
        self.stored_in: str | None = None
        """Where the chunk vectors come from when they are not the embedder's: a vector store's
        label ("Chroma collection 'docs'"; `stores.scoring.store_index`). The embedder then only
        embeds the questions."""
        self.with_prefix = with_prefix
        self.cache = cache
        doc_ids = list(self.docs)
        self._doc_code = {d: i for i, d in enumerate(doc_ids)}
        self._entry_doc = np.fromiter((self._doc_code[c.doc_id] for c in self.entries),
                                      dtype=np.int64, count=len(self.entries))
        self._bm25: Any = None
        self._bm25_lock = threading.Lock()
        # Searched from several runner threads at once: both memos are the core's locked LRU.
        self._heading_masks: SizedLRU[np.ndarray] = SizedLRU(64, 64)
        self._queries: SizedLRU[np.ndarray] = SizedLRU(256, 256)

    def __len__(self) -> int:
        return len(self.entries)

    def iter_texts(self) -> Iterator[str]:
        """What is embedded (and BM25-indexed) for each entry, in row order, made as it is read.

        Not kept: the texts are spans of the documents, and with a large overlap they add up to
        many times the documents (a 2,048-token window moved 48 characters at a time made 5,762
        texts of 17 KB, 99 MB, on a 40 KB page; six cached indexes held six such copies)."""
        docs, prefix = self.docs, self.with_prefix
        for c in self.entries:
            yield c.embedded_text(docs[c.doc_id], with_prefix=prefix)

    @property
    def texts(self) -> list[str]:
        """`iter_texts()` as a list (made on each call)."""
        return list(self.iter_texts())

    # -- what a hit returns ---------------------------------------------------------------
    def returned(self, matched: Chunk) -> Chunk:
        """The chunk given to the model when `matched` matches: its parent, if it has one."""
        if matched.role == "child" and matched.parent_id is not None:
            return self.parents.get((matched.doc_id, matched.parent_id), matched)
        return matched

    def text(self, chunk: Chunk) -> str:
        return self.docs[chunk.doc_id].text[chunk.start:chunk.end]

    # -- filters --------------------------------------------------------------------------
    def _candidates(self, docs: Collection[str] | None,
                    heading_prefix: Sequence[str] | None) -> np.ndarray | None:
        """Entry positions passing the filters, or None for all."""
        mask: np.ndarray | None = None
        if docs is not None:
            codes = [self._doc_code[d] for d in docs if d in self._doc_code]
            mask = np.isin(self._entry_doc, np.asarray(codes, dtype=np.int64))
        if heading_prefix:
            hm = self._heading_mask(tuple(heading_prefix))
            mask = hm if mask is None else mask & hm
        return None if mask is None else np.flatnonzero(mask)

    def _heading_mask(self, prefix: tuple[str, ...]) -> np.ndarray:
        """Entries under the typed heading path (`heading_filter.heading_matches`: segments
        match titles from the top by prefix, case-insensitive), decided once per distinct path.

        The title a document's single top-level heading gives may be left out, for each document
        on its own (`resolve_heading_filter` over that document's paths): in a folder whose
        documents have titles of their own, "parental" keeps "Handbook A > Parental leave" and
        "Policy B > Parental leave" alike, where one title put in front kept one document's."""
        hit = self._heading_masks.lookup(prefix)
        if hit is None:
            paths_of: dict[str, dict[tuple[str, ...], None]] = {}
            for c in self.entries:
                paths_of.setdefault(c.doc_id, {})[c.heading_path] = None
            anchored = {d: resolve_heading_filter(prefix, list(paths)) for d, paths in paths_of.items()}
            verdict: dict[tuple[str, tuple[str, ...]], bool] = {
                (d, path): heading_matches(path, anchored[d]) for d, paths in paths_of.items() for path in paths}
            hit = np.fromiter((verdict[c.doc_id, c.heading_path] for c in self.entries), dtype=bool,
                              count=len(self.entries))
            self._heading_masks.put(prefix, hit)
        return hit

    # -- scoring --------------------------------------------------------------------------
    def embed_query(self, query: str) -> np.ndarray:
        """The query's vector (dim,), remembered per index and cached like chunk texts."""
        hit = self._queries.lookup(query)
        if hit is not None:
            return hit
        if self.embedder is None:
            raise ValueError("dense and hybrid retrieval need an embedder: this index was built "
                             "without one (use retriever='bm25', or build it with an embedder)")
        vec = embed_query(self.embedder, query, self.cache)
        self._queries.put(query, vec)
        return vec

    def _dense_scores(self, qvec: np.ndarray, cand: np.ndarray | None) -> np.ndarray:
        if self.vectors is None:
            raise ValueError("dense and hybrid retrieval need vectors: this index was built "
                             "without an embedder (use retriever='bm25', or build it with one)")
        q = np.asarray(qvec, dtype=np.float32).reshape(-1)
        if q.shape[0] != self.vectors.shape[1]:
            raise ValueError(f"query vector has {q.shape[0]} dimensions, the index "
                             f"{self.vectors.shape[1]}")
        norm = float(np.linalg.norm(q))
        if norm > 0:
            q = q / norm
        mat = self.vectors if cand is None else self.vectors[cand]
        # einsum, not `mat @ q`: OpenBLAS runs a matrix-vector product on all its threads, and on
        # two busy cores 10,000 x 384 took 20 ms (p50) that way against 0.6 ms single-threaded.
        return np.einsum("ij,j->i", mat, q)

    def _bm25_scores(self, query: str, cand: np.ndarray | None) -> np.ndarray:
        model = self._bm25_model()
        tokens = bm25_tokens(query)
        if model is None or not tokens:
            scores = np.zeros(len(self.entries), dtype=np.float32)
        else:
            scores = np.asarray(model.get_scores(tokens), dtype=np.float32)
        return scores if cand is None else scores[cand]

    def _bm25_model(self) -> Any:
        """The bm25s index, built on first use (a dense-only session never pays for it)."""
        with self._bm25_lock:
            if self._bm25 is None and self.entries:
                helper = offload.default()
                if helper.wanted(sum(c.end - c.start for c in self.entries)):
                    # In the helper process: tokenizing every chunk here would starve the GUI
                    # thread of the GIL (the soak's longest pauses, 0.7-0.9 s).
                    prefix = self.with_prefix
                    spans = [(c.doc_id, c.start, c.end, c.prefix if prefix else "",
                              c.meta.get("embed_view", "") if c.meta else "",
                              c.meta.get("table_header", "") if c.meta else "") for c in self.entries]
                    used = {c.doc_id for c in self.entries}
                    with contextlib.ExitStack() as stack:  # long texts through files (offload.ship)
                        texts = {d: stack.enter_context(offload.ship(doc.text))
                                 for d, doc in self.docs.items() if d in used}
                        self._bm25 = helper.call(bm25_model_of_spans, texts, spans)
                else:
                    self._bm25 = bm25_model(self.iter_texts())
            return self._bm25

    # -- search ---------------------------------------------------------------------------
    def search(self, query: str, k: int = 5, retriever: Retriever = "dense",
               docs: Collection[str] | None = None, heading_prefix: Sequence[str] | None = None,
               *, query_vector: np.ndarray | None = None) -> list[Hit]:
        """The k best distinct returned chunks for `query`.

        dense: cosine of the query vector with each chunk vector. bm25: BM25 over the embedded
        texts (chunks that share no word with the query are not returned). hybrid: reciprocal
        rank fusion (RRF_K = 60) of the dense and BM25 rankings, ties ordered by the dense rank.
        For parent_child, children are ranked and each parent is returned once, at its best
        child's rank. `docs` keeps chunks of those doc ids; `heading_prefix` keeps chunks whose
        (matched chunk's) heading_path it names: titles matched from the top by prefix,
        case-insensitive ("parental > germ"; `inspector.core.text.heading_filter`), each
        document's own title optional (`_heading_mask`). Equal scores
        keep index order, so results are deterministic. `query_vector` skips embedding the query
        (dense and hybrid).
        """
        if retriever not in RETRIEVERS:
            raise ValueError(f"unknown retriever {retriever!r} (known: {', '.join(RETRIEVERS)})")
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        cand = self._candidates(docs, heading_prefix)
        if not self.entries or (cand is not None and len(cand) == 0):
            if retriever != "bm25" and query_vector is None:
                self._require_dense()
            return []
        pos = cand if cand is not None else np.arange(len(self.entries))
        if retriever == "dense":
            qv = query_vector if query_vector is not None else self._query_vector(query)
            scores = self._dense_scores(qv, cand)
            return self._collect(lambda need: _top(scores, need), pos, scores, k, retriever)
        if retriever == "bm25":
            scores = self._bm25_scores(query, cand)
            positive = np.flatnonzero(scores > 0)
            order = positive[_top(scores[positive], len(positive))]
            return self._collect(lambda need: order[:need], pos, scores, k, retriever)
        qv = query_vector if query_vector is not None else self._query_vector(query)
        dense = self._dense_scores(qv, cand)
        lexical = self._bm25_scores(query, cand)
        fused = np.zeros(len(pos), dtype=np.float64)
        d_order = _top(dense, len(dense))
        fused[d_order] += 1.0 / (RRF_K + np.arange(1, len(d_order) + 1))
        positive = np.flatnonzero(lexical > 0)
        b_order = positive[_top(lexical[positive], len(positive))]
        fused[b_order] += 1.0 / (RRF_K + np.arange(1, len(b_order) + 1))
        dense_rank = np.empty(len(pos), dtype=np.int64)
        dense_rank[d_order] = np.arange(len(d_order))
        order = np.lexsort((dense_rank, -fused))  # equal fused scores: the dense ranking decides
        return self._collect(lambda need: order[:need], pos, fused, k, retriever)

    def search_vector(self, query_vector: np.ndarray, k: int = 5,
                      docs: Collection[str] | None = None,
                      heading_prefix: Sequence[str] | None = None) -> list[Hit]:
        """Dense search with a vector computed elsewhere (e.g. cached with the question)."""
        return self.search("", k, "dense", docs, heading_prefix, query_vector=query_vector)

    def _require_dense(self) -> None:
        if self.embedder is None or self.vectors is None:
            raise ValueError("dense and hybrid retrieval need an embedder: this index was built "
                             "without one (use retriever='bm25', or build it with an embedder)")

    def _query_vector(self, query: str) -> np.ndarray:
        self._require_dense()
        return self.embed_query(query)

    def _collect(self, ranked: Callable[[int], np.ndarray], pos: np.ndarray, scores: np.ndarray,
                 k: int, retriever: Retriever) -> list[Hit]:
        """Hits from a ranking over candidate positions; asks for a longer ranking when children
        of the same parent use up the first places."""
        need = k
        while True:
            order = ranked(need)
            hits: list[Hit] = []
            seen: set[tuple[str, int, str]] = set()
            for p in order:
                matched = self.entries[int(pos[p])]
                chunk = self.returned(matched)
                key = (chunk.doc_id, chunk.id, chunk.role)
                if key in seen:
                    continue
                seen.add(key)
                hits.append(Hit(chunk, matched, len(hits) + 1, float(scores[p]), retriever))
                if len(hits) == k:
                    return hits
            if len(order) < need:  # the ranking is exhausted
                return hits
            need *= 4


def build_index(docs: Sequence[Document], chunks: Mapping[str, Sequence[Chunk]],
                embedder: Embedder | None, *, with_prefix: bool = True,
                cache: VectorCache | None = None,
                progress: Callable[[int, int], None] | None = None,
                cancel: Callable[[], bool] | None = None,
                vectors: np.ndarray | None = None) -> Index:
    """An Index over `chunks` (by doc_id) of `docs`.

    Chunks with role "parent" are kept to be returned, not indexed. What is embedded (and BM25
    indexed) is `chunk.embedded_text(doc, with_prefix=with_prefix)`. `vectors`, if given, are used
    instead of embedding: one row per indexed chunk in the order they appear in `chunks` (parents
    skipped); rows are normalized here. With neither an embedder nor vectors, only BM25 works.
    `progress`, `cancel` and `cache` go to `embed_texts` (cancel raises `Cancelled`).
    """
    by_id: dict[str, Document] = {}
    for d in docs:
        if d.doc_id in by_id and by_id[d.doc_id] is not d:
            raise ValueError(f"two documents share the doc_id {d.doc_id!r}")
        by_id[d.doc_id] = d
    entries: list[Chunk] = []
    parents: dict[tuple[str, int], Chunk] = {}
    for doc_id, cs in chunks.items():
        if doc_id not in by_id:
            raise ValueError(f"chunks given for {doc_id!r}, which is not among the documents")
        for c in cs:
            if c.doc_id != doc_id:
                c = replace(c, doc_id=doc_id)
            if c.role == "parent":
                parents[(doc_id, c.id)] = c
            else:
                entries.append(c)
    for c in entries:
        if c.role == "child" and c.parent_id is not None and (c.doc_id, c.parent_id) not in parents:
            raise ValueError(f"child {c.key} names parent {c.parent_id}, which is not among the chunks")
    mat: np.ndarray | None
    if vectors is not None:
        mat = np.array(vectors, dtype=np.float32, copy=True)
        if mat.ndim != 2 or mat.shape[0] != len(entries):
            raise ValueError(f"vectors of shape {mat.shape} for {len(entries)} indexed chunks")
        if embedder is not None and mat.shape[1] != embedder.dim:
            raise ValueError(f"vectors have {mat.shape[1]} dimensions, the embedder {embedder.dim}")
        norms = np.linalg.norm(mat, axis=1, keepdims=True)
        np.divide(mat, norms, out=mat, where=norms > 0)
    elif embedder is not None:
        texts = [c.embedded_text(by_id[c.doc_id], with_prefix=with_prefix) for c in entries]
        mat = embed_texts(embedder, texts, cache, progress, cancel)
        del texts
    else:
        mat = None
    if mat is not None:
        mat.setflags(write=False)
    return Index(by_id, entries, parents, mat, embedder, with_prefix=with_prefix, cache=cache)
