"""Shared by every strategy: turning spans into Chunks with token counts, heading paths and flags."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable

from inspector.core.chunking.chunk import PREFIX_SEPARATOR, STUB_TOKENS, Chunk, new_chunk
from inspector.core.documents.document import Document
from inspector.core.runtime.cancel import check_cancelled
from inspector.core.text.structure import Outline, Structure, outline_of, structure_of
from inspector.core.text.tokens import TokenIndex, token_index

_SENTENCE_END = frozenset(".!?:;\u2026\u3002\uff01\uff1f")
_CLOSERS = frozenset("\"')]}\u2019\u201d*_`|")


def context_prefix(title: str, path: tuple[str, ...]) -> str:
    """"Title > H1 > H2 ..." without repeating the title when the first heading is the title."""
    parts = [title] if title else []
    for i, h in enumerate(path):
        if i == 0 and parts and h.strip().lower() == title.strip().lower():
            continue
        parts.append(h)
    return PREFIX_SEPARATOR.join(parts)


class SpanContext:
    """Per-call helper with the document's cached outline (or structure) and tokens."""

    def __init__(self, doc: Document, also: Callable[[], object] | None = None, *, blocks: bool = False) -> None:
        """`also`: more work for this thread while the text encodes, after the outline (a
        strategy's own index: `fit.prepare_budget`). `blocks`: the strategy reads the
        document's blocks (`structure`), parsed while the text encodes; without it only the
        outline (headings, title, tables) is made, most often without a parse (issue 31)."""
        self.doc = doc
        self.text = doc.text
        # The outline made (and, with `blocks`, the structure parsed) while the text encodes
        # (`token_index`: the scan and the parse hold the GIL, the encodes let go of it).
        made: list[Outline] = []

        def meanwhile() -> None:
            if blocks:
                structure_of(doc)
            made.append(outline_of(doc))
            if also is not None:
                also()

        # The outline alone is short work: this thread then encodes a share of the text after it.
        self.tokens: TokenIndex = token_index(doc, meanwhile, tail=not blocks and also is None)
        self.outline: Outline = made[0]
        #: Exact cl100k count of a span (the hottest call of every strategy: bound once).
        self.count = self.tokens.count
        #: `count` of many spans at once (`TokenIndex.counts`).
        self.counts = self.tokens.counts
        self._prefixes: dict[tuple[str, ...], str] = {}
        self._heading_starts = [h.start for h in self.outline.headings]
        self._heading_ends = [h.end for h in self.outline.headings]
        self._tables = self.outline.tables
        self._table_starts = [a for a, _b in self._tables]

    @property
    def structure(self) -> Structure:
        """The document's parsed structure (blocks and all; parsed now unless `blocks` was asked)."""
        return structure_of(self.doc)

    # -- facts about spans ---------------------------------------------------------------
    def path_for(self, start: int, end: int) -> tuple[str, ...]:
        """Heading path of the span's first content: leading heading lines are skipped, so a
        chunk that opens with "## Parental leave / ### Germany" is about Germany."""
        hs = self._heading_starts
        if not hs:
            return ()
        text = self.text
        p = start
        while p < end:
            while p < end and text[p].isspace():
                p += 1
            i = bisect.bisect_left(hs, p)
            if i < len(hs) and hs[i] == p and self._heading_ends[i] < end:
                p = self._heading_ends[i]
                continue
            break
        return self.outline.heading_path_at(min(p, max(start, end - 1)))

    @property
    def heading_starts(self) -> list[int]:
        """Offsets of the document's headings, in order."""
        return self._heading_starts

    def has_heading_inside(self, start: int, end: int) -> bool:
        hs = self._heading_starts
        i = bisect.bisect_left(hs, start)
        return i < len(hs) and hs[i] < end

    def cuts_mid_sentence(self, start: int, end: int) -> bool:
        """True if the span starts or ends inside a sentence."""
        text = self.text
        n = len(text)
        # End: the text goes on in the same line and the span's last character ends no sentence.
        if end < n:
            last = end - 1
            while last > start and text[last] in _CLOSERS:
                last -= 1
            nxt = end
            while nxt < n and text[nxt] in " \t":
                nxt += 1
            if nxt < n and text[nxt] != "\n" and text[last] not in _SENTENCE_END:
                return True
        # Start: the text before it in the same line ends no sentence.
        if start > 0:
            prev = start - 1
            while prev >= 0 and text[prev] in " \t":
                prev -= 1
            if prev >= 0 and text[prev] != "\n":
                while prev > 0 and text[prev] in _CLOSERS:
                    prev -= 1
                if text[prev] not in _SENTENCE_END:
                    return True
        return False

    def splits_table(self, start: int, end: int) -> bool:
        """True if the span holds part, but not all, of a table."""
        i = bisect.bisect_right(self._table_starts, end) - 1
        while i >= 0:
            t_start, t_end = self._tables[i]
            if t_end <= start:
                # Tables do not nest; earlier ones end earlier still.
                return False
            if t_start < end and t_end > start and not (start <= t_start and t_end <= end):
                return True
            i -= 1
        return False

    def prefix_for(self, start: int, end: int, extra: str = "") -> str:
        """The context prefix `make` gives the span: title > heading path, then `extra` (a table
        header or a list's lead-in carried into a later piece) on its own line."""
        return self._prefix(self.path_for(start, end), extra)

    def _prefix(self, path: tuple[str, ...], extra: str) -> str:
        prefix = self._prefixes.get(path)
        if prefix is None:
            prefix = self._prefixes[path] = context_prefix(self.outline.title, path)
        if extra:
            return f"{prefix}\n{extra}" if prefix else extra
        return prefix

    # -- building ------------------------------------------------------------------------
    def make(self, spans: Iterable[tuple[int, int]], *, budget: int | None = None,
             role: str = "chunk", first_id: int = 0, parent_ids: Iterable[int | None] | None = None,
             extra_flags: Iterable[frozenset[str]] | None = None,
             prefix_extra: Iterable[str] | None = None) -> list[Chunk]:
        """Chunks for spans (already trimmed, in order), with counts, paths, prefixes and flags."""
        has_headings = bool(self._heading_starts)
        out: list[Chunk] = []
        parents = iter(parent_ids) if parent_ids is not None else None
        extras = iter(extra_flags) if extra_flags is not None else None
        pextra = iter(prefix_extra) if prefix_extra is not None else None
        doc_id = self.doc.doc_id
        page_starts = self.doc.meta.get("page_starts") if self.doc.meta else None
        spans = spans if isinstance(spans, list) else list(spans)
        for k, ((a, b), tokens) in enumerate(zip(spans, self.counts(spans), strict=True)):
            if not k & 255:
                check_cancelled()
            path = self.path_for(a, b)
            flags = set(next(extras)) if extras is not None else set()
            if has_headings and not self.has_heading_inside(a, b):
                flags.add("no_heading")
            if self.cuts_mid_sentence(a, b):
                flags.add("cut_mid_sentence")
            if self._tables and self.splits_table(a, b):
                flags.add("split_table")
            if budget is not None and tokens > budget:
                flags.add("over_budget")
            if tokens < STUB_TOKENS:
                flags.add("stub")
            prefix = self._prefix(path, next(pextra) if pextra is not None else "")
            meta = {}
            if page_starts:
                # Link back to the source's pages (1-based) for converted PDFs.
                meta = {"page": bisect.bisect_right(page_starts, a),
                        "page_end": bisect.bisect_right(page_starts, max(a, b - 1))}
            out.append(new_chunk(first_id + k, a, b, tokens, path, prefix,
                                 next(parents) if parents is not None else None, frozenset(flags), role,
                                 doc_id, meta))
        return out


def trim(text: str, a: int, b: int) -> tuple[int, int]:
    """Span without leading/trailing whitespace (may become empty: a == b)."""
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def is_blank(text: str, a: int, b: int) -> bool:
    return text[a:b].isspace() or a >= b
