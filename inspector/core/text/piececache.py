"""A long document's word-piece index (its words and their pieces under an embedder's BERT-style
tokenizer) kept on disk, so that opening it again counts no word afresh (issue 31: the cold path;
`tokencache` and `structurecache` keep its token index and structure the same way).

Why: the word-piece index is the third part of a long document's first chunking with `markdown`
(its `fit_embedder` budget) and of the window's complete chunks (their truncation flags): ~50 ms
for the 1 MB handbook x11, ~1.3 s for a 20 MB handbook.

What is kept, per document text and tokenizer (`runtime.keptfiles`: one checked file each, the
folder bounded): each word's start and end and its pieces, as int32. The key is everything else
the index depends on: this format, the bytes of the tokenizer.json the counting tokenizer was
loaded from, the `tokenizers` package's version, and the index's own code (`wordpieces.py`).
Values an index cannot hold (words out of order or beyond the text, negative pieces) are refused
like a failed checksum.
"""

from __future__ import annotations

import struct
from functools import lru_cache
from pathlib import Path

import numpy as np

from inspector.core.runtime import keptfiles
from inspector.core.runtime.keptfiles import KeptFolder

MAGIC = b"CIWORD01"
#: Where the indexes are kept (below the app's cache folder), and how much at most: ~12 bytes a word.
FILES = KeptFolder("wordpieces", ".pieces", MAGIC, 256 << 20)
_HEADER = struct.Struct("<QQ")  # text length, words


@lru_cache(maxsize=8)
def piece_key(tokenizer_digest: str) -> str:
    """What a word-piece index depends on besides its text: the loaded tokenizer (the sha256 of the
    tokenizer.json bytes it was made from: `wordpieces._loaded_tokenizer`; a file replaced on disk
    while a process runs must not key what the process's loaded tokenizer counted), the
    `tokenizers` version, this format, and the code that made the index (wordpieces.py)."""
    return keptfiles.code_key(MAGIC, packages=("tokenizers",), parts=(tokenizer_digest,),
                              files=(Path(__file__).with_name("wordpieces.py"),))


def encode(text_len: int, starts: np.ndarray, ends: np.ndarray, pieces: np.ndarray) -> list[bytes | memoryview]:
    """The payload of an index's words (their starts, ends and pieces), as parts to write."""
    parts = [np.ascontiguousarray(a, dtype="<i4") for a in (starts, ends, pieces)]
    return [_HEADER.pack(text_len, len(parts[0])), *(a.data.cast("B") for a in parts)]


def decode(payload: bytes | bytearray | memoryview, text_len: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The words (their starts, ends and pieces, int64) of a payload, None when it does not hold a
    word-piece index of a text of `text_len` characters."""
    view = memoryview(payload)
    if len(view) < _HEADER.size:
        return None
    n, words = _HEADER.unpack(view[:_HEADER.size])
    if n != text_len or _HEADER.size + 12 * words != len(view):
        return None
    starts, ends, pieces = (np.frombuffer(view, dtype="<i4", count=words, offset=_HEADER.size + 4 * words * k)
                            .astype(np.int64) for k in range(3))
    if words and (starts[0] < 0 or ends[-1] > text_len or bool((ends < starts).any()) or bool((pieces < 0).any())
                  or bool((np.diff(starts) < 0).any()) or bool((np.diff(ends) < 0).any())):
        return None
    return starts, ends, pieces
