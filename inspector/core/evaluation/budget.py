"""What a fixed context budget lets the model read: the top-k chunks packed in rank order.

A pipeline with a fixed k hands the model its k chunks best first; a context window (or a prompt
budget) holds only so many tokens. `pack` models that window filled to the brim: whole chunks in
rank order while they fit, then the chunk that crosses the budget cut at the budget (its first
tokens, as a truncated prompt would keep them), nothing after it. Only the top-k list is packed: a
budget larger than the k chunks is simply not filled, as in a pipeline that retrieves k and stops.

Counts are exact cl100k counts of span text: `Chunk.token_count` for whole chunks, and for the
cut, `TokenIndex.offset_after` (where the first n tokens of the span, encoded on its own, end).
The heading-path prefix is not counted: what is sent is the span text, as elsewhere in evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document

#: `cut_at(chunk, n)` -> the document offset where the first n tokens of the chunk's span end.
CutAt = Callable[[Chunk, int], int]

Span = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class Packed:
    """What a context budget lets through."""

    spans: tuple[Span, ...]
    """(doc_id, start, end) of the text sent, in rank order; the last one may be a cut chunk."""
    tokens: int
    """Tokens sent: the whole chunks' counts plus the cut chunk's first tokens (so exactly the
    budget whenever a chunk is cut)."""
    whole: int
    """Chunks sent whole."""
    cut: bool
    """True when a chunk was cut at the budget (and part of it sent)."""


def pack(chunks: Sequence[Chunk], budget: int, cut_at: CutAt) -> Packed:
    """Whole chunks in rank order while they fit, then the first chunk that does not fit cut at
    the budget, nothing after it. A chunk that exactly fills what is left is sent whole and ends
    the packing; a cut that would keep no character (one token inside a multi-byte character)
    sends nothing and counts nothing."""
    if budget < 0:
        raise ValueError(f"the budget must not be negative, got {budget}")
    spans: list[Span] = []
    used = 0
    whole = 0
    cut = False
    for c in chunks:
        left = budget - used
        if left <= 0:
            break
        if c.token_count <= left:
            spans.append((c.doc_id, c.start, c.end))
            used += c.token_count
            whole += 1
            continue
        end = cut_at(c, left)
        if end > c.start:
            spans.append((c.doc_id, c.start, end))
            used += left
            cut = True
        break
    return Packed(tuple(spans), used, whole, cut)


def document_cut(docs: Mapping[str, Document]) -> CutAt:
    """A `cut_at` over these documents' token indexes (exact cl100k, see `TokenIndex.offset_after`).
    A chunk without a known doc_id belongs to the only document, when there is one."""
    from inspector.core.text.tokens import token_index

    only = next(iter(docs.values())) if len(docs) == 1 else None

    def cut_at(chunk: Chunk, n: int) -> int:
        doc = docs.get(chunk.doc_id, only)
        if doc is None:
            raise KeyError(f"chunk {chunk.key} names no open document")
        return token_index(doc).offset_after(chunk.start, chunk.end, n)

    return cut_at


__all__ = ["CutAt", "Packed", "document_cut", "pack"]
