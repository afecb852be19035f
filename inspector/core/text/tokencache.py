"""A long document's token index kept on disk, so that opening it again (in a later session, in
another process of a corpus pool, after the helper process was retired) reads the index instead
of encoding the text again (issue 31: the cold path).

Why: the token index is most of a long document's first chunking. A 20 MB handbook's index is
~2 s of CPU (tiktoken's encode 1.6-2 s of it), paid again at every start of the app, by every
process of a corpus pool, by every run of a sweep over the same corpus. Read back from a file it
is a copy of its arrays (~70 ms).

What is kept, per document text (`runtime.keptfiles`: one checked file per text, the folder
bounded): the token ids, each token's character offset, the piece boundaries with the tokens
before each, and where odd characters are (`tokens.TokenIndex.arrays`), as int32 (offsets of texts
under 2**31 characters: `keptfiles.wanted`), ~3.5 bytes a character. The file's key is everything else the index
depends on: this format, the encoding (its ranks and expression), tiktoken's, `regex`'s and
Unicode's versions, the code that made the index (`tokens.index_key`). A changed encoding therefore misses
the cache, never reads an old index. Values an index cannot hold (offsets out of order or beyond
the text) are refused like a failed checksum.
"""

from __future__ import annotations

import struct

import numpy as np

from inspector.core.runtime.keptfiles import KeptFolder

MAGIC = b"CITOKS02"
#: Where the indexes are kept (below the app's cache folder), and how much at most: ~150 MB of text.
FILES = KeptFolder("tokens", ".tokens", MAGIC, 512 << 20)
#: The arrays of a kept index, in the file's order.
ARRAYS = ("tokens", "char_starts", "pieces", "piece_tokens", "odd")
_HEADER = struct.Struct("<Q5Q")  # text length, the arrays' lengths


def encode(text_len: int, arrays: dict[str, np.ndarray]) -> list[bytes | memoryview]:
    """The payload for an index's arrays (int32 each; `odd` may be empty), as parts to write one
    after another (no copy of the arrays into one buffer)."""
    parts = [np.ascontiguousarray(arrays[name], dtype="<i4") for name in ARRAYS]
    return [_HEADER.pack(text_len, *(len(a) for a in parts)), *(a.data.cast("B") for a in parts)]


def decode(payload: bytes | bytearray | memoryview, text_len: int) -> dict[str, np.ndarray] | None:
    """The arrays (int64, but `tokens` int32) of a payload, None when it does not hold an index of
    a text of `text_len` characters: its header and lengths, and values an index can hold
    (offsets in order and within the text, token counts within the tokens)."""
    view = memoryview(payload)
    if len(view) < _HEADER.size:
        return None
    n, *lengths = _HEADER.unpack(view[:_HEADER.size])
    if n != text_len or _HEADER.size + 4 * sum(lengths) != len(view):
        return None
    out: dict[str, np.ndarray] = {}
    pos = _HEADER.size
    for name, length in zip(ARRAYS, lengths, strict=True):
        a = np.frombuffer(view, dtype="<i4", count=length, offset=pos)
        out[name] = a.astype(np.int32) if name == "tokens" else a.astype(np.int64)
        pos += 4 * length
    return out if _plausible(out, text_len) else None


def _plausible(a: dict[str, np.ndarray], text_len: int) -> bool:
    """Values an index built from a text of `text_len` characters can hold (a file that passed its
    checksum but was written by other code, or edited, must not make counting index out of range)."""
    ntok = len(a["tokens"])
    cs, pieces, before, odd = a["char_starts"], a["pieces"], a["piece_tokens"], a["odd"]
    if len(cs) != ntok + 1 or not len(pieces) or len(before) != len(pieces):
        return False
    if ntok and (a["tokens"].min() < 0 or cs[0] < 0):
        return False
    if cs[-1] != text_len or pieces[0] != 0 or pieces[-1] != text_len or before[0] != 0 or before[-1] != ntok:
        return False
    for arr in (cs, pieces, before, odd):
        if len(arr) > 1 and bool((np.diff(arr) < 0).any()):
            return False
    return not (len(odd) and (odd[0] < 0 or odd[-1] >= text_len))
