"""Conversion of HTML, PDF and DOCX files to text the rest of the core understands (`converters`
picks the function for a file's suffix).

HTML and DOCX become Markdown (headings as `#` lines, lists as `-` items, tables as GFM pipe
tables, code as fences), so `structure_of` finds the same blocks and heading paths as in a
hand-written Markdown file and the `markdown` strategy applies unchanged. PDFs become Markdown
too (`pdf_convert`: headings, lists and tables recovered from the page layout), or plain text
with the "plain" backend, one page after another, with the page starts recorded in
`meta["page_starts"]` so every chunk can say which page(s) it came from (`SpanContext.make`
reads it).

Nothing here runs or fetches anything a file refers to: scripts and styles are dropped unread,
images and links keep only their text.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from typing import cast

from inspector.core.errors import InputError

#: Between two PDF pages: four blank lines, a paragraph break for every splitter and a gap the eye
#: reads as one. Pages are told apart by `meta["page_starts"]`, not by the text. It was a form feed
#: with blank lines around it, and the form feed stayed in every chunk's text and export, drawn as
#: a box by some viewers (issue 26); a newline in its place keeps the length, so every offset into
#: a PDF's text (gold references, audit marks, page starts) is what it was.
PAGE_BREAK = "\n\n\n\n\n"


# ----------------------------------------------------------------------------- shared Markdown helpers

_WS_RE = re.compile(r"[ \t\n\r\f\v]+")
# Line starts that Markdown would read as structure; a backslash keeps them literal text.
_MD_START_RE = re.compile(r"(#{1,6}(?=\s|$)|[-+*](?=\s|$)|>|\||`{3,}|~{3,}|=+\s*$|-{3,}\s*$|_{3,}\s*$|\*{3,}\s*$)")
_ORDERED_START_RE = re.compile(r"(\d{1,9})([.)])(?=\s|$)")


def collapse(text: str) -> str:
    """Runs of ASCII whitespace become one space, ends stripped (HTML's whitespace rule)."""
    return _WS_RE.sub(" ", text).strip()


def escape_line(line: str) -> str:
    """A line of running text that Markdown must not mistake for a heading, item, quote or rule."""
    if _MD_START_RE.match(line):
        return "\\" + line
    m = _ORDERED_START_RE.match(line)
    if m:
        return f"{m.group(1)}\\{line[m.end(1):]}"
    return line


def paragraph_markdown(lines: list[str]) -> str:
    return "\n".join(escape_line(ln) for ln in lines if ln)


def gfm_table(rows: list[list[str]]) -> str:
    """A GFM pipe table; the first row is the header, ragged rows are padded."""
    rows = [r for r in rows if any(c.strip() for c in r)]
    if not rows:
        return ""
    width = max(len(r) for r in rows)

    def cell(text: str) -> str:
        return collapse(text).replace("\\", "\\\\").replace("|", "\\|")

    def line(r: list[str]) -> str:
        cells = [cell(c) for c in r] + [""] * (width - len(r))
        return "| " + " | ".join(cells) + " |"

    out = [line(rows[0]), "|" + "|".join(["---"] * width) + "|"]
    out.extend(line(r) for r in rows[1:])
    return "\n".join(out)


def code_fence(code: str, lang: str = "") -> str:
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{code}\n{fence}"


def _join_blocks(blocks: list[str]) -> str:
    text = "\n\n".join(b for b in blocks if b.strip())
    return text + "\n" if text else ""


# ----------------------------------------------------------------------------- HTML

_CHARSET_RE = re.compile(rb"""<meta[^>]{0,200}?charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def decode_html(data: bytes, path: str) -> str:
    """BOM first, then a `<meta charset>` in the first 4 KB, then the usual text detection."""
    from inspector.core.documents.encoding import decode_bytes

    if not data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        m = _CHARSET_RE.search(data[:4096])
        if m:
            try:
                return data.decode(m.group(1).decode("ascii"))
            except (LookupError, UnicodeDecodeError):
                pass  # a wrong declaration: fall back to detection
    return decode_bytes(data, path)[0]


def html_to_markdown(data: bytes, path: str = "<html>") -> tuple[str, str, dict]:
    """HTML bytes as Markdown text (kind "markdown"); meta holds the page `<title>` if any."""
    text = decode_html(data, path)
    conv = _HtmlToMarkdown()
    try:
        conv.feed(text)
        conv.close()
    except AssertionError as exc:  # html.parser's only failure mode on hopeless markup
        raise InputError(f"cannot parse HTML: {exc}", path=path) from None
    blocks = conv.finish()
    meta: dict = {}
    title = collapse(conv.title)
    if title:
        meta["title"] = title
        # A page with no top-level heading: its <title> names it, as an H1 would.
        if not conv.has_h1 and not any(b.lstrip("#").strip() == title for b in blocks[:1]):
            blocks.insert(0, "# " + escape_heading(title))
    return _join_blocks(blocks), "markdown", meta


def escape_heading(text: str) -> str:
    # A trailing run of "#" would be read as a closing sequence and dropped.
    return re.sub(r"(\s)(#+)$", r"\1\\\2", text)


_BR = object()
# Content never shown as text: dropped with everything inside.
_SKIP = frozenset({"head", "script", "style", "noscript", "template", "iframe", "object", "embed",
                   "svg", "math", "canvas", "select", "datalist"})
_BLOCK = frozenset({"p", "div", "section", "article", "header", "footer", "main", "nav", "aside",
                    "figure", "figcaption", "address", "form", "fieldset", "details", "summary", "dl",
                    "dt", "dd", "center", "legend", "hgroup", "body", "html", "option"})
_HEADINGS = {f"h{i}": i for i in range(1, 7)}
_HEAD_CONTENT = frozenset({"title", "meta", "link", "style", "script", "base", "noscript", "template", "head"})


class _HtmlToMarkdown(HTMLParser):
    """Streams HTML events into Markdown blocks; tolerant of unclosed <p>, <li>, <td>."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.containers: list[list[str]] = [[]]  # blockquotes push a container
        self.inline: list[object] = []
        self.heading = 0
        self.has_h1 = False
        self.title = ""
        self.in_title = False
        self.seen_body = False
        self.skip: list[str] = []
        # Lists: a stack of [tag, next number, indent, marker of the open item or None].
        self.lists: list[list] = []
        self.list_lines: list[str] = []
        self.item_written = False
        # Tables: rows of cells of the outermost table; nested tables become cell text.
        self.table_depth = 0
        self.rows: list[list[str]] = []
        self.row: list[str] | None = None
        self.cell_open = False
        self.caption: list[str] = []
        self.in_caption = False
        # <pre>: raw text, not collapsed.
        self.pre_depth = 0
        self.pre_buf: list[str] = []
        self.pre_lang = ""

    # -- helpers ---------------------------------------------------------------------------
    def _flat(self) -> bool:
        """Inside a list item or table cell, block structure is flattened to running text."""
        return bool(self.lists) or self.table_depth > 0

    def _take_lines(self) -> list[str]:
        lines: list[str] = []
        cur: list[str] = []
        for frag in self.inline + [_BR]:
            if frag is _BR:
                ln = collapse("".join(cur))
                if ln:
                    lines.append(ln)
                cur = []
            else:
                cur.append(frag)  # type: ignore[arg-type]
        self.inline = []
        return lines

    def _emit(self, block: str) -> None:
        if block.strip():
            self.containers[-1].append(block)

    def _flush(self) -> None:
        """Close the running paragraph (or heading, or list item text)."""
        if self.table_depth or self.in_caption:
            return
        if self.lists:
            self._flush_item()
            return
        lines = self._take_lines()
        if not lines:
            self.heading = 0
            return
        if self.heading:
            self._emit("#" * self.heading + " " + escape_heading(" ".join(lines)))
            self.heading = 0
        else:
            self._emit(paragraph_markdown(lines))

    def _flush_item(self) -> None:
        lines = self._take_lines()
        if not lines or not self.lists:
            return
        tag, _n, indent, marker = self.lists[-1]
        text = " ".join(lines)
        if marker is None:  # text in a list outside any <li>
            marker = "-"
        if not self.item_written:
            self.list_lines.append(f"{indent}{marker} {escape_line(text)}")
            self.item_written = True
        else:  # text after a nested list: a continuation of the item
            self.list_lines.append(f"{indent}{' ' * (len(marker) + 1)}{escape_line(text)}")

    def _cell_text(self) -> str:
        return " ".join(self._take_lines())

    # -- events ----------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._start_outside_body(tag):
            return
        if self.pre_depth:
            self._start_in_pre(tag, attrs)
        elif tag == "table" or self.table_depth:
            self._start_in_table(tag, attrs)
        else:
            self._start_in_flow(tag, attrs)

    def _start_outside_body(self, tag: str) -> bool:
        """The <head>, <title> and skipped elements (script, style, svg...): whether `tag` was
        taken here and is nothing more."""
        if self.in_title:
            self.in_title = False  # no tags inside <title>: it was left unclosed
        if self.skip == ["head"] and tag not in _HEAD_CONTENT:
            self.skip.clear()  # the body starts without <body> (or </head>), as browsers read it
        if tag == "head" and self.seen_body:
            return True  # a stray <head> inside the body is ignored, as browsers do
        if tag not in _HEAD_CONTENT and tag != "html":
            self.seen_body = True
        if tag == "title" and self.skip in ([], ["head"]):
            self.in_title = True  # the page's <title> (not an SVG's), kept for meta["title"]
            return True
        if self.skip:
            if tag in _SKIP:
                self.skip.append(tag)
            return True
        if tag in _SKIP:
            self.skip.append(tag)
            return True
        return False

    def _start_in_pre(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br":
            self.pre_buf.append("\n")
        elif tag == "pre":
            self.pre_depth += 1
        elif tag == "code" and not self.pre_lang:
            self.pre_lang = _code_lang(attrs)

    def _start_in_table(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            if self.table_depth == 0:
                self._flush()
                if self.lists:
                    self._flush_item()
                self.rows, self.row, self.cell_open = [], None, False
            self.table_depth += 1
        elif self.table_depth == 1 and tag == "tr":
            self._close_row()
            self.row = []
        elif self.table_depth == 1 and tag in ("td", "th"):
            self._close_cell()
            if self.row is None:
                self.row = []
            self.cell_open = True
        elif self.table_depth == 1 and tag == "caption":
            self.in_caption = True
        elif tag == "br" or tag in ("td", "th", "tr", "p", "div", "li"):
            self.inline.append(" ")
        elif tag == "code":
            self.inline.append("`")
        elif tag == "img":
            self._img(attrs)

    def _start_in_flow(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """A start tag in running text: outside tables, <pre> and skipped elements."""
        if tag in _HEADINGS:
            self._start_heading(tag)
        elif tag in ("ul", "ol", "menu"):
            self._start_list(tag, attrs)
        elif tag == "li":
            self._start_item()
        elif tag == "pre":
            self._start_pre(attrs)
        elif tag == "blockquote":
            if not self._flat():
                self._flush()
                self.containers.append([])
        elif tag == "br":
            self.inline.append(_BR)
        elif tag == "hr":
            if not self._flat():
                self._flush()
                self._emit("---")
        elif tag == "code":
            self.inline.append("`")
        elif tag == "img":
            self._img(attrs)
        elif tag in _BLOCK:
            if tag == "body":
                self.skip.clear()
            self._flush()

    def _start_heading(self, tag: str) -> None:
        self._flush()
        if not self._flat():
            self.heading = _HEADINGS[tag]
            self.has_h1 = self.has_h1 or self.heading == 1

    def _start_list(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.lists:
            self._flush_item()
            parent = self.lists[-1]
            indent = parent[2] + " " * (len(parent[3] or "-") + 1)
        else:
            self._flush()
            indent = ""
            self.list_lines = []
        start = 1
        for k, v in attrs:
            if k == "start" and v and v.strip().lstrip("-").isdigit():
                start = int(v)
        self.lists.append([tag, start, indent, None])
        self.item_written = False

    def _start_item(self) -> None:
        if not self.lists:
            self._flush()
            return
        self._flush_item()
        top = self.lists[-1]
        if top[0] == "ol":
            top[3] = f"{top[1]}."
            top[1] += 1
        else:
            top[3] = "-"
        self.item_written = False

    def _start_pre(self, attrs: list[tuple[str, str | None]]) -> None:
        if self._flat():
            return
        self._flush()
        self.pre_depth = 1
        self.pre_buf = []
        self.pre_lang = _code_lang(attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in ("br", "hr", "img"):
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.in_title:
            self.in_title = False
        elif self.skip:
            if tag in self.skip:
                while self.skip and self.skip.pop() != tag:
                    pass
        elif self.pre_depth:
            if tag == "pre":
                self._end_pre()
        elif tag == "table":
            self._end_table()
        elif self.table_depth:
            self._end_in_table(tag)
        else:
            self._end_in_flow(tag)

    def _end_pre(self) -> None:
        self.pre_depth -= 1
        if self.pre_depth == 0:
            code = "".join(self.pre_buf)
            if code.startswith("\n"):
                code = code[1:]  # HTML ignores the newline right after <pre>
            code = code.rstrip()
            if code.strip():
                self._emit(code_fence(code, self.pre_lang))

    def _end_table(self) -> None:
        if self.table_depth == 0:
            return
        if self.table_depth == 1 and self.in_caption:  # a <caption> left open
            self.in_caption = False
            self.caption.append(self._cell_text())
        self.table_depth -= 1
        if self.table_depth == 0:
            self._close_row()
            block = gfm_table(self.rows)
            caption = collapse(" ".join(self.caption))
            self.caption = []
            if self.lists:
                # A table inside a list item stays with the list as its text.
                if caption:
                    self.inline.append(caption + " ")
                self.inline.append(" ".join(" ".join(r) for r in self.rows))
                self._flush_item()
            else:
                if caption:
                    self._emit(escape_line(caption))
                self._emit(block)
            self.rows = []

    def _end_in_table(self, tag: str) -> None:
        if self.table_depth == 1 and tag in ("td", "th"):
            self._close_cell()
        elif self.table_depth == 1 and tag == "tr":
            self._close_row()
        elif self.table_depth == 1 and tag == "caption":
            self.in_caption = False
            self.caption.append(self._cell_text())
        elif tag == "code":
            self.inline.append("`")

    def _end_in_flow(self, tag: str) -> None:
        """An end tag in running text: outside tables, <pre> and skipped elements."""
        if tag in _HEADINGS:
            self._flush()
        elif tag in ("ul", "ol", "menu"):
            self._end_list()
        elif tag == "li":
            if self.lists:
                self._flush_item()
        elif tag == "blockquote":
            self._end_blockquote()
        elif tag == "code":
            self.inline.append("`")
        elif tag in _BLOCK:
            self._flush()

    def _end_list(self) -> None:
        if not self.lists:
            return
        self._flush_item()
        self.lists.pop()
        self.item_written = True  # text after a nested list continues the parent item
        if not self.lists:
            self._emit("\n".join(self.list_lines))
            self.list_lines = []
            self.item_written = False

    def _end_blockquote(self) -> None:
        if self._flat() or len(self.containers) == 1:
            return
        self._flush()
        inner = self.containers.pop()
        body = "\n\n".join(inner)
        self._emit("\n".join(f"> {ln}" if ln else ">" for ln in body.split("\n")))

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title += data
            return
        if self.skip:
            return
        if not self.seen_body and data.strip():
            self.seen_body = True
        if self.pre_depth:
            self.pre_buf.append(data)
            return
        if self.table_depth and not (self.cell_open or self.in_caption) and self.table_depth == 1:
            if data.strip():  # stray text between cells belongs to the next cell
                self.inline.append(data)
            return
        self.inline.append(data)

    # -- tables ----------------------------------------------------------------------------
    def _close_cell(self) -> None:
        if self.cell_open:
            if self.row is None:
                self.row = []
            self.row.append(self._cell_text())
            self.cell_open = False

    def _close_row(self) -> None:
        self._close_cell()
        if self.row is not None:
            if self.inline:
                text = self._cell_text()
                if text:
                    self.row.append(text)
            if self.row:
                self.rows.append(self.row)
        self.row = None

    def _img(self, attrs: list[tuple[str, str | None]]) -> None:
        alt = next((v for k, v in attrs if k == "alt" and v), "")
        if alt.strip():
            self.inline.append(f" {alt} ")

    def finish(self) -> list[str]:
        """Close whatever the markup left open and return the blocks."""
        self.skip.clear()  # an unclosed <style> or <svg> hides nothing that follows it anyway
        self.in_title = False
        if self.pre_depth:
            self.pre_depth = 1
            self.handle_endtag("pre")
        for _ in range(self.table_depth):
            self.handle_endtag("table")
        for _ in range(len(self.lists)):
            self.handle_endtag(self.lists[-1][0])
        self._flush()
        for _ in range(len(self.containers) - 1):
            self.handle_endtag("blockquote")
        return self.containers[0]


def _code_lang(attrs: list[tuple[str, str | None]]) -> str:
    for k, v in attrs:
        if k == "class" and v:
            for cls in v.split():
                for pre in ("language-", "lang-"):
                    if cls.startswith(pre) and len(cls) > len(pre):
                        return re.sub(r"[^\w+.#-]", "", cls[len(pre):])
    return ""


# ----------------------------------------------------------------------------- PDF


def pdf_to_text(data: bytes, path: str = "<pdf>") -> tuple[str, str, dict]:
    """Page texts joined by PAGE_BREAK (kind "text"); meta: page_starts, pages, title."""
    with _captured_pypdf_warnings() as warnings:
        reader, pages = open_pdf(data, path)
        return _read_pdf(reader, pages, path, warnings)


@contextmanager
def _captured_pypdf_warnings() -> Iterator[list[str]]:
    """pypdf logs repairs of damaged files ("EOF marker not found"); keep them as the document's
    warnings instead of letting them reach the console."""
    logger = logging.getLogger("pypdf")
    seen: list[str] = []

    class _Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            msg = record.getMessage()
            if msg not in seen and len(seen) < 20:
                seen.append(msg)

    handler = _Keep(logging.WARNING)
    old_propagate = logger.propagate
    logger.addHandler(handler)
    logger.propagate = False
    try:
        yield seen
    finally:
        logger.removeHandler(handler)
        logger.propagate = old_propagate


def open_pdf(data: bytes, path: str) -> tuple[object, list]:
    """(pypdf reader, pages) of a readable PDF; InputError naming the file for one that is not a
    PDF, broken, encrypted with a password, or without pages. Every PDF backend checks here
    first, so each gives the same clear errors."""
    try:
        from pypdf import PdfReader
    except ImportError:  # pragma: no cover - a declared dependency
        raise InputError("reading PDFs needs the pypdf package", path=path) from None
    if b"%PDF" not in data[:1024]:
        raise InputError("not a PDF file (no %PDF header)", path=path)
    try:
        reader = PdfReader(io.BytesIO(data))
        encrypted = reader.is_encrypted
    except Exception as exc:  # pypdf raises many types on broken files; report, not crash
        raise InputError(f"cannot read PDF: {_reason(exc)}", path=path) from None
    if encrypted:
        try:
            # Many PDFs are "encrypted" with an empty user password (copy restrictions only).
            ok = reader.decrypt("")
        except Exception as exc:
            raise InputError(f"encrypted PDF, cannot decrypt: {_reason(exc)}", path=path) from None
        if not ok:
            raise InputError("encrypted PDF: a password is needed", path=path)
    try:
        pages = list(reader.pages)
    except Exception as exc:
        raise InputError(f"cannot read PDF pages: {_reason(exc)}", path=path) from None
    if not pages:
        raise InputError("PDF has no pages", path=path)
    return reader, pages


def plain_page_text(page) -> str | None:
    """pypdf's text of one page, final (no CR, form feed or NUL), or None when it fails."""
    try:
        raw = page.extract_text() or ""
    except Exception:
        return None
    return raw.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n").replace("\x00", "").strip()


def pdf_title(reader) -> str | None:
    try:
        title = reader.metadata.title if reader.metadata else None
    except Exception:
        return None
    return title.strip() if isinstance(title, str) and title.strip() else None


def _read_pdf(reader, pages: list, path: str, warnings: list[str]) -> tuple[str, str, dict]:
    parts: list[str] = []
    page_starts: list[int] = []
    failed: list[int] = []
    pos = 0
    for number, page in enumerate(pages, start=1):
        body = plain_page_text(page)
        if body is None:
            body = ""
            failed.append(number)
        # The text must be final here: page_starts are offsets into exactly this string.
        if parts:
            parts.append(PAGE_BREAK)
            pos += len(PAGE_BREAK)
        page_starts.append(pos)
        parts.append(body)
        pos += len(body)
    text = "".join(parts)
    if not text.strip():
        raise InputError("no extractable text (scanned?)", path=path)
    meta: dict = {"page_starts": page_starts, "pages": len(pages)}
    notes = [f"pypdf: {w}" for w in warnings] + [f"no text could be extracted from page {n}" for n in failed]
    if notes:
        meta["warnings"] = notes
    title = pdf_title(reader)
    if title:
        meta["title"] = title
    return text + "\n", "text", meta


def _reason(exc: BaseException) -> str:
    msg = str(exc).strip()
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


# ----------------------------------------------------------------------------- DOCX

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING_STYLE_RE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def docx_to_markdown(data: bytes, path: str = "<docx>") -> tuple[str, str, dict]:
    """DOCX bytes as Markdown (kind "markdown"): headings, list items and tables in body order."""
    import zipfile

    try:
        import docx
    except ImportError:  # pragma: no cover - a declared dependency
        raise InputError("reading DOCX files needs the python-docx package", path=path) from None
    try:
        document = docx.Document(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError("not a valid DOCX file (broken ZIP archive)", path=path) from None
    except Exception as exc:
        raise InputError(f"cannot read DOCX: {_reason(exc)}", path=path) from None
    try:
        style_names = {s.style_id: s.name or "" for s in document.styles}
    except Exception:
        style_names = {}
    numbering = _numbering_formats(document)
    blocks: list[str] = []
    list_lines: list[str] = []

    def close_list() -> None:
        if list_lines:
            blocks.append("\n".join(list_lines))
            list_lines.clear()

    def walk(parent) -> None:
        for child in parent.iterchildren():
            tag = child.tag
            if tag == f"{_W}p":
                kind, level, text = _docx_paragraph(child, style_names, numbering)
                if not text:
                    continue
                if kind == "item":
                    marker, depth = cast(tuple[str, int], level)
                    list_lines.append(f"{'   ' * depth}{marker} {escape_line(collapse(text))}")
                    continue
                close_list()
                if kind == "heading":
                    blocks.append("#" * cast(int, level) + " " + escape_heading(collapse(text)))
                else:
                    blocks.append(paragraph_markdown([collapse(ln) for ln in text.split("\n")]))
            elif tag == f"{_W}tbl":
                close_list()
                blocks.append(gfm_table(_docx_rows(child)))
            elif tag == f"{_W}sdt":  # content controls wrap ordinary body content
                content = child.find(f"{_W}sdtContent")
                if content is not None:
                    walk(content)

    walk(document.element.body)
    close_list()
    text = _join_blocks(blocks)
    meta: dict = {}
    try:
        title = document.core_properties.title
    except Exception:
        title = None
    if title and title.strip():
        meta["title"] = title.strip()
    return text, "markdown", meta


def _xml_text(p) -> str:
    """A paragraph's visible text: runs, tabs and breaks (deleted revisions and field codes skipped)."""
    out: list[str] = []
    for el in p.iter():
        tag = el.tag
        if tag == f"{_W}t":
            out.append(el.text or "")
        elif tag == f"{_W}tab":
            out.append("\t")
        elif tag in (f"{_W}br", f"{_W}cr"):
            out.append("\n")
        elif tag == f"{_W}noBreakHyphen":
            out.append("-")
    return "".join(out)


def _docx_paragraph(p, style_names: dict[str, str], numbering: dict) -> tuple[str, object, str]:
    """("heading", level, text) | ("item", (marker, depth), text) | ("paragraph", 0, text)."""
    text = _xml_text(p).strip()
    ppr = p.find(f"{_W}pPr")
    style = ""
    num_id = ilvl = None
    outline = None
    if ppr is not None:
        ps = ppr.find(f"{_W}pStyle")
        if ps is not None:
            sid = ps.get(f"{_W}val", "")
            style = style_names.get(sid, sid)
        numpr = ppr.find(f"{_W}numPr")
        if numpr is not None:
            nid = numpr.find(f"{_W}numId")
            lvl = numpr.find(f"{_W}ilvl")
            num_id = nid.get(f"{_W}val") if nid is not None else None
            ilvl = int(lvl.get(f"{_W}val", "0")) if lvl is not None else 0
        ol = ppr.find(f"{_W}outlineLvl")
        if ol is not None and ol.get(f"{_W}val", "").isdigit():
            outline = int(ol.get(f"{_W}val"))
    m = _HEADING_STYLE_RE.match(style.strip())
    if m:
        return "heading", min(max(int(m.group(1)), 1), 6), text
    if style.strip().lower() == "title":
        return "heading", 1, text
    if outline is not None and outline < 6 and not style.lower().startswith("list"):
        return "heading", outline + 1, text
    low = style.strip().lower()
    # "List Bullet 2", "List Number" ...; "List Paragraph" is a list only with numbering.
    is_list_style = low.startswith("list") and low != "list paragraph"
    if (num_id is not None and num_id != "0") or is_list_style:
        depth = ilvl if ilvl is not None else 0
        if ilvl is None:
            m2 = re.search(r"(\d)\s*$", style)
            depth = int(m2.group(1)) - 1 if m2 else 0
        fmt = numbering.get((num_id, depth)) if num_id is not None else None
        ordered = fmt not in (None, "bullet", "none") if fmt is not None else "number" in style.lower()
        return "item", ("1." if ordered else "-", max(depth, 0)), text
    return "paragraph", 0, text


def _numbering_formats(document) -> dict[tuple[str, int], str]:
    """(numId, level) -> numFmt ("bullet", "decimal", ...) from the numbering part, if any."""
    out: dict[tuple[str, int], str] = {}
    try:
        root = document.part.numbering_part.element
    except Exception:  # no numbering part: lists come from styles only
        return out
    abstract: dict[str, dict[int, str]] = {}
    for an in root.iterchildren(f"{_W}abstractNum"):
        levels: dict[int, str] = {}
        for lvl in an.iterchildren(f"{_W}lvl"):
            fmt = lvl.find(f"{_W}numFmt")
            if fmt is not None:
                levels[int(lvl.get(f"{_W}ilvl", "0"))] = fmt.get(f"{_W}val", "")
        abstract[an.get(f"{_W}abstractNumId", "")] = levels
    for num in root.iterchildren(f"{_W}num"):
        ref = num.find(f"{_W}abstractNumId")
        if ref is None:
            continue
        for level, fmt in abstract.get(ref.get(f"{_W}val", ""), {}).items():
            out[(num.get(f"{_W}numId", ""), level)] = fmt
    return out


def _docx_rows(tbl) -> list[list[str]]:
    """Rows of cell texts from the table XML; a cell spanning columns is padded with empty cells."""
    rows: list[list[str]] = []
    for tr in tbl.iterchildren(f"{_W}tr"):
        row: list[str] = []
        for tc in tr.iterchildren(f"{_W}tc"):
            texts = [collapse(_xml_text(p)) for p in tc.iter(f"{_W}p")]
            row.append(" ".join(t for t in texts if t))
            span = 1
            tcpr = tc.find(f"{_W}tcPr")
            if tcpr is not None:
                gs = tcpr.find(f"{_W}gridSpan")
                if gs is not None and gs.get(f"{_W}val", "1").isdigit():
                    span = int(gs.get(f"{_W}val", "1"))
            row.extend([""] * (span - 1))
        rows.append(row)
    return rows
