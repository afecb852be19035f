"""Pooled chunk vectors: embed small pieces once, form any chunk's vector from them in milliseconds.

Exact embeddings cannot keep up with a slider (the model embeds ~20 chunks of 250 tokens a
second on a laptop CPU). all-MiniLM-L6-v2's sentence vector is the normalized *mean* of its token
vectors, so a chunk's vector is approximated by the mean of the token vectors of the pieces it
covers: each piece keeps its mean-pooled vector before normalization and its word-piece count,
and a chunk's vector is the count-weighted mean of the pieces it overlaps (a partly covered piece
weighted by the share of its characters covered), then normalized. Re-chunking costs a few
cumulative-sum lookups, not model calls. The approximation differs from exact embedding because
token vectors are contextual (attention sees only the piece), and because pooling does not
truncate at 256 word pieces the way the model does.

The context prefix is one more piece, embedded once per distinct prefix.
"""

from __future__ import annotations

import io
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Protocol, Sequence

import numpy as np

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document
from inspector.core.lru import SizedLRU
from inspector.core.text.tokens import token_index

PIECE_TOKENS = 25
"""Grid size of the pieces in cl100k tokens (the measurement in the issue: 25)."""
FORMAT_VERSION = 1


class PieceEncoder(Protocol):
    """Mean-pooled, unnormalized vectors of texts and the word pieces each was pooled over."""

    model_id: str
    dim: int

    def encode_pieces(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(means float32 [n, dim], counts int [n]) — the model's mean pooling before Normalize."""
        ...


class MiniLMPieceEncoder:
    """Token vectors from the bundled MiniLM (via `MiniLMEmbedder.load()`), mean-pooled over the
    attention mask exactly as the model's own Pooling module does, without the final Normalize."""

    def __init__(self, embedder=None, batch_size: int = 64) -> None:
        if embedder is None:
            from inspector.core.embedding.embedder import default_embedder

            embedder = default_embedder()
        self.embedder = embedder
        self.model_id = embedder.model_id
        self.dim = embedder.dim
        self.batch_size = batch_size

    def encode_pieces(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        model = self.embedder.load()
        out = model.encode(list(texts), output_value="token_embeddings", batch_size=self.batch_size,
                           convert_to_numpy=False, show_progress_bar=False)
        means = np.zeros((len(texts), self.dim), dtype=np.float32)
        counts = np.zeros(len(texts), dtype=np.int64)
        for i, tok in enumerate(out):
            arr = tok.detach().cpu().numpy() if hasattr(tok, "detach") else np.asarray(tok)
            counts[i] = len(arr)
            means[i] = arr.mean(axis=0)
        return means, counts


class VectorPieceEncoder:
    """For embedders that expose no token vectors (the test embedder): each piece's normalized
    vector stands in for its mean, weighted by its word count. An approximation of an
    approximation, used where the model cannot do better."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.model_id = f"{embedder.model_id}|sentence-vectors"
        self.dim = embedder.dim

    def encode_pieces(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        means = np.asarray(self.embedder.encode(list(texts)), dtype=np.float32)
        counts = np.asarray([max(1, len(t.split())) + 2 for t in texts], dtype=np.int64)
        return means, counts


def piece_encoder_for(embedder=None) -> PieceEncoder:
    """Token-level pooling for the bundled model, sentence vectors for anything else."""
    if embedder is None or hasattr(embedder, "load"):
        return MiniLMPieceEncoder(embedder)
    return VectorPieceEncoder(embedder)


@dataclass(frozen=True)
class PieceTable:
    """Pieces of one document: spans, mean-pooled vectors (unnormalized) and word-piece counts."""

    starts: np.ndarray
    ends: np.ndarray
    means: np.ndarray
    counts: np.ndarray
    model_id: str
    doc_sha: str

    def __len__(self) -> int:
        return len(self.starts)


def piece_spans(doc: Document, piece_tokens: int = PIECE_TOKENS) -> list[tuple[int, int]]:
    """A grid of ~`piece_tokens`-token spans covering the document (whitespace-only left out)."""
    from inspector.core.chunking.fixed_tokens import token_windows

    return token_windows(token_index(doc), 0, len(doc.text), piece_tokens, 0)


def _cache_path(folder: Path, model_id: str, doc: Document, piece_tokens: int) -> Path:
    from inspector.core.embedding.cache import _model_folder_name

    return folder / "pooled" / _model_folder_name(model_id) / f"{doc.sha256}-{piece_tokens}-v{FORMAT_VERSION}.npz"


def _load_table(path: Path, model_id: str, doc: Document) -> PieceTable | None:
    """A stored piece table, or None if absent, unreadable or inconsistent (never trusted blindly)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            starts, ends = z["starts"], z["ends"]
            means, counts = z["means"], z["counts"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    n = len(starts)
    if not (len(ends) == n == len(means) == len(counts)) or means.ndim != 2:
        return None
    if n and (starts.min() < 0 or ends.max() > len(doc.text) or np.any(ends <= starts)
              or not np.all(np.isfinite(means)) or counts.min() <= 0):
        return None
    return PieceTable(starts.astype(np.int64), ends.astype(np.int64), means.astype(np.float32),
                      counts.astype(np.int64), model_id, doc.sha256)


def build_piece_table(doc: Document, encoder: PieceEncoder, *, piece_tokens: int = PIECE_TOKENS,
                      cache_dir: str | Path | None = None, batch: int = 64,
                      progress: Callable[[int, int], None] | None = None,
                      cancel: Callable[[], bool] | None = None) -> PieceTable:
    """Pieces of `doc` embedded once; read from / written to the persistent cache when given."""
    from inspector.core.atomic import atomic_write_bytes
    from inspector.core.cancel import Cancelled, current

    if cancel is None:
        cancel = current()
    path = None
    if cache_dir is not None:
        path = _cache_path(Path(cache_dir), encoder.model_id, doc, piece_tokens)
        table = _load_table(path, encoder.model_id, doc) if path.exists() else None
        if table is not None:
            if progress:
                progress(len(table), len(table))
            return table
    spans = piece_spans(doc, piece_tokens)
    n = len(spans)
    means = np.zeros((n, encoder.dim), dtype=np.float32)
    counts = np.zeros(n, dtype=np.int64)
    # Longest first, as sentence-transformers batches, so padding stays small.
    order = sorted(range(n), key=lambda i: -(spans[i][1] - spans[i][0]))
    if progress:
        progress(0, n)
    for b in range(0, n, batch):
        if cancel is not None and cancel():
            raise Cancelled()
        idx = order[b:b + batch]
        m, c = encoder.encode_pieces([doc.text[spans[i][0]:spans[i][1]] for i in idx])
        means[idx] = m
        counts[idx] = c
        if progress:
            progress(min(b + batch, n), n)
    table = PieceTable(np.asarray([s for s, _ in spans], dtype=np.int64),
                       np.asarray([e for _, e in spans], dtype=np.int64), means, counts,
                       encoder.model_id, doc.sha256)
    if path is not None:
        buf = io.BytesIO()
        np.savez(buf, starts=table.starts, ends=table.ends, means=table.means, counts=table.counts)
        try:
            atomic_write_bytes(path, buf.getvalue())
        except OSError:
            pass  # a cache that cannot be written only costs time next run
    return table


class PooledVectors:
    """Chunk vectors for any chunking of one document, from its piece table.

    Cumulative sums of count-weighted piece vectors make each chunk a difference of two rows plus
    its two partly covered edge pieces: O(chunks x dim) per re-chunk.
    """

    def __init__(self, table: PieceTable, encoder: PieceEncoder | None = None) -> None:
        self.table = table
        self.encoder = encoder
        w = table.means.astype(np.float64) * table.counts[:, None]
        self._cum = np.zeros((len(table) + 1, w.shape[1] if w.ndim == 2 else 0), dtype=np.float64)
        if len(table):
            np.cumsum(w, axis=0, out=self._cum[1:])
        self._prefixes: dict[str, tuple[np.ndarray, int]] = {}
        self._lock = threading.Lock()

    def _prefix_pieces(self, prefixes: Sequence[str]) -> None:
        missing = sorted({p for p in prefixes if p and p not in self._prefixes})
        if not missing:
            return
        if self.encoder is None:
            raise ValueError("prefix vectors need a piece encoder")
        m, c = self.encoder.encode_pieces(missing)
        with self._lock:
            for p, vec, cnt in zip(missing, m, c):
                self._prefixes[p] = (vec.astype(np.float64), int(cnt))

    def vectors(self, chunks: Sequence[Chunk], *, with_prefix: bool = True) -> np.ndarray:
        """Normalized float32 vectors, one row per chunk (the direction of the count-weighted sum
        is that of the weighted mean, so no division is needed before normalizing)."""
        t = self.table
        dim = self._cum.shape[1]
        out = np.zeros((len(chunks), dim), dtype=np.float64)
        if not len(chunks):
            return out.astype(np.float32)
        s = np.fromiter((c.start for c in chunks), dtype=np.int64, count=len(chunks))
        e = np.fromiter((c.end for c in chunks), dtype=np.int64, count=len(chunks))
        # Pieces [i, j) overlap the chunk; pieces (i, j-1) are inside it entirely.
        i = np.searchsorted(t.ends, s, side="right")
        j = np.searchsorted(t.starts, e, side="left")
        lengths = (t.ends - t.starts).astype(np.float64)
        for k in range(len(chunks)):
            a, b = int(i[k]), int(j[k])
            if b <= a:
                continue
            vec = self._cum[b] - self._cum[a]
            # Edge pieces partly outside the chunk: take back the uncovered share.
            for p in {a, b - 1}:
                covered = min(int(t.ends[p]), int(e[k])) - max(int(t.starts[p]), int(s[k]))
                share = max(covered, 0) / lengths[p]
                if share < 1.0:
                    w_out = (1.0 - share) * t.counts[p]
                    vec = vec - w_out * t.means[p]
            out[k] = vec
        if with_prefix:
            self._prefix_pieces([c.prefix for c in chunks])
            for k, c in enumerate(chunks):
                if c.prefix:
                    pv, pc = self._prefixes[c.prefix]
                    out[k] += pv * pc
        norms = np.linalg.norm(out, axis=1)
        norms[norms == 0] = 1.0
        return (out / norms[:, None]).astype(np.float32)


def index_vectors(chunks_by_doc: Mapping[str, Sequence[Chunk]], pooled: Mapping[str, PooledVectors], *,
                  with_prefix: bool = True) -> np.ndarray:
    """Pooled vectors in the row order `retrieval.build_index(..., vectors=...)` expects: chunks by
    document in the mapping's order, parents skipped (they are returned, never matched)."""
    rows = []
    for doc_id, cs in chunks_by_doc.items():
        matchable = [c for c in cs if c.role != "parent"]
        if matchable:
            rows.append(pooled[doc_id].vectors(matchable, with_prefix=with_prefix))
    if not rows:
        dim = next(iter(pooled.values())).table.means.shape[1] if pooled else 0
        return np.zeros((0, dim), dtype=np.float32)
    return np.concatenate(rows, axis=0)


#: A few documents' pooled vectors, by (model, document hash, piece size): the core's locked LRU
#: (the window's pooled, retrieval and sweep workers reach it at once).
_POOLED: SizedLRU[PooledVectors] = SizedLRU(8, 8)


def pooled_for(doc: Document, embedder=None, *, piece_tokens: int = PIECE_TOKENS,
               cache_dir: str | Path | None = "default",
               progress: Callable[[int, int], None] | None = None,
               cancel: Callable[[], bool] | None = None) -> PooledVectors:
    """The document's PooledVectors for the embedder's model: from memory, else from the persistent
    cache, else embedded now (the one-time cost). A few documents are kept in memory."""
    encoder = piece_encoder_for(embedder)
    key = (encoder.model_id, doc.sha256, piece_tokens)
    hit = _POOLED.lookup(key)
    if hit is not None:
        return hit
    if cache_dir == "default":
        from inspector.core.embedding.cache import default_cache_dir

        cache_dir = default_cache_dir()
    table = build_piece_table(doc, encoder, piece_tokens=piece_tokens, cache_dir=cache_dir,
                              progress=progress, cancel=cancel)
    pv = PooledVectors(table, encoder)
    _POOLED.put(key, pv)
    return pv
