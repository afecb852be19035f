"""Documents: loading files and folders with encoding detection, newline normalization and limits."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.documents.encoding import decode
from inspector.core.errors import InputError
from inspector.core.runtime.cancel import report_progress
from inspector.core.runtime.slices import sha256_text

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
    """Format-specific extras (e.g. page offsets for PDFs). `warnings`: notes the user must see
    (the CLI prints them, the window shows them); `decoded_as`: the legacy encoding guessed for a
    file that is not UTF-8, and where its first such byte lies (`encoding.Decoded.meta`)."""

    def __post_init__(self) -> None:
        if not self.doc_id:
            object.__setattr__(self, "doc_id", self.name)

    _sha256: str | None = field(default=None, init=False, repr=False, compare=False, hash=False)
    """The text's hash once computed (see `sha256`)."""

    @property
    def sha256(self) -> str:
        """Content hash of the text, the key of every per-document cache. Computed once per
        document and kept on it (a 20 MB text costs 50-300 ms to hash, holding the GIL for a slice
        at a time; the background loader computes it before the window sees the document). Two
        threads may race to compute it; both get the same digest."""
        digest = self._sha256
        if digest is None:
            digest = sha256_text(self.text)  # a slice at a time: one 20 MB encode would hold the GIL ~50 ms
            object.__setattr__(self, "_sha256", digest)
        return digest

    def __hash__(self) -> int:  # dict keys for caches: identity of content and name
        return hash((self.doc_id, self.sha256))


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




def load_document(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES,
                  doc_id: str | None = None, pipes: bool = True, encoding: str | None = None) -> Document:
    """Load one file; raise InputError naming the file for anything that is not usable text.
    `pipes=False` refuses named pipes (a file found in a folder: nobody may ever write to it).
    `encoding` forces a codec for plain-text files (None: detect, and record a guess in meta)."""
    p = Path(path)
    shown = str(p)
    if p.is_dir():
        raise InputError("is a folder; open it as a corpus", path=shown)
    suffix = p.suffix.lower()
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError("no such file", path=shown) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=shown) from None
    pipe = stat.S_ISFIFO(st.st_mode)
    if pipe and not pipes:
        # Reading a pipe in a folder would block the whole load until someone writes to it.
        raise InputError("a named pipe, not a regular file", path=shown)
    if not pipe and not stat.S_ISREG(st.st_mode):
        # A device (a link to /dev/zero) never ends; a socket cannot be read as a file.
        raise InputError("not a regular file (a device or socket)", path=shown)
    size = st.st_size
    # MB as in DEFAULT_MAX_BYTES (2**20 bytes), so the limit reads "50 MB", not "52 MB".
    limit = f"over the {max_bytes / 2**20:.0f} MB limit"
    if size > max_bytes:
        raise InputError(f"file is {size / 2**20:.1f} MB, {limit}", path=shown)
    try:
        if pipe:  # `chunks <(curl ...)`: no size to check, so stop reading past the limit
            with open(p, "rb") as fh:
                data = fh.read(max_bytes + 1)
            if len(data) > max_bytes:
                raise InputError(f"more than {max_bytes / 2**20:.0f} MB from a pipe, {limit}", path=shown)
        else:
            data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=shown) from None
    from inspector.core.documents import converters

    if suffix in converters.CONVERTED_SUFFIXES:
        text, kind, meta = converters.convert(data, suffix, shown)
        used = "converted"
    else:
        decoded = decode(data, shown, encoding=encoding)
        text, used = decoded.text, decoded.encoding
        kind = "text" if suffix in TEXT_SUFFIXES else "markdown"
        meta = decoded.meta()
    return Document(text=normalize_newlines(text), name=p.name, kind=kind, path=str(p.resolve()),
                    doc_id=doc_id or p.name, encoding=used, meta=meta)


def find_documents(folder: str | os.PathLike[str]) -> list[Path]:
    """Supported files below a folder, sorted, hidden folders skipped."""
    from inspector.core.documents.converters import CONVERTED_SUFFIXES

    root = Path(folder)
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=lambda e: None):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fn in sorted(filenames):
            suffix = Path(fn).suffix.lower()
            known = suffix in SUPPORTED_SUFFIXES or suffix in CONVERTED_SUFFIXES
            if known and not fn.endswith(".gold.jsonl"):
                found.append(Path(dirpath) / fn)
    return found


@dataclass(frozen=True, slots=True)
class LoadResult:
    """Documents loaded from paths, plus the per-file problems that did not stop the rest."""

    documents: tuple[Document, ...]
    problems: tuple[InputError, ...] = ()


#: A folder's PDFs are converted in the corpus pool's processes (`offload.corpus_pool`, one per
#: core) when it holds this many or more: a PDF takes ~0.03 s a page, the pool's start ~1 s once.
PARALLEL_PDFS_AT_LEAST = 2


def _load_found(path: Path, max_bytes: int, doc_id: str, encoding: str | None) -> Document:
    """`load_document` of a file found in a folder."""
    return load_document(path, max_bytes=max_bytes, doc_id=doc_id, pipes=False, encoding=encoding)


def _load_in_pool(path: Path, max_bytes: int, doc_id: str, encoding: str | None, backend: str) -> Document:
    """`_load_found` in a process of the corpus pool, a PDF with the backend chosen in the process
    that asked (the pool's own is the default; never set where the user may be choosing one)."""
    from inspector.core.documents import pdf_convert

    pdf_convert.set_pdf_backend(backend)
    return _load_found(path, max_bytes, doc_id, encoding)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _load_folder(folder: Path, files: list[Path], max_bytes: int, encoding: str | None
                 ) -> list[Document | InputError]:
    """Each file's document, or the InputError that names its problem, in the files' order. With
    PARALLEL_PDFS_AT_LEAST PDFs or more, more than one core allowed and this the main process
    (`pdf_convert._all_pages`' rule), the PDFs are converted in the corpus pool while nothing
    else waits for them: their conversion is most of a folder's opening, and one core idled."""
    import multiprocessing as mp

    from inspector.core.documents.pdf_convert import pdf_backend
    from inspector.core.runtime import offload

    backend = pdf_backend()
    args = [(f, max_bytes, str(f.relative_to(folder)), encoding) for f in files]
    out: list[Document | InputError | None] = [None] * len(files)
    pdfs = [i for i, f in enumerate(files) if f.suffix.lower() == ".pdf"]
    if len(pdfs) < PARALLEL_PDFS_AT_LEAST or offload.allowed_cores() < 2 or mp.parent_process() is not None \
            or backend == "docling":  # its models loaded in every process: GBs each, and it has threads of its own
        pdfs = []
    # The largest first: a long PDF started last would hold one process while the others idle.
    # (Opening a long one here instead, its pages in ranges on the pool as `pdf_convert` reads a
    # single long PDF, was slower: 7.4 against 6.9 s for a folder of 252 pages, 108 in one file,
    # ~9.3 s of work; the ranges' phase and the documents' phase each ended on one process.)
    pdfs.sort(key=lambda i: -_size(files[i]))
    pooled = set(pdfs)
    for i in range(len(files)):
        if i not in pooled:
            try:
                out[i] = _load_found(*args[i])
            except InputError as exc:
                out[i] = exc
    if pdfs:
        calls = [(*args[i], backend) for i in pdfs]
        label = f"Converting the PDFs of {folder.name}"
        report_progress(0, len(pdfs), label)
        for done, (n, doc, failure) in enumerate(offload.corpus_pool().call_each(_load_in_pool, calls), start=1):
            if failure is not None and not isinstance(failure, InputError):
                raise failure  # as loading here raises it: not a problem with the file
            out[pdfs[n]] = doc if failure is None else failure
            report_progress(done, len(pdfs), label)
    return [d for d in out if d is not None]


def load_paths(paths: list[str | os.PathLike[str]], *, max_bytes: int = DEFAULT_MAX_BYTES,
               encoding: str | None = None) -> LoadResult:
    """Load files and folders as one corpus. A bad file in a folder is reported, not fatal.
    `encoding` forces a codec for every plain-text file (see `load_document`)."""
    docs: list[Document] = []
    problems: list[InputError] = []
    seen: set[str] = set()
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files = find_documents(p)
            if not files:
                problems.append(InputError("folder holds no .md, .markdown or .txt files", path=str(p)))
            for doc in _load_folder(p, files, max_bytes, encoding):
                if isinstance(doc, InputError):
                    problems.append(doc)
                    continue
                if doc.doc_id not in seen:
                    seen.add(doc.doc_id)
                    docs.append(doc)
        else:
            doc = load_document(p, max_bytes=max_bytes, encoding=encoding)
            if doc.doc_id in seen:  # two files of one name from different folders
                doc = Document(text=doc.text, name=doc.name, kind=doc.kind, path=doc.path,
                               doc_id=str(p), encoding=doc.encoding, meta=doc.meta)
            seen.add(doc.doc_id)
            docs.append(doc)
    return LoadResult(tuple(docs), tuple(problems))
