"""A PDF's conversion kept on disk, so that opening the same file again reads its Markdown, page map
and notes instead of converting it again (issue 31: the cold path a user meets most often).

Why: converting is by far the dearest step of opening a PDF. The built-in backend reads the layout
of every page (~0.03 s a page on this machine's docling test PDFs, ~0.07 s before stop 49: ~8 s
for a 300-page handbook on one core, every time it was opened, by the window, the CLI or a corpus
run), docling far more. Read back, it is one file of about the text's size.

What is kept, per file content (the sha256 of the PDF's bytes, not its name or place: a copy or a
renamed file is the same conversion) and backend (`runtime.keptfiles`: one checked file each, the
folder bounded): the converter's (text, kind, meta) in `marshal`'s format (loading it runs no
code). The key is everything else a conversion depends on: this format, `marshal`'s version, the
suffix and backend, the PDF packages' versions (pypdf, pdfplumber, pdfminer.six, pypdfium2 and, for
the docling backend, docling's; docling's models are not read: a user who replaces them in place
turns the cache off, `$CHUNK_INSPECTOR_DOCUMENT_CACHE=0`, or removes the folder) and the source of
every module in `inspector.core.documents` (`conversion_key`). A payload a converter cannot give
(not text, an unknown kind, a page map out of order or out of the text) is refused like a failed
checksum, and the file converted again.

HTML and DOCX are not kept: they convert in milliseconds. A conversion that fails (a broken or
encrypted PDF) is not kept either: it fails again with the same message, as fast as it did.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from inspector.core.runtime import keptfiles
from inspector.core.runtime.keptfiles import KeptFolder

MAGIC = b"CICONV01"
#: Where conversions are kept (below the app's cache folder), and how much at most.
FILES = KeptFolder("conversions", ".conversion", MAGIC, 256 << 20)
#: Suffixes whose conversion is kept.
KEPT_SUFFIXES = frozenset({".pdf"})
#: What a converter's `kind` may be.
KINDS = frozenset({"markdown", "text"})
#: Set in the meta of a document whose conversion was read from the disk (the window says so).
KEPT_FLAG = "conversion_kept"

_PACKAGES = ("pypdf", "pdfplumber", "pdfminer.six", "pypdfium2")
_DOCLING = ("docling", "docling-core", "docling-parse", "docling-ibm-models")

Conversion = tuple[str, str, dict]


@lru_cache(maxsize=8)
def conversion_key(suffix: str, backend: str) -> str:
    """What a conversion depends on besides the file's bytes: this format, `marshal`'s version, the
    suffix and backend, the packages that read the file, the code in `inspector.core.documents`."""
    here = Path(__file__).parent
    packages = _PACKAGES + (_DOCLING if backend == "docling" else ())
    return keptfiles.code_key(MAGIC, packages=packages, parts=(str(marshal.version), suffix, backend),
                              files=tuple(sorted(here.glob("*.py"))))


def encode(conversion: Conversion) -> bytes | None:
    """The payload of a conversion; None when its meta holds what `marshal` cannot write."""
    text, kind, meta = conversion
    try:
        return marshal.dumps((text, kind, meta))
    except ValueError:
        return None


def _parts(conversion: Conversion) -> list[bytes]:
    """What the writer thread writes of a conversion (no document's meta is changed once made)."""
    payload = encode(conversion)
    if payload is None:
        raise ValueError("its meta holds what marshal cannot write")  # logged there, not kept
    return [payload]


def decode(payload: memoryview) -> Conversion | None:
    """The conversion of a payload `encode` made; None for one no converter gives."""
    value = marshal.loads(payload)
    if not (isinstance(value, tuple) and len(value) == 3):
        return None
    text, kind, meta = value
    if not (isinstance(text, str) and text and isinstance(kind, str) and kind in KINDS and isinstance(meta, dict)
            and all(isinstance(k, str) for k in meta)):
        return None
    starts = meta.get("page_starts")
    if starts is not None:
        if not (isinstance(starts, list) and starts and all(type(s) is int for s in starts)):
            return None
        if starts[0] != 0 or any(b <= a for a, b in zip(starts, starts[1:], strict=False)) or starts[-1] >= len(text):
            return None
    if KEPT_FLAG in meta:
        return None  # written from a conversion read back: never by `read_or_convert`
    return text, kind, meta


def read_or_convert(data: bytes, suffix: str, backend: str, convert: Callable[[], Conversion]) -> Conversion:
    """The conversion of a file's bytes: read from the disk when it was kept there (its meta then
    says `KEPT_FLAG`), else `convert()`, kept for next time (`KeptFolder.read_or_build`, whatever
    the text's length)."""
    if suffix not in KEPT_SUFFIXES or not keptfiles.enabled():
        return convert()
    conversion, read = FILES.read_or_build(hashlib.sha256(data).hexdigest(), None,
                                           lambda: conversion_key(suffix, backend), decode, convert, _parts)
    if read:
        text, kind, meta = conversion
        return text, kind, {**meta, KEPT_FLAG: True}
    return conversion
