"""A PDF as Markdown with its headings, lists and tables, read offline (issue 30).

pdfplumber gives each page's words with their boxes and fonts, and its table finder (ruling
lines, then cells) gives the tables; `pdf_layout` turns the words into blocks in reading order.
Across pages, lines repeated in the top or bottom margin (running heads, footers) and page
numbers there are dropped; the body text's size and weight is the yardstick for headings, and
the PDF's outline, when it has one, names them first. Chosen by measurement
(benchmarks/pdf_structure.py): pdfplumber reads ~0.1 s a page on the benchmark files and finds
the ruled tables pypdfium2's text page cannot tell apart from running text.

The text is Markdown (kind "markdown"); `meta["page_starts"]` maps every character back to its
page as for plain PDFs. A page that cannot be structured is taken as pypdf's plain text, and the
document's warnings say which.
"""

from __future__ import annotations

import dataclasses
import io
import itertools
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from inspector.core.documents.pdf_layout import (
    Block,
    Body,
    Line,
    Word,
    body_style,
    code_lines,
    form_heading,
    furniture_key,
    heading_levels,
    heading_reason,
    is_page_number,
    is_rtl,
    join_lines,
    make_blocks,
    make_lines,
    mostly_rtl,
    reading_order,
)

#: Share of the page height at the top and at the bottom where running heads and footers live.
MARGIN = 0.09
#: Nearer the edge than this share of the height, a lone number is a page number.
EDGE = 0.13
_CID_RE = re.compile(r"\(cid:\d+\)")
_LEADER_RE = re.compile(r"^(.*?\S)\s*(?:\.\s*){3,}\s*(\S{1,8})$")
_BULLET_SPLIT_RE = re.compile(r"^([•◦▪▫■□●○◆◇►▸‣⁃∙·\-–—*➢➤✓✔])\s*")
_NUM_ITEM_RE = re.compile(r"^\(?(\d{1,3})[.)]\s+")


@dataclass
class PageResult:
    """One page's blocks in reading order, or its plain text when structuring failed."""

    number: int
    height: float = 0.0
    blocks: list[Block] = field(default_factory=list)
    plain: str | None = None
    """Set when the page fell back to plain text."""
    failure: str = ""
    dropped_rotated: int = 0
    unmapped: int = 0
    cell_chars: int = 0
    """Characters in the page's tables (a form's page holds most of its text there)."""
    cell_size: float = 0.0
    """The size most of those characters have."""


@dataclass
class Recovered:
    """What the extractor found, for the note shown beside the document."""

    headings: dict[str, int] = field(default_factory=dict)
    tables: int = 0
    contents_tables: int = 0
    items: int = 0
    code: int = 0
    running_dropped: int = 0
    hyphens: int = 0
    plain_pages: list[int] = field(default_factory=list)
    rotated: int = 0
    unmapped: int = 0
    outline_entries: int = 0
    outline_matched: int = 0


# --------------------------------------------------------------------------------- one page


def _clean(text: str) -> tuple[str, int]:
    n = len(_CID_RE.findall(text))
    if n:
        text = _CID_RE.sub("", text)
    return unicodedata.normalize("NFC", text), n


def page_blocks(page) -> PageResult:
    """A pdfplumber page as blocks in reading order (tables included)."""
    res = PageResult(number=page.page_number, height=float(page.height))
    if not hasattr(page, "_objects"):
        page._objects = parse_objects_fast(page)  # where pdfplumber's `objects` caches them
    tables = []
    drawings = []
    for t in page.find_tables():
        # Rotated cell text (a narrow column's header set upright along the rule) reads bottom
        # to top, as Word and Excel set it; pdfplumber's default would spell it backwards.
        rows = _table_rows(_extract_table(t))
        if rows and _right_to_left(rows):
            rows = [r[::-1] for r in rows]  # its first column is the rightmost, as it is read
        if rows:
            tables.append((t.bbox, rows))
        else:
            drawings.append(t.bbox)
    words: list[Word] = []
    cell_sizes: Counter[float] = Counter()
    for w in _unfaint_on_backdrops(chars_to_words(page.chars, res), page):
        cx, cy = (w.x0 + w.x1) / 2, (w.top + w.bottom) / 2
        if any(x0 - 1 <= cx <= x1 + 1 and top - 1 <= cy <= bottom + 1 for (x0, top, x1, bottom), _ in tables):
            cell_sizes[round(w.size * 2) / 2] += len(w.text)
            continue
        words.append(w)
    if cell_sizes:
        res.cell_chars = sum(cell_sizes.values())
        res.cell_size = cell_sizes.most_common(1)[0][0]
    lines = make_lines(words)
    lines, contents = _contents_table(lines)
    blocks = make_blocks(lines)
    for box, rows in tables:
        blocks.append(Block(kind="table", rows=rows, box=tuple(box)))
    if contents is not None:
        blocks.append(contents)
    for b in blocks:
        _finish(b)
    # Text in a drawing's boxes is never a heading; a box holding one or two blocks is a framed
    # title or callout, whose title may be.
    for x0, top, x1, bottom in drawings:
        inside = [b for b in blocks if b.kind != "table" and x0 - 1 <= (b.x0 + b.x1) / 2 <= x1 + 1
                  and top - 1 <= (b.top + b.bottom) / 2 <= bottom + 1]
        if len(inside) >= 3:
            for b in inside:
                b.in_drawing = True
    res.blocks = reading_order(blocks)
    return res


class _CharsOnly:
    """The one thing pdfplumber's `Table.extract` reads from its page: the characters."""

    __slots__ = ("chars",)

    def __init__(self, chars: list[dict]) -> None:
        self.chars = chars


def _extract_table(table) -> list[list[str | None]]:
    """pdfplumber's own cell texts of a found table, computed over the characters inside the
    table only: `Table.extract` scans every character of the page once per row (a fifth of
    the table time on a page of text with a small table). A character belongs to a row when its
    midpoint lies in the row's box, and every row's box lies in the table's, so the result is
    the same."""
    from pdfplumber.table import Table

    x0, top, x1, bottom = table.bbox
    inside = [c for c in table.page.chars
              if x0 <= (c["x0"] + c["x1"]) / 2 < x1 and top <= (c["top"] + c["bottom"]) / 2 < bottom]
    rows = Table(_CharsOnly(inside), table.cells).extract(char_dir_rotated="btt")  # type: ignore[arg-type]
    for row, cells in zip(table.rows, rows, strict=True):
        for j, text in enumerate(cells):
            box = row.cells[j]
            if text and box is not None and is_rtl(text):
                cells[j] = _cell_text(inside, box) or text
    return rows


def _cell_text(chars: list[dict], box: tuple[float, float, float, float]) -> str:
    """A cell's lines read as the page's text is (`chars_to_words`, `make_lines`): pdfplumber
    reads every line from the left, which spells right-to-left words backwards."""
    x0, top, x1, bottom = box
    mine = [c for c in chars if x0 <= (c["x0"] + c["x1"]) / 2 < x1 and top <= (c["top"] + c["bottom"]) / 2 < bottom]
    rows: list[list[Line]] = []
    for ln in make_lines(chars_to_words(mine, PageResult(number=0))):  # top to bottom, then left to right
        if rows and ln.top < rows[-1][-1].bottom and (ln.top + ln.bottom) / 2 > rows[-1][-1].top:
            rows[-1].append(ln)  # beside the last line (a gap cut them: "Yes [ ]  No [x]")
        else:
            rows.append([ln])
    for row in rows:
        if len(row) > 1 and mostly_rtl([ln.text for ln in row]):
            row.reverse()  # pieces of a right-to-left line are read from the right
    return "\n".join(ln.text for row in rows for ln in row)


def _right_to_left(rows: list[list[str]]) -> bool:
    """Most of a table's cells with letters are in a right-to-left script (half is not enough:
    a table of two columns, one Arabic and one English, keeps its order)."""
    worded = [c for r in rows for c in r if any(ch.isalpha() for ch in c)]
    return 2 * sum(1 for c in worded if is_rtl(c)) > len(worded)


def is_white(color) -> bool:
    """A fill colour as pdfplumber gives it (gray, RGB or CMYK components, or one number) that
    is white or nearly so; a pattern or an unknown colour space is not."""
    if isinstance(color, int | float):
        color = (color,)
    if not isinstance(color, tuple | list) or not color or not all(isinstance(c, int | float) for c in color):
        return False
    if len(color) == 4:  # CMYK: no ink
        return all(c <= 0.05 for c in color)
    return all(c >= 0.95 for c in color)


def _backdrops(page) -> list[tuple[float, float, float, float]]:
    """Boxes of what is painted under text: filled shapes that are not white, and images."""
    out = []
    for obj in itertools.chain(page.rects, page.curves):
        if obj.get("fill") and not is_white(obj.get("non_stroking_color")):
            out.append((obj["x0"], obj["top"], obj["x1"], obj["bottom"]))
    out.extend((im["x0"], im["top"], im["x1"], im["bottom"]) for im in page.images)
    return out


def _unfaint_on_backdrops(words: list[Word], page) -> list[Word]:
    """White words over a dark box or a picture are seen (a coloured sidebar's text): only
    those on bare paper stay faint."""
    if not any(w.faint for w in words):
        return words
    boxes = _backdrops(page)
    out = []
    for w in words:
        if w.faint:
            cx, cy = (w.x0 + w.x1) / 2, (w.top + w.bottom) / 2
            if any(x0 <= cx <= x1 and top <= cy <= bottom for x0, top, x1, bottom in boxes):
                w = dataclasses.replace(w, faint=False)
        out.append(w)
    return out


def chars_to_words(chars: list[dict], res: PageResult) -> list[Word]:
    """pdfplumber's characters as words: a character drawn twice at one place (fake bold) once,
    rotated ones left out, a word ending at a space or a gap over 0.15 em, or where the font
    changes."""
    seen: set[tuple] = set()
    upright: list[dict] = []
    for ch in chars:
        if not ch.get("upright", True):
            res.dropped_rotated += 1
            continue
        key = (ch["text"], round(ch["x0"]), round(ch["top"]))
        if key in seen:
            continue
        seen.add(key)
        upright.append(ch)
    words: list[Word] = []
    cur: list[dict] = []
    white: dict = {}  # colour -> is_white, a page has few colours and many characters

    def whiteness(color) -> bool:
        try:
            return white[color]
        except KeyError:
            found = white[color] = is_white(color)
            return found
        except TypeError:  # pragma: no cover - an unhashable colour (a list)
            return is_white(color)

    def flush() -> None:
        if not cur:
            return
        text, n = _clean("".join([c["text"] for c in cur]))
        if is_rtl(text):
            # A right-to-left word's glyphs come from the left, as drawn: read them from the
            # right, each glyph's text kept whole (a lam-alef ligature is two letters in order).
            text, n = _clean("".join([c["text"] for c in reversed(cur)]))
        res.unmapped += n
        if text.strip():
            first = cur[0]
            if len(cur) == 1:
                x0, x1, top, bottom = first["x0"], first["x1"], first["top"], first["bottom"]
            else:
                x0, x1 = min([c["x0"] for c in cur]), max([c["x1"] for c in cur])
                top, bottom = min([c["top"] for c in cur]), max([c["bottom"] for c in cur])
            words.append(Word(text.strip(), x0, x1, top, bottom, float(first["size"]),
                              str(first.get("fontname", "")).split("+")[-1],
                              all(whiteness(c.get("non_stroking_color")) for c in cur)))
        cur.clear()

    # Content-stream order is reading order within a line for nearly every PDF; a jump back or
    # down ends the word, as does a space, a gap, or a change of font.
    last: dict | None = None  # cur[-1] while cur is not empty
    for ch in upright:
        text = ch["text"]
        if last is not None:
            size = max(float(last["size"]), 1.0)
            if (text == last["text"] and not text.isspace()
                    and abs(ch["x0"] - last["x0"]) < 0.5 * max(last["x1"] - last["x0"], 0.5)
                    and abs(ch["top"] - last["top"]) < 0.5 * size):
                continue  # the same glyph drawn again a hair to the side: fake bold or a shadow
            gap = ch["x0"] - last["x1"]
            if (abs((ch["top"] + ch["bottom"]) - (last["top"] + last["bottom"])) / 2 > 0.3 * size
                    or gap > 0.15 * size or gap < -0.5 * size
                    or ch.get("fontname") != last.get("fontname") or abs(ch["size"] - last["size"]) > 0.5):
                flush()
                last = None
        if text.isspace():
            flush()
            last = None
            continue
        cur.append(ch)
        last = ch
    flush()
    return words


def _table_rows(raw: list[list[str | None]]) -> list[list[str]] | None:
    """Cell texts of a found table, or None for a frame that is not a table (one row or column,
    or almost no text)."""
    rows = [[join_lines(_clean(c or "")[0].split("\n"))[0] for c in r] for r in raw]
    rows = [r for r in rows if any(c for c in r)]
    if not rows:
        return None
    width = max(len(r) for r in rows)
    keep = [j for j in range(width) if any(j < len(r) and r[j] for r in rows)]
    rows = [[r[j] if j < len(r) else "" for j in keep] for r in rows]
    filled = sum(1 for r in rows for c in r if c)
    if len(rows) < 2 or len(keep) < 2 or filled < 4:
        return None
    # A drawing in boxes (a syntax diagram, a flow of steps), not a grid of values: mostly empty
    # cells, or one long text in several cells of a row (text drawn twice for a shadow).
    if filled < 0.3 * len(rows) * len(keep):
        return None
    for r in rows:
        long = [c for c in r if len(c) >= 20]
        if len(long) != len(set(long)):
            return None
    return rows


def _contents_table(lines: list[Line]) -> tuple[list[Line], Block | None]:
    """Lines of a table of contents (a title, dot leaders, a page number) as a two-column table."""
    hits = [ln for ln in lines if _LEADER_RE.match(ln.text)]
    if len(hits) < 3:
        return lines, None
    rows = []
    for ln in hits:
        m = _LEADER_RE.match(ln.text)
        assert m is not None
        rows.append([m.group(1).rstrip(" ."), m.group(2)])
    block = Block(lines=list(hits), kind="table", rows=rows)
    block.grow()
    block.lines = []
    block.sure = "contents"
    ids = {id(ln) for ln in hits}
    return [ln for ln in lines if id(ln) not in ids], block


def _finish(b: Block) -> None:
    if b.kind == "table":
        return
    if b.lines and b.lines[0].style[2]:
        b.kind = "code"
        b.text = "\n".join(code_lines(b))
        return
    text, hyphens = join_lines([ln.text for ln in b.lines])
    b.text = text
    b.hyphens = hyphens
    if _BULLET_SPLIT_RE.match(text) or _NUM_ITEM_RE.match(text):
        b.kind = "item"


# --------------------------------------------------------------------------------- the document


def structure_pages(pages: list[PageResult], outline: list[tuple[str, int, int]]) -> Recovered:
    """Running heads dropped, headings found and levelled, over all pages at once."""
    rec = Recovered()
    _drop_running(pages, rec)
    body_blocks = [b for p in pages for b in p.blocks if b.kind in ("paragraph", "item")]
    body = body_style(body_blocks) if body_blocks else Body(10.0)
    rec.hyphens = sum(b.hyphens for p in pages for b in p.blocks)
    _outline_headings(pages, outline, rec)
    for p in pages:
        for b in p.blocks:
            if b.kind not in ("paragraph", "item") or b.in_drawing or b.faint:
                continue
            why = heading_reason(b, body)
            if why:
                b.kind, b.sure = "heading", why
    for p in pages:
        _form_headings(p)
    for p in pages:
        _demote_misplaced(p)
    heads = [b for p in pages for b in p.blocks]
    heading_levels(heads)
    _demote_heading_runs(pages)
    if rec.outline_matched:
        deepest = max(b.level for b in heads if b.sure == "outline")
        for b in heads:
            if b.kind == "heading" and b.sure != "outline":
                b.level = min(deepest + b.level, 6)
    for p in pages:
        rec.rotated += p.dropped_rotated
        rec.unmapped += p.unmapped
        if p.plain is not None:
            rec.plain_pages.append(p.number)
        for b in p.blocks:
            if b.kind == "heading":
                rec.headings[b.sure] = rec.headings.get(b.sure, 0) + 1
            elif b.kind == "table":
                if b.sure == "contents":
                    rec.contents_tables += 1
                else:
                    rec.tables += 1
            elif b.kind == "item":
                rec.items += 1
            elif b.kind == "code":
                rec.code += 1
    return rec


def _form_headings(page: PageResult) -> None:
    """A form's section heads: on a page holding more text in its tables than outside them, the
    body text is the cells' and the few lines outside are titles and labels, which the document's
    yardstick cannot tell apart (the Persian form in benchmarks/data/pdf sets its section heads in
    the cells' labels' bold 14 pt). A short bold or larger line outside the tables there is a
    heading (`form_heading`)."""
    if not page.cell_chars:
        return
    outside = sum(len(b.text) for b in page.blocks if b.kind != "table")
    if page.cell_chars <= outside:
        return
    for b in page.blocks:
        if b.kind == "paragraph" and not b.in_drawing and not b.faint and form_heading(b, page.cell_size):
            b.kind, b.sure = "heading", "form"


def _demote_misplaced(page: PageResult) -> None:
    """Lines set like headings but placed where no heading goes become text again (outline and
    numbered headings excepted):

    - side by side with another such line (their heights overlap): the column heads of a table
      drawn without rules ("State funded legal aid" beside "CSOs");
    - in the bottom fifth of the page with no text under it: typesetters keep a heading with
      what follows, so this is a cover's brand or a closing line;
    - italic right under a heading: its subtitle ("Expert help to achieve ...")."""
    weak = ("size", "bold", "italic", "form")
    heads = [b for b in page.blocks if b.kind == "heading" and b.sure in weak]
    drop: set[int] = set()
    for a, b in itertools.combinations(heads, 2):
        overlap = min(a.bottom, b.bottom) - max(a.top, b.top)
        if overlap > 0.5 * min(a.bottom - a.top, b.bottom - b.top) and (a.x1 <= b.x0 or b.x1 <= a.x0):
            drop.update((id(a), id(b)))
    if page.height:
        for h in heads:
            if h.top >= 0.8 * page.height and not any(
                    o is not h and o.kind != "heading" and o.top >= h.bottom - 1
                    and min(o.x1, h.x1) - max(o.x0, h.x0) > 0 for o in page.blocks):
                drop.add(id(h))
    for prev, b in itertools.pairwise(page.blocks):
        if b.kind == "heading" and b.sure == "italic" and prev.kind == "heading":
            drop.add(id(b))
    for b in page.blocks:
        if id(b) in drop:
            b.kind, b.sure, b.level = "paragraph", "", 0


#: Headings found by their looks alone (not the outline, not a number).
_WEAK = ("bold", "size", "italic", "form")


def _demote_heading_runs(pages: list[PageResult]) -> None:
    """Three or more headings in a row on one page, at one level, with no text between them and
    not from the outline or numbered, are a list of bold or large lines (a cover's highlights, a
    menu), not sections with nothing in them: they become paragraphs again."""
    for p in pages:
        run: list[Block] = []
        for b in p.blocks + [Block(kind="end")]:
            if b.kind == "heading" and b.sure in _WEAK and (not run or b.level == run[0].level):
                run.append(b)
                continue
            if len(run) >= 3:
                for h in run:
                    h.kind, h.sure, h.level = "paragraph", "", 0
            run = [b] if b.kind == "heading" and b.sure in _WEAK else []


def _drop_running(pages: list[PageResult], rec: Recovered) -> None:
    """Furniture, not text: blocks in the top or bottom margin that repeat on other pages (digits
    blurred), page numbers near the top or bottom edge, and a one-line running head beside such
    a page number (a journal's "Title of the paper  9", which no other page may repeat)."""
    def zone(p: PageResult, b: Block, share: float) -> bool:
        return b.kind != "table" and (b.bottom <= p.height * share or b.top >= p.height * (1 - share))

    seen: dict[str, set[int]] = {}
    for p in pages:
        for b in p.blocks:
            if zone(p, b, MARGIN):
                seen.setdefault(furniture_key(b.text), set()).add(p.number)
    for p in pages:
        numbers = [b for b in p.blocks if zone(p, b, EDGE) and len(b.lines) == 1 and is_page_number(b.text)]
        keep = []
        for b in p.blocks:
            repeated = zone(p, b, MARGIN) and len(seen.get(furniture_key(b.text), ())) >= 2
            beside_number = zone(p, b, EDGE) and len(b.lines) == 1 and any(
                n is not b and min(n.bottom, b.bottom) - max(n.top, b.top) > 0 for n in numbers)
            if repeated or beside_number or any(n is b for n in numbers):
                rec.running_dropped += 1
                continue
            keep.append(b)
        p.blocks = keep


def _norm(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).lower() if ch.isalnum())


def _outline_headings(pages: list[PageResult], outline: list[tuple[str, int, int]], rec: Recovered) -> None:
    """Blocks whose text is an outline entry's title (on its page or the next) become headings
    at the entry's depth."""
    rec.outline_entries = len(outline)
    by_number = {p.number: p for p in pages}
    for title, number, depth in outline:
        want = _norm(title)
        if not want:
            continue
        for n in (number, number + 1):
            page = by_number.get(n)
            if page is None:
                continue
            hit = next((b for b in page.blocks if b.kind in ("paragraph", "item") and len(b.text) <= 250
                        and _norm(b.text) and (_norm(b.text) == want or _norm(b.text).startswith(want)
                                               and len(_norm(b.text)) <= len(want) + 8)), None)
            if hit is not None:
                hit.kind, hit.level, hit.sure = "heading", min(depth + 1, 6), "outline"
                rec.outline_matched += 1
                break


# --------------------------------------------------------------------------------- Markdown


def page_markdown(page: PageResult, escape_line: Callable[[str], str], escape_heading: Callable[[str], str],
                  gfm_table: Callable[[list[list[str]]], str], code_fence: Callable[[str], str]) -> str:
    if page.plain is not None:
        return page.plain
    parts: list[str] = []
    prev_item = False
    for b in page.blocks:
        if b.kind == "table" and b.rows:
            md = gfm_table(b.rows)
        elif b.kind == "heading":
            md = "#" * max(1, b.level) + " " + escape_heading(b.text)
        elif b.kind == "code":
            md = code_fence(b.text)
        elif b.kind == "item":
            md = _item(b.text, escape_line)
        else:
            md = escape_line(b.text)
        if not md.strip():
            continue
        if parts:
            parts.append("\n" if prev_item and b.kind == "item" else "\n\n")
        parts.append(md)
        prev_item = b.kind == "item"
    return "".join(parts)


def _item(text: str, escape_line: Callable[[str], str]) -> str:
    m = _NUM_ITEM_RE.match(text)
    if m:
        return f"{int(m.group(1))}. {escape_line(text[m.end():])}"
    m2 = _BULLET_SPLIT_RE.match(text)
    rest = text[m2.end():] if m2 else text
    return "- " + escape_line(rest)


def note(rec: Recovered, pages: int) -> str:
    """One paragraph on what was recovered and how sure each part is."""
    parts = []
    h = rec.headings
    total = sum(h.values())
    if total:
        how = []
        for key, label in (("outline", "from the outline, sure"), ("size", "larger type, sure"),
                           ("numbered", "numbered and set apart, sure"), ("bold", "bold lines, likely"),
                           ("italic", "italic one-line titles, a guess"),
                           ("form", "lines between a form's tables, likely")):
            if h.get(key):
                how.append(f"{h[key]} {label}")
        parts.append(f"{total} headings ({'; '.join(how)})")
    else:
        parts.append("no headings (no line stands out from the body text)")
    if rec.outline_entries:
        parts.append(f"outline: {rec.outline_matched} of {rec.outline_entries} entries found in the text")
    if rec.tables:
        parts.append(f"{rec.tables} tables from ruling lines")
    if rec.contents_tables:
        parts.append(f"{rec.contents_tables} contents tables from dot leaders")
    if rec.items:
        parts.append(f"{rec.items} list items")
    if rec.code:
        parts.append(f"{rec.code} code blocks (monospace)")
    if rec.running_dropped:
        parts.append(f"{rec.running_dropped} running header, footer and page-number lines dropped")
    if rec.hyphens:
        parts.append(f"{rec.hyphens} words hyphenated at line ends joined")
    if rec.rotated:
        parts.append(f"{rec.rotated} rotated words left out")
    if rec.unmapped:
        parts.append(f"{rec.unmapped} glyphs without a known character left out")
    if rec.plain_pages:
        parts.append(f"{len(rec.plain_pages)} of {pages} pages kept as plain text")
    return "Built-in PDF structure: " + ", ".join(parts) + "."


_PLAIN_TYPES = frozenset((int, float, str, bool, type(None)))


def parse_objects_fast(page) -> dict[str, list[dict]]:
    """pdfplumber's `page.objects`, the same dicts, built faster: a page's characters are most
    of its objects, and pdfplumber resolves every attribute of each through generic recursive
    calls and decodes its colour space's name again per character (a third of the builtin
    backend's time in the profile). Characters take a direct path here (`_char_maker`): made
    into their dicts as they are drawn (`page_layout`: no LTChar, a fifth of the conversion;
    issue 31), else from pdfminer's LTChar (`char`). Every other object still goes through
    pdfplumber's own `process_object`. tests/core/test_pdf_structure.py and test_pdf_content.py
    compare the two on real pages."""
    from pdfminer.layout import LTChar, LTContainer

    from inspector.core.documents.pdf_content import page_layout

    objects: dict[str, list[dict]] = {}
    chars: list[dict] = []
    make = _char_maker(page)

    def char(obj) -> dict:
        """An LTChar's dict (a page laid out the plain way: a font named by a string), made as a
        character made as drawn is."""
        if isinstance(obj.fontname, bytes):  # a name to decode: pdfplumber's own way
            return page.process_object(obj)
        return make(obj.matrix, obj.fontname, obj.adv, obj.upright, obj.x0, obj.y0, obj.x1, obj.y1, obj.width,
                    obj.height, obj.size, getattr(obj, "mcid", None), getattr(obj, "tag", None), obj.ncs,
                    obj.graphicstate, obj.get_text())

    def walk(objs) -> None:
        for obj in objs:
            if isinstance(obj, LTChar):
                chars.append(char(obj))
                continue
            if isinstance(obj, LTContainer):
                if page.pdf.laparams is not None:
                    add(page.process_object(obj))
                walk(obj._objs)
                continue
            add(page.process_object(obj))

    def add(obj: dict) -> None:
        if obj["object_type"] != "anno":
            objects.setdefault(obj["object_type"], []).append(obj)

    layout, fused = page_layout(page, make)
    walk(layout._objs)
    if fused:
        chars.extend(fused)  # the layout holds none of them
    if chars:
        objects["char"] = chars
    return objects


def _char_maker(page) -> Callable[..., dict]:
    """The dict pdfplumber's `process_object` makes of a character of the page, from the values
    of pdfminer's LTChar (`page_layout`'s characters made as they are drawn, or an LTChar's own):
    the same keys in the same order, its colour space's name decoded once per page."""
    from pdfplumber.utils.pdfinternals import resolve_all, resolve_and_decode

    names: dict[str, str] = {}
    number, height_page, initial_doctop = page.page_number, page.height, page.initial_doctop
    mb_x0, mb_top = page.mediabox[:2]
    norm = page.pdf.unicode_norm

    def made(matrix, fontname, adv, upright, x0, y0, x1, y1, width, height, size, mcid, tag, ncs, gs,
             text) -> dict:
        if type(mcid) not in _PLAIN_TYPES:
            mcid = resolve_all(mcid)
        if type(tag) not in _PLAIN_TYPES:
            tag = resolve_all(tag)
        if type(matrix) is not tuple or not _PLAIN_TYPES.issuperset(map(type, matrix)):
            matrix = resolve_all(matrix)
        name = ncs.name
        decoded = names.get(name)
        if decoded is None:
            decoded = names[name] = resolve_and_decode(name)
        scolor, ncolor = gs.scolor, gs.ncolor
        top = (height_page - y1) + mb_top
        if mb_x0 != 0:
            x0 += mb_x0
            x1 += mb_x0
        return {"matrix": matrix, "fontname": fontname, "adv": adv, "upright": upright, "x0": x0, "y0": y0,
                "x1": x1, "y1": y1, "width": width, "height": height, "size": size, "mcid": mcid, "tag": tag,
                "object_type": "char", "page_number": number, "ncs": decoded,
                "text": unicodedata.normalize(norm, text) if norm is not None else text,
                "stroking_color": scolor if isinstance(scolor, tuple) else (scolor,),
                "non_stroking_color": ncolor if isinstance(ncolor, tuple) else (ncolor,),
                "top": top, "bottom": (height_page - y0) + mb_top, "doctop": initial_doctop + top}

    return made


def open_plumber(data: bytes):
    import pdfplumber

    return pdfplumber.open(io.BytesIO(data), password="")
