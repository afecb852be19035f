"""PDF to text through one of three backends (issue 30).

- "builtin" (the default): Markdown with headings, lists, code and tables recovered offline from
  the page layout (`pdf_structure`, pdfplumber), no model needed.
- "plain": pypdf's page text, as before issue 30 (kind "text").
- "docling": docling's converter, an optional extra (`pip install 'chunk-inspector[docling]'`)
  whose layout and table models must be on the machine or fetchable; imported only when chosen.

All three check the file the same way first (`formats.open_pdf`: not a PDF, broken, encrypted,
no pages) and record `meta["page_starts"]`, so every chunk says its pages whatever the backend.
"""

from __future__ import annotations

import io
import time
from pathlib import Path

from inspector.core.errors import InputError
from inspector.core.runtime.cancel import Cancelled, check_cancelled, report_progress
from inspector.core.runtime.gcpause import paused_gc

#: Backends a user can choose (`--pdf-backend`, Settings).
PDF_BACKENDS: tuple[str, ...] = ("builtin", "plain", "docling")

_default = "builtin"


def set_pdf_backend(name: str) -> None:
    """The backend `load_document` uses for PDFs in this process (the CLI flag and the window's
    setting call it); ValueError for a name not in PDF_BACKENDS."""
    global _default
    if name not in PDF_BACKENDS:
        raise ValueError(f"unknown PDF backend {name!r}; choose one of {', '.join(PDF_BACKENDS)}")
    _default = name


def pdf_backend() -> str:
    return _default


def docling_available() -> bool:
    """Whether the optional docling package can be imported (nothing is loaded)."""
    import importlib.util

    return importlib.util.find_spec("docling") is not None


def convert_pdf(data: bytes, path: str = "<pdf>", backend: str | None = None) -> tuple[str, str, dict]:
    """(text, kind, meta) of a PDF's bytes; InputError names the file and the problem."""
    from inspector.core.documents import formats

    name = backend or _default
    if name == "plain":
        return formats.pdf_to_text(data, path)
    if name == "docling":
        return docling_pdf(data, path)
    if name != "builtin":
        raise InputError(f"unknown PDF backend {name!r}", path=path)
    return builtin_pdf(data, path)


def _join_pages(texts: list[str]) -> tuple[str, list[int]]:
    from inspector.core.documents.formats import PAGE_BREAK

    parts: list[str] = []
    starts: list[int] = []
    pos = 0
    for body in texts:
        if parts:
            parts.append(PAGE_BREAK)
            pos += len(PAGE_BREAK)
        starts.append(pos)
        parts.append(body)
        pos += len(body)
    return "".join(parts), starts


def _outline(reader) -> list[tuple[str, int, int]]:
    """(title, page number from 1, depth from 0) of each outline entry pypdf can resolve."""
    out: list[tuple[str, int, int]] = []

    def walk(items, depth: int) -> None:
        for it in items:
            if isinstance(it, list):
                walk(it, depth + 1)
                continue
            try:
                title = str(it.title or "").strip()
                number = reader.get_destination_page_number(it) + 1
            except Exception:
                continue
            if title and number > 0:
                out.append((title, number, depth))
    try:
        walk(reader.outline, 0)
    except Exception:
        return []
    return out


#: Pages from which a PDF's pages are read in the corpus pool's processes (`offload.corpus_pool`,
#: one per core), a range each: a page takes ~0.03 s (~0.07 s before stop 49), the pool's start ~1 s
#: the first time.
PARALLEL_PAGES_AT_LEAST = 48
#: Page ranges per process: two, so that one slow range does not hold the rest (each range reads
#: the file's fonts and resources again): a 288-page PDF on two processes took 8.84 s with one
#: range each, 8.42 s with two, 8.80 s with three (medians of 3, alternating).
RANGES_PER_PROCESS = 2


def read_pages(data: bytes, first: int = 0, stop: int | None = None, label: str = "") -> list:
    """The blocks of pages [first, stop) (counted from 0) of a PDF's bytes, as `pdf_structure`
    reads them; a page that cannot be read is a PageResult with its failure (one odd page must
    not cost the whole document). Raises what opening the PDF raises. `label`: said with each
    page's progress (`report_progress`), where anyone listens."""
    from inspector.core.documents import formats
    from inspector.core.documents import pdf_structure as ps

    out: list[ps.PageResult] = []
    with ps.open_plumber(data) as pdf:
        pages = pdf.pages[first:stop]
        for number, page in enumerate(pages, start=first + 1):
            check_cancelled()
            if label:
                report_progress(number - first - 1, len(pages), label)
            # A page makes tens of thousands of short-lived objects (pdfminer's characters,
            # their dicts, words), freed by reference counting with the page: without the pause
            # the collector walked them, a tenth of the conversion (issue 31).
            with paused_gc():
                try:
                    out.append(ps.page_blocks(page))
                except Exception as exc:
                    out.append(ps.PageResult(number=number, failure=formats._reason(exc)))
                finally:
                    page.close()
        if label:
            report_progress(len(pages), len(pages), label)
    return out


def _all_pages(data: bytes, count: int, label: str = "") -> list:
    """Every page's blocks (`read_pages`), in ranges on the corpus pool's processes when the PDF
    has PARALLEL_PAGES_AT_LEAST pages or more and this is the main process of a machine with more
    than one core allowed (`offload.allowed_cores`: a Ray task of one CPU reads its pages itself,
    as does a pool's or the helper's process: no pool in a pool)."""
    import multiprocessing as mp

    from inspector.core.runtime import offload

    workers = offload.allowed_cores()
    if count < PARALLEL_PAGES_AT_LEAST or workers < 2 or mp.parent_process() is not None:
        return read_pages(data, label=label)
    parts = min(RANGES_PER_PROCESS * workers, count)
    cuts: list[int | None] = [count * k // parts for k in range(parts)]
    # The last range to pdfplumber's last page, as read here: where it counts other pages than
    # pypdf (`count`), the caller sees the same mismatch either way.
    cuts.append(None)
    calls = [(data, a, b) for a, b in zip(cuts, cuts[1:], strict=False)]
    ranges: list[list | None] = [None] * len(calls)
    done = 0
    report_progress(0, count, label)
    for i, pages, failure in offload.corpus_pool().call_each(read_pages, calls):
        if failure is not None:
            raise failure
        ranges[i] = pages
        done += len(pages or ())
        report_progress(done, count, label)
    return [page for part in ranges for page in part or ()]


def builtin_pdf(data: bytes, path: str = "<pdf>") -> tuple[str, str, dict]:
    """Markdown of a PDF's structure (kind "markdown"); a page that cannot be structured is its
    plain text, and the warnings say so. meta: page_starts, pages, title, structure (counts),
    structure_note (what was recovered and how sure)."""
    from inspector.core.documents import formats
    from inspector.core.documents import pdf_structure as ps

    t0 = time.perf_counter()
    with formats._captured_pypdf_warnings() as warnings:
        reader, pages = formats.open_pdf(data, path)
        outline = _outline(reader)
        title = formats.pdf_title(reader)
    notes = [f"pypdf: {w}" for w in warnings]
    results: list[ps.PageResult] = []
    try:
        results = _all_pages(data, len(pages), f"Reading the pages of {Path(path).name}")
    except Cancelled:
        raise
    except Exception as exc:
        notes.append(f"structure not recovered ({formats._reason(exc)}): plain text of every page")
    if len(results) != len(pages):  # pdfplumber and pypdf disagree on the pages: trust pypdf's
        results = [ps.PageResult(number=n, failure="pages not readable for structure")
                   for n in range(1, len(pages) + 1)]
    empty: list[int] = []
    for res, page in zip(results, pages, strict=True):
        if res.failure:
            plain = formats.plain_page_text(page)
            res.plain = formats.paragraph_markdown([ln.strip() for ln in (plain or "").split("\n")])
            notes.append(f"page {res.number}: structure not recovered ({res.failure}); kept as plain text")
    rec = ps.structure_pages(results, outline)
    texts = []
    for res in results:
        body = ps.page_markdown(res, formats.escape_line, formats.escape_heading, formats.gfm_table,
                                formats.code_fence).strip()
        if not body:
            empty.append(res.number)
        texts.append(body)
    text, starts = _join_pages(texts)
    if not text.strip():
        raise InputError("no extractable text (scanned?)", path=path)
    if empty and len(empty) < len(pages):
        shown = ", ".join(map(str, empty[:10])) + (" ..." if len(empty) > 10 else "")
        notes.append(f"no text on page(s) {shown} (scanned or pictures only?)")
    meta: dict = {"page_starts": starts, "pages": len(pages), "pdf_backend": "builtin",
                  "structure": {"headings": dict(rec.headings), "tables": rec.tables,
                                "contents_tables": rec.contents_tables, "list_items": rec.items,
                                "code_blocks": rec.code, "running_lines_dropped": rec.running_dropped,
                                "hyphens_joined": rec.hyphens, "plain_pages": list(rec.plain_pages),
                                "outline_entries": rec.outline_entries, "outline_matched": rec.outline_matched,
                                "seconds": round(time.perf_counter() - t0, 3)},
                  "structure_note": ps.note(rec, len(pages))}
    if notes:
        meta["warnings"] = notes
    if title:
        meta["title"] = title
    return text + "\n", "markdown", meta


#: What a docling failure says besides its reason: docling fetches its layout and table models
#: from the Hugging Face hub on first use, which an offline machine cannot.
MODELS_HINT = ("docling fetches its models from the Hugging Face hub on first use; offline, fetch them "
               "where there is a network with `docling-tools models download -o DIR`, copy DIR here and "
               "set DOCLING_ARTIFACTS_PATH=DIR, or use the built-in backend")


def _one_line(reason: str, limit: int = 160) -> str:
    """The first line of an error (hub errors run to many lines), cut to `limit` characters."""
    first = reason.strip().split("\n", 1)[0].strip()
    return first if len(first) <= limit else first[:limit - 1] + "…"


def docling_pdf(data: bytes, path: str = "<pdf>") -> tuple[str, str, dict]:
    """Markdown from docling's converter, page by page so the page map holds (kind "markdown")."""
    from inspector.core.documents import formats

    with formats._captured_pypdf_warnings():
        formats.open_pdf(data, path)  # the same clear errors as the other backends
    try:
        from docling.datamodel.base_models import DocumentStream
        from docling.document_converter import DocumentConverter
    except ImportError:
        raise InputError("the docling PDF backend needs the optional docling package "
                         "(pip install 'chunk-inspector[docling]'); the built-in backend needs nothing",
                         path=path) from None
    try:
        result = DocumentConverter().convert(DocumentStream(name="document.pdf", stream=io.BytesIO(data)))
        doc = result.document
        count = len(doc.pages) if doc.pages else 1
        texts = [doc.export_to_markdown(page_no=n).strip() for n in range(1, count + 1)]
    except Exception as exc:  # missing models, a network fetch refused, a page it cannot read
        raise InputError(f"docling could not convert the PDF ({_one_line(formats._reason(exc))}); {MODELS_HINT}",
                         path=path) from None
    text, starts = _join_pages(texts)
    if not text.strip():
        raise InputError("no extractable text (scanned?)", path=path)
    meta = {"page_starts": starts, "pages": count, "pdf_backend": "docling",
            "structure_note": "Structure by docling (layout and table models)."}
    return text + "\n", "markdown", meta
