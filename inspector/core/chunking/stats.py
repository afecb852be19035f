"""Statistics of one chunking result: sizes, flags, and what overlap costs in embedded tokens."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from inspector.core.chunking.chunk import FLAGS, Chunk
from inspector.core.documents.document import Document

#: Roughly this many histogram bins; the width is rounded to 1, 2 or 5 times a power of ten.
TARGET_BINS = 20


@dataclass(frozen=True, slots=True)
class ChunkStats:
    """Numbers shown in the statistics panel. Parents (of `parent_child`) are returned to the
    model, not embedded, so they are counted apart and left out of every other figure."""

    count: int
    """Chunks that get embedded (every chunk except parents)."""
    parents: int = 0
    """Parent chunks (returned to the model, not embedded)."""
    min_tokens: int = 0
    median_tokens: float = 0.0
    p95_tokens: float = 0.0
    """95th percentile of cl100k tokens per chunk (linear interpolation, numpy's default)."""
    max_tokens: int = 0
    mean_tokens: float = 0.0
    bin_edges: tuple[int, ...] = ()
    """Histogram bin edges in tokens (len(bin_counts) + 1 of them); bins are [lo, hi)."""
    bin_counts: tuple[int, ...] = ()
    flag_counts: Mapping[str, int] = field(default_factory=dict)
    """How many counted chunks carry each flag of FLAGS (every flag present, zero or not)."""
    total_tokens: int = 0
    """Sum of cl100k tokens over counted chunks: what embedding the whole index costs."""
    document_tokens: int = 0
    """cl100k tokens of the whole document."""
    embedded_word_pieces: int | None = None
    """Sum of embedder word pieces (incl. [CLS]/[SEP] and prefix) where measured, else None."""
    dropped_word_pieces: int = 0
    """Word pieces the embedder never sees (beyond its limit), summed."""

    @property
    def inflation(self) -> float:
        """Sum of chunk tokens / document tokens: 1.0 means every token embedded once; overlap
        pushes it above 1, text left out of every chunk below."""
        return self.total_tokens / self.document_tokens if self.document_tokens else 0.0

    def share(self, flag: str) -> float:
        """Fraction (0..1) of counted chunks that carry `flag`."""
        return self.flag_counts.get(flag, 0) / self.count if self.count else 0.0


def nice_width(span: float, target_bins: int = TARGET_BINS) -> int:
    """A bin width of 1, 2 or 5 times a power of ten giving about `target_bins` bins over `span`."""
    if span <= 0:
        return 1
    raw = span / target_bins
    power = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if m * power >= raw:
            return max(1, int(m * power))
    return max(1, int(10 * power))  # pragma: no cover (the loop always returns)


def histogram(values: Sequence[int] | np.ndarray,
              target_bins: int = TARGET_BINS) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(edges, counts) with round-number edges from a multiple of the width below min(values)
    to just past max(values); every value falls in exactly one [lo, hi) bin."""
    if not len(values):
        return (), ()
    arr = np.asarray(values, dtype=np.int64)
    lo, hi = int(arr.min()), int(arr.max())
    width = nice_width(hi - lo, target_bins)
    first = (lo // width) * width
    nbins = (hi - first) // width + 1
    edges = tuple(first + k * width for k in range(nbins + 1))
    counts = np.bincount((arr - first) // width, minlength=nbins)
    return edges, tuple(int(c) for c in counts)


def chunk_stats(doc: Document, chunks: Sequence[Chunk], *, document_tokens: int | None = None) -> ChunkStats:
    """Statistics of `chunks` (a strategy's output for `doc`)."""
    if document_tokens is None:
        from inspector.core.text.tokens import token_index

        document_tokens = len(token_index(doc))
    counted = [c for c in chunks if c.role != "parent"]
    parents = len(chunks) - len(counted)
    flag_counts = {f: 0 for f in FLAGS}
    for c in counted:
        for f in c.flags:
            flag_counts[f] = flag_counts.get(f, 0) + 1
    if not counted:
        return ChunkStats(count=0, parents=parents, flag_counts=flag_counts, document_tokens=document_tokens)
    tokens = np.fromiter((c.token_count for c in counted), dtype=np.int64, count=len(counted))
    measured = [c.embed_tokens for c in counted if c.embed_tokens is not None]
    edges, counts = histogram(tokens)
    return ChunkStats(
        count=len(counted),
        parents=parents,
        min_tokens=int(tokens.min()),
        median_tokens=float(np.median(tokens)),
        p95_tokens=float(np.percentile(tokens, 95)),
        max_tokens=int(tokens.max()),
        mean_tokens=float(tokens.mean()),
        bin_edges=edges,
        bin_counts=counts,
        flag_counts=flag_counts,
        total_tokens=int(tokens.sum()),
        document_tokens=document_tokens,
        embedded_word_pieces=int(sum(measured)) if measured else None,
        dropped_word_pieces=int(sum(c.embed_dropped for c in counted)),
    )
