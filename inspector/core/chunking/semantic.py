"""`semantic`: break where the meaning of neighbouring sentences drifts apart.

Each sentence (`sentence_spans`, Markdown-aware for Markdown documents) is embedded on its own.
For every gap between two sentences the *distance* is 1 - cosine similarity of their vectors.
`threshold` is a percentile of those distances in this document: a gap whose distance is above
it is a semantic break. At the default 90, the 10% of gaps with the largest drops in similarity
are breaks; a lower threshold makes more breaks (smaller chunks), a higher one fewer.
(Equivalently: break where the similarity falls below its (100 - threshold)th percentile.)

Sizes, in cl100k tokens of the chunk's span, bend the breaks:
- a chunk shorter than `min_size` is not ended at a break (it takes in the next sentence);
- a chunk never exceeds `max_size`: when the next sentence would overflow it, the chunk ends at
  its largest-distance gap that leaves it at least `min_size` (else just before the overflow);
- a sentence longer than `max_size` is cut into token windows (flagged `cut_mid_sentence`);
- the last chunk, if shorter than `min_size`, joins the previous one when both fit `max_size`.
A heading line always stays with the text after it: the gap after a heading is never a break.

Chunks are spans from the first sentence's start to the last one's end, so every non-whitespace
character is in exactly one chunk, in order. Sentence vectors go through the embedding cache
(memory first): moving a slider re-runs only the cheap packing.

The sentence vectors come from the embedding model the user chose: `Workbench.set_embedder` hands
it here (`set_semantic_embedder`), as it hands its tokenizer to the word-piece counts, so the
strategy stays a pure function of (document, params) under the process's model. Without a choice
it is the bundled MiniLM. Distances are remembered per model (its cache namespace and identity)
and sentence vectors are cached per model, so another model's breaks are never served.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Callable

import numpy as np

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.common import SpanContext
from inspector.core.chunking.fixed_tokens import token_windows
from inspector.core.chunking.sentences import sentence_units
from inspector.core.documents.document import Document
from inspector.core.embedding.cache import EmbeddingCache, default_cache
from inspector.core.embedding.embedder import (
    Embedder,
    cache_namespace,
    default_embedder,
    embed_texts,
)
from inspector.core.runtime.lru import SizedLRU

_LOCK = threading.Lock()
_EMBEDDER: Embedder | None = None
_CACHE: EmbeddingCache | None = None
#: Adjacent-sentence distances of at most 16 documents (the one LRU, locked).
_DISTANCES: SizedLRU[np.ndarray] = SizedLRU(16, 16)


def set_semantic_embedder(embedder: Embedder | None) -> None:
    """The embedder the `semantic` strategy uses from now on (None: the process-wide MiniLM)."""
    global _EMBEDDER
    with _LOCK:
        _EMBEDDER = embedder


def chosen_semantic_embedder() -> Embedder | None:
    """The embedder `set_semantic_embedder` chose (None: the process-wide MiniLM), to put back."""
    with _LOCK:
        return _EMBEDDER


def set_semantic_cache(cache: EmbeddingCache | None) -> None:
    """The cache for sentence vectors (None: `inspector.core.embedding.cache.default_cache()`)."""
    global _CACHE
    with _LOCK:
        _CACHE = cache


def semantic_embedder() -> Embedder:
    with _LOCK:
        emb = _EMBEDDER
    return emb if emb is not None else default_embedder()


def adjacent_distances(doc: Document, spans: list[tuple[int, int]],
                       embedder: Embedder | None = None) -> np.ndarray:
    """1 - cosine similarity of each sentence with the next (len(spans) - 1 values)."""
    emb = embedder if embedder is not None else semantic_embedder()
    key = (doc.sha256, doc.kind, cache_namespace(emb), id(emb))
    hit = _DISTANCES.lookup(key)
    with _LOCK:
        cache = _CACHE
    if hit is not None and len(hit) == max(len(spans) - 1, 0):
        return hit
    if len(spans) < 2:
        dist = np.zeros(0, dtype=np.float64)
    else:
        vecs = embed_texts(emb, [doc.text[a:b] for a, b in spans],
                           cache if cache is not None else default_cache())
        sims = np.einsum("ij,ij->i", vecs[:-1].astype(np.float64), vecs[1:].astype(np.float64))
        dist = 1.0 - np.clip(sims, -1.0, 1.0)
    dist.setflags(write=False)
    _DISTANCES.put(key, dist)
    return dist


def _heading_sentences(ctx: SpanContext, spans: list[tuple[int, int]]) -> np.ndarray:
    """True for sentences that start inside a heading line."""
    hs = ctx.structure.headings
    starts = [h.start for h in hs]
    out = np.zeros(len(spans), dtype=bool)
    for i, (a, _) in enumerate(spans):
        k = bisect.bisect_right(starts, a) - 1
        out[i] = k >= 0 and a < hs[k].end
    return out


def semantic_spans(ctx: SpanContext, spans: list[tuple[int, int]], counts: list[int],
                   dist: np.ndarray, threshold: float, min_size: int,
                   max_size: int) -> tuple[list[tuple[int, int]], list[frozenset[str]]]:
    """Pack sentences into chunks, ending them at semantic breaks as the module docstring says."""
    n = len(spans)
    out: list[tuple[int, int]] = []
    flags: list[frozenset[str]] = []
    packed: list[bool] = []  # True: made of whole sentences (may be merged with a neighbour)
    if n == 0:
        return out, flags
    no_break = _heading_sentences(ctx, spans)  # gap g follows sentence g
    if len(dist):
        cut = float(np.percentile(dist, threshold))
        is_break = (dist > cut) & ~no_break[:-1]
    else:
        is_break = np.zeros(0, dtype=bool)

    def tokens(i: int, j: int) -> int:
        return ctx.count(spans[i][0], spans[j][1])

    i = 0
    while i < n:
        if counts[i] > max_size:
            for a, b in token_windows(ctx.tokens, spans[i][0], spans[i][1], max_size, 0):
                out.append((a, b))
                flags.append(frozenset({"cut_mid_sentence"}))
                packed.append(False)
            i += 1
            continue
        j = i
        while j + 1 < n:
            if is_break[j] and tokens(i, j) >= min_size:
                break
            if counts[j + 1] > max_size:
                break
            if tokens(i, j + 1) > max_size:
                j = _best_gap(i, j, dist, no_break, min_size, tokens)
                break
            j += 1
        out.append((spans[i][0], spans[j][1]))
        flags.append(frozenset())
        packed.append(True)
        i = j + 1
    if (len(out) >= 2 and packed[-1] and packed[-2]
            and ctx.count(*out[-1]) < min_size and ctx.count(out[-2][0], out[-1][1]) <= max_size):
        out[-2:] = [(out[-2][0], out[-1][1])]
        flags[-2:] = [frozenset()]
    return out, flags


def _best_gap(i: int, j: int, dist: np.ndarray, no_break: np.ndarray, min_size: int,
              tokens: Callable[[int, int], int]) -> int:
    """Where to end a full chunk of sentences i..j: the largest-distance gap g in [i, j] that
    leaves at least min_size tokens and does not follow a heading (ties: the later gap)."""
    best, best_d = -1, -np.inf
    for g in range(j, i - 1, -1):
        if no_break[g]:
            continue
        if tokens(i, g) < min_size:
            break  # earlier gaps leave even fewer tokens
        d = dist[g] if g < len(dist) else np.inf
        if d > best_d:
            best, best_d = g, d
    if best >= 0:
        return best
    # Nothing reaches min_size: end before the overflow, unless that splits a heading from its text.
    return j - 1 if no_break[j] and j > i else j


def semantic(doc: Document, params: dict) -> tuple[Chunk, ...]:
    ctx = SpanContext(doc)
    spans, counts = sentence_units(ctx)
    dist = adjacent_distances(doc, spans)
    out, flags = semantic_spans(ctx, spans, counts, dist, params["threshold"], params["min_size"],
                                params["max_size"])
    return tuple(ctx.make(out, budget=params["max_size"], extra_flags=flags))
