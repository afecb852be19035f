"""Drafted questions: candidate gold questions proposed from a document's structure and facts, for a
person to accept, edit or reject one at a time. No network, no language model: rules over the text.

Why drafts and not a gold set: a question written by rules from the very sentence that answers it
shares that sentence's words, so lexical retrieval finds it more easily than a user's question, and
the rules know nothing of what users ask. How far a drafted set can stand in for a human one was
measured (`benchmarks/drafted_gold.py`, figures in `MEASUREMENT`): the window shows drafts as a
separate, labelled list and a draft joins the gold set only when accepted, one by one.

What is drafted, each with its exact answer (a substring of the text, at `answer_span`) and the
passage that holds it (`reference`, which contains the answer):

* facts in sentences, as cloze questions: an amount of money, a percentage, a duration ("14
  months"), a date, a time of day, a quantity with a unit, a count ("420 people"), a year after
  "in"/"since"..., a capitalised name; the question is the sentence (or a window of it) with the
  answer blanked and a question word before it, "How long (Parental leave › Germany): ... ___ ...?";
* table cells: "What is the <column> for <first cell of the row>?", the row as the reference;
* list items that define a term (``**Term.** text``, ``Term: text``): "What is meant by “Term”?";
* a section's key sentence (the one among its first sentences sharing most words with the heading):
  "What is said about <heading> (<parent heading>)?";
* in a text without headings, a sentence without any fact: "What does the text say about <its
  three rarest words>?".

Every answer occurs exactly once in the document (case and whitespace aside): a fact that occurs
elsewhere is widened by whole words within its sentence until it is unique, and dropped if it never
becomes so, because a hit is decided by finding the answer in a retrieved chunk. One draft per
sentence (or table row), no two with the same question or answer. The result is deterministic: the
same text gives the same drafts in the same order.

Drafts read as a person would write them (issue 26): questions are made from the sentence as a
reader sees it (`inspector.core.text.plain`: link text kept, link targets, template tags, HTML
tags, code ticks and emphasis marks dropped), and facts are looked for there too, so an address
inside a link is no fact. An answer is still an exact substring of the document, so it lies in a
stretch without markup, and it is a whole phrase: its brackets are balanced ("182 Hours (96 Hours
Use or Lose)", never "182 Hours (96"), widening never leaves the brackets a fact stands in, and a
question's context cut at a bracket drops the parenthesis rather than half of it.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass

from inspector.core.documents.document import Document
from inspector.core.evaluation.gold import GoldQuestion, normalize, normalized_text
from inspector.core.text.plain import Plain, plain, plain_text
from inspector.core.text.structure import Block, Structure, sentence_spans, structure_of

#: What the benchmark found (benchmarks/drafted_gold.py; benchmarks/README.md, "Drafted gold sets").
#: Shown in the drafts panel, one line. Update it with the figures whenever the generator changes.
MEASUREMENT = ("Measured on Chroma's benchmark: 500 unreviewed drafts rank chunking settings unlike its 472 "
               "human-checked questions (recall@5 over 12 settings, MiniLM: Spearman ρ = +0.30, 95 % CI "
               "−0.07 to +0.66; BM25, 26 settings: −0.27). Review them; they cannot choose settings alone.")

KINDS = ("table", "money", "percent", "duration", "date", "time", "quantity", "count", "term", "year",
         "name", "section", "keywords")
"""Draft kinds, most trusted first: a section's pick goes to the earliest kind it has."""
_PRIORITY = {k: i for i, k in enumerate(KINDS)}

_WH = {"money": "How much", "percent": "What percentage", "duration": "How long", "date": "When",
       "time": "At what time", "quantity": "How much", "year": "In what year", "name": "Who or what"}


@dataclass(frozen=True, slots=True)
class Draft:
    """A proposed gold question, not yet reviewed."""

    question: str
    """The proposed question (a cloze or a templated question; the reviewer may rewrite it)."""
    answer: str
    """Exactly `text[answer_span[0]:answer_span[1]]` of the document; occurs once in it."""
    answer_span: tuple[int, int]
    """Code-point span of the answer."""
    reference: tuple[int, int]
    """The passage that holds the answer (its sentence, table row or list item); contains it."""
    source: str
    """doc_id of the document."""
    kind: str
    """One of KINDS: what rule proposed it."""
    heading_path: tuple[str, ...] = ()
    """Headings above the answer (empty in a text without headings)."""

    def to_gold(self, question: str | None = None) -> GoldQuestion:
        """The gold question this draft becomes once accepted (with an edited question, if any)."""
        return GoldQuestion(question=(question if question is not None else self.question).strip(),
                            answers=(self.answer,), source=self.source, references=(self.reference,))


# -- facts -------------------------------------------------------------------------------------------

_NUMBER_WORDS = ("one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|eighteen|"
                 "twenty|thirty|forty|fifty|sixty|ninety|hundred")
_NUM = r"\d[\d,]*(?:\.\d+)?"
_MONTHS = ("January|February|March|April|May|June|July|August|September|October|November|December|"
           "Jan\\.?|Feb\\.?|Mar\\.?|Apr\\.?|Jun\\.?|Jul\\.?|Aug\\.?|Sept?\\.?|Oct\\.?|Nov\\.?|Dec\\.?")
_UNITS = ("km/h|mph|km|kg|mg|µg|ml|mm|cm|m²|m|g|l|GB|MB|TB|kB|KB|GHz|MHz|Hz|kWh|kW|W|V|mA|°C|°F|"
          "nm|µm|mmol|mol|kDa|bp|kb|ms")

#: (kind, pattern): earlier kinds win where matches overlap.
_FACTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("money", re.compile(
        rf"(?:[$€£¥]\s?{_NUM}(?:\s?(?:million|billion|thousand|trillion|bn|m|k)\b)?"
        rf"|\b{_NUM}\s?(?:million |billion |thousand )?(?:euros?|EUR|USD|dollars|pounds|GBP|CHF)\b)")),
    ("percent", re.compile(rf"\b{_NUM}\s?(?:%|percent\b|per cent\b)")),
    ("duration", re.compile(
        rf"\b(?:{_NUM}|{_NUMBER_WORDS})(?:\s?[-–]\s?(?:{_NUM}|{_NUMBER_WORDS}))?[ -]"
        r"(?:(?:calendar|working|business|full|consecutive)\s)?"
        r"(?:days?|weeks?|months?|years?|hours?|minutes?|seconds?|nights?|quarters?)\b", re.IGNORECASE)),
    ("date", re.compile(
        rf"\b(?:\d{{1,2}}\s(?:{_MONTHS})(?:,?\s\d{{4}})?|(?:{_MONTHS})\s\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s\d{{4}})?"
        rf"|(?:{_MONTHS})\s\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}})\b")),
    ("time", re.compile(r"\b\d{1,2}:\d{2}(?:\s?[-–]\s?\d{1,2}:\d{2})?(?:\s?[ap]\.?m\.?)?")),
    ("quantity", re.compile(rf"\b{_NUM}\s?(?:{_UNITS})(?![\w/])")),
    ("count", re.compile(
        rf"\b(?:{_NUM}|{_NUMBER_WORDS})\s(?:(?:new|more|full-time|active|additional|other|different)\s)?"
        r"(?P<noun>[a-z][a-z-]{2,}s)\b")),
    ("year", re.compile(r"\b(?:in|since|by|from|until|before|after|founded in|established in)\s"
                        r"(?P<year>(?:1[6-9]|20)\d{2})\b")),
    ("name", re.compile(r"(?<![\w.])(?:[A-Z][a-z]+(?:[ -](?:de |van |von |der |la )?[A-Z][a-z]+)+)\b")),
)
_COUNT_STOP = frozenset("""times items things ones cases others years days weeks months hours minutes
                          seconds nights quarters ways steps parts percent units""".split())

_STOPWORDS = frozenset("""a an and are as at be been but by can could did do does for from had has have
    he her his how i if in into is it its may might more most must no not of on or our out over she
    should so some such than that the their them then there these they this those to under up was we
    were what when where which while who will with would you your yours also any all each other about
    after before between during only same very just can't don't it's per every each up than or""".split())

#: Words that modify the number after them: an answer widened to the left takes them first.
_MODIFIERS = frozenset("""than to up about around over under at least most more less no approximately
                          nearly almost roughly some only just within after before""".split())

_WORD_RE = re.compile(r"\S+")
_ALPHA_WORD_RE = re.compile(r"[^\W\d_][\w'’-]*")
_TERM_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s+(?:\*\*(?P<b>[^*\n]{2,60}?)\*\*|__(?P<u>[^_\n]{2,60}?)__"
                      r"|`(?P<c>[^`\n]{2,60})`|(?P<p>[^:\n*`]{2,60}):\s)")
_TRAIL = ",;:.!?)]}\"'”’–—-"
_LEAD = "([{\"'“‘"
_OPEN, _CLOSE = "([{", ")]}"
_BRACKET_RE = re.compile(r"[()\[\]{}]")

#: A sentence is drafted from if it has at least this many words, mostly words (not numbers or markup).
MIN_WORDS = 5
#: Context kept around a blank, in words each side, when the sentence is long.
CONTEXT_WORDS = 14
#: How many words an answer may be widened by to make it unique in the document.
MAX_WIDEN = 6


class _Plains:
    """Spans of a document as read (`plain_text`), each made once: a sentence is read for its
    facts, its answer's room and its question. Text files too: Markdown and HTML are what text
    copied from the web is full of, and a question was always cleaned of them."""

    def __init__(self, doc: Document) -> None:
        self.text = doc.text
        self._made: dict[tuple[int, int], Plain] = {}

    def __call__(self, a: int, b: int) -> Plain:
        got = self._made.get((a, b))
        if got is None:
            got = self._made[(a, b)] = plain_text(self.text, a, b)
        return got


@dataclass(frozen=True, slots=True)
class _Candidate:
    kind: str
    answer_span: tuple[int, int]
    reference: tuple[int, int]
    question: str
    """For cloze kinds: the question word (the cloze is built once the answer is final)."""


def draft_questions(doc: Document, *, limit: int | None = None, kinds: Collection[str] | None = None,
                    context_words: int = CONTEXT_WORDS) -> tuple[Draft, ...]:
    """Drafted questions for `doc`, in text order.

    `limit` keeps at most that many, spread over the document: sections (or, without headings,
    equal stretches of the text) take turns, each giving its most trusted remaining draft, so a
    long first chapter does not take them all. `kinds` keeps only those kinds (see KINDS).
    `context_words`: words of the sentence kept either side of a cloze's blank."""
    if limit is not None and limit <= 0:
        return ()
    wanted = frozenset(kinds) if kinds is not None else frozenset(KINDS)
    unknown = wanted - frozenset(KINDS)
    if unknown:
        raise ValueError(f"unknown draft kinds: {', '.join(sorted(unknown))} (known: {', '.join(KINDS)})")
    st = structure_of(doc)
    plains = _Plains(doc)
    cands = [c for c in _candidates(doc, st, wanted, plains) if c.kind in wanted]
    groups = _group(doc, st, cands, limit)
    out: list[Draft] = []
    seen_q: set[str] = set()
    seen_a: set[str] = set()
    seen_ref: set[tuple[int, int]] = set()
    # Groups take turns (`_spread_order`); inside a group, the most trusted kind first, then text order.
    queues = [sorted(g, key=lambda c: (_PRIORITY[c.kind], c.reference[0], c.answer_span)) for g in groups]
    pos = [0] * len(queues)
    live = _spread_order(len(queues), limit)
    while live and (limit is None or len(out) < limit):
        nxt: list[int] = []
        for gi in live:
            if limit is not None and len(out) >= limit:
                break
            q = queues[gi]
            while pos[gi] < len(q):
                cand = q[pos[gi]]
                pos[gi] += 1
                if cand.reference in seen_ref:
                    continue
                d = _finish(doc, st, cand, context_words, plains)
                if d is None:
                    continue
                kq, ka = normalize(d.question), normalize(d.answer)
                if kq in seen_q or ka in seen_a:
                    continue
                seen_q.add(kq)
                seen_a.add(ka)
                seen_ref.add(d.reference)
                out.append(d)
                break
            if pos[gi] < len(q):
                nxt.append(gi)
        live = nxt
    out.sort(key=lambda d: (d.answer_span, d.reference))
    return tuple(out)


def _spread_order(n: int, limit: int | None) -> list[int]:
    """The order groups take turns in: with fewer drafts wanted than groups, first `limit` groups
    evenly spaced over the document (not the first `limit` sections), then the rest."""
    if limit is None or limit >= n:
        return list(range(n))
    first = sorted({min(n - 1, int((i + 0.5) * n / limit)) for i in range(limit)})
    chosen = set(first)
    return first + [g for g in range(n) if g not in chosen]


# -- where candidates come from ------------------------------------------------------------------------

def _prose_units(doc: Document, st: Structure) -> Iterator[tuple[int, int, Block | None]]:
    """Spans of running text: paragraphs, list items, block quotes (markdown); paragraphs (text)."""
    if doc.kind != "markdown":
        for b in st.blocks:
            yield b.start, b.end, None
        return
    for b in st.blocks:
        if b.kind in ("paragraph", "blockquote"):
            yield b.start, b.end, None
        elif b.kind == "list":
            for item in b.children or (b,):
                yield item.start, item.end, item


def _words_ok(text: str) -> bool:
    words = text.split()
    if len(words) < MIN_WORDS:
        return False
    alpha = sum(1 for w in words if _ALPHA_WORD_RE.match(w))
    return alpha * 2 >= len(words)


def _candidates(doc: Document, st: Structure, wanted: frozenset[str], plains: _Plains) -> Iterator[_Candidate]:
    text = doc.text
    md = doc.kind == "markdown"
    fact_kinds = [(k, p) for k, p in _FACTS if k in wanted]
    factless: list[tuple[int, int]] = []
    for ua, ub, item in _prose_units(doc, st):
        if item is not None and "term" in wanted:
            term = _term_candidate(text, item, plains)
            if term is not None:
                yield term
        for sa, sb in sentence_spans(text, ua, ub, markdown=md):
            pl = plains(sa, sb)
            if not _words_ok(pl.text):
                continue
            found = list(_facts_in(pl, (sa, sb), fact_kinds))
            yield from found
            if not found:
                factless.append((sa, sb))
    if md:
        if "table" in wanted:
            for b in st.blocks:
                if b.kind == "table":
                    yield from _table_candidates(text, b, plains)
        if "section" in wanted:
            yield from _section_candidates(text, st, plains)
    elif "keywords" in wanted and not st.headings:
        yield from _keyword_candidates(text, factless, plains)


def _facts_in(pl: Plain, sentence: tuple[int, int], kinds: list[tuple[str, re.Pattern[str]]]) -> Iterator[_Candidate]:
    """Facts in the sentence as read (`pl`): one inside a link's address is none, and one with
    markup inside ("**3** days") is not a substring of the document, so it is not asked about."""
    taken: list[tuple[int, int]] = []
    read = pl.text
    for kind, pat in kinds:
        for m in pat.finditer(read):
            group = "year" if kind == "year" else 0
            a, b = m.span(group)
            if kind == "count" and m.group("noun").lower() in _COUNT_STOP:
                continue
            if any(a < tb and ta < b for ta, tb in taken):
                continue
            taken.append((a, b))
            span = pl.span(a, b)
            if span is None:
                continue
            if kind == "name" and span[0] == sentence[0]:
                continue  # a capitalised sentence start is no name (after a list marker or "**", it is)
            wh = f"How many {m.group('noun')}" if kind == "count" else _WH[kind]
            yield _Candidate(kind, span, sentence, wh)


def _term_candidate(text: str, item: Block, plains: _Plains) -> _Candidate | None:
    """`- **Term.** Definition...` or `- Term: definition`: the definition's first words answer
    "What is meant by “Term”?" (the term as read: "[10X](https://10x.gsa.gov/)" is "10X")."""
    line_end = text.find("\n", item.start, item.end)
    line = text[item.start: line_end if line_end != -1 else item.end]
    m = _TERM_RE.match(line)
    if m is None:
        return None
    name = next(g for g in m.group("b", "u", "c", "p") if g is not None)
    term = _clean(name).rstrip(".:")
    if not term or len(term.split()) > 8 or not _ALPHA_WORD_RE.search(term) or not _balanced(term):
        return None
    a = item.start + m.end()
    while a < item.end and text[a] in " \t*_`.:":
        a += 1
    sents = sentence_spans(text, a, item.end, markdown=True)
    if not sents:
        return None
    span = _first_words(text, plains(*sents[0]), 12)
    if span is None:
        return None
    return _Candidate("term", span, (item.start, item.end), f"What is meant by “{term}”")


def _table_cells(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """Cell spans of a table row (trimmed; escaped pipes stay inside cells)."""
    cuts = [i for i in range(a, b) if text[i] == "|" and (i == a or text[i - 1] != "\\")]
    bounds = [a] + [c + 1 for c in cuts]
    ends = cuts + [b]
    cells: list[tuple[int, int]] = []
    for s, e in zip(bounds, ends, strict=True):
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        cells.append((s, e))
    # A row written `| a | b |` has empty cells outside its first and last pipe.
    if cells and cuts and cuts[0] == _skip_space(text, a, b) and cells[0][0] == cells[0][1]:
        cells = cells[1:]
    if cells and cuts and text[b - 1] == "|" and cells[-1][0] == cells[-1][1]:
        cells = cells[:-1]
    return cells


def _cell_text(text: str, pl: Plain) -> tuple[int, int] | None:
    """The span of what a cell reads as, when that is one piece of the document (emphasis or a
    link around it is fine; markup inside it is not)."""
    runs = [r for r in pl.runs if pl.text[r[0]:r[1]].strip()]
    if len(runs) != 1 or pl.text[runs[0][0]:runs[0][1]].strip() != pl.text.strip():
        return None
    span = pl.span(*runs[0])
    return _trim(text, *span) if span is not None else None


def _skip_space(text: str, a: int, b: int) -> int:
    while a < b and text[a].isspace():
        a += 1
    return a


def _table_candidates(text: str, table: Block, plains: _Plains) -> Iterator[_Candidate]:
    rows = table.children
    if len(rows) < 2 or rows[0].level != 0:
        return
    header = [_clean(text[s:e]) for s, e in _table_cells(text, rows[0].start, rows[0].end)]
    for row in rows[1:]:
        cells = _table_cells(text, row.start, row.end)
        if len(cells) < 2 or len(cells) > len(header):
            continue
        key = _clean(text[cells[0][0]:cells[0][1]])
        if not key or not _ALPHA_WORD_RE.search(key):
            continue
        for col, (s, e) in enumerate(cells[1:], 1):
            if s >= e:
                continue
            inside = _cell_text(text, plains(s, e))  # "**40**" answers as "40"
            if inside is None:
                continue
            s, e = inside
            value = text[s:e]
            column = header[col] if col < len(header) else ""
            if not column or len(normalize(value)) < 2 or value.strip("-–— ") == "":
                continue
            # "<row> — <column>": a header may be a noun ("Address") or a name ("Germany"),
            # which no template of "What is the ... for ...?" reads well for both.
            yield _Candidate("table", (s, e), (row.start, row.end), f"{key} — {column}")


def _section_candidates(text: str, st: Structure, plains: _Plains) -> Iterator[_Candidate]:
    """Each section's key sentence: of its first three sentences, the one sharing most words with
    its heading (the first on a tie)."""
    starts = [h.start for h in st.headings] + [len(text)]
    for i, h in enumerate(st.headings):
        own_end = starts[i + 1]
        blocks = [b for b in st.blocks if h.end <= b.start < own_end and b.kind in ("paragraph", "list")]
        sents: list[tuple[int, int]] = []
        for b in blocks:
            for s in sentence_spans(text, b.start, b.end, markdown=True):
                if _words_ok(plains(*s).text):
                    sents.append(s)
            if len(sents) >= 3:
                break
        if not sents:
            continue
        title_words = _content_words(_clean(h.title))
        best = max(sents[:3], key=lambda s: (len(title_words & _content_words(plains(*s).text)), -s[0]))
        span = _first_words(text, plains(*best), 12)
        title = _clean(h.title)
        if span is None or not title:
            continue
        parent = f" ({_clean(h.path[-2])})" if len(h.path) > 1 else ""
        yield _Candidate("section", span, best, f"What is said about {title}{parent}")


def _keyword_candidates(text: str, sentences: list[tuple[int, int]], plains: _Plains) -> Iterator[_Candidate]:
    """A sentence with no fact, asked about by its three rarest words (in the document)."""
    freq: dict[str, int] = {}
    for w in _ALPHA_WORD_RE.findall(text.lower()):
        freq[w] = freq.get(w, 0) + 1
    for sa, sb in sentences:
        words: list[str] = []
        for w in _ALPHA_WORD_RE.findall(plains(sa, sb).text):
            lw = w.lower()
            if len(lw) >= 4 and lw not in _STOPWORDS and lw not in words:
                words.append(lw)
        if len(words) < 3:
            continue
        rare = sorted(words, key=lambda w: (freq.get(w, 0), words.index(w)))[:3]
        rare.sort(key=words.index)
        span = _first_words(text, plains(sa, sb), 12)
        if span is None:
            continue
        yield _Candidate("keywords", span, (sa, sb),
                         f"What does the text say about {rare[0]}, {rare[1]} and {rare[2]}")


# -- finishing a candidate ----------------------------------------------------------------------------

def _group(doc: Document, st: Structure, cands: list[_Candidate], limit: int | None) -> list[list[_Candidate]]:
    """Candidates by section (heading index), else by equal stretches of the text."""
    if st.headings:
        starts = [h.start for h in st.headings]

        def key(c: _Candidate) -> int:
            return bisect.bisect_right(starts, c.reference[0])
    else:
        n = max(1, limit or 1)
        size = max(1, len(doc.text))

        def key(c: _Candidate) -> int:
            return c.reference[0] * n // size
    groups: dict[int, list[_Candidate]] = {}
    for c in cands:
        groups.setdefault(key(c), []).append(c)
    return [groups[k] for k in sorted(groups)]


def _finish(doc: Document, st: Structure, c: _Candidate, context_words: int, plains: _Plains) -> Draft | None:
    """The draft for a candidate: its answer widened until unique (or None), and the question."""
    text = doc.text
    span = _trim(text, *c.answer_span)
    if span is None:
        return None
    # Where the answer may grow: the piece of its sentence without markup that holds it, inside
    # the brackets the fact stands in ("in 2024" of "($191,900 in 2024)", not "2024), you").
    room = _room(text, span, plains(*c.reference))
    if room is None:
        return None
    span = _balance(text, *span, *room)
    if span is None:
        return None
    # A table cell is not widened (its neighbours are other columns), nor a name (a name that
    # occurs twice is asked about twice; "to Kestrelbrook" is no better an answer).
    span = _unique(doc, span, span if c.kind in ("table", "name") else room)
    if span is None:
        return None
    a, b = span
    path = st.heading_path_at(a)
    if c.kind in _WH or c.kind == "count":
        question = _cloze(text, c, span, path, context_words, plains(*c.reference))
        if not question:
            return None
    elif c.kind == "table" and path:
        question = f"{c.question} ({_where(path)})?"
    else:
        question = c.question + "?"
    question = " ".join(question.split())
    if not question or normalize(question) == normalize(text[a:b]) or not _balanced(question):
        return None
    return Draft(question=question, answer=text[a:b], answer_span=(a, b), reference=c.reference,
                 source=doc.doc_id, kind=c.kind, heading_path=path)


def _where(path: tuple[str, ...]) -> str:
    """The last two headings above a draft, as read."""
    return " › ".join(t for t in (_clean(p) for p in path[-2:]) if t)


# -- brackets ------------------------------------------------------------------------------------------

def _unmatched(s: str) -> tuple[list[int], list[int]]:
    """Indices in `s` of closing brackets without their opening one, and of opening brackets never
    closed (a closer of another kind than the open one counts as unmatched)."""
    if _BRACKET_RE.search(s) is None:
        return [], []
    openers: list[int] = []
    closers: list[int] = []
    for i, ch in enumerate(s):
        if ch in _OPEN:
            openers.append(i)
        elif ch in _CLOSE:
            if openers and _OPEN.index(s[openers[-1]]) == _CLOSE.index(ch):
                openers.pop()
            else:
                closers.append(i)
    return closers, openers


def _balanced(s: str) -> bool:
    closers, openers = _unmatched(s)
    return not closers and not openers


def _balance(text: str, a: int, b: int, lo: int, hi: int) -> tuple[int, int] | None:
    """[a, b) grown inside [lo, hi) to the brackets its own brackets pair with, and to whole words,
    adding at most MAX_WIDEN words: "182 Hours (96" becomes "182 Hours (96 Hours Use or Lose)";
    None when the partner is not there or too far."""
    closers, openers = _unmatched(text[a:b])
    na, nb = a, b
    if openers:
        depth = len(openers)
        k = b
        while k < hi and depth:
            depth += (text[k] in _OPEN) - (text[k] in _CLOSE)
            k += 1
        if depth:
            return None
        nb = k
    if closers:
        depth = len(closers)
        k = a
        while k > lo and depth:
            k -= 1
            depth += (text[k] in _CLOSE) - (text[k] in _OPEN)
        if depth:
            return None
        na = k
    if (na, nb) == (a, b):
        return a, b
    while na > lo and not text[na - 1].isspace():
        na -= 1
    while nb < hi and not text[nb].isspace():
        nb += 1
    grown = _trim(text, na, nb)
    if grown is None or not _balanced(text[grown[0]:grown[1]]):
        return None
    if len(text[grown[0]:grown[1]].split()) - len(text[a:b].split()) > MAX_WIDEN:
        return None
    return grown


def _room(text: str, span: tuple[int, int], pl: Plain) -> tuple[int, int] | None:
    """The span of the piece without markup of a sentence (`pl`) that holds `span`, narrowed to
    the innermost brackets around `span`; None when markup runs through `span`."""
    a, b = span
    i = pl.at(a)
    for ri, rj in pl.runs:
        if ri <= i < rj:
            ri, rj = _whole_words(pl, ri, rj)
            piece = pl.span(ri, rj) if ri < rj else None
            break
    else:
        return None
    if piece is None or a < piece[0] or b > piece[1]:
        return None
    lo, hi = piece
    depth = 0
    for k in range(a - 1, lo - 1, -1):
        if text[k] in _CLOSE:
            depth += 1
        elif text[k] in _OPEN:
            if depth == 0:
                lo = k + 1
                break
            depth -= 1
    depth = 0
    for k in range(b, hi):
        if text[k] in _OPEN:
            depth += 1
        elif text[k] in _CLOSE:
            if depth == 0:
                hi = k
                break
            depth -= 1
    return lo, hi


def _whole_words(pl: Plain, i: int, j: int) -> tuple[int, int]:
    """Run [i, j) of `pl` without a part-word at either end: where markup or an escape splits a
    word ("it\\'s" reads "it's", but the document's "it" and "'s" are two runs), the part goes."""
    def wordish(ch: str) -> bool:
        return ch.isalnum() or ch in "'’"

    if i > 0 and i < j and wordish(pl.text[i - 1]) and wordish(pl.text[i]):
        i = next((k for k in range(i, j) if pl.text[k].isspace()), j)
    if j < len(pl.text) and i < j and wordish(pl.text[j]) and wordish(pl.text[j - 1]):
        j = next((k for k in range(j - 1, i - 1, -1) if pl.text[k].isspace()), i)
    return i, j


# -- answers -------------------------------------------------------------------------------------------

def _trim(text: str, a: int, b: int) -> tuple[int, int] | None:
    """[a, b) without spaces and punctuation at its ends; a bracket stays when its partner is
    inside ("(LWOP) of less than four weeks")."""
    while a < b:
        ch = text[a]
        if ch.isspace() or (ch in _LEAD and ch not in _OPEN) or ch in ",;:.!?–—" \
                or (ch == "-" and a + 1 < b and text[a + 1].isspace()):
            a += 1  # ", and you work 8 hours" after a link starts at "and"; "- recent trips" at "recent"
        elif ch in _OPEN and 0 in _unmatched(text[a:b])[1]:
            a += 1
        elif ch in _CLOSE:
            a += 1  # a closer cannot start a phrase
        else:
            break
    while b > a:
        ch = text[b - 1]
        if ch.isspace() or (ch in _TRAIL and ch not in _CLOSE):
            b -= 1
        elif ch in _CLOSE and b - 1 - a in _unmatched(text[a:b])[0]:
            b -= 1
        elif ch in _OPEN:
            b -= 1  # nor an opener end one
        else:
            break
    return (a, b) if b > a else None


def _occurs_once(doc: Document, needle: str) -> bool:
    key = normalize(needle)
    if not key:
        return False
    hay = normalized_text(doc).text
    i = hay.find(key)
    return i != -1 and hay.find(key, i + 1) == -1


def _unique(doc: Document, span: tuple[int, int], within: tuple[int, int]) -> tuple[int, int] | None:
    """`span`, widened by whole words inside `within` until its text occurs once in the document;
    None when it never does. Each step widens on one side up to and including the next content
    word, so an answer never ends on a function word ("40 hours per week", not "40 hours per").
    A modifier of the number on its left goes first ("more than three days", "up to €250"), then
    the side needing fewer function words, the right on a tie (its unit: "per week")."""
    text = doc.text
    if _occurs_once(doc, text[span[0]:span[1]]):
        return span
    words = [m.span() for m in _WORD_RE.finditer(text, within[0], within[1])]
    right = [w for w in words if w[0] >= span[1]]
    left = [w for w in reversed(words) if w[1] <= span[0]]

    def run(side: list[tuple[int, int]]) -> int:
        """Words up to and including the next content word on that side (all of them if none)."""
        for i, w in enumerate(side):
            if _is_content(text[w[0]:w[1]]):
                return i + 1
        return len(side)

    steps: list[tuple[int, int]] = []
    a, b = span
    added = 0
    while added < MAX_WIDEN and (left or right):
        nl, nr = run(left), run(right)
        mods = 0
        while mods < len(left) and text[left[mods][0]:left[mods][1]].lower().strip(_LEAD) in _MODIFIERS:
            mods += 1
        if mods:
            nl = mods  # "up to 60 %", not "remotely for up to 60 %"
        take_left = bool(left) and (not right or mods > 0 or nl < nr)
        side, n = (left, nl) if take_left else (right, nr)
        taken, side[:] = side[:n], side[n:]
        added += n
        if take_left:
            a = taken[-1][0]
        else:
            b = taken[-1][1]
        t = _trim(text, a, b)
        if t is not None:
            t = _balance(text, *t, *within)  # a whole phrase: "(96" takes its ")" or is no step
        if t is not None and (not steps or t != steps[-1]):
            steps.append(t)
    # Each step holds the one before it, so once unique it stays unique: test the widest first
    # (most repeated facts never become unique: one scan of the text instead of several), then
    # bisect for the narrowest unique one.
    if not steps or not _occurs_once(doc, text[steps[-1][0]:steps[-1][1]]):
        return None
    lo, hi = 0, len(steps) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if _occurs_once(doc, text[steps[mid][0]:steps[mid][1]]):
            hi = mid
        else:
            lo = mid + 1
    return steps[lo]


def _first_words(text: str, pl: Plain, n: int, least: int = 4) -> tuple[int, int] | None:
    """The span of the first `n` words of the first piece without markup of a sentence (`pl`)
    that has at least `least` words, cut before a bracket that does not close within it (or
    widened to where it closes); None when no piece has enough."""
    for run in pl.runs:
        ri, rj = _whole_words(pl, *run)
        piece = pl.span(ri, rj) if ri < rj else None
        if piece is None:
            continue
        words = [m.span() for m in _WORD_RE.finditer(text, *piece)]
        if len(words) < least:
            continue
        span = _trim(text, words[0][0], words[min(n, len(words)) - 1][1])
        if span is None:
            continue
        whole = _balance(text, *span, *piece)
        if whole is None:
            # cut before the first bracket left open, after the last one closing nothing
            closers, openers = _unmatched(text[span[0]:span[1]])
            a, b = span
            if closers:
                a = span[0] + closers[-1] + 1
            if openers:
                b = span[0] + openers[0]
            whole = _trim(text, a, b) if a < b else None
            if whole is not None and not _balanced(text[whole[0]:whole[1]]):
                whole = None
        if whole is not None and len(text[whole[0]:whole[1]].split()) >= least:
            return whole
    return None


def _cloze(text: str, c: _Candidate, span: tuple[int, int], path: tuple[str, ...], n: int, pl: Plain) -> str:
    """`<wh> (<section>): <sentence with ___ for the answer>?`, the sentence as read (`pl`) cut to
    `n` words either side of the blank when it is longer. A cut never leaves half a parenthesis:
    the words from a bracket whose partner was cut off go too."""
    i, j = pl.at(span[0]), pl.at(span[1])
    left = pl.text[:i].split()
    right = pl.text[j:].split()
    cut_left, cut_right = len(left) > n, len(right) > n
    if cut_left:
        left = left[-n:] if n else []
    if cut_right:
        right = right[:n] if n else []
    left, right, less_left, less_right = _whole_brackets(left, right)
    cut_left, cut_right = cut_left or less_left, cut_right or less_right
    if len(left) + len(right) < 3:
        return ""  # the answer is nearly the whole sentence: nothing left to ask with
    body = " ".join((["…"] if cut_left else []) + left + ["___"] + right + (["…"] if cut_right else []))
    body = body.rstrip(" .!?;:,")
    where = f" ({_where(path)})" if path else ""
    return f"{c.question}{where}: {body}?"


def _whole_brackets(left: list[str], right: list[str]) -> tuple[list[str], list[str], bool, bool]:
    """The context words either side of the blank without a parenthesis that a cut (or the
    sentence itself) left half of: on the left, the words up to and including an unmatched
    bracket go; on the right, the words from one on. Returns (left, right, whether the left lost
    words, whether the right did)."""
    words = left + right
    closers, openers = _unmatched(" ".join(words))
    if not closers and not openers:
        return left, right, False, False
    owner = [k for k, w in enumerate(words) for _ in range(len(w) + 1)]  # word of each character
    nl = len(left)
    first, last = 0, len(words)
    for k in (owner[c] for c in closers + openers):
        if k < nl:
            first = max(first, k + 1)
        else:
            last = min(last, k)
    return words[first:nl], words[nl:last], first > 0, last < len(words)


def _clean(s: str) -> str:
    """Text for a question: `s` as read (`inspector.core.text.plain`), on one line."""
    return " ".join(plain(s).split())


def _is_content(word: str) -> bool:
    w = word.strip(_TRAIL + _LEAD).lower()
    return bool(w) and w not in _STOPWORDS


def _content_words(s: str) -> set[str]:
    return {w.lower() for w in _ALPHA_WORD_RE.findall(s) if w.lower() not in _STOPWORDS and len(w) > 2}


__all__ = ["Draft", "KINDS", "MEASUREMENT", "draft_questions"]
