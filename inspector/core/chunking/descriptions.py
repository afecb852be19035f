"""Contextual descriptions: a short text situating each chunk in its document, embedded with it.

"Contextual retrieval" prepends to every chunk a sentence or two about where it sits in the
document before embedding it. `with_descriptions` does that by putting the description into the
chunk's `prefix`, so `Chunk.embedded_text` (what the embedder and BM25 see) includes it while the
span, the highlighted text and the token count of the chunk stay what they were.

THIS CHANGES WHAT IS EMBEDDED. Run the gold set with and without descriptions to measure what
they do to the hit rate; that comparison is the point of this module.

A `Describer` is any `(chunk, document) -> str`: an LLM call in a user's pipeline, or the
deterministic `extractive_describer` here (no model, no network): the title and heading path, the
first sentence of the chunk's section, and the section's most distinctive words by tf-idf against
the rest of the document.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from inspector.core.chunking.chunk import PREFIX_SEPARATOR, Chunk
from inspector.core.documents.document import Document
from inspector.core.runtime.lru import SizedLRU
from inspector.core.text.structure import Structure, sentence_spans, structure_of

#: Describes one chunk of one document; the result is added to the chunk's prefix.
Describer = Callable[[Chunk, Document], str]

KEYWORDS = 5
MAX_SENTENCE_CHARS = 200

_WORD_RE = re.compile(r"[^\W\d_][\w'\u2019-]*[^\W_]|[^\W\d_]")
_STOPWORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had
has have having he her here hers herself him himself his how i if in into is it its itself just
me more most my myself no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these they
this those through to too under until up upon very was we were what when where which while who
whom why will with would you your yours yourself yourselves may must shall per via within without
""".split())


def words(text: str) -> list[str]:
    """Lower-cased words of 3+ letters, stop words left out (the tf-idf vocabulary)."""
    return [w for w in (m.group(0).lower() for m in _WORD_RE.finditer(text))
            if len(w) >= 3 and w not in _STOPWORDS]


@dataclass(frozen=True, slots=True)
class _Section:
    start: int
    """Offset of the section's text (after its heading line)."""
    end: int
    path: tuple[str, ...]


class _DocIndex:
    """Per document: its sections (the units of document frequency) and their word counts."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.structure: Structure = structure_of(doc)
        text = doc.text
        heads = self.structure.headings
        units: list[tuple[int, int]] = []
        if len(heads) >= 2:
            # Leaf-level units: text between one heading and the next, whatever the level.
            bounds = [h.start for h in heads] + [len(text)]
            if heads[0].start > 0:
                units.append((0, heads[0].start))
            units.extend((bounds[k], bounds[k + 1]) for k in range(len(heads)))
        else:
            from inspector.core.text.structure import paragraph_spans

            units = paragraph_spans(text) or [(0, len(text))]
        self.df: Counter[str] = Counter()
        for a, b in units:
            self.df.update(set(words(text[a:b])))
        self.n_units = max(len(units), 1)

    def keywords(self, start: int, end: int, k: int = KEYWORDS) -> list[str]:
        """The k words of text[start:end] with the highest tf-idf (ties: first occurrence)."""
        ws = words(self.doc.text[start:end])
        if not ws:
            return []
        tf = Counter(ws)
        first: dict[str, int] = {}
        for pos, w in enumerate(ws):
            first.setdefault(w, pos)
        n = self.n_units

        def score(w: str) -> float:
            return tf[w] * (math.log((1 + n) / (1 + self.df.get(w, 0))) + 1.0)

        return sorted(tf, key=lambda w: (-score(w), first[w]))[:k]

    def section_of(self, chunk: Chunk) -> _Section:
        """The section the chunk is about: the heading of its first content (as heading paths are)."""
        heads = self.structure.headings
        text = self.doc.text
        p = chunk.start
        starts = [h.start for h in heads]
        while p < chunk.end:
            while p < chunk.end and text[p].isspace():
                p += 1
            i = bisect.bisect_left(starts, p)
            if i < len(heads) and heads[i].start == p and heads[i].end < chunk.end:
                p = heads[i].end
                continue
            break
        h = self.structure.heading_at(min(p, max(chunk.start, chunk.end - 1)))
        if h is None:
            end = heads[0].start if heads else len(text)
            return _Section(0, end, ())
        return _Section(h.end, h.section_end, h.path)

    def first_sentence(self, start: int, end: int) -> tuple[int, int] | None:
        """The first sentence of running text in [start, end): headings, tables, code skipped."""
        for a, b in sentence_spans(self.doc.text, start, end, markdown=self.doc.kind == "markdown"):
            s = self.doc.text[a:b]
            if s.startswith(("#", "|", "```", "~~~", "---", "<")) or len(words(s)) < 2:
                continue
            return a, b
        return None


#: Section indexes of at most 16 documents and 32 M characters.
_INDEXES: SizedLRU[_DocIndex] = SizedLRU(16, 32_000_000)


def _index(doc: Document) -> _DocIndex:
    return _INDEXES.get_or_make((doc.sha256, doc.kind, doc.name), lambda: _DocIndex(doc), len(doc.text))


def _shorten(s: str, limit: int = MAX_SENTENCE_CHARS) -> str:
    s = " ".join(s.split())
    if len(s) <= limit:
        return s
    cut = s.rfind(" ", 0, limit)
    return s[: cut if cut > limit // 2 else limit].rstrip(",;:") + "\u2026"


def extractive_describer(chunk: Chunk, doc: Document) -> str:
    """Deterministic context for a chunk, three lines (each left out when empty):

        Handbook > Leave > Germany
        Section: Employees in Germany get 14 weeks of parental leave.
        Keywords: elterngeld, weeks, germany, parental, leave

    The first line is the title and heading path; the second the first sentence of the chunk's
    section (left out when the chunk itself contains it); the third the section's top words by
    tf-idf against the document's other sections (for a document without headings, the chunk's
    own words against its paragraphs, and the document's first sentence as the "section").
    """
    idx = _index(doc)
    title = idx.structure.title
    section = idx.section_of(chunk)
    parts = [title] if title else []
    for i, h in enumerate(section.path):
        if not (i == 0 and parts and h.strip().lower() == title.strip().lower()):
            parts.append(h)
    lines = [PREFIX_SEPARATOR.join(parts)] if parts else []
    sent = idx.first_sentence(section.start, section.end)
    if sent is not None and not (chunk.start <= sent[0] and sent[1] <= chunk.end):
        lines.append("Section: " + _shorten(doc.text[sent[0]:sent[1]]))
    kw = idx.keywords(section.start, section.end) if section.path else idx.keywords(chunk.start, chunk.end)
    if kw:
        lines.append("Keywords: " + ", ".join(kw))
    return "\n".join(lines)


def with_descriptions(doc: Document, chunks: Iterable[Chunk], describer: Describer = extractive_describer,
                      *, replace_prefix: bool = False) -> tuple[Chunk, ...]:
    """Chunks whose prefix carries the describer's text, so `embedded_text` includes it.

    By default the description is added after the existing prefix (title > heading path, and a
    split table's header), leaving out a first line that repeats the prefix's first line (the
    extractive describer starts with the heading path, as the prefix does). `replace_prefix=True`
    makes the description the whole prefix. The description is also kept in `meta["description"]`.
    Word-piece measurements (`embed_tokens`, `truncated_by_embedder`) are reset: they were for
    the old prefix; measure again.
    """
    out: list[Chunk] = []
    for c in chunks:
        desc = (describer(c, doc) or "").strip()
        if not desc:
            out.append(c)
            continue
        if replace_prefix or not c.prefix:
            prefix = desc
        else:
            head, _, rest = desc.partition("\n")
            desc_extra = rest.strip() if head.strip() == c.prefix.split("\n", 1)[0].strip() else desc
            prefix = f"{c.prefix}\n{desc_extra}" if desc_extra else c.prefix
        out.append(replace(c, prefix=prefix, embed_tokens=None, embed_dropped=0, truncated_at=None,
                           flags=c.flags - {"truncated_by_embedder"}, meta={**c.meta, "description": desc}))
    return tuple(out)
