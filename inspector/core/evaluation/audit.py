"""Auditing retrieved chunks: people judge a question's top-k chunks, the judgements are kept per
question in a file beside the judged document, survive settings changes, add up to a summary and turn
into gold questions.

* A `Mark` is one judgement: question, the judged span (doc_id, start, end) and "relevant",
  "partly" or "not". It is keyed by question and span, never by chunk id: a chunk id means nothing
  once the settings change, the span still points at the same text. Marking a span again replaces
  its mark (no duplicates); judging it "unjudged" removes it.
* A `Run` records which spans a configuration ranked for a question, best first, so a summary can
  be given for a configuration after a restart, and a question asked once can be summarized again
  without asking it.
* `replay` judges any span from the marks of its question: the very span marked (as judged), else
  the rule below, else unjudged. After a re-chunk only the chunks holding text nobody judged ask
  for a judgement.

  1. relevant  if the span contains a whole span judged relevant,
  2. partly    if it contains a whole span judged partly (and none judged relevant),
  3. not       if every character of it lies in spans judged not relevant,
  4. unjudged  otherwise (a span that only overlaps a relevant one may have lost the answer).

* `summarize` gives, per question and overall, the judged precision@k (the mean gain of the judged
  chunks among the top k, relevant = 1, partly = 0.5, not = 0; unjudged chunks are left out and
  counted), the first rank judged relevant (and whether an unjudged chunk above it could come
  first), and the unjudged count; `summary_markdown` / `summary_csv` / `export_summary` write it.
* `gold_from_audit` makes gold questions whose references are the spans judged relevant;
  `gold.add_questions` appends them without duplicate lines.

A mark is kept in the audit file of the document it judges (`audit_path`: ``<stem>.audit.jsonl``
beside it), whichever document was shown: `load_audits` reads the files of every open document
into one audit and `save_audits` puts each mark back in its own document's file, so a corpus finds
every mark whatever it shows, and a document opened alone finds the marks made on it in a corpus.
A file is JSON Lines, one record a line: a header ``{"kind": "audit", "version": 1}``, then
``{"kind": "mark", ...}`` and ``{"kind": "run", ...}`` records. It is rewritten whole through
`inspector.core.runtime.atomic` after every change, so a crash leaves the previous file or the new one,
and a restart resumes where the work stopped. Each mark keeps a digest of the text it judged: a
document edited since then makes the mark stale (kept in the file, listed, used for nothing)
rather than silently judging other text.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from inspector.core.documents.document import Document
from inspector.core.errors import InputError
from inspector.core.evaluation.format import pct
from inspector.core.evaluation.gold import GoldQuestion
from inspector.core.evaluation.metrics import union_ranges
from inspector.core.evaluation.verdicts import NOT, PARTLY, RELEVANT, Verdict, question_text  # re-exported

JUDGEMENTS = (RELEVANT, PARTLY, NOT)
#: Gain of each judgement in the judged precision: a partly relevant chunk counts half.
GAIN = {RELEVANT: 1.0, PARTLY: 0.5, NOT: 0.0}
AUDIT_SUFFIX = ".audit.jsonl"
VERSION = 1
#: Biggest audit file read (a person's judgements: anything larger is a wrong file).
MAX_AUDIT_BYTES = 50 * 1024 * 1024

Span = tuple[str, int, int]
"""(doc_id, start, end): a judged or ranked span, code points into the document's text."""


def digest(text: str) -> str:
    """Short content hash of a judged text (to notice an edited document)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


# -- the records ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Mark:
    """One person's judgement of one span for one question."""

    question: str
    doc_id: str
    start: int
    end: int
    judgement: str
    """RELEVANT, PARTLY or NOT."""
    config: str = ""
    """Label of the settings the span was judged under (for people: a mark applies under any)."""
    digest: str = ""
    """`digest` of the judged text ("" when unknown: never stale)."""

    @property
    def span(self) -> Span:
        return (self.doc_id, self.start, self.end)

    @property
    def key(self) -> tuple[str, str, int, int]:
        return (self.question, self.doc_id, self.start, self.end)


@dataclass(frozen=True, slots=True)
class Run:
    """The spans one configuration ranked for one question, best first."""

    question: str
    config: str
    """The configuration's label."""
    ranking: tuple[Span, ...]


@dataclass(frozen=True, slots=True)
class Audit:
    """Every judgement and recorded ranking of one audit file; immutable, changed by copying."""

    marks: tuple[Mark, ...] = ()
    """Live marks, unique by `Mark.key`, in the order they were first made."""
    runs: tuple[Run, ...] = ()
    """Recorded rankings, unique by (question, config)."""
    stale: tuple[Mark, ...] = ()
    """Marks whose text changed since they were made (kept in the file, used for nothing)."""
    warnings: tuple[str, ...] = ()
    """What loading noticed (stale marks), for people."""

    @property
    def questions(self) -> tuple[str, ...]:
        """Questions with a mark or a recorded run, in the order they first appear."""
        return tuple(dict.fromkeys([m.question for m in self.marks] + [r.question for r in self.runs]))

    def marks_for(self, question: str) -> tuple[Mark, ...]:
        q = question_text(question)
        return tuple(m for m in self.marks if m.question == q)

    def mark_at(self, question: str, span: Span) -> Mark | None:
        key = (question_text(question), *span)
        return next((m for m in self.marks if m.key == key), None)

    def judge(self, question: str, span: Span, judgement: str | None, *, config: str = "",
              text: str | None = None) -> Audit:
        """The audit with this span judged for this question (None: its mark removed). A span
        judged again is replaced in place, never added twice. `text`: the judged text (its
        digest is kept to notice a later edit of the document)."""
        if judgement is not None and judgement not in JUDGEMENTS:
            raise ValueError(f"judgement must be one of {', '.join(JUDGEMENTS)}, got {judgement!r}")
        doc_id, start, end = span
        if start >= end:
            raise ValueError(f"an empty span cannot be judged ({start}..{end})")
        q = question_text(question)
        if not q:
            raise ValueError("a judgement needs a question")
        key = (q, doc_id, start, end)
        at = next((i for i, m in enumerate(self.marks) if m.key == key), None)
        if judgement is None:
            if at is None:
                return self
            return replace(self, marks=self.marks[:at] + self.marks[at + 1:])
        return self.with_mark(Mark(q, doc_id, start, end, judgement, config,
                                   digest(text) if text is not None else ""), at)

    def with_mark(self, mark: Mark, at: int | None = -1) -> Audit:
        """The audit with `mark` in place of the mark on its key (appended when there is none).
        `at`: the position of that mark when the caller knows it (None: there is none)."""
        if at == -1:
            at = next((i for i, m in enumerate(self.marks) if m.key == mark.key), None)
        if at is None:
            return replace(self, marks=self.marks + (mark,))
        if self.marks[at] == mark:
            return self
        return replace(self, marks=self.marks[:at] + (mark,) + self.marks[at + 1:])

    def record(self, question: str, config: str, ranking: Sequence[Span]) -> Audit:
        """The audit with this ranking recorded for (question, config), replacing an earlier one."""
        run = Run(question_text(question), config, tuple((d, int(a), int(b)) for d, a, b in ranking))
        at = next((i for i, r in enumerate(self.runs) if (r.question, r.config) == (run.question, config)), None)
        if at is None:
            return replace(self, runs=self.runs + (run,))
        if self.runs[at] == run:
            return self
        return replace(self, runs=self.runs[:at] + (run,) + self.runs[at + 1:])

    def run_for(self, question: str, config: str) -> Run | None:
        q = question_text(question)
        return next((r for r in self.runs if r.question == q and r.config == config), None)


# -- replay -----------------------------------------------------------------------------------------

UNJUDGED = Verdict(None)


def _covered(start: int, end: int, spans: Iterable[tuple[int, int]]) -> bool:
    """Every character of start..end lies in one of `spans`."""
    at = start
    for a, b in union_ranges(list(spans)):
        if a > at:
            break
        at = max(at, b)
        if at >= end:
            return True
    return at >= end


def _where(spans: Sequence[tuple[int, int]]) -> str:
    shown = ", ".join(f"{a:,}–{b:,}" for a, b in spans[:3])
    return shown + (f" and {len(spans) - 3} more" if len(spans) > 3 else "")


def replay(marks: Iterable[Mark], question: str, span: Span) -> Verdict:
    """A span's verdict from the marks of its question (the rule is in the module docstring)."""
    q = question_text(question)
    doc_id, start, end = span
    mine = [m for m in marks if m.question == q and m.doc_id == doc_id]
    for m in mine:
        if (m.start, m.end) == (start, end):
            return Verdict(m.judgement, "judged", "judged on this very span")
    for judgement in (RELEVANT, PARTLY):
        inside = [(m.start, m.end) for m in mine if m.judgement == judgement and start <= m.start and m.end <= end]
        if inside:
            return Verdict(judgement, "inherited", f"holds {_where(inside)}, judged {judgement}")
    nots = [(m.start, m.end) for m in mine if m.judgement == NOT and m.start < end and start < m.end]
    if nots and _covered(start, end, nots):
        return Verdict(NOT, "inherited", f"lies inside {_where(nots)}, judged not relevant")
    near = [(m.start, m.end, m.judgement) for m in mine if m.start < end and start < m.end]
    if near:
        parts = ", ".join(f"{a:,}–{b:,} ({j})" for a, b, j in near[:3])
        return Verdict(None, "", f"new text: overlaps {parts}")
    return UNJUDGED


# -- summary ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class QuestionSummary:
    """One question's ranking and verdicts under one configuration."""

    question: str
    ranking: tuple[Span, ...]
    verdicts: tuple[Verdict, ...]
    config: str = ""

    @property
    def k(self) -> int:
        return len(self.ranking)

    def count(self, judgement: str | None) -> int:
        return sum(1 for v in self.verdicts if v.judgement == judgement)

    @property
    def judged(self) -> int:
        return sum(1 for v in self.verdicts if v.judged)

    @property
    def unjudged(self) -> int:
        return self.k - self.judged

    @property
    def gain(self) -> float:
        return sum(GAIN[v.judgement] for v in self.verdicts if v.judgement is not None)

    @property
    def precision(self) -> float | None:
        """Judged precision@k: mean gain of the judged chunks (None when none is judged)."""
        return self.gain / self.judged if self.judged else None

    @property
    def first_relevant(self) -> int | None:
        """1-based rank of the first chunk judged relevant (partly does not count)."""
        return next((i for i, v in enumerate(self.verdicts, 1) if v.judgement == RELEVANT), None)

    @property
    def first_relevant_certain(self) -> bool:
        """No unjudged chunk ranks above the first relevant one (or, with none, none is unjudged):
        judging the rest cannot change `first_relevant`."""
        stop = self.first_relevant or self.k + 1
        return all(v.judged for v in self.verdicts[:stop - 1])

    def letters(self) -> str:
        """The verdicts as letters, best rank first: R relevant, P partly, N not, ? unjudged."""
        return "".join({RELEVANT: "R", PARTLY: "P", NOT: "N"}.get(v.judgement or "", "?")
                       for v in self.verdicts)


@dataclass(frozen=True, slots=True)
class AuditSummary:
    """Every audited question's summary, and the figures over all of them."""

    questions: tuple[QuestionSummary, ...]
    config: str = ""
    not_ranked: tuple[str, ...] = ()
    """Audited questions with no ranking under this configuration (ask them to include them)."""

    @property
    def judged(self) -> int:
        return sum(s.judged for s in self.questions)

    @property
    def unjudged(self) -> int:
        return sum(s.unjudged for s in self.questions)

    @property
    def precision(self) -> float | None:
        """Mean judged precision@k over the questions with a judged chunk (macro average: every
        question weighs the same, however many of its chunks are judged)."""
        values = [s.precision for s in self.questions if s.precision is not None]
        return sum(values) / len(values) if values else None

    @property
    def with_relevant(self) -> int:
        """Questions with a chunk judged relevant among their top k."""
        return sum(1 for s in self.questions if s.first_relevant is not None)

    @property
    def mean_first_relevant(self) -> float | None:
        ranks = [s.first_relevant for s in self.questions if s.first_relevant is not None]
        return sum(ranks) / len(ranks) if ranks else None


def summarize_question(audit: Audit, question: str, ranking: Sequence[Span], config: str = "") -> QuestionSummary:
    marks = audit.marks_for(question)
    ranking = tuple((d, int(a), int(b)) for d, a, b in ranking)
    return QuestionSummary(question_text(question), ranking, tuple(replay(marks, question, s) for s in ranking),
                           config)


def summarize(audit: Audit, rankings: Mapping[str, Sequence[Span]], config: str = "",
              questions: Sequence[str] | None = None) -> AuditSummary:
    """The summary of `questions` (default: every audited one, then any other ranked one) under
    one configuration. A question's ranking comes from `rankings` (what the window has at hand
    now), else from the run recorded for `config`; one with neither is listed in `not_ranked`."""
    given = {question_text(q): r for q, r in rankings.items()}
    order = list(questions) if questions is not None else list(dict.fromkeys([*audit.questions, *given]))
    rows: list[QuestionSummary] = []
    missing: list[str] = []
    for q in dict.fromkeys(question_text(q) for q in order):
        ranking: Sequence[Span] | None = given.get(q)
        if ranking is None:
            run = audit.run_for(q, config)
            ranking = run.ranking if run is not None else None
        if ranking is None:
            missing.append(q)
            continue
        rows.append(summarize_question(audit, q, ranking, config))
    return AuditSummary(tuple(rows), config, tuple(missing))


# -- export -----------------------------------------------------------------------------------------

def first_relevant_text(s: QuestionSummary) -> str:
    """The rank of the first relevant chunk as the summary writes it: "3", "≤3" while an unjudged
    chunk above it could come first, "none" / "none yet"."""
    if s.first_relevant is None:
        return "none" if s.first_relevant_certain else "none yet"
    return str(s.first_relevant) if s.first_relevant_certain else f"≤{s.first_relevant}"


def summary_markdown(summary: AuditSummary) -> str:
    """The summary as a Markdown report (the table the window shows, plus how it is computed)."""
    lines = ["# Retrieval audit", ""]
    if summary.config:
        lines += [f"Settings: `{summary.config}`", ""]
    lines += ["Judged precision@k is the mean gain of the judged chunks among the top k: relevant = 1, "
              "partly = 0.5, not relevant = 0; unjudged chunks are left out of it and counted. "
              "Ranking letters: R relevant, P partly, N not relevant, ? unjudged.", "",
              "| question | k | judged precision@k | first relevant | unjudged | ranking |",
              "|---|---:|---:|---:|---:|---|"]
    for s in summary.questions:
        q = s.question.replace("|", "\\|")
        lines.append(f"| {q} | {s.k} | {pct(s.precision, 0, '%')} | {first_relevant_text(s)} | {s.unjudged} "
                     f"| `{s.letters()}` |")
    mean_first = "–" if summary.mean_first_relevant is None else f"{summary.mean_first_relevant:.2f}"
    lines += ["", f"Overall: judged precision@k {pct(summary.precision, 0, '%')} (mean over "
              f"{sum(1 for s in summary.questions if s.precision is not None)} questions), "
              f"{summary.with_relevant} of {len(summary.questions)} questions with a relevant chunk "
              f"(mean first relevant rank {mean_first}), {summary.judged} chunks judged, "
              f"{summary.unjudged} unjudged."]
    if summary.not_ranked:
        lines += ["", f"Not ranked under these settings ({len(summary.not_ranked)}): "
                  + "; ".join(summary.not_ranked)]
    return "\n".join(lines) + "\n"


CSV_COLUMNS = ("question", "config", "k", "judged", "unjudged", "relevant", "partly", "not",
               "judged_precision", "first_relevant", "first_relevant_certain", "ranking")


def summary_csv(summary: AuditSummary) -> str:
    """One row per question and a last row "(overall)"; precision as a share (0..1), blank when
    nothing is judged."""
    buf = io.StringIO(newline="")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_COLUMNS)

    def num(v: float | None) -> str:
        return "" if v is None else f"{v:.4f}"

    for s in summary.questions:
        w.writerow([s.question, summary.config, s.k, s.judged, s.unjudged, s.count(RELEVANT), s.count(PARTLY),
                    s.count(NOT), num(s.precision), s.first_relevant or "", s.first_relevant_certain, s.letters()])
    qs = summary.questions
    w.writerow(["(overall)", summary.config, sum(s.k for s in qs), summary.judged, summary.unjudged,
                sum(s.count(RELEVANT) for s in qs), sum(s.count(PARTLY) for s in qs),
                sum(s.count(NOT) for s in qs), num(summary.precision),
                "" if summary.mean_first_relevant is None else f"{summary.mean_first_relevant:.2f}",
                all(s.first_relevant_certain for s in qs), ""])
    return buf.getvalue()


def export_summary(path: str | os.PathLike[str], summary: AuditSummary) -> str:
    """Write the summary as CSV (``.csv``) or Markdown (``.md``/``.markdown``/``.txt``),
    atomically; returns the format written."""
    from inspector.core.runtime.atomic import atomic_write_text

    suffix = Path(path).suffix.lower()
    if suffix == ".csv":
        atomic_write_text(path, summary_csv(summary))
        return "csv"
    if suffix in (".md", ".markdown", ".txt"):
        atomic_write_text(path, summary_markdown(summary))
        return "markdown"
    raise InputError(f"unsupported summary type '{suffix or 'no extension'}': use .csv or .md", path=str(path))


# -- marks -> gold questions ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class GoldProposal:
    """Gold questions made from marks, and what could not go in."""

    questions: tuple[GoldQuestion, ...]
    notes: tuple[str, ...] = ()


def gold_from_audit(audit: Audit, questions: Sequence[str] | None = None,
                    answers: Mapping[str, Sequence[str]] | None = None) -> GoldProposal:
    """A gold question per audited question with a span judged relevant: its references are those
    spans (overlapping or touching ones merged, so recall is not counted twice), its source their
    document. Reference spans point into one document: when a question has relevant spans in
    several, the one with the most relevant text is kept and the rest noted. `answers`: answer
    strings to keep with a question (e.g. from the gold set it came from). Partly relevant spans
    are not references (a reference is text that answers the question)."""
    order = [question_text(q) for q in questions] if questions is not None else list(audit.questions)
    out: list[GoldQuestion] = []
    notes: list[str] = []
    for q in dict.fromkeys(order):
        by_doc: dict[str, list[tuple[int, int]]] = {}
        for m in audit.marks_for(q):
            if m.judgement == RELEVANT:
                by_doc.setdefault(m.doc_id, []).append((m.start, m.end))
        if not by_doc:
            continue
        doc_id = max(by_doc, key=lambda d: (sum(b - a for a, b in union_ranges(by_doc[d])), -list(by_doc).index(d)))
        if len(by_doc) > 1:
            others = ", ".join(d for d in by_doc if d != doc_id)
            notes.append(f"“{q}”: relevant spans in {others} left out (references point into one document)")
        refs = tuple(union_ranges(by_doc[doc_id]))
        given = tuple(a for a in (answers or {}).get(q, ()) if a.strip())
        out.append(GoldQuestion(q, answers=given, source=doc_id or None, references=refs))
    return GoldProposal(tuple(out), tuple(notes))


# -- highlights -------------------------------------------------------------------------------------

#: Words of a question too common to point at anything in a chunk.
STOPWORDS = frozenset("""
a about above after again all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her
here hers how i if in into is it its itself just me more most my no nor not now of off on once only
or other our out over own same she should so some such than that the their them then there these
they this those through to too under until up very was we were what when where which while who whom
why will with would you your yours get gets got much many long
""".split())

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


def question_terms(question: str) -> tuple[str, ...]:
    """The question's content words (lower-cased, stopwords and one-letter words left out)."""
    out = []
    for w in _WORD.findall(question.lower()):
        if len(w) > 1 and w not in STOPWORDS:
            out.append(w)
    return tuple(dict.fromkeys(out))


def highlights(text: str, question: str = "", answers: Sequence[str] = (),
               references: Sequence[tuple[int, int]] = (), span_start: int = 0,
               body_at: int = 0) -> tuple[tuple[int, int, str], ...]:
    """Where to highlight a card's text: (start, end, kind), code points into `text`, sorted.

    kind "term": a content word of the question (whole words; a plural "s" is allowed);
    kind "answer": an answer string (case and spacing aside), or the part of the card's body that
    lies in a reference span. `span_start` is the document offset of the body, which starts at
    `body_at` in `text` (after the prefix)."""
    out: list[tuple[int, int, str]] = []
    for answer in answers:
        words = answer.split()
        if not words:
            continue
        pattern = r"\s+".join(re.escape(w) for w in words)
        out += [(m.start(), m.end(), "answer") for m in re.finditer(pattern, text, re.IGNORECASE)]
    body_len = len(text) - body_at
    for a, b in references:
        s, e = max(a - span_start, 0), min(b - span_start, body_len)
        if s < e:
            out.append((body_at + s, body_at + e, "answer"))
    terms = question_terms(question)
    if terms:
        alt = "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True))
        rx = re.compile(rf"(?<![^\W_])(?:{alt})(?:e?s)?(?![^\W_])", re.IGNORECASE)
        out += [(m.start(), m.end(), "term") for m in rx.finditer(text)]
    return tuple(sorted(set(out)))


# -- the file ---------------------------------------------------------------------------------------

def audit_path(doc: Document) -> Path | None:
    """Where a document's audit is kept: ``<stem>.audit.jsonl`` beside it (None for a document
    read from no file)."""
    if not doc.path:
        return None
    p = Path(doc.path)
    return p.with_name(p.stem + AUDIT_SUFFIX)


def audit_lines(audit: Audit) -> list[dict[str, Any]]:
    """The records of the file, header first, marks then runs, each group by question."""
    order = {q: i for i, q in enumerate(dict.fromkeys([m.question for m in audit.marks + audit.stale]
                                                      + [r.question for r in audit.runs]))}
    recs: list[dict[str, Any]] = [{"kind": "audit", "version": VERSION}]
    marks = sorted(audit.marks + audit.stale, key=lambda m: (order[m.question], m.doc_id, m.start, m.end))
    for m in marks:
        rec: dict[str, Any] = {"kind": "mark", "question": m.question, "doc": m.doc_id, "start": m.start,
                               "end": m.end, "judgement": m.judgement}
        if m.config:
            rec["config"] = m.config
        if m.digest:
            rec["digest"] = m.digest
        recs.append(rec)
    for r in sorted(audit.runs, key=lambda r: (order[r.question], r.config)):
        recs.append({"kind": "run", "question": r.question, "config": r.config,
                     "ranking": [[d, a, b] for d, a, b in r.ranking]})
    return recs


def audit_text(audit: Audit) -> str:
    """The file's text: `audit_lines` as JSON Lines."""
    return "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in audit_lines(audit))


def save_audit(path: str | os.PathLike[str], audit: Audit) -> None:
    """Write the whole audit, atomically (the old file or the new one, never half)."""
    from inspector.core.runtime.atomic import atomic_write_text

    atomic_write_text(path, audit_text(audit))


def load_audit(path: str | os.PathLike[str], docs: Sequence[Document] | Mapping[str, Document] = ()) -> Audit:
    """Read an audit file (an empty audit when there is none). With `docs`, marks whose text no
    longer matches their digest are set apart as stale. A broken line raises `InputError` naming
    file, line and field: the caller must not overwrite a file it could not read."""
    read = _read_audit(Path(path))
    if read is None:
        return Audit()
    audit = read[0]
    return check_against(audit, docs) if docs else audit


def _read_audit(p: Path) -> tuple[Audit, str] | None:
    """An audit file's records and its text (None: there is no file); `InputError` as `load_audit`."""
    shown = str(p)
    if not p.exists():
        return None
    try:
        if p.stat().st_size > MAX_AUDIT_BYTES:
            raise InputError(f"audit file is over the {MAX_AUDIT_BYTES / 1e6:.0f} MB limit", path=shown)
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", path=shown) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=shown) from None
    marks: dict[tuple, Mark] = {}
    runs: dict[tuple[str, str], Run] = {}
    for lineno, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise InputError(f"broken JSON: {exc.msg} (column {exc.colno})", path=shown, line=lineno) from None
        except RecursionError:
            raise InputError("JSON nested too deeply", path=shown, line=lineno) from None
        if not isinstance(rec, dict):
            raise InputError("expected a JSON object", path=shown, line=lineno)
        kind = rec.get("kind")
        if kind == "audit":
            version = rec.get("version")
            if not isinstance(version, int) or version > VERSION:
                raise InputError(f"written by a newer Chunk Inspector (version {version!r})", path=shown,
                                 line=lineno, field="version")
        elif kind == "mark":
            m = _mark(rec, shown, lineno)
            marks[m.key] = m  # a key written twice: the later line wins, in the first one's place
        elif kind == "run":
            q = _string(rec, "question", shown, lineno)
            config = rec.get("config", "")
            if not isinstance(config, str):
                raise InputError("must be a string", path=shown, line=lineno, field="config")
            ranking = rec.get("ranking")
            if not isinstance(ranking, list):
                raise InputError("must be a list of [doc, start, end]", path=shown, line=lineno, field="ranking")
            spans: list[Span] = []
            for i, item in enumerate(ranking):
                if (not isinstance(item, list) or len(item) != 3 or not isinstance(item[0], str)
                        or not all(_whole(v) for v in item[1:]) or not 0 <= item[1] < item[2]):
                    raise InputError("must be [doc, start, end] with 0 <= start < end", path=shown, line=lineno,
                                     field=f"ranking[{i}]")
                spans.append((item[0], int(item[1]), int(item[2])))
            runs[(q, config)] = Run(q, config, tuple(spans))
        else:
            raise InputError(f"unknown kind {kind!r} (expected audit, mark or run)", path=shown, line=lineno,
                             field="kind")
    return Audit(marks=tuple(marks.values()), runs=tuple(runs.values())), text


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _string(rec: dict, name: str, path: str, line: int) -> str:
    v = rec.get(name)
    if not isinstance(v, str) or not v.strip():
        raise InputError("missing" if v is None else "must be a non-empty string", path=path, line=line, field=name)
    return question_text(v)


def _mark(rec: dict, path: str, line: int) -> Mark:
    q = _string(rec, "question", path, line)
    doc = rec.get("doc", "")
    if not isinstance(doc, str):
        raise InputError("must be a string", path=path, line=line, field="doc")
    start, end = rec.get("start"), rec.get("end")
    for name, v in (("start", start), ("end", end)):
        if not _whole(v):
            raise InputError(f"must be a whole number, got {v!r}", path=path, line=line, field=name)
    assert isinstance(start, int) and isinstance(end, int)
    if not 0 <= start < end:
        raise InputError(f"span {start}..{end} is empty or negative", path=path, line=line, field="start")
    judgement = rec.get("judgement")
    if judgement not in JUDGEMENTS:
        raise InputError(f"must be one of {', '.join(JUDGEMENTS)}, got {judgement!r}", path=path, line=line,
                         field="judgement")
    config = rec.get("config", "")
    dig = rec.get("digest", "")
    if not isinstance(config, str) or not isinstance(dig, str):
        raise InputError("must be a string", path=path, line=line,
                         field="config" if not isinstance(config, str) else "digest")
    return Mark(q, doc, start, end, judgement, config, dig)


def check_against(audit: Audit, docs: Sequence[Document] | Mapping[str, Document]) -> Audit:
    """Marks whose judged text no longer reads the same (the document was edited) set apart as
    stale, with a warning; marks about documents not open are kept live (nothing to check)."""
    by_id = dict(docs) if isinstance(docs, Mapping) else {d.doc_id: d for d in docs}
    live: list[Mark] = []
    stale: list[Mark] = list(audit.stale)
    for m in audit.marks:
        d = by_id.get(m.doc_id)
        if d is not None and m.digest and (m.end > len(d.text) or digest(d.text[m.start:m.end]) != m.digest):
            stale.append(m)
        else:
            live.append(m)
    if len(stale) == len(audit.stale):
        return audit
    n = len(stale) - len(audit.stale)
    warning = (f"{n} judgement(s) point at text that changed since they were made (the document was "
               "edited): they are kept in the file but no longer used")
    return replace(audit, marks=tuple(live), stale=tuple(stale), warnings=audit.warnings + (warning,))



# -- the files of the open documents ----------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class AuditFiles:
    """The audit files of the open documents, as last read or written. A mark is kept in the file
    of the document it judges (`audit_path`), whichever document was shown when it was made: the
    same marks come back with that document shown, opened alone, or in any corpus (a folder,
    several files), and a single document's file is the ``<stem>.audit.jsonl`` it always was."""

    audit: Audit
    """Every mark about an open document, from whichever file held it, and every recorded run."""
    owners: Mapping[Path, tuple[str, ...]] = field(default_factory=dict)
    """Each file and the ids of the open documents whose marks it keeps (two documents of one stem
    in one folder share a file)."""
    kept: Mapping[Path, tuple[tuple[Mark, ...], tuple[Run, ...]]] = field(default_factory=dict)
    """What a file holds about no open document (another corpus's marks): written back as it was."""
    texts: Mapping[Path, str] = field(default_factory=dict)
    """Each existing file's text as read or last written: a file whose text would stay is not written."""
    held: Mapping[Path, frozenset[tuple[str, str, int, int]]] = field(default_factory=dict)
    """The mark keys each file holds now (a save writes the files that gain marks before the ones
    that lose them, so a crash between two writes leaves a mark twice, never nowhere)."""
    problems: Mapping[Path, str] = field(default_factory=dict)
    """Files that could not be read, with why: never overwritten; their documents' marks of this
    session stay in memory."""

    def path_of(self, doc_id: str) -> Path | None:
        """The file that keeps a document's marks (None: a document read from no file)."""
        return next((p for p, ids in self.owners.items() if doc_id in ids), None)


def _reads(mark: Mark, doc: Document) -> bool:
    """The document's text at the mark's span is the text the mark judged."""
    return bool(mark.digest) and mark.end <= len(doc.text) and digest(doc.text[mark.start:mark.end]) == mark.digest


def _owner(doc_id: str, own: Sequence[Document], by_id: Mapping[str, Document], mark: Mark | None = None) -> str | None:
    """The open document a span named `doc_id`, read from the file of the documents `own`, is
    about: the open document of that id, else the file's own document of that file name (a
    document's id is its path in a folder, its name when opened alone); None for neither (a
    document not open). When both exist, the judged text decides."""
    named = by_id.get(doc_id)
    mine = next((d for d in own if d.name == Path(doc_id).name), None)
    if named is not None:
        if mark is not None and mine is not None and mine is not named and not _reads(mark, named) \
                and _reads(mark, mine):
            return mine.doc_id
        return named.doc_id
    return mine.doc_id if mine is not None else None


def load_audits(docs: Sequence[Document]) -> AuditFiles:
    """Read the audit files of the open documents into one audit. Files are read oldest first, so
    where two hold a mark on one span (files written before marks went to the judged document's
    own file) the newer judgement wins. A file that cannot be read is listed in `problems`."""
    by_id = {d.doc_id: d for d in docs}
    owners: dict[Path, list[Document]] = {}
    for d in docs:
        p = audit_path(d)
        if p is not None:
            owners.setdefault(p, []).append(d)
    found: list[tuple[float, str, Path, Audit]] = []
    texts: dict[Path, str] = {}
    problems: dict[Path, str] = {}
    for p in owners:
        try:
            read = _read_audit(p)
            when = p.stat().st_mtime if read is not None else 0.0
        except InputError as exc:
            problems[p] = exc.one_line()
            continue
        except OSError as exc:
            problems[p] = InputError(f"cannot read: {exc.strerror or exc}", path=str(p)).one_line()
            continue
        if read is not None:
            texts[p] = read[1]
            found.append((when, str(p), p, read[0]))
    marks: dict[tuple[str, str, int, int], Mark] = {}
    runs: dict[tuple[str, str], Run] = {}
    kept: dict[Path, tuple[tuple[Mark, ...], tuple[Run, ...]]] = {}
    held: dict[Path, frozenset[tuple[str, str, int, int]]] = {}
    for _when, _name, p, a in sorted(found):
        own = owners[p]
        other_marks: list[Mark] = []
        other_runs: list[Run] = []
        for m in a.marks:
            at = _owner(m.doc_id, own, by_id, m)
            if at is None:
                other_marks.append(m)
                continue
            m = replace(m, doc_id=at) if at != m.doc_id else m
            marks[m.key] = m  # a newer file's judgement wins, in the place the span was first judged
        for r in a.runs:
            placed = [_owner(d, own, by_id) for d, _a, _b in r.ranking]
            if r.ranking and all(at is None for at in placed):
                other_runs.append(r)
                continue
            runs[(r.question, r.config)] = replace(r, ranking=tuple(
                (at or d, a0, b0) for at, (d, a0, b0) in zip(placed, r.ranking, strict=True)))
        if other_marks or other_runs:
            kept[p] = (tuple(other_marks), tuple(other_runs))
        held[p] = frozenset(m.key for m in a.marks)
    audit = check_against(Audit(marks=tuple(marks.values()), runs=tuple(runs.values())), by_id)
    return AuditFiles(audit, {p: tuple(d.doc_id for d in ds) for p, ds in owners.items()}, kept, texts, held,
                      problems)


def audit_files_content(files: AuditFiles, audit: Audit) -> dict[Path, Audit]:
    """What each file holds once `audit` is saved: the marks (live or stale) on its documents, what
    it kept about documents not open, and the runs of the questions its marks are about (a run of
    a question with no mark: in the file of its best-ranked document)."""
    where = {doc_id: p for p, ids in files.owners.items() for doc_id in ids}
    marks: dict[Path, list[Mark]] = {p: list(files.kept.get(p, ((), ()))[0]) for p in files.owners}
    runs: dict[Path, list[Run]] = {p: list(files.kept.get(p, ((), ()))[1]) for p in files.owners}
    about: dict[str, set[Path]] = {}
    for m in audit.marks + audit.stale:
        p = where.get(m.doc_id)
        if p is not None:
            marks[p].append(m)
            about.setdefault(m.question, set()).add(p)
    for r in audit.runs:
        targets = about.get(r.question) or {p for p in (where.get(d) for d, _a, _b in r.ranking[:1]) if p}
        for p in targets:
            runs[p].append(r)
    return {p: Audit(marks=tuple(marks[p]), runs=tuple(runs[p])) for p in files.owners}


def save_audits(files: AuditFiles, audit: Audit) -> tuple[AuditFiles, tuple[tuple[Path, OSError], ...]]:
    """Write `audit` into the files of the open documents (`audit_files_content`), each atomically:
    only the files whose text changes, never one that could not be read, and no new file without
    a record. Files that gain marks are written before files that only lose some (a mark moving
    to its document's own file is never in neither). Returns the files as now written, and the
    writes that failed."""
    from inspector.core.runtime.atomic import atomic_write_text

    empty = audit_text(Audit())
    content = audit_files_content(files, audit)
    texts, held = dict(files.texts), dict(files.held)
    todo: list[tuple[bool, str, Path, str, frozenset]] = []
    for p, a in content.items():
        text = audit_text(a)
        if p in files.problems or text == texts.get(p, empty):
            continue
        keys = frozenset(m.key for m in a.marks + a.stale)
        gains = bool(keys - held.get(p, frozenset()))
        todo.append((not gains, str(p), p, text, keys))
    failed: list[tuple[Path, OSError]] = []
    for _later, _name, p, text, keys in sorted(todo, key=lambda t: t[:2]):
        try:
            atomic_write_text(p, text)
        except OSError as exc:
            failed.append((p, exc))
            continue
        texts[p], held[p] = text, keys
    return replace(files, audit=audit, texts=texts, held=held), tuple(failed)


__all__ = ["Mark", "Run", "Audit", "Verdict", "UNJUDGED", "replay", "QuestionSummary", "AuditSummary",
           "summarize", "summarize_question", "summary_markdown", "summary_csv", "export_summary",
           "GoldProposal", "gold_from_audit", "highlights", "question_terms", "audit_path", "audit_lines",
           "save_audit", "load_audit", "check_against", "AuditFiles", "load_audits", "save_audits",
           "audit_files_content", "audit_text", "digest", "question_text", "RELEVANT", "PARTLY",
           "NOT", "JUDGEMENTS", "GAIN", "AUDIT_SUFFIX", "Span"]
