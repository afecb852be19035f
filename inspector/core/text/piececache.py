"""A long document's word-piece index (its words and their pieces under an embedder's BERT-style
tokenizer) kept on disk, so that opening it again counts no word afresh (issue 31: the cold path;
`tokencache` and `structurecache` keep its token index and structure the same way).

Why: the word-piece index is the third part of a long document's first chunking with `markdown`
(its `fit_embedder` budget) and of the window's complete chunks (their truncation flags): ~50 ms
for the 1 MB handbook x11, ~1.3 s for a 20 MB handbook.

What is kept, per document text and tokenizer (`runtime.keptfiles`: one checked file each, the
folder bounded): each word's start and end and its pieces, as int32. The key is everything else
the index depends on: this format, the tokenizer.json's bytes, the `tokenizers` package's version,
and the index's own code (`wordpieces.py`). Values an index cannot hold (words out of order or
beyond the text, negative pieces) are refused like a failed checksum.
"""

from __future__ import annotations

import hashlib
import struct
from contextlib import suppress
from functools import lru_cache
from pathlib import Path

import numpy as np

from inspector.core.runtime import keptfiles
from inspector.core.runtime.keptfiles import KeptFolder

MAGIC = b"CIWORD01"
#: Where the indexes are kept (below the app's cache folder), and how much at most: ~12 bytes a word.
FILES = KeptFolder("wordpieces", ".pieces", MAGIC, 256 << 20)
ARRAYS = ("starts", "ends", "pieces")
_HEADER = struct.Struct("<QQ")  # text length, words
_LIMIT = 1 << 31


def wanted(text_len: int) -> bool:
    """Whether a text of this length has its word-piece index kept (and looked for) on disk."""
    return text_len < _LIMIT and keptfiles.wanted(text_len)


def piece_key(folder: Path) -> str:
    """sha256 (hex) of what a word-piece index depends on besides its text, for the tokenizer in
    `folder`: its tokenizer.json (read again when the file changes), the package's version, this
    format, and wordpieces.py's source."""
    tok = folder / "tokenizer.json"
    try:
        st = tok.stat()
    except OSError:
        return _key(str(tok), 0, 0)
    return _key(str(tok), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=8)
def _key(path: str, mtime_ns: int, size: int) -> str:
    from importlib import metadata

    h = hashlib.sha256(MAGIC)
    try:
        h.update(metadata.version("tokenizers").encode())
    except metadata.PackageNotFoundError:
        h.update(b"none")
    for source in (Path(path), Path(__file__).with_name("wordpieces.py")):
        h.update(str(source.name).encode() + b"\0")
        with suppress(OSError):
            h.update(source.read_bytes())
    return h.hexdigest()


def encode(text_len: int, starts: np.ndarray, ends: np.ndarray, pieces: np.ndarray) -> list[bytes | memoryview]:
    """The payload of an index's words (their starts, ends and pieces), as parts to write."""
    parts = [np.ascontiguousarray(a, dtype="<i4") for a in (starts, ends, pieces)]
    return [_HEADER.pack(text_len, len(parts[0])), *(a.data.cast("B") for a in parts)]


def decode(payload: bytes | bytearray | memoryview, text_len: int) -> dict[str, np.ndarray] | None:
    """The words (int64 arrays "starts", "ends", "pieces") of a payload, None when it does not
    hold a word-piece index of a text of `text_len` characters."""
    view = memoryview(payload)
    if len(view) < _HEADER.size:
        return None
    n, words = _HEADER.unpack(view[:_HEADER.size])
    if n != text_len or _HEADER.size + 12 * words != len(view):
        return None
    out = {name: np.frombuffer(view, dtype="<i4", count=words, offset=_HEADER.size + 4 * words * k).astype(np.int64)
           for k, name in enumerate(ARRAYS)}
    starts, ends, pieces = out["starts"], out["ends"], out["pieces"]
    if words and (starts[0] < 0 or ends[-1] > text_len or bool((ends < starts).any()) or bool((pieces < 0).any())
                  or bool((np.diff(starts) < 0).any()) or bool((np.diff(ends) < 0).any())):
        return None
    return out


def read(sha256: str, text_len: int, folder: Path, base: Path | None = None) -> dict[str, np.ndarray] | None:
    """The words kept for this text and tokenizer, None when there are none or they do not check
    out (then the file is removed)."""
    return FILES.load(sha256, piece_key(folder), lambda payload: decode(payload, text_len), base)


def write(sha256: str, text_len: int, folder: Path, starts: np.ndarray, ends: np.ndarray, pieces: np.ndarray,
          base: Path | None = None) -> bool:
    """Keep an index's words; False when they could not be written."""
    return FILES.write(sha256, piece_key(folder), encode(text_len, starts, ends, pieces), base)


def write_later(sha256: str, text_len: int, folder: Path, starts: np.ndarray, ends: np.ndarray,
                pieces: np.ndarray) -> None:
    """Keep an index's words, on the writer thread (`KeptFolder.write_later`)."""
    FILES.write_later(sha256, piece_key(folder), lambda: encode(text_len, starts, ends, pieces))


def forget(base: Path | None = None) -> None:
    """Remove every kept word-piece index."""
    FILES.forget(base)
