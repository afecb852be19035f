"""Document structure: Markdown blocks with exact character spans, the heading tree, sentences.

markdown-it-py gives block tokens with line maps; a `line_starts` table turns lines into code-point
offsets once, so every block is a span of `Document.text` (never a re-rendered copy).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from functools import lru_cache

from inspector.core.documents.document import Document
from inspector.core.runtime.gcpause import paused_gc
from inspector.core.runtime.lru import SizedLRU

BLOCK_KINDS = ("heading", "paragraph", "list", "list_item", "table", "table_row", "code",
               "blockquote", "front_matter", "html", "hr")


@dataclass(frozen=True, slots=True)
class Block:
    """A structural block of a Markdown document as a span of its text."""

    kind: str
    """One of BLOCK_KINDS."""
    start: int
    """Code-point offset of the block's first character."""
    end: int
    """Offset just past the block's last non-whitespace character."""
    level: int = 0
    """Heading level (1-6); nesting depth for list items."""
    children: tuple[Block, ...] = ()
    """List items of a list; rows of a table (the header row first, marked by level=0)."""
    info: str = ""
    """Heading text, code fence language, or list marker."""


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading and the section it opens."""

    level: int
    title: str
    start: int
    """Offset of the heading line."""
    end: int
    """Offset just past the heading line."""
    section_end: int
    """Offset where the next heading of the same or a higher level starts (or the text ends)."""
    path: tuple[str, ...]
    """Titles from the top-level heading down to this one."""


@dataclass(frozen=True, slots=True)
class Structure:
    """Parsed structure of one document."""

    blocks: tuple[Block, ...]
    headings: tuple[Heading, ...]
    title: str
    _heading_starts: tuple[int, ...] = ()

    def heading_path_at(self, offset: int) -> tuple[str, ...]:
        """Heading titles enclosing `offset` (text before the first heading has an empty path)."""
        i = bisect.bisect_right(self._heading_starts, offset) - 1
        return self.headings[i].path if i >= 0 else ()

    def heading_at(self, offset: int) -> Heading | None:
        i = bisect.bisect_right(self._heading_starts, offset) - 1
        return self.headings[i] if i >= 0 else None


def line_starts(text: str) -> list[int]:
    """Offsets where each line starts; one extra entry at len(text) for the end."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i != -1:
        starts.append(i + 1)
        i = find("\n", i + 1)
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts


def _rstrip_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


_md_parser = None


def _parser():
    global _md_parser
    if _md_parser is None:
        # html_block stays a block (shown as text, never rendered); tables are GFM.
        # Without markdown-it's `normalize` rule: document text has no CR left (the loader
        # normalizes newlines), and the rule's two regular-expression passes over the whole text
        # hold the GIL for ~300 ms on 20 MB. (It would also turn NUL into U+FFFD: one character
        # for one, so offsets are the same either way.)
        # Without the `inline` rule either (issue 31): it parses the inline Markdown of every
        # paragraph, cell and heading (emphasis, links, code spans) into child tokens nothing here
        # reads, ~40% of the parse; a heading's title is its inline token's `content`, which the
        # block rules set (tests/core/test_structure.py compares with the full parse).
        _md_parser = reference_parser().disable("inline")
    return _md_parser


def reference_parser():
    """markdown-it-py with the inline rule (the parse before issue 31): what tests compare with."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.front_matter import front_matter_plugin

    return MarkdownIt("commonmark", {"html": True}).enable("table").use(front_matter_plugin).disable("normalize")


_TITLE_RE = re.compile(r"^title:\s*(.+?)\s*$", re.MULTILINE)


def _front_matter_title(yaml_text: str) -> str | None:
    m = _TITLE_RE.search(yaml_text)
    if not m:
        return None
    value = m.group(1).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value or None


def parse_markdown(text: str, name: str = "", parser=None) -> Structure:
    """Blocks, headings and title of a Markdown text (`parser`: a markdown-it-py parser to use
    instead of ours, for tests).

    With markdown-it-pyrs installed (and no `parser` given), the compiled parser reads the text
    and markdown-it-py only the regions around the few constructs where the two disagree
    (`inspector.core.text.markdown_fast`); the result is the same Structure (issue 31)."""
    if parser is None:
        from inspector.core.text import markdown_fast

        fast = markdown_fast.parse(text)
        if fast is not None:
            return _structure(text, name, *fast)
    blocks: list[Block] = []
    headings_raw: list[tuple[int, str, int, int]] = []
    fm_title = blocks_of_tokens((parser or _parser()).parse(text), text, line_starts(text), 0, blocks, headings_raw)
    return _structure(text, name, blocks, headings_raw, fm_title)


def _structure(text: str, name: str, blocks: list[Block], headings_raw: list[tuple[int, str, int, int]],
               fm_title: str | None) -> Structure:
    headings = _heading_tree(headings_raw, len(text))
    title = fm_title or next((h.title for h in headings if h.level == 1), None) or name
    return Structure(tuple(blocks), headings, title, tuple(h.start for h in headings))


def blocks_of_tokens(tokens, text: str, ls: list[int], line0: int, blocks: list[Block],
                     headings_raw: list[tuple[int, str, int, int]]) -> str | None:
    """Append the top-level blocks (and headings) of markdown-it-py's `tokens` to `blocks` (and
    `headings_raw`); returns the front matter's title. `tokens` may be the parse of a region of
    `text` that starts at line `line0` (`ls`: the whole text's line starts): its line maps are
    shifted by `line0`."""
    nlines = len(ls) - 1

    def span(m: list[int]) -> tuple[int, int]:
        a = ls[min(m[0] + line0, nlines)]
        b = ls[min(m[1] + line0, nlines)]
        return a, _rstrip_end(text, a, b)

    fm_title: str | None = None
    i = 0
    n = len(tokens)
    while i < n:
        t = tokens[i]
        if t.level != 0 or t.map is None:
            i += 1
            continue
        a, b = span(t.map)
        typ = t.type
        if typ == "heading_open":
            title = tokens[i + 1].content.strip() if i + 1 < n else ""
            level = int(t.tag[1])
            blocks.append(Block("heading", a, b, level=level, info=title))
            headings_raw.append((level, title, a, b))
            i += 3
            continue
        if typ == "front_matter":
            blocks.append(Block("front_matter", a, b))
            fm_title = _front_matter_title(t.content)
        elif typ == "paragraph_open":
            blocks.append(Block("paragraph", a, b))
        elif typ in ("fence", "code_block"):
            blocks.append(Block("code", a, b, info=t.info.strip() if typ == "fence" else ""))
        elif typ == "html_block":
            blocks.append(Block("html", a, b))
        elif typ == "hr":
            blocks.append(Block("hr", a, b))
        elif typ in ("bullet_list_open", "ordered_list_open", "blockquote_open", "table_open"):
            close = typ.replace("_open", "_close")
            depth = 0
            children: list[Block] = []
            j = i
            while j < n:
                tj = tokens[j]
                if tj.type == typ:
                    depth += 1
                elif tj.type == close:
                    depth -= 1
                    if depth == 0:
                        break
                # Direct children only: list items one level below, table rows anywhere inside.
                if typ in ("bullet_list_open", "ordered_list_open") and tj.type == "list_item_open" \
                        and tj.level == 1 and tj.map is not None:
                    ca, cb = span(tj.map)
                    children.append(Block("list_item", ca, cb, level=1, info=tj.markup))
                elif typ == "table_open" and tj.type == "tr_open" and tj.map is not None:
                    ca, cb = span(tj.map)
                    children.append(Block("table_row", ca, cb, level=0 if not children else 1))
                j += 1
            kind = {"bullet_list_open": "list", "ordered_list_open": "list",
                    "blockquote_open": "blockquote", "table_open": "table"}[typ]
            blocks.append(Block(kind, a, b, children=tuple(children), info=t.markup))
            i = j + 1
            continue
        i += 1
    return fm_title


def _heading_tree(raw: list[tuple[int, str, int, int]], text_len: int) -> tuple[Heading, ...]:
    """Headings with their paths and section ends, in one pass: a heading's section ends where the
    next heading of the same or a higher level starts (issue 31: the search for it ran over every
    later heading, quadratic in headings, seconds for a 20 MB handbook's tens of thousands)."""
    section_ends = [text_len] * len(raw)
    open_sections: list[int] = []  # headings whose section is still open, levels increasing
    paths: list[tuple[str, ...]] = []
    stack: list[tuple[int, str]] = []
    for idx, (level, title, a, _b) in enumerate(raw):
        while open_sections and raw[open_sections[-1]][0] >= level:
            section_ends[open_sections.pop()] = a
        open_sections.append(idx)
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        paths.append(tuple(t for _l, t in stack))
    return tuple(Heading(level, title, a, b, section_ends[idx], paths[idx])
                 for idx, (level, title, a, b) in enumerate(raw))


def parse_text(text: str, name: str = "") -> Structure:
    """Plain text: paragraphs as blocks, no headings; the title is the file name."""
    blocks = tuple(Block("paragraph", a, b) for a, b in paragraph_spans(text))
    return Structure(blocks, (), name, ())


#: Parsed structures: at most 32 documents and 16 M characters (~12 bytes a character).
_STRUCTURES: SizedLRU[Structure] = SizedLRU(32, 16_000_000)


def structure_of(doc: Document) -> Structure:
    """The document's structure, parsed once per content hash (LRU bounded by total size)."""
    def parse() -> Structure:
        with paused_gc():  # millions of acyclic parser tokens: no full collections meanwhile
            if doc.kind == "markdown":
                return parse_markdown(doc.text, doc.name)
            return parse_text(doc.text, doc.name)

    return _STRUCTURES.get_or_make((doc.sha256, doc.kind, doc.name), parse, len(doc.text))


# ----------------------------------------------------------------------------- plain text units

_BLANK_RE = re.compile(r"\n[ \t\f\v]*\n\s*")


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of paragraphs (separated by blank lines), trimmed of surrounding whitespace."""
    end = len(text) if end is None else end
    out: list[tuple[int, int]] = []
    pos = start
    for m in _BLANK_RE.finditer(text, start, end):
        _append_trimmed(text, pos, m.start(), out)
        pos = m.end()
    _append_trimmed(text, pos, end, out)
    return out


def _append_trimmed(text: str, a: int, b: int, out: list[tuple[int, int]]) -> None:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    if a < b:
        out.append((a, b))


# A sentence ends at . ! ? (or …) plus closing quotes/brackets, before whitespace.
_SENT_END_RE = re.compile(r"[.!?\u2026\u3002\uff01\uff1f]+[\"'\u2019\u201d)\]]*(?=\s)")
_ABBREV = frozenset("""e.g i.e etc vs mr mrs ms dr prof st no approx fig dept inc ltd co jr sr
                       cf al ca incl resp""".split())
# Lines that start a Markdown structure are sentence boundaries even without a full stop.
_MD_LINE_START_RE = re.compile(r"\n(?=[ \t]*(?:#{1,6}\s|[-*+]\s|\d{1,9}[.)]\s|\||>|```|~~~))")


@lru_cache(maxsize=4096)
def _is_abbrev(word: str) -> bool:
    w = word.lower().rstrip(".")
    return w in _ABBREV or (len(w) == 1 and w.isalpha())


def sentence_spans(text: str, start: int = 0, end: int | None = None, *,
                   markdown: bool = False, language: str | None = None) -> list[tuple[int, int]]:
    """Sentence spans inside [start, end), trimmed; paragraphs (and Markdown lines) are hard breaks.

    Within those, English (and any language not measured) is split by the rule below; German,
    French, Chinese, Japanese, Arabic and Hindi by sentencex (`inspector.core.text.language`),
    which finds the boundaries our rule misses there. `language` (an ISO 639-1 code) skips the
    detection, which otherwise reads the whole text once (remembered per text)."""
    from inspector.core.text.language import Language, language_of, segment_language, segment_spans

    end = len(text) if end is None else end
    doc_lang = Language(language, "", 1.0) if language else language_of(text)
    out: list[tuple[int, int]] = []
    for pa, pb in paragraph_spans(text, start, end):
        segs = [(pa, pb)]
        if markdown:
            segs = []
            pos = pa
            for m in _MD_LINE_START_RE.finditer(text, pa, pb):
                segs.append((pos, m.start()))
                pos = m.end()
            segs.append((pos, pb))
        for sa, sb in segs:
            code = segment_language(text, sa, sb, doc_lang)
            spans = segment_spans(text, sa, sb, code) if code else None
            if spans is not None:
                for a, b in spans:
                    _append_trimmed(text, a, b, out)
                continue
            _english_sentences(text, sa, sb, out)
    return out


def _english_sentences(text: str, sa: int, sb: int, out: list[tuple[int, int]]) -> None:
    """Our rule: a stop (. ! ? …) plus closing quotes before whitespace ends a sentence, unless the
    word it closes is an abbreviation or an initial."""
    pos = sa
    for m in _SENT_END_RE.finditer(text, sa, sb):
        # Skip abbreviations and initials ("e.g.", "Dr.", "J. Smith"), decimals are excluded
        # by the lookahead on whitespace.
        wstart = text.rfind(" ", sa, m.start()) + 1
        wstart = max(wstart, text.rfind("\n", sa, m.start()) + 1, sa)
        word = text[wstart:m.end()]
        if text[m.start()] == "." and _is_abbrev(word):
            continue
        _append_trimmed(text, pos, m.end(), out)
        pos = m.end()
    _append_trimmed(text, pos, sb, out)
