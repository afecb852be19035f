"""Which sections of a document the gold set asks about, and which it leaves out.

A gold set written by hand drifts towards the chapters its author knows; a chunking setting then
looks good on them and is never tested on the rest. Coverage lists the document's sections (its
headings; a text without headings is cut into equal stretches at paragraph starts) with the number
of gold questions whose reference spans (else answer occurrences) start inside each, so the
sections with none stand out.

A section's own text runs from its heading to the next heading of any level; `count` counts the
questions there and `total` those anywhere under the heading (subsections included). A heading
directly followed by a subheading has no text of its own and is never reported as uncovered.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.documents.document import Document
from inspector.core.evaluation.gold import GoldQuestion, normalize, normalized_text
from inspector.core.text.structure import paragraph_spans, structure_of

#: A text without headings is cut into this many stretches (at paragraph starts).
STRETCHES = 10


@dataclass(frozen=True, slots=True)
class Section:
    """One section of a document and the gold questions about it."""

    title: str
    """The heading's text; for a stretch of a text without headings, its first words."""
    level: int
    """Heading level (1-6); 1 for a stretch; 0 for the text before the first heading."""
    path: tuple[str, ...]
    """Titles from the top heading down to this one."""
    start: int
    """Offset of the heading line (of the stretch's first paragraph)."""
    end: int
    """End of the section's own text: where the next heading of any level starts."""
    section_end: int
    """End of the section with its subsections."""
    has_text: bool
    """Whether the section has text of its own besides the heading line."""
    count: int = 0
    """Gold questions whose passage (or answer) starts in the section's own text."""
    total: int = 0
    """Gold questions whose passage starts anywhere in the section, subsections included."""
    questions: tuple[int, ...] = ()
    """Indices (into the questions given to `coverage`) of the questions counted in `count`."""

    @property
    def uncovered(self) -> bool:
        """A section with text of its own and no question about it."""
        return self.has_text and self.count == 0


@dataclass(frozen=True, slots=True)
class Coverage:
    sections: tuple[Section, ...]
    placed: int
    """Questions placed in the document (their passage or answer found in it)."""
    unplaced: int
    """Questions about this document whose answer occurs nowhere in it (stale or wrong)."""

    @property
    def uncovered(self) -> tuple[Section, ...]:
        return tuple(s for s in self.sections if s.uncovered)

    def section_at(self, offset: int) -> Section | None:
        """The section whose own text holds `offset`."""
        starts = [s.start for s in self.sections]
        i = bisect.bisect_right(starts, offset) - 1
        return self.sections[i] if i >= 0 and offset < self.sections[i].end else None


def sections_of(doc: Document, stretches: int = STRETCHES) -> tuple[Section, ...]:
    """The document's sections, in text order, with no questions counted yet."""
    text = doc.text
    st = structure_of(doc)
    out: list[Section] = []
    if st.headings:
        first = st.headings[0].start
        if text[:first].strip() and _has_prose(doc, 0, first):
            out.append(Section("(before the first heading)", 0, (), 0, first, first, True))
        starts = [h.start for h in st.headings] + [len(text)]
        for i, h in enumerate(st.headings):
            own_end = starts[i + 1]
            out.append(Section(h.title, h.level, h.path, h.start, own_end, h.section_end,
                               bool(text[h.end:own_end].strip())))
        return tuple(out)
    paras = paragraph_spans(text)
    if not paras:
        return ()
    n = max(1, min(stretches, len(paras)))
    size = len(text) / n
    cut_at: list[int] = []
    for a, _b in paras:
        if not cut_at or (a >= len(cut_at) * size and len(cut_at) < n):
            cut_at.append(a)
    bounds = cut_at + [len(text)]
    for i, a in enumerate(cut_at):
        words = text[a:min(bounds[i + 1], a + 200)].split()
        title = " ".join(words[:6]) + (" …" if len(words) > 6 else "")
        out.append(Section(f"{title}", 1, (title,), a, bounds[i + 1], bounds[i + 1], True))
    return tuple(out)


def _has_prose(doc: Document, a: int, b: int) -> bool:
    """Text outside front matter between a and b (front matter is metadata, not content)."""
    st = structure_of(doc)
    return any(blk.kind != "front_matter" and a <= blk.start < b for blk in st.blocks)


def question_positions(doc: Document, q: GoldQuestion) -> list[int]:
    """Where a question points in `doc`: the starts of its reference spans, else of every
    occurrence of its answers. Empty for a question about another document."""
    if q.source not in (None, doc.doc_id):
        return []
    if q.references:
        return sorted({a for a, _b in q.references if 0 <= a < len(doc.text)})
    nt = normalized_text(doc)
    return sorted({a for ans in q.answers for a, _b in nt.find_all(normalize(ans))})


def coverage(doc: Document, questions: Sequence[GoldQuestion], stretches: int = STRETCHES) -> Coverage:
    """Sections of `doc` with the gold questions about each (see the module docstring)."""
    sections = sections_of(doc, stretches)
    starts = [s.start for s in sections]
    own: list[list[int]] = [[] for _ in sections]
    placed = unplaced = 0
    under: list[set[int]] = [set() for _ in sections]
    for qi, q in enumerate(questions):
        if q.source not in (None, doc.doc_id):
            continue
        pos = question_positions(doc, q)
        if not pos:
            unplaced += 1
            continue
        placed += 1
        for p in pos:
            i = bisect.bisect_right(starts, p) - 1
            if i < 0:
                continue
            if p < sections[i].end and qi not in own[i]:
                own[i].append(qi)
            # Every section enclosing p counts it in its total; none encloses it before the
            # top-level section that does.
            for j in range(i, -1, -1):
                s = sections[j]
                if s.start <= p < s.section_end:
                    under[j].add(qi)
                    if s.level == 1:
                        break
    out = tuple(Section(s.title, s.level, s.path, s.start, s.end, s.section_end, s.has_text,
                        count=len(own[i]), total=len(under[i]), questions=tuple(own[i]))
                for i, s in enumerate(sections))
    return Coverage(out, placed, unplaced)


__all__ = ["Coverage", "Section", "STRETCHES", "coverage", "question_positions", "sections_of"]
