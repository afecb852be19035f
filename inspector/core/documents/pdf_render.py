"""One PDF page as pixels, for the window's "PDF page" view (issue 30).

pypdfium2 (installed with pdfplumber) renders the page; the caller gets raw BGRX bytes and turns
them into an image of its own (the window a QImage), so this module needs no Qt.
"""

from __future__ import annotations

import difflib
import re
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


_TOKEN_RE = re.compile(r"\w+")


def text_boxes(path: str | Path, page: int, text: str) -> list[tuple[float, float, float, float]]:
    """Where `text` (a chunk's text on page `page`, 1-based) lies on that page: one box per line of
    matched words, as (x0, top, x1, bottom) fractions of the page's width and height (top down).

    The page's words are read with pdfium (the library that draws the page) and lined up with the
    text's words, both lower-cased and without punctuation (difflib, runs of two or more words, or
    every word when the text has fewer than three): Markdown syntax, a dropped running head or a
    joined hyphen then only leaves a word unmarked. Empty when nothing matches."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    want = [t.lower() for t in _TOKEN_RE.findall(text)]
    if not want:
        return []
    try:
        pdf = pdfium.PdfDocument(str(path))
    except (pdfium.PdfiumError, OSError) as exc:
        raise InputError(f"cannot read the PDF's words: {exc}", path=str(path)) from None
    try:
        number = min(max(int(page), 1), len(pdf))
        pg = pdf[number - 1]
        tp = pg.get_textpage()
        try:
            width, height = max(pg.get_width(), 1.0), max(pg.get_height(), 1.0)
            tokens: list[str] = []
            boxes: list[tuple[float, float, float, float]] = []
            word, box = "", None
            for i in range(tp.count_chars()):
                ch = chr(pdfium_c.FPDFText_GetUnicode(tp.raw, i))
                if ch.isalnum() or ch == "_":
                    left, bottom, right, top = tp.get_charbox(i)
                    box = ((left, bottom, right, top) if box is None else
                           (min(box[0], left), min(box[1], bottom), max(box[2], right), max(box[3], top)))
                    word += ch.lower()
                    continue
                if word and box is not None:
                    tokens.append(word)
                    boxes.append((box[0] / width, 1 - box[3] / height, box[2] / width, 1 - box[1] / height))
                word, box = "", None
            if word and box is not None:
                tokens.append(word)
                boxes.append((box[0] / width, 1 - box[3] / height, box[2] / width, 1 - box[1] / height))
        finally:
            tp.close()
            pg.close()
    finally:
        pdf.close()
    least = 1 if len(want) < 3 else 2
    hits = []
    matcher = difflib.SequenceMatcher(None, tokens, want, autojunk=False)
    for a, _b, size in matcher.get_matching_blocks():
        if size >= least:
            hits.extend(boxes[a:a + size])
    return merge_line_boxes(hits)


def merge_line_boxes(boxes: list[tuple[float, float, float, float]]) -> list[tuple[float, float, float, float]]:
    """Word boxes joined into one box per line: boxes whose heights overlap by half and that
    follow one another left to right, in reading order."""
    out: list[list[float]] = []
    for x0, top, x1, bottom in boxes:
        if out:
            last = out[-1]
            overlap = min(last[3], bottom) - max(last[1], top)
            if overlap > 0.5 * min(last[3] - last[1], bottom - top) and x0 >= last[0] - 1e-6:
                last[0], last[1] = min(last[0], x0), min(last[1], top)
                last[2], last[3] = max(last[2], x1), max(last[3], bottom)
                continue
        out.append([x0, top, x1, bottom])
    return [(a, b, c, d) for a, b, c, d in out]
