"""Documents: loading files and folders with encoding detection, newline normalization and limits."""

from __future__ import annotations

import codecs
import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.errors import InputError

#: File suffixes opened as Markdown; everything in TEXT_SUFFIXES is plain text.
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd"})
TEXT_SUFFIXES = frozenset({".txt", ".text"})
SUPPORTED_SUFFIXES = MARKDOWN_SUFFIXES | TEXT_SUFFIXES
DEFAULT_MAX_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Document:
    """One loaded text. Offsets everywhere in the core are code points into `text`."""

    text: str
    """The decoded text with newlines normalized to "\\n"; everything else exactly as on disk."""
    name: str
    """File name (or a label for in-memory documents)."""
    kind: str = "markdown"
    """"markdown" or "text": which structure parser applies."""
    path: str | None = None
    """Absolute path on disk, when loaded from a file."""
    doc_id: str = ""
    """Identifier inside a corpus: the path relative to the opened folder, else the file name."""
    encoding: str = "utf-8"
    """The encoding the bytes were decoded with."""
    meta: dict = field(default_factory=dict, compare=False, hash=False)
    """Format-specific extras (e.g. page offsets for PDFs)."""

    def __post_init__(self) -> None:
        if not self.doc_id:
            object.__setattr__(self, "doc_id", self.name)

    @property
    def sha256(self) -> str:
        """Content hash of the text, the key of every per-document cache."""
        return _text_hash(self.text)

    def __hash__(self) -> int:  # dict keys for caches: identity of content and name
        return hash((self.doc_id, self.sha256))


_HASHES: dict[int, tuple[str, str]] = {}


def _text_hash(text: str) -> str:
    # Hashing 50 MB costs ~50 ms; remember it per string object (strings are immutable).
    hit = _HASHES.get(id(text))
    if hit is not None and hit[0] is text:  # type: ignore[comparison-overlap]
        return hit[1]
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    if len(_HASHES) > 256:
        _HASHES.clear()
    _HASHES[id(text)] = (text, digest)  # type: ignore[assignment]
    return digest


def normalize_newlines(text: str) -> str:
    """CRLF and lone CR become LF; nothing else changes."""
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def from_text(text: str, name: str = "untitled.md", kind: str | None = None) -> Document:
    """An in-memory document (tests, pasted text)."""
    if kind is None:
        kind = "text" if Path(name).suffix.lower() in TEXT_SUFFIXES else "markdown"
    return Document(text=normalize_newlines(text), name=name, kind=kind)


def _looks_binary(data: bytes) -> str | None:
    """A reason the bytes are not text, or None."""
    head = data[:8192]
    signatures = {
        b"%PDF": "PDF bytes", b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image",
        b"GIF8": "a GIF image", b"PK\x03\x04": "a ZIP archive (DOCX/XLSX?)", b"\x7fELF": "an executable",
    }
    for sig, what in signatures.items():
        if head.startswith(sig):
            return f"binary file ({what}), not text"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return None
    if b"\x00" in head:
        # UTF-16 without a BOM has NUL in every other byte; real binaries have them scattered.
        even = head[0::2].count(0)
        odd = head[1::2].count(0)
        half = max(1, len(head) // 2)
        if odd / half > 0.3 and even / half < 0.05 or even / half > 0.3 and odd / half < 0.05:
            return None
        return "binary file (contains NUL bytes), not text"
    return None


def decode_bytes(data: bytes, path: str = "<bytes>") -> tuple[str, str]:
    """Decode file bytes: UTF-8 (with or without BOM), UTF-16/32 with BOM, else charset-normalizer."""
    reason = _looks_binary(data)
    if reason:
        raise InputError(reason, path=path)
    for bom, enc in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                     (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                     (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            try:
                return data.decode(enc), enc
            except UnicodeDecodeError as exc:
                raise InputError(f"invalid {enc} text at byte {exc.start}", path=path) from None
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    if b"\x00" in data[:8192]:
        # BOM-less UTF-16: the NUL side tells the byte order.
        enc = "utf-16-le" if data[1:8192:2].count(0) > data[0:8192:2].count(0) else "utf-16-be"
        try:
            return data.decode(enc), enc
        except UnicodeDecodeError:
            pass
    from charset_normalizer import from_bytes

    best = from_bytes(data[: 2 * 1024 * 1024]).best()
    if best is None or best.encoding is None:
        raise InputError("not valid UTF-8 and no other text encoding fits; is it a binary file?", path=path)
    try:
        text = data.decode(best.encoding)
    except (UnicodeDecodeError, LookupError):
        raise InputError(f"could not decode as {best.encoding}", path=path) from None
    return text, best.encoding


def load_document(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES,
                  doc_id: str | None = None) -> Document:
    """Load one file; raise InputError naming the file for anything that is not usable text."""
    p = Path(path)
    shown = str(p)
    if p.is_dir():
        raise InputError("is a folder; open it as a corpus", path=shown)
    suffix = p.suffix.lower()
    try:
        size = p.stat().st_size
    except FileNotFoundError:
        raise InputError("no such file", path=shown) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=shown) from None
    if size > max_bytes:
        raise InputError(f"file is {size / 1e6:.1f} MB, over the {max_bytes / 1e6:.0f} MB limit", path=shown)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=shown) from None
    from inspector.core import formats

    if suffix in formats.CONVERTED_SUFFIXES:
        text, kind, meta = formats.convert(data, suffix, shown)
        encoding = "converted"
    else:
        text, encoding = decode_bytes(data, shown)
        kind = "text" if suffix in TEXT_SUFFIXES else "markdown"
        meta = {}
    return Document(text=normalize_newlines(text), name=p.name, kind=kind, path=str(p.resolve()),
                    doc_id=doc_id or p.name, encoding=encoding, meta=meta)


def find_documents(folder: str | os.PathLike[str]) -> list[Path]:
    """Supported files below a folder, sorted, hidden folders skipped."""
    from inspector.core import formats

    root = Path(folder)
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: None):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            suffix = Path(fn).suffix.lower()
            if suffix in SUPPORTED_SUFFIXES or suffix in formats.CONVERTED_SUFFIXES:
                if not fn.endswith(".gold.jsonl"):
                    found.append(Path(dirpath) / fn)
    return found


@dataclass(frozen=True, slots=True)
class LoadResult:
    """Documents loaded from paths, plus the per-file problems that did not stop the rest."""

    documents: tuple[Document, ...]
    problems: tuple[InputError, ...] = ()


def load_paths(paths: list[str | os.PathLike[str]], *, max_bytes: int = DEFAULT_MAX_BYTES) -> LoadResult:
    """Load files and folders as one corpus. A bad file in a folder is reported, not fatal."""
    docs: list[Document] = []
    problems: list[InputError] = []
    seen: set[str] = set()
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files = find_documents(p)
            if not files:
                problems.append(InputError("folder holds no .md, .markdown or .txt files", path=str(p)))
            for f in files:
                rel = str(f.relative_to(p))
                try:
                    doc = load_document(f, max_bytes=max_bytes, doc_id=rel)
                except InputError as exc:
                    problems.append(exc)
                    continue
                if doc.doc_id not in seen:
                    seen.add(doc.doc_id)
                    docs.append(doc)
        else:
            doc = load_document(p, max_bytes=max_bytes)
            if doc.doc_id in seen:  # two files of one name from different folders
                doc = Document(text=doc.text, name=doc.name, kind=doc.kind, path=doc.path,
                               doc_id=str(p), encoding=doc.encoding, meta=doc.meta)
            seen.add(doc.doc_id)
            docs.append(doc)
    return LoadResult(tuple(docs), tuple(problems))
