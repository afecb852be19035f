"""A tiktoken encoding's parsed ranks kept on disk, so that a start builds the encoding without
parsing its ranks file again (issue 31).

Why: tiktoken reads cl100k's ranks from a text file of 100k base64 lines, decoding each line
into a Python bytes key: ~75 ms of CPU on an idle machine and far more under load, on the way
from the window visible to the chunks painted, every start. The same dict read back from a
`marshal` image takes ~16 ms.

What is kept: the encoding constructor's whole result (name, pat_str, mergeable_ranks,
special_tokens), the arguments of `tiktoken.Encoding`, in one file per encoding under
`<cache>/tiktoken/`. Its name carries a key: sha256 of the files the constructor reads (the
ranks file, and the constructor's own module, whose expression and special tokens could change
with the package), with this file format's and `marshal`'s versions. A changed ranks file
therefore misses the cache and is parsed (and hash-checked) by its package again, never read
from an old image.

On disk: magic b"CIRANK01", sha256 of the payload (32 bytes), payload (`marshal.dumps` of the
result). A file whose magic, digest or content does not check out is ignored: the constructor
runs as before and the file is written again (atomically: a reader sees the old file or the new
one). An unwritable cache folder only costs the parse. `marshal` rather than `pickle`: loading
it runs no code, whoever wrote the file.
"""

from __future__ import annotations

import hashlib
import logging
import marshal
from collections.abc import Callable, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from inspector.core.runtime.atomic import atomic_write_bytes
from inspector.core.runtime.cachedir import default_cache_dir

log = logging.getLogger(__name__)

MAGIC = b"CIRANK01"
_DIGEST = 32
SUFFIX = ".ranks"
#: The folder below the app's cache folder.
FOLDER = "tiktoken"
#: What the constructor's result must hold to be taken from the cache (`tiktoken.Encoding`'s
#: required arguments, each with its type).
_REQUIRED: dict[str, type] = {"name": str, "pat_str": str, "mergeable_ranks": dict, "special_tokens": dict}


def source_key(sources: Sequence[Path]) -> str:
    """sha256 (hex) of the files the constructor reads, in order, each with its length, and of
    this format's and `marshal`'s versions."""
    h = hashlib.sha256(MAGIC + marshal.version.to_bytes(4, "little"))
    for path in sources:
        data = Path(path).read_bytes()
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return h.hexdigest()


def cache_file(folder: Path, name: str, key: str) -> Path:
    """Where the encoding `name`'s image for `key` lives."""
    return folder / FOLDER / f"{name}-{key[:32]}{SUFFIX}"


def encode_spec(spec: dict[str, Any]) -> bytes:
    """The file's bytes for a constructor's result (ValueError: a value `marshal` cannot hold)."""
    payload = marshal.dumps(spec)
    return MAGIC + hashlib.sha256(payload).digest() + payload


def decode_spec(data: bytes) -> dict[str, Any] | None:
    """The constructor's result from a file's bytes, None when they do not check out."""
    head = len(MAGIC) + _DIGEST
    if len(data) < head or data[:len(MAGIC)] != MAGIC:
        return None
    payload = memoryview(data)[head:]
    if hashlib.sha256(payload).digest() != data[len(MAGIC):head]:
        return None
    try:
        spec = marshal.loads(payload)
    except (ValueError, EOFError, TypeError):
        return None
    if not isinstance(spec, dict) or not all(isinstance(spec.get(k), t) for k, t in _REQUIRED.items()):
        return None
    return spec


def read_spec(path: Path) -> dict[str, Any] | None:
    """The result kept in `path`, None when it is missing or does not check out."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return decode_spec(data)


def write_spec(path: Path, spec: dict[str, Any]) -> bool:
    """Keep `spec` in `path` (atomically), and remove the encoding's images for other keys.
    False when it could not be written (the cache is an optimisation: nothing raises)."""
    try:
        data = encode_spec(spec)
        atomic_write_bytes(path, data)
    except (OSError, ValueError) as exc:
        log.debug("tokenizer ranks not cached in %s: %s", path, exc)
        return False
    stem = path.name.rsplit("-", 1)[0]
    for old in path.parent.glob(f"{stem}-*{SUFFIX}"):
        if old != path:
            with suppress(OSError):
                old.unlink()
    return True


def cached_spec(name: str, constructor: Callable[[], dict[str, Any]], sources: Sequence[Path],
                folder: Path | None = None) -> dict[str, Any]:
    """`constructor()`, read from the cache when its image for these `sources` is there and
    intact, else made by calling it and kept for the next start. `name` names the file (the
    encoding's name); `folder` is the app's cache folder (default: `default_cache_dir()`)."""
    try:
        key = source_key(sources)
    except OSError:  # a source that cannot be read: the constructor says what is wrong
        return constructor()
    path = cache_file(default_cache_dir() if folder is None else Path(folder), name, key)
    spec = read_spec(path)
    if spec is None:
        spec = constructor()
        write_spec(path, spec)
    return spec
