"""Which function turns a converted format's bytes into text: HTML and DOCX by `formats`, PDF by
the backend chosen in `pdf_convert` (which itself reads PDFs with `formats`' helpers, so the
choice lives here, above both, and neither module needs the other back)."""

from __future__ import annotations

from collections.abc import Callable

from inspector.core.documents import convertcache, formats
from inspector.core.documents.pdf_convert import convert_pdf, pdf_backend
from inspector.core.errors import InputError

#: File suffixes `convert` turns into text (`load_document` and `find_documents` consult it).
CONVERTED_SUFFIXES: frozenset[str] = frozenset({".html", ".htm", ".pdf", ".docx"})


def convert(data: bytes, suffix: str, path: str) -> tuple[str, str, dict]:
    """(text, kind, meta) for the bytes of a converted format; InputError names the file. A PDF
    goes through the backend chosen for this process (`pdf_convert.set_pdf_backend`): Markdown
    with headings and tables by default, plain page text with "plain". A PDF's conversion is kept
    on disk and read back the next time the same bytes are opened with the same backend."""
    converters: dict[str, Callable[[bytes, str], tuple[str, str, dict]]] = {
        ".html": formats.html_to_markdown, ".htm": formats.html_to_markdown, ".pdf": convert_pdf,
        ".docx": formats.docx_to_markdown}
    suffix = suffix.lower()
    func = converters.get(suffix)
    if func is None:
        raise InputError(f"unsupported file type {suffix}", path=path)
    if suffix != ".pdf":
        return func(data, path)  # milliseconds: nothing kept
    # A PDF converted before is read from the disk (`convertcache`: ~0.03 s a page saved), with
    # the backend read once: the key and the conversion are the same backend's.
    backend = pdf_backend()
    return convertcache.read_or_convert(data, suffix, backend, lambda: convert_pdf(data, path, backend))
