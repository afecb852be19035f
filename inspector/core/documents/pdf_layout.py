"""Page layout from positioned words: lines, blocks, reading order, headings, lists (issue 30).

Pure geometry over plain data, no PDF library: `pdf_structure` feeds it the words (text, box,
font size, font name) and table boxes that pdfplumber finds on each page, and it gives back the
page's blocks in reading order, each a heading, paragraph, list item, code block or table. The
thresholds are ratios of the font size, chosen on four of docling's test PDFs and checked on four
others (benchmarks/pdf_structure.py names them).

Coordinates are PDF points with y growing downwards (pdfplumber's `top`/`bottom`).
"""

from __future__ import annotations

import functools
import itertools
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field

# --------------------------------------------------------------------------------- plain data

#: Letters of the right-to-left scripts: Hebrew, Arabic (with Persian and Urdu), Syriac, Thaana,
#: NKo, Samaritan, and the Hebrew and Arabic presentation forms.
_RTL_RE = re.compile(r"[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefe]")


def is_rtl(text: str) -> bool:
    """Holds a letter of a right-to-left script."""
    return bool(_RTL_RE.search(text))


@dataclass(frozen=True, slots=True)
class Word:
    """One word as the PDF places it."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    """Font size in points."""
    font: str = ""
    """Font name (subset prefix dropped): bold, italic and monospace are read from it."""
    faint: bool = False
    """Filled in (near) white with nothing dark behind it: text a reader never sees (a cover's
    hidden bookmark text), kept as text but never a heading."""

    @property
    def bold(self) -> bool:
        return is_bold(self.font)

    @property
    def italic(self) -> bool:
        return is_italic(self.font)


# TeX's fonts say it in their names' letters: CMBX/SFBX bold extended, CMTI/SFTI italic, CMSL
# slanted, CMTT/SFTT typewriter; NimbusRomNo9L-Medi is Times bold.
_BOLD_RE = re.compile(r"bold|black|heavy|semibold|demi|-bd\b|bd$|,b$|-b$|medium|-md\b|md$|medi\b|"
                      r"^(cm|sf|ec|tc|lm)(bx|b|ssbx)\d|^cmb\d", re.IGNORECASE)
_ITALIC_RE = re.compile(r"italic|ital\b|oblique|-it$|,i$|-i$|^(cm|sf|ec|tc|lm)(ti|sl|it|bxti|bxsl)\d", re.IGNORECASE)
_MONO_RE = re.compile(r"courier|mono|consol|menlo|inconsolata|sourcecode|lucidaconsole|typewriter|sfmono|"
                      r"^(cm|sf|ec|tc|lm)(tt|itt|sltt)\d", re.IGNORECASE)


@functools.cache
def is_bold(font: str) -> bool:
    return bool(_BOLD_RE.search(font))


@functools.cache
def is_italic(font: str) -> bool:
    return bool(_ITALIC_RE.search(font))


@functools.cache
def is_mono(font: str) -> bool:
    return bool(_MONO_RE.search(font))


@dataclass(slots=True)
class Line:
    """Words on one baseline within one column, left to right."""

    words: list[Word]
    x0: float = 0.0
    x1: float = 0.0
    top: float = 0.0
    bottom: float = 0.0
    size: float = 0.0
    """The size most of its characters have."""
    style: tuple[bool, bool, bool] = (False, False, False)
    """(bold, italic, monospace) of most of its characters."""

    def __post_init__(self) -> None:
        self.measure()

    def measure(self) -> None:
        ws = self.words
        self.x0 = min(w.x0 for w in ws)
        self.x1 = max(w.x1 for w in ws)
        self.top = min(w.top for w in ws)
        self.bottom = max(w.bottom for w in ws)
        sizes: Counter[float] = Counter()
        styles: Counter[tuple[bool, bool, bool]] = Counter()
        for w in ws:
            n = len(w.text)
            sizes[round(w.size * 2) / 2] += n
            styles[(w.bold, w.italic, is_mono(w.font))] += n
        self.size = sizes.most_common(1)[0][0]
        self.style = styles.most_common(1)[0][0]

    @property
    def text(self) -> str:
        """The words in reading order: left to right, or right to left on a line mostly in a
        right-to-left script (Arabic, Hebrew, Persian; each such word was already read from its
        right, see `pdf_structure.chars_to_words`)."""
        texts = [w.text for w in self.words]
        rtl = sum(1 for t in texts if is_rtl(t))
        if rtl and 2 * rtl >= len(texts):
            texts.reverse()
        return " ".join(texts)


@dataclass(slots=True)
class Block:
    """A run of lines read together: a paragraph, heading, list item, code block or table."""

    lines: list[Line] = field(default_factory=list)
    kind: str = "paragraph"
    """"paragraph", "heading", "item", "code" or "table"."""
    level: int = 0
    """Heading level (1-6) for headings."""
    rows: list[list[str]] | None = None
    """Cell texts of a table."""
    box: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    """x0, top, x1, bottom."""
    text: str = ""
    """The block's running text once `finish_text` joined its lines."""
    sure: str = ""
    """Why it is a heading: "outline", "size", "numbered", "bold", "italic", "form"."""
    hyphens: int = 0
    """Words hyphenated at a line end that `join_lines` joined."""
    in_drawing: bool = False
    """Text inside ruled boxes that are not a table (a syntax diagram): kept as text, never a heading."""

    @property
    def faint(self) -> bool:
        """Every word unseen on the page (see `Word.faint`)."""
        return bool(self.lines) and all(w.faint for ln in self.lines for w in ln.words)

    def grow(self) -> None:
        if self.lines:
            self.box = (min(ln.x0 for ln in self.lines), min(ln.top for ln in self.lines),
                        max(ln.x1 for ln in self.lines), max(ln.bottom for ln in self.lines))

    @property
    def x0(self) -> float:
        return self.box[0]

    @property
    def top(self) -> float:
        return self.box[1]

    @property
    def x1(self) -> float:
        return self.box[2]

    @property
    def bottom(self) -> float:
        return self.box[3]

    @property
    def size(self) -> float:
        if not self.lines:
            return 0.0
        return Counter(ln.size for ln in self.lines).most_common(1)[0][0]

    @property
    def style(self) -> tuple[bool, bool, bool]:
        if not self.lines:
            return (False, False, False)
        weights: Counter[tuple[bool, bool, bool]] = Counter()
        for ln in self.lines:
            weights[ln.style] += sum(len(w.text) for w in ln.words)
        return weights.most_common(1)[0][0]


# --------------------------------------------------------------------------------- lines

_BULLET_RE = re.compile(r"^([•◦▪▫■□●○◆◇►▸‣⁃∙·\-–—*➢➤✓✔]|\(cid:\d+\))\s*(?=\S)")
_ORDERED_RE = re.compile(r"^(\(?\d{1,3}[.)]|\(?[a-z][.)]|\([ivx]{1,4}\))\s+(?=\S)")


_SECTION_NO_RE = re.compile(r"^(\d{1,2}(\.\d{1,2}){0,4}\.?|[IVX]{1,5}\.|[A-Z]\.|[•◦▪▫■□●○◆◇►▸‣⁃∙·–—*➢➤✓✔-])$")


def make_lines(words: list[Word]) -> list[Line]:
    """Words grouped by baseline, then cut where a horizontal gap is wider than about one em
    (a column gutter or a table gap, never a space in justified text)."""
    if not words:
        return []
    rows: list[list[Word]] = []
    spans: list[tuple[float, float]] = []
    for w in sorted(words, key=lambda w: ((w.top + w.bottom) / 2, w.x0)):
        h = max(w.bottom - w.top, 1.0)
        # A word joins a row it half overlaps (superscripts and small fraction digits included);
        # only the last few rows can qualify, words being sorted by their centres.
        for k in range(len(rows) - 1, max(len(rows) - 5, -1), -1):
            top, bottom = spans[k]
            if min(bottom, w.bottom) - max(top, w.top) >= 0.5 * min(h, bottom - top):
                rows[k].append(w)
                if h > bottom - top:  # the row's band is its tallest word's
                    spans[k] = (w.top, w.bottom)
                break
        else:
            rows.append([w])
            spans.append((w.top, w.bottom))
    lines: list[Line] = []
    for row in rows:
        row.sort(key=lambda w: w.x0)
        cur = [row[0]]
        for w in row[1:]:
            gap = w.x0 - cur[-1].x1
            # The smaller neighbour's em: a small label beside large type stands apart.
            gap_limit = max(0.9 * min(w.size, cur[-1].size), 4.0)
            # A section number is set a quad or two before its title ("5.1  Hyper ...").
            number_gap = len(cur) == 1 and _SECTION_NO_RE.match(cur[0].text) and gap <= 3 * cur[0].size
            if gap > gap_limit and not number_gap:
                lines.append(Line(cur))
                cur = [w]
            else:
                cur.append(w)
        lines.append(Line(cur))
    lines.sort(key=lambda ln: (ln.top, ln.x0))
    return lines


def starts_item(text: str) -> bool:
    return bool(_BULLET_RE.match(text) or _ORDERED_RE.match(text))


def make_blocks(lines: list[Line]) -> list[Block]:
    """Lines joined into blocks: the next line below, overlapping horizontally, close (under
    ~0.8 of the font size apart), the same size and style; a bullet or number starts a new one."""
    blocks: list[Block] = []
    for ln in lines:
        target = None
        # Blocks that end just above this line, latest first.
        near = [b for b in blocks if b.lines[-1].bottom >= ln.top - 1.5 * max(ln.size, 1.0)]
        for b in reversed(near):
            last = b.lines[-1]
            size = max(last.size, ln.size, 1.0)
            gap = ln.top - last.bottom
            if gap > 0.9 * size:
                continue
            if gap < -0.4 * size:
                continue
            overlap = min(last.x1, ln.x1) - max(last.x0, ln.x0)
            if overlap <= 0.2 * min(last.x1 - last.x0, ln.x1 - ln.x0):
                continue
            if abs(last.size - ln.size) > 0.12 * size:
                break
            if starts_item(ln.text):
                break
            # A list item's lines may change style (a bold lead-in), not size: a numbered title
            # set larger than the text below it stays a line of its own.
            if last.style != ln.style and not (starts_item(b.lines[0].text) and abs(last.size - ln.size) <= 0.3):
                break
            # A short line that ends a sentence, then an indented one: a new paragraph.
            if (last.x1 < b.x1 - 3 * size and last.text.rstrip().endswith((".", "!", "?", ":"))
                    and ln.x0 > b.x0 + 0.8 * size):
                break
            target = b
            break
        if target is None:
            target = Block([ln])
            blocks.append(target)
        else:
            target.lines.append(ln)
        target.grow()
    return blocks


# --------------------------------------------------------------------------------- reading order


def _intervals(spans: list[tuple[float, float]], tol: float) -> list[tuple[float, float]]:
    merged: list[list[float]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1] + tol:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def _split(blocks: list[Block], axis: int, tol: float) -> list[list[Block]]:
    """Blocks cut into groups along an axis (0: columns by x, 1: bands by y) at the gaps."""
    lo = (lambda b: b.x0) if axis == 0 else (lambda b: b.top)
    hi = (lambda b: b.x1) if axis == 0 else (lambda b: b.bottom)
    spans = _intervals([(lo(b), hi(b)) for b in blocks], tol)
    if len(spans) <= 1:
        return [blocks]
    groups: list[list[Block]] = [[] for _ in spans]
    for b in blocks:
        mid = (lo(b) + hi(b)) / 2
        for i, (a, z) in enumerate(spans):
            if a - tol <= mid <= z + tol:
                groups[i].append(b)
                break
        else:
            groups[-1].append(b)
    return [g for g in groups if g]


def _gutters(blocks: list[Block]) -> list[tuple[float, float]]:
    spans = _intervals([(b.x0, b.x1) for b in blocks], 4.0)
    return [(spans[i][1], spans[i + 1][0]) for i in range(len(spans) - 1)]


def reading_order(blocks: list[Block]) -> list[Block]:
    """Recursive XY-cut: bands top to bottom, columns left to right inside a band. Bands that
    share a column gutter (two columns whose paragraph gaps happen to line up) are read as one,
    so a two-column page is read column by column, not across."""
    if len(blocks) <= 1:
        return list(blocks)
    bands = _split(blocks, 1, 1.0)
    if len(bands) > 1:
        merged: list[list[Block]] = [bands[0]]
        for band in bands[1:]:
            prev = merged[-1]
            g1, g2 = _gutters(prev), _gutters(band)
            if g1 and g2 and any(min(a2, b2) - max(a1, b1) > 0 for a1, a2 in g1 for b1, b2 in g2):
                prev.extend(band)
            else:
                merged.append(band)
        if len(merged) > 1:
            return [b for band in merged for b in reading_order(band)]
    cols = _split(blocks, 0, 2.0)
    if len(cols) > 1:
        if mostly_rtl([w for b in blocks for w in _words_of(b)]):
            cols.reverse()  # a right-to-left page's columns are read from the right
        return [b for col in cols for b in reading_order(col)]
    return sorted(blocks, key=lambda b: (b.top, b.x0))


def _words_of(b: Block) -> list[str]:
    if b.rows:
        return [w for r in b.rows for c in r for w in c.split()]
    return [w.text for ln in b.lines for w in ln.words]


def mostly_rtl(texts: list[str]) -> bool:
    """Of the texts that hold letters, at least half hold right-to-left ones."""
    worded = [t for t in texts if any(ch.isalpha() for ch in t)]
    return bool(worded) and 2 * sum(1 for t in worded if is_rtl(t)) >= len(worded)


# --------------------------------------------------------------------------------- text of a block

_HYPHEN_END_RE = re.compile(r"(?<=[^\W\d_])[-\u00ad]$")


def join_lines(texts: list[str]) -> tuple[str, int]:
    """Lines of a paragraph as one line; a word hyphenated at a line end is joined when the next
    line goes on in lower case ("exam-" + "ple" -> "example"). Returns (text, hyphens joined)."""
    out = ""
    joined = 0
    for t in texts:
        t = t.strip()
        if not t:
            continue
        if not out:
            out = t
        elif _HYPHEN_END_RE.search(out) and t[:1].islower():
            out = out[:-1] + t
            joined += 1
        elif out.endswith("\u00ad"):
            out = out[:-1] + t
            joined += 1
        else:
            out = out + " " + t
    return out, joined


def code_lines(block: Block) -> list[str]:
    """A monospace block's lines with their indentation (in character widths) kept."""
    chars = [(w.x1 - w.x0) / max(len(w.text), 1) for ln in block.lines for w in ln.words]
    cw = statistics.median(chars) if chars else 6.0
    out = []
    for ln in block.lines:
        indent = int(round((ln.x0 - block.x0) / max(cw, 1.0)))
        parts = [ln.words[0].text]
        for a, b in itertools.pairwise(ln.words):
            spaces = max(1, int(round((b.x0 - a.x1) / max(cw, 1.0))))
            parts.append(" " * spaces + b.text)
        out.append(" " * max(indent, 0) + "".join(parts))
    return out


# --------------------------------------------------------------------------------- headings

_NUMBERED_RE = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+\S")
# A caption names its figure or table: "Figure 3", "Table 2-1", "[Table 1]", and the words
# Korean ("표", "그림"), Chinese ("表", "图") and Japanese ("図") captions use.
_CAPTION_RE = re.compile(r"^[\[(（【]?\s*(figure|fig\.|table|tab\.|example|listing|chart|source|note|표|그림|"
                         r"[表图図])\s*[\dIVX]", re.IGNORECASE)
#: A brand set large (a logo in type, "Redpaper™") or a name with its footnote mark (an author
#: line, "Kim Chang-ho*"): never a heading.
_MARK_END_RE = re.compile(r"[™®*†‡§]$")


@dataclass(frozen=True, slots=True)
class Body:
    """The document's running-text style, the yardstick for headings."""

    size: float
    bold: bool = False
    italic: bool = False


def body_style(blocks: list[Block]) -> Body:
    sizes: Counter[float] = Counter()
    styles: Counter[tuple[bool, bool]] = Counter()
    for b in blocks:
        for ln in b.lines:
            n = sum(len(w.text) for w in ln.words)
            sizes[ln.size] += n
            styles[ln.style[:2]] += n
    if not sizes:
        return Body(10.0)
    bold, italic = styles.most_common(1)[0][0]
    return Body(sizes.most_common(1)[0][0], bold, italic)


@dataclass(frozen=True, slots=True)
class _Candidate:
    """What the heading checks look at: a block, its text and how it is set against the body."""

    block: Block
    body: Body
    text: str
    letters: int
    ratio: float
    """Its size over the body text's."""
    bold: bool
    italic: bool

    @property
    def lines(self) -> int:
        return len(self.block.lines)


def _not_a_text_block(c: _Candidate) -> str | None:
    if c.block.kind not in ("paragraph", "item") or not c.text or c.lines > 3 or len(c.text) > 200:
        return ""
    return None


def _bare_number(c: _Candidate) -> str | None:
    """A bare chapter number set large ("1" above "Securing ... data"); any other text without
    letters is not a heading."""
    if c.letters:
        return None
    return "size" if c.ratio >= 1.8 and len(c.text) <= 4 and c.text.strip(".").isdigit() else ""


def _caption(c: _Candidate) -> str | None:
    return "" if _CAPTION_RE.match(c.text) else None


def _list_item(c: _Candidate) -> str | None:
    """"(1) Title" or "a) Title": a one-line numbered item set bold at body size or larger, short
    and unpunctuated, titles what follows; any other item is a list item."""
    if not starts_item(c.text) or _NUMBERED_RE.match(c.text):
        return None
    if (_ORDERED_RE.match(c.text) and c.bold and not c.body.bold and c.ratio >= 1.0 and c.lines == 1
            and len(c.text) <= 80 and not c.text.endswith((".", ":", ";", ","))):
        return "numbered"
    return ""


def not_a_title(text: str) -> bool:
    """Text that is no title however it is set: it ends in a comma, semicolon or colon (a lead-in),
    starts in lower case (a sentence's continuation), ends in a trade mark or footnote mark (a
    brand, an author line), asks a long question (a survey's item; a heading asks briefly), is a
    sentence over 40 characters, holds unmapped glyphs, or is mostly not letters."""
    letters = sum(ch.isalpha() for ch in text)
    return (text.endswith((",", ";", ":")) or text[:1].islower() or bool(_MARK_END_RE.search(text))
            or text.endswith("?") and len(text) > 80
            or text.endswith(".") and not re.search(r"\d\.$", text) and len(text) > 40
            or "(cid:" in text or letters < 0.4 * len(text.replace(" ", "")))


def _not_a_title(c: _Candidate) -> str | None:
    return "" if not_a_title(c.text) else None


def _by_size(c: _Candidate) -> str | None:
    """Larger than the body: a heading; smaller: none (however it is set)."""
    if c.ratio >= 1.15:
        return "size"
    return "" if c.ratio < 0.95 else None


def _numbered(c: _Candidate) -> str | None:
    if _NUMBERED_RE.match(c.text) and (c.bold and not c.body.bold or c.ratio >= 1.08) and len(c.text) <= 150:
        return "numbered"
    return None


def _bold(c: _Candidate) -> str | None:
    if c.bold and not c.body.bold and c.lines <= 2 and len(c.text) <= 120 and not c.text.endswith("."):
        return "bold"
    return None


def _italic(c: _Candidate) -> str | None:
    """A one-line italic title (a guess: body text in italics looks the same)."""
    if (c.italic and not c.body.italic and not c.bold and c.lines == 1 and len(c.text) <= 60
            and not c.text.endswith((".", ":")) and c.text[:1].isupper()):
        return "italic"
    return None


#: The checks in order; the first that decides (a reason, or "" for "not a heading") wins.
_HEADING_CHECKS = (_not_a_text_block, _bare_number, _caption, _list_item, _not_a_title, _by_size, _numbered,
                   _bold, _italic)


def heading_reason(block: Block, body: Body) -> str:
    """Why a block reads as a heading ("size", "numbered", "bold", "italic"), or "" if not:
    short, standalone, not a caption or list item, and set apart from the body text by size or
    weight (or, for a one-line title, italics)."""
    text = block.text
    bold, italic, _mono = block.style
    c = _Candidate(block, body, text, sum(ch.isalpha() for ch in text), block.size / max(body.size, 1.0),
                   bold, italic)
    for check in _HEADING_CHECKS:
        why = check(c)
        if why is not None:
            return why
    return ""


def form_heading(block: Block, cell_size: float) -> bool:
    """A line outside a form's tables that heads a section: one line of at most 80 characters
    with letters, no caption or list item, nothing `not_a_title` rules out, set bold or larger
    than the cells' text (`cell_size`, their most common size)."""
    text = block.text
    return (block.kind == "paragraph" and len(block.lines) == 1 and 0 < len(text) <= 80
            and any(ch.isalpha() for ch in text) and not _CAPTION_RE.match(text) and not starts_item(text)
            and not not_a_title(text) and (block.style[0] or block.size >= 1.15 * cell_size))


def heading_levels(blocks: list[Block]) -> None:
    """Levels for headings not yet levelled: a numbered heading's depth ("1.3.1" is 3); an
    unnumbered one takes the level of numbered headings set in the same size (one deeper when
    smaller than all of them, 1 when larger); with no numbered headings, the rank of its size
    (bold before regular) among the headings, largest first."""
    heads = [b for b in blocks if b.kind == "heading" and not b.level]
    numbered: dict[float, list[int]] = {}
    for b in heads:
        m = _NUMBERED_RE.match(b.text)
        if m and any(ch.isalpha() for ch in b.text):
            b.level = min(m.group(1).count(".") + 1, 6)
            numbered.setdefault(round(b.size), []).append(b.level)
    anchors = sorted((size, min(levels)) for size, levels in numbered.items())
    rest = [b for b in heads if not b.level]
    keys = sorted({(round(b.size), b.style[0]) for b in rest}, reverse=True)
    rank = {k: i + 1 for i, k in enumerate(keys)}
    for b in rest:
        size = round(b.size)
        if not anchors:
            b.level = min(rank[(size, b.style[0])], 6)
        elif size > anchors[-1][0]:
            b.level = 1
        else:
            at_or_above = [lvl for s, lvl in anchors if s >= size]
            same = [lvl for s, lvl in anchors if s == size]
            b.level = min(same[0] if same else max(at_or_above) + 1, 6)


# --------------------------------------------------------------------------------- running heads

_PAGE_NO_RE = re.compile(r"^(page\s*)?[-–(]?\s*(\d{1,4}|\d{1,3}[-–.]\d{1,4}|[ivxlc]{1,6})\s*[-–)]?"
                         r"(\s*(of|/)\s*\d{1,4})?$", re.IGNORECASE)


def furniture_key(text: str) -> str:
    """A margin line's text with its digits blurred, so "Page 3" and "Page 4" compare equal."""
    return re.sub(r"\d+", "#", re.sub(r"\s+", "", text.lower()))


def is_page_number(text: str) -> bool:
    return bool(_PAGE_NO_RE.match(text.strip()))
