"""Chunks measured in the embedding model's own word pieces (all-MiniLM-L6-v2's WordPiece, 256 max).

A chunk whose embedded text (prefix + span) is longer than the model's `max_seq_length` is silently
truncated by the embedder: everything after word piece 256 never reaches the vector. `annotate`
measures each chunk and flags the ones that lose text, with the document offset where reading stops.

Counting is exact but cheap: BERT's pre-tokenizer cuts at whitespace and punctuation, so words
never cross a span's whitespace, and the word pieces of whole words inside a span are the
document's own. The document is tokenized once; only the partial words at each end of a span are
tokenized afresh (tests compare against tokenizing the text itself).
"""

from __future__ import annotations

import bisect
from dataclasses import replace
from typing import Iterable

import numpy as np

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document
from inspector.core.text.wordpieces import (
    count_text,
    embedded_pieces,
    max_seq_length,
    tokenizer,
    wordpiece_index,
)


def _truncation_offset(doc: Document, c: Chunk, keep: int) -> int:
    """Document offset just past the last word piece of the span the embedder still reads.

    Found from the document's word index (whole words keep their pieces); only the word where
    reading stops is tokenized afresh, so a long truncated chunk costs a bisection, not a pass."""
    if keep <= 0:
        return c.start
    idx = wordpiece_index(doc)
    if keep >= idx.count(c.start, c.end):
        return c.end  # nothing is dropped: reading stops at the span's end (trailing space included)
    text = doc.text
    i = bisect.bisect_left(idx.word_starts, c.start)
    if i < len(idx.word_starts) and idx.word_starts[i] < c.end:
        head = count_text(text[c.start:idx.word_starts[i]])
        if keep > head:
            prefix = idx.word_pieces_prefix
            target = int(prefix[i]) + keep - head
            w = int(np.searchsorted(prefix, target, side="left")) - 1  # word holding piece `target`
            if i <= w < len(idx.word_ends) and idx.word_ends[w] <= c.end:
                if int(prefix[w + 1]) == target:
                    return idx.word_ends[w]
                m = target - int(prefix[w])
                word = tokenizer().encode(text[idx.word_starts[w]:idx.word_ends[w]], add_special_tokens=False)
                if m <= len(word.offsets):
                    return idx.word_starts[w] + word.offsets[m - 1][1]
    enc = tokenizer().encode(doc.text[c.start:c.end], add_special_tokens=False)
    if keep >= len(enc.offsets):
        return c.end
    return c.start + enc.offsets[keep - 1][1]


def annotate(doc: Document, chunks: Iterable[Chunk], *, with_prefix: bool = True,
             limit: int | None = None) -> tuple[Chunk, ...]:
    """Chunks with `embed_tokens`, `embed_dropped`, `truncated_at` and the
    `truncated_by_embedder` flag filled in for the embedded text (prefix + span)."""
    limit = max_seq_length() if limit is None else limit
    idx = wordpiece_index(doc)
    out = []
    for c in chunks:
        total = embedded_pieces(idx, c.prefix if with_prefix else "", c.start, c.end)
        dropped = max(0, total - limit)
        if dropped:
            keep_body = max(0, limit - (total - idx.count(c.start, c.end)))
            out.append(replace(c, embed_tokens=total, embed_dropped=dropped,
                               truncated_at=_truncation_offset(doc, c, keep_body),
                               flags=c.flags | {"truncated_by_embedder"}))
        else:
            out.append(replace(c, embed_tokens=total, embed_dropped=0, truncated_at=None,
                               flags=c.flags - {"truncated_by_embedder"}))
    return tuple(out)
