"""Chunks measured in the embedding model's own word pieces (all-MiniLM-L6-v2's WordPiece, 256
max, unless `wordpieces.use_piece_spec` set another model's tokenizer and limit).

A chunk whose embedded text (prefix + span) is longer than the model's `max_seq_length` is silently
truncated by the embedder: everything after the limit never reaches the vector. `annotate`
measures each chunk and flags the ones that lose text, with the document offset where reading stops.

Counting is exact but cheap: BERT's pre-tokenizer cuts at whitespace and punctuation, so words
never cross a span's whitespace, and the word pieces of whole words inside a span are the
document's own. The document is tokenized once; only the partial words at each end of a span are
tokenized afresh (tests compare against tokenizing the text itself).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from inspector.core.chunking.chunk import Chunk, anchored
from inspector.core.documents.document import Document
from inspector.core.runtime.cancel import check_cancelled
from inspector.core.text.embed_view import VIEW_KEY
from inspector.core.text.wordpieces import (
    PieceIndex,
    WordPieceIndex,
    count_text,
    embedded_pieces,
    max_seq_length,
    prefix_pieces,
    special_tokens,
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
    if not isinstance(idx, WordPieceIndex):  # cl100k or a tokenizer counted span by span
        return idx.offset_after(c.start, c.end, keep)
    return _cut(doc, c.start, c.end, keep)


def _cut(doc: Document, start: int, end: int, keep: int, head: int | None = None) -> int:
    """`_truncation_offset` of a span known to hold more than `keep` > 0 word pieces. `head`:
    the word pieces before the span's first whole word, when the caller counted them already."""
    idx = wordpiece_index(doc)
    assert isinstance(idx, WordPieceIndex)
    count_text = idx.count_text
    text = doc.text
    i = bisect.bisect_left(idx.word_starts, start)
    if i < len(idx.word_starts) and idx.word_starts[i] < end:
        if head is None:
            head = count_text(text[start:idx.word_starts[i]])
        if keep > head:
            prefix = idx.word_pieces_prefix
            target = int(prefix[i]) + keep - head
            w = int(np.searchsorted(prefix, target, side="left")) - 1  # word holding piece `target`
            if i <= w < len(idx.word_ends) and idx.word_ends[w] <= end:
                if int(prefix[w + 1]) == target:
                    return idx.word_ends[w]
                m = target - int(prefix[w])
                word = idx.encode(text[idx.word_starts[w]:idx.word_ends[w]])
                if m <= len(word.offsets):
                    return idx.word_starts[w] + word.offsets[m - 1][1]
    enc = idx.encode(doc.text[start:end])
    if keep >= len(enc.offsets):
        return end
    return start + enc.offsets[keep - 1][1]


def read_ends(doc: Document, chunks: Sequence[Chunk], *, with_prefix: bool = True,
              limit: int | None = None) -> np.ndarray:
    """Where the embedder stops reading each chunk's span: `truncated_at` as `annotate` sets it,
    else the chunk's end. Vectorized for the live preview: whole words inside a span are counted
    from the document's word index at once, the partial words at its ends are tokenized only
    where they decide the answer, and a cut at a word's end is found by one search. A chunk
    embedded under a view is measured as `annotate` measures it (its view's pieces)."""
    limit = max_seq_length() if limit is None else limit
    out = _read_ends_raw(doc, chunks, with_prefix, limit)
    for k, c in enumerate(chunks):
        if _viewed(c):
            cut = _annotate_viewed(doc, c, with_prefix, limit).truncated_at
            out[k] = c.end if cut is None else cut
    return out


def _read_ends_raw(doc: Document, chunks: Sequence[Chunk], with_prefix: bool, limit: int) -> np.ndarray:
    """`read_ends` counting each span as written."""
    n = len(chunks)
    s = np.fromiter((c.start for c in chunks), dtype=np.int64, count=n)
    e = np.fromiter((c.end for c in chunks), dtype=np.int64, count=n)
    out = e.copy()
    if not n:
        return out
    idx = wordpiece_index(doc)
    if not isinstance(idx, WordPieceIndex):
        return _read_ends_by_span(doc, idx, chunks, out, with_prefix, limit)
    count_text = idx.count_text
    text = doc.text
    ws, we, pre = idx.word_starts_array, idx.word_ends_array, idx.word_pieces_prefix
    words = len(ws)
    keep = np.full(n, limit - special_tokens(), dtype=np.int64)
    if with_prefix:
        keep -= np.fromiter((prefix_pieces(c.prefix) if c.prefix else 0 for c in chunks),
                            dtype=np.int64, count=n)
    i = np.searchsorted(ws, s, side="left")  # first word starting in the span
    j = np.searchsorted(we, e, side="right")  # words [i, j) end within it
    whole = j > i
    last = max(words - 1, 0)
    # Partial words at either end (a span cutting into a word); none where a span ends between words.
    head_cut = whole & (i > 0) & (we[np.clip(i - 1, 0, last)] > s) if words else whole & False
    tail_cut = whole & (j < words) & (ws[np.clip(j, 0, last)] < e) if words else whole & False
    body = np.where(whole, pre[np.minimum(j, words)] - pre[np.minimum(i, words)], 0)
    head = np.zeros(n, dtype=np.int64)
    for k in np.flatnonzero(head_cut):
        head[k] = count_text(text[s[k]:ws[i[k]]])
    body += head
    # The tail only matters where the head and whole words leave room.
    for k in np.flatnonzero(tail_cut & (body <= keep)):
        body[k] += count_text(text[we[j[k] - 1]:e[k]])
    for k in np.flatnonzero(~whole):  # no whole word inside: count the text itself
        body[k] = idx.count(int(s[k]), int(e[k]))
    cut = np.flatnonzero(body > keep)
    if not len(cut):
        return out
    out[cut[keep[cut] <= 0]] = s[cut[keep[cut] <= 0]]
    cut = cut[keep[cut] > 0]
    # Cuts after the keep-th word piece, where that piece ends a whole word of the span.
    target = pre[np.minimum(i[cut], words)] + keep[cut] - head[cut]
    w = np.searchsorted(pre, target, side="left") - 1
    wc = np.clip(w, 0, last)
    fast = (whole[cut] & (keep[cut] > head[cut]) & (w >= i[cut]) & (w < words)
            & (pre[np.minimum(wc + 1, words)] == target) & (we[wc] <= e[cut]))
    out[cut[fast]] = we[wc[fast]]
    for k in cut[~fast]:
        out[k] = _cut(doc, int(s[k]), int(e[k]), int(keep[k]), int(head[k]) if whole[k] else None)
    return out


def _read_ends_by_span(doc: Document, idx: PieceIndex, chunks: Sequence[Chunk], out: np.ndarray,
                       with_prefix: bool, limit: int) -> np.ndarray:
    """`read_ends` under a piece model without a word index (cl100k, other tokenizers): each
    chunk counted as `annotate` counts it, cut where its pieces run out."""
    for k, c in enumerate(chunks):
        total = embedded_pieces(idx, c.prefix if with_prefix else "", c.start, c.end)
        if total > limit:
            body = idx.count(c.start, c.end)
            out[k] = idx.offset_after(c.start, c.end, max(0, limit - (total - body)))
    return out


def annotate(doc: Document, chunks: Iterable[Chunk], *, with_prefix: bool = True,
             limit: int | None = None) -> tuple[Chunk, ...]:
    """Chunks with `embed_tokens`, `embed_dropped`, `truncated_at` and the
    `truncated_by_embedder` flag filled in for the embedded text (prefix + span, or prefix + the
    span's embedding view when the chunk carries one: `Chunk.embedded_text`, what is sent), and
    `no_heading` dropped where the embedded prefix names the chunk's section (`anchored`)."""
    limit = max_seq_length() if limit is None else limit
    idx = wordpiece_index(doc)
    out = []
    for n, c in enumerate(anchored(tuple(chunks), with_prefix)):
        if not n % 64:
            # A background job (the hit-rate trace) that the user's work holds back stops here
            # within milliseconds; its Python would otherwise keep the GUI thread waiting.
            check_cancelled()
        if _viewed(c):
            out.append(_annotate_viewed(doc, c, with_prefix, limit))
            continue
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


def _viewed(c: Chunk) -> bool:
    """Whether `c` is embedded under a view other than the span as written (`with_view`)."""
    return bool(c.meta) and c.meta.get(VIEW_KEY, "raw") != "raw"


def _annotate_viewed(doc: Document, c: Chunk, with_prefix: bool, limit: int) -> Chunk:
    """`annotate` of one chunk embedded under a view (issue 29): its pieces are those of its
    `embedded_text`, counted whole (a view drops link targets and padding, so the document's word
    index does not count it). Where the embedder stops reading is the shortest span end whose view
    holds the pieces the model reads: found by bisection, tokenizing the view of a prefix of the
    span each step (only for the rare truncated chunk)."""
    specials = special_tokens()
    total = specials + count_text(c.embedded_text(doc, with_prefix=with_prefix))
    dropped = max(0, total - limit)
    if not dropped:
        return replace(c, embed_tokens=total, embed_dropped=0, truncated_at=None,
                       flags=c.flags - {"truncated_by_embedder"})

    def pieces_to(end: int) -> int:
        return specials + count_text(replace(c, end=end).embedded_text(doc, with_prefix=with_prefix))

    lo, hi = c.start, c.end  # pieces_to(hi) > limit; find the largest end with pieces_to <= limit
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pieces_to(mid) <= limit:
            lo = mid
        else:
            hi = mid
    return replace(c, embed_tokens=total, embed_dropped=dropped, truncated_at=lo,
                   flags=c.flags | {"truncated_by_embedder"})
