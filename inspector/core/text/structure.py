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
from inspector.core.text.markdown_blocks import (  # the reference reading of blocks
    Block,
    _parser,
    blocks_of_tokens,
    line_starts,
)


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
        return _path_at(self.headings, self._heading_starts, offset)

    def heading_at(self, offset: int) -> Heading | None:
        i = bisect.bisect_right(self._heading_starts, offset) - 1
        return self.headings[i] if i >= 0 else None


@dataclass(frozen=True, slots=True)
class Outline:
    """What the chunkers that cut without reading blocks need of a document's structure: its
    headings, its title and its top-level tables' spans (issue 31: had without a parse, `outline_of`)."""

    headings: tuple[Heading, ...]
    title: str
    tables: tuple[tuple[int, int], ...]
    _heading_starts: tuple[int, ...] = ()

    def heading_path_at(self, offset: int) -> tuple[str, ...]:
        """Heading titles enclosing `offset` (text before the first heading has an empty path)."""
        return _path_at(self.headings, self._heading_starts, offset)

    def __reduce__(self) -> tuple:
        """Pickled as its raw headings, the paths and section ends made again on loading: the
        helper process sends the outline with its first chunking stage (`remember_outline`),
        and the objects themselves pickled to 2.5 MB in 0.11 s and loaded in 0.11 s for a
        20 MB handbook's 33,000 headings; their raw form is 1.4 MB, 6 ms and ~50 ms."""
        raw = [(h.level, h.title, h.start, h.end) for h in self.headings]
        return (_outline_from_raw, (raw, self.title, self.tables, self.headings[-1].section_end if raw else 0))


def _outline_from_raw(raw: list[tuple[int, str, int, int]], title: str | None, tables: tuple[tuple[int, int], ...],
                      text_len: int, fm_title: str | None = None, name: str = "") -> Outline:
    """The outline of raw headings (level, title, start, end); `title` None: the document's
    title found as `structure_of` finds it (`_title`)."""
    headings = _heading_tree(raw, text_len)
    title = _title(headings, fm_title, name) if title is None else title
    return Outline(headings, title, tables, tuple(h.start for h in headings))


def heading_marks(outline: Outline | Structure) -> tuple[tuple[int, int, int], ...]:
    """(start, end, level) of every heading: what the window's chunking stages show beside the chunks."""
    return tuple((h.start, h.end, h.level) for h in outline.headings)


def _path_at(headings: tuple[Heading, ...], starts: tuple[int, ...], offset: int) -> tuple[str, ...]:
    i = bisect.bisect_right(starts, offset) - 1
    return headings[i].path if i >= 0 else ()


def outline_of_structure(structure: Structure) -> Outline:
    """The outline of a parsed structure."""
    tables = tuple((b.start, b.end) for b in structure.blocks if b.kind == "table")
    return Outline(structure.headings, structure.title, tables, structure._heading_starts)


def parse_markdown(text: str, name: str = "", parser=None) -> Structure:
    """Blocks, headings and title of a Markdown text (`parser`: a markdown-it-py parser to use
    instead of ours, for tests).

    With markdown-it-pyrs installed (and no `parser` given), the compiled parser reads the text
    and markdown-it-py only the regions around the few constructs where the two disagree
    (`inspector.core.text.markdown_fast`); the result is the same Structure (issue 31)."""
    return _structure(text, name, *_markdown_parts(text, parser))


def _markdown_parts(text: str, parser=None) -> tuple[list[Block], list[tuple[int, str, int, int]], str | None]:
    """The parse's own result: blocks, raw headings (level, title, start, end), front matter's title."""
    if parser is None:
        from inspector.core.text import markdown_fast

        fast = markdown_fast.parse(text)
        if fast is not None:
            return fast
    blocks: list[Block] = []
    headings_raw: list[tuple[int, str, int, int]] = []
    fm_title = blocks_of_tokens((parser or _parser()).parse(text), text, line_starts(text), 0, blocks, headings_raw)
    return blocks, headings_raw, fm_title


def _kept_markdown(doc: Document) -> Structure:
    """`parse_markdown` of a document, read from the disk where a long text's parse is kept
    (`structurecache`), else parsed and kept there."""
    from inspector.core.text import structurecache

    text = doc.text
    parts, _read = structurecache.FILES.read_or_build(
        doc.sha256, len(text), structurecache.structure_key, lambda payload: structurecache.decode(payload, len(text)),
        lambda: _markdown_parts(text), lambda kept: [structurecache.encode(kept)])
    return _structure(text, doc.name, *parts)


def _structure(text: str, name: str, blocks: list[Block], headings_raw: list[tuple[int, str, int, int]],
               fm_title: str | None) -> Structure:
    headings = _heading_tree(headings_raw, len(text))
    return Structure(tuple(blocks), headings, _title(headings, fm_title, name), tuple(h.start for h in headings))


def _title(headings: tuple[Heading, ...], fm_title: str | None, name: str) -> str:
    """The front matter's title, else the first level-1 heading's, else the document's name."""
    return fm_title or next((h.title for h in headings if h.level == 1), None) or name


_new = object.__new__
#: The slots' setters of a Heading, in field order (`_heading_tree` fills them directly).
_HEADING_SETTERS = tuple(Heading.__dict__[name].__set__ for name in Heading.__dataclass_fields__)


def _heading_tree(raw: list[tuple[int, str, int, int]], text_len: int) -> tuple[Heading, ...]:
    """Headings with their paths and section ends, in one pass: a heading's section ends where the
    next heading of the same or a higher level starts (issue 31: the search for it ran over every
    later heading, quadratic in headings, seconds for a 20 MB handbook's tens of thousands).

    Each Heading is made with its slots filled directly, its section end set when the next
    heading of its level or above closes it (or at the end): the same objects `Heading(...)`
    makes (a test compares them), in about half the time (20 MB handbook: 64-76 -> 30-46 ms)."""
    set_level, set_title, set_start, set_end, set_section_end, set_path = _HEADING_SETTERS
    out: list[Heading] = []
    open_sections: list[tuple[int, Heading]] = []  # (level, heading) whose section is still open, levels increasing
    levels: list[int] = []  # the path's levels and titles
    titles: list[str] = []
    for level, title, a, b in raw:
        while open_sections and open_sections[-1][0] >= level:
            set_section_end(open_sections.pop()[1], a)
        while levels and levels[-1] >= level:
            levels.pop()
            titles.pop()
        levels.append(level)
        titles.append(title)
        h = _new(Heading)
        set_level(h, level)
        set_title(h, title)
        set_start(h, a)
        set_end(h, b)
        set_path(h, tuple(titles))
        open_sections.append((level, h))
        out.append(h)
    for _level, h in open_sections:
        set_section_end(h, text_len)
    return tuple(out)


def parse_text(text: str, name: str = "") -> Structure:
    """Plain text: paragraphs as blocks, no headings; the title is the file name."""
    blocks = tuple(Block("paragraph", a, b) for a, b in paragraph_spans(text))
    return Structure(blocks, (), name, ())


#: Parsed structures: at most 32 documents and 16 M characters (~12 bytes a character).
_STRUCTURES: SizedLRU[Structure] = SizedLRU(32, 16_000_000)
#: Outlines: as many documents, sized by their text (an outline is a few bytes a heading).
_OUTLINES: SizedLRU[Outline] = SizedLRU(32, 64_000_000)


def structure_of(doc: Document) -> Structure:
    """The document's structure, parsed once per content hash (LRU bounded by total size)."""
    def parse() -> Structure:
        with paused_gc():  # millions of acyclic parser tokens: no full collections meanwhile
            if doc.kind == "markdown":
                return _kept_markdown(doc)
            return parse_text(doc.text, doc.name)

    return _STRUCTURES.get_or_make((doc.sha256, doc.kind, doc.name), parse, len(doc.text))


def _kept_structure(doc: Document) -> Structure | None:
    """The structure of a long Markdown text when its parse is kept on disk (`structurecache`),
    cached as `structure_of` caches it; None when there is none. Reading it costs about what
    scanning the text for its outline does (the handbook x11: 13-24 against 12 ms; Chroma's
    corpora: 3-4 against 6-7 ms), and leaves the whole structure at hand for a strategy that
    reads blocks next."""
    from inspector.core.runtime import keptfiles

    text = doc.text
    if not keptfiles.wanted(len(text)):
        return None
    from inspector.core.text import structurecache

    parts = structurecache.FILES.load(doc.sha256, structurecache.structure_key(),
                                      lambda payload: structurecache.decode(payload, len(text)))
    if parts is None:
        return None
    parsed = _structure(text, doc.name, *parts)
    _STRUCTURES.put((doc.sha256, doc.kind, doc.name), parsed, len(text))
    return parsed


def outline_of(doc: Document) -> Outline:
    """The document's outline, made once per content hash: from its structure when that is parsed
    already, else read off its lines (`outline.outline`, a tenth of a parse), else (a construct
    the scanner leaves to the parser) from its structure, parsed now."""
    key = (doc.sha256, doc.kind, doc.name)

    def make() -> Outline:
        parsed = _STRUCTURES.lookup(key)
        if parsed is None and doc.kind == "markdown":
            parsed = _kept_structure(doc)
        if parsed is not None:
            return outline_of_structure(parsed)
        if doc.kind != "markdown":  # `parse_text`: no headings, no tables, the name for a title
            return Outline((), doc.name, (), ())
        from inspector.core.text.outline import outline

        scanned = outline(doc.text)
        if scanned is None:
            return outline_of_structure(structure_of(doc))
        headings_raw, tables, fm_title = scanned
        return _outline_from_raw(headings_raw, None, tuple(tables), len(doc.text), fm_title, doc.name)

    return _OUTLINES.get_or_make(key, make, len(doc.text))


def remember_outline(doc: Document, outline: Outline) -> None:
    """Keep `outline`, made elsewhere of the same text (the helper process's, sent with the
    window's first chunking stage), as the document's: `outline_of` answers it from then on. The
    heading filter's completions and the coverage panel's wording ask for it on the GUI thread,
    where the document otherwise was scanned again (20 MB: 0.3-0.4 s; issue 31)."""
    key = (doc.sha256, doc.kind, doc.name)
    if _OUTLINES.lookup(key) is None:
        _OUTLINES.put(key, outline, len(doc.text))


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
