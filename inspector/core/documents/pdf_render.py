"""One PDF page as pixels, for the window's "PDF page" view (issue 30).

pypdfium2 (installed with pdfplumber) renders the page; the caller gets raw BGRX bytes and turns
them into an image of its own (the window a QImage), so this module needs no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspector.core.errors import InputError


@dataclass(frozen=True)
class PageImage:
    """A rendered page: `width` x `height` pixels, rows `stride` bytes apart, four bytes a
    pixel in B, G, R, X order (QImage.Format_RGB32 on a little-endian machine)."""

    page: int  # 1-based
    pages: int
    width: int
    height: int
    stride: int
    pixels: bytes


def render_pdf_page(path: str | Path, page: int, width_px: int = 900) -> PageImage:
    """Page `page` (1-based, clamped to the document) of the PDF at `path`, scaled to about
    `width_px` pixels wide; InputError names the file for one pdfium cannot open."""
    import pypdfium2 as pdfium

    shown = str(path)
    try:
        pdf = pdfium.PdfDocument(str(path))
    except (pdfium.PdfiumError, OSError) as exc:
        raise InputError(f"cannot render the PDF: {exc}", path=shown) from None
    try:
        count = len(pdf)
        if count == 0:
            raise InputError("the PDF has no pages", path=shown)
        number = min(max(int(page), 1), count)
        pg = pdf[number - 1]
        try:
            w_pt = max(pg.get_width(), 1.0)
            bitmap = pg.render(scale=max(width_px, 50) / w_pt, prefer_bgrx=True)
            try:
                return PageImage(number, count, bitmap.width, bitmap.height, bitmap.stride,
                                 bytes(bitmap.buffer))
            finally:
                bitmap.close()
        finally:
            pg.close()
    finally:
        pdf.close()
