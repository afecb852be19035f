"""Gold sets: questions with their expected answers (and optionally the passages that hold them).

Three formats, told apart by extension and header:

* JSONL (``.jsonl``/``.ndjson``), one object a line: ``question``, ``answer`` (a string or a list of
  strings), optional ``source`` (a document's file name or relative path) and optional
  ``references``: character spans ``{"start", "end"}`` or passage texts (``{"content": ...}`` or
  plain strings) that are resolved to spans by locating them in the source document;
* CSV with the header ``question,answer[,source]``;
* Chroma's chunking-evaluation CSV, ``question,references,corpus_id``, where ``references`` is a
  JSON list of ``{content, start_index, end_index}`` (code-point, half-open) into the corpus named
  ``corpus_id`` (a file name, relative path or file stem).

Anything that makes a question unusable raises `InputError` naming file, line and field. An answer
that occurs nowhere in the corpus, or a passage that cannot be placed unambiguously, is a warning
on that question: it is kept and listed, because a gold set written before an edit of the document
should still load and show what went stale.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from inspector.core.documents.document import Document
from inspector.core.documents.encoding import decode_bytes
from inspector.core.errors import InputError
from inspector.core.runtime.lru import SizedLRU

if TYPE_CHECKING:
    import numpy as np
else:
    from inspector.core.runtime.lazy_numpy import np

JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
CSV_SUFFIXES = frozenset({".csv"})
#: Biggest gold file read (a gold set is hand-written; anything larger is a wrong file).
MAX_GOLD_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class GoldQuestion:
    """One question of a gold set."""

    question: str
    """The query sent to the retriever."""
    answers: tuple[str, ...] = ()
    """Strings any one of which, found in a retrieved chunk, counts as a hit (may be empty for
    Chroma-style questions that only carry reference spans)."""
    source: str | None = None
    """`doc_id` of the document the question is about (resolved from the file's `source` or
    `corpus_id`), or None when the question names none."""
    references: tuple[tuple[int, int], ...] = ()
    """Reference spans (start, end) in the source document's text: the passages that answer it."""
    line: int = 0
    """Line in the gold file where the question starts (1-based; 0 for questions made in memory)."""
    warnings: tuple[str, ...] = ()
    """Problems that did not stop loading (answer absent from the corpus, passage not placed)."""


@dataclass(frozen=True, slots=True)
class GoldSet:
    """A loaded gold file."""

    path: str
    """The file it was read from."""
    questions: tuple[GoldQuestion, ...]
    """Questions in file order."""
    warnings: tuple[InputError, ...] = ()
    """Every question's warnings, each naming file and line (for a list in the window or CLI)."""
    format: str = "jsonl"
    """"jsonl", "csv" or "chroma"."""

    def __len__(self) -> int:
        return len(self.questions)

    @property
    def has_references(self) -> bool:
        return any(q.references for q in self.questions)


# -- normalized search (locating answers, not chunks) ----------------------------------------------

def normalize(text: str) -> str:
    """Lower-cased, whitespace runs collapsed to one space, ends stripped."""
    return " ".join(text.lower().split())


@dataclass(frozen=True, slots=True)
class NormalizedText:
    """A document's text lower-cased with whitespace runs collapsed, and where each character of
    the normalized text came from, so a match there maps back to a span of the original."""

    text: str
    origin: np.ndarray
    """origin[i] is the offset in the original text of normalized character i (int64)."""
    _found: dict = field(default_factory=dict, compare=False, repr=False)
    """Answers already located: every re-chunk evaluates the same answers again."""

    def find_all(self, needle: str) -> list[tuple[int, int]]:
        """Spans in the ORIGINAL text where the (already normalized) needle occurs, overlapping
        occurrences included."""
        if not needle:
            return []
        hit = self._found.get(needle)
        if hit is not None:
            return list(hit)
        out: list[tuple[int, int]] = []
        hay = self.text
        origin = self.origin
        i = hay.find(needle)
        n = len(needle)
        while i != -1:
            out.append((int(origin[i]), int(origin[i + n - 1]) + 1))
            i = hay.find(needle, i + 1)
        if len(self._found) < 10_000:
            self._found[needle] = tuple(out)
        return out


#: Normalized texts of at most 32 documents and 32 M characters.
_NORMALIZED: SizedLRU[NormalizedText] = SizedLRU(32, 32_000_000)


def normalized_text(doc: Document) -> NormalizedText:
    """The document's `NormalizedText`, computed once per content."""
    return _NORMALIZED.get_or_make(doc.sha256, lambda: _normalize_with_origin(doc.text), len(doc.text))


def _normalize_with_origin(text: str) -> NormalizedText:
    low = text.lower()
    if len(low) == len(text):
        base = np.arange(len(text), dtype=np.int64)
    else:
        # A few characters lower-case to two (e.g. "İ"): map character by character.
        parts: list[str] = []
        idx: list[int] = []
        for i, ch in enumerate(text):
            lc = ch.lower()
            parts.append(lc)
            idx.extend([i] * len(lc))
        low = "".join(parts)
        base = np.asarray(idx, dtype=np.int64)
    if not low:
        return NormalizedText("", np.zeros(0, dtype=np.int64))
    cps = np.frombuffer(low.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    uniq = np.unique(cps)
    ws_codes = np.array([c for c in uniq.tolist() if chr(c).isspace()], dtype=np.uint32)
    is_ws = np.isin(cps, ws_codes)
    prev_ws = np.concatenate(([True], is_ws[:-1]))  # leading whitespace is dropped as well
    keep = ~is_ws | ~prev_ws
    # A trailing whitespace run is dropped as well (the normalized form is stripped).
    kept = np.nonzero(keep)[0]
    if len(kept) and is_ws[kept[-1]]:
        kept = kept[:-1]
    chars = cps[kept].copy()
    chars[is_ws[kept]] = ord(" ")
    return NormalizedText(chars.astype("<u4").tobytes().decode("utf-32-le", "surrogatepass"), base[kept])


# -- resolving document names ----------------------------------------------------------------------

def _names_of(doc: Document) -> set[str]:
    names = {doc.doc_id, doc.name, Path(doc.name).stem, str(PurePosixPath(doc.doc_id).with_suffix(""))}
    names |= {doc.doc_id.replace(os.sep, "/")}
    return {n for n in names if n}


def resolve_source(source: str, docs: Sequence[Document], base: Path | None = None) -> Document:
    """The document a gold file's `source`/`corpus_id` names: its doc_id, file name, relative
    path, file stem, or a path relative to the gold file. ValueError when none or several match."""
    wanted = source.strip().replace("\\", "/")
    exact = [d for d in docs if d.doc_id == wanted or d.doc_id.replace(os.sep, "/") == wanted]
    if len(exact) == 1:
        return exact[0]
    found = [d for d in docs if wanted in _names_of(d)]
    if not found:
        # "docs/handbook.md" naming a document opened as "handbook.md", or a path relative to
        # the gold file.
        found = [d for d in docs
                 if wanted.endswith("/" + d.doc_id.replace(os.sep, "/"))
                 or d.doc_id.replace(os.sep, "/").endswith("/" + wanted)]
        if not found and base is not None:
            target = (base / wanted).resolve()
            found = [d for d in docs if d.path and Path(d.path) == target]
    if len(found) == 1:
        return found[0]
    if not found:
        known = ", ".join(d.doc_id for d in docs[:8]) + (" ..." if len(docs) > 8 else "")
        raise ValueError(f"unknown document '{source}' (open: {known or 'none'})")
    raise ValueError(f"'{source}' names several documents: {', '.join(d.doc_id for d in found[:5])}")


def answer_spans(doc: Document, q: GoldQuestion) -> list[tuple[int, int]]:
    """Where a question's answers (and reference spans) lie in the document, in text order (none
    when the question names another source). The window marks these, the map rings their chunks,
    the HTML export highlights them."""
    spans: set[tuple[int, int]] = set()
    if q.source in (None, doc.doc_id):
        nt = normalized_text(doc)
        for a in q.answers:
            spans.update(nt.find_all(normalize(a)))
        spans.update((a, b) for a, b in q.references)
    return sorted(spans)


def locate_passage(doc: Document, passage: str) -> tuple[tuple[int, int] | None, str]:
    """Span of a passage in the document if it occurs exactly once (exactly, else with case and
    whitespace normalized), and a reason when it does not."""
    if not passage.strip():
        return None, "empty passage"
    text = doc.text
    first = text.find(passage)
    if first != -1:
        if text.find(passage, first + 1) != -1:
            return None, f"occurs {text.count(passage)} times in {doc.doc_id}; give start/end"
        return (first, first + len(passage)), ""
    spans = normalized_text(doc).find_all(normalize(passage))
    if len(spans) == 1:
        return spans[0], ""
    if spans:
        return None, f"occurs {len(spans)} times in {doc.doc_id}; give start/end"
    return None, f"does not occur in {doc.doc_id}"


# -- loading ----------------------------------------------------------------------------------------

def detect_format(path: str | os.PathLike[str], text: str) -> str:
    """"jsonl", "csv" or "chroma", from the extension and (for CSV) the header."""
    suffix = Path(path).suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return "jsonl"
    if suffix in CSV_SUFFIXES:
        header = _csv_header(text)
        names = {h for h in header if h}
        if {"question", "references", "corpus_id"} <= names:
            return "chroma"
        return "csv"
    raise InputError(f"unsupported gold file type '{suffix or 'no extension'}': use .jsonl or .csv",
                     path=str(path))


def _csv_header(text: str) -> list[str]:
    try:
        for row in csv.reader(io.StringIO(text, newline="")):
            return [h.strip().lstrip("\ufeff").lower() for h in row]
    except csv.Error:
        pass  # the loader reports it with its line
    return []


def load_gold(path: str | os.PathLike[str], docs: Sequence[Document]) -> GoldSet:
    """Read and validate a gold file against the open corpus `docs`."""
    p = Path(path)
    shown = str(p)
    try:
        size = p.stat().st_size
        if p.is_dir():
            raise InputError("is a folder, not a gold file", path=shown)
        if size > MAX_GOLD_BYTES:
            raise InputError(f"gold file is {size / 1e6:.1f} MB, over the "
                             f"{MAX_GOLD_BYTES / 1e6:.0f} MB limit", path=shown)
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", path=shown) from None
    except IsADirectoryError:
        raise InputError("is a folder, not a gold file", path=shown) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=shown) from None
    text, _enc = decode_bytes(data, shown)
    if text.startswith("\ufeff"):
        text = text[1:]
    fmt = detect_format(p, text)
    loader = _Loader(shown, docs, p.resolve().parent)
    if fmt == "jsonl":
        questions = loader.jsonl(text)
    elif fmt == "chroma":
        questions = loader.chroma(text)
    else:
        questions = loader.csv(text)
    if not questions:
        raise InputError("holds no questions", path=shown)
    warnings = tuple(InputError(w, path=shown, line=q.line) for q in questions for w in q.warnings)
    return GoldSet(path=shown, questions=tuple(questions), warnings=warnings, format=fmt)


class _Loader:
    """Validation shared by the three formats; errors carry file, line and field."""

    def __init__(self, path: str, docs: Sequence[Document], base: Path) -> None:
        self.path = path
        self.docs = tuple(docs)
        self.base = base

    def error(self, problem: str, line: int, field_: str | None = None) -> InputError:
        return InputError(problem, path=self.path, line=line, field=field_)

    # -- shared pieces ---------------------------------------------------------------------
    def question_text(self, value: Any, line: int) -> str:
        if value is None:
            raise self.error("missing", line, "question")
        if not isinstance(value, str):
            raise self.error(f"must be a string, got {_type_name(value)}", line, "question")
        if not value.strip():
            raise self.error("empty question", line, "question")
        return self.encodable(value, line, "question").strip()

    def encodable(self, value: str, line: int, field_: str) -> str:
        """A JSON "\\ud800" escape decodes to a lone surrogate that no output can print."""
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise self.error(f"holds an unpaired surrogate at character {exc.start} (a broken "
                             "\\u escape)", line, field_) from None
        return value

    def answers(self, value: Any, line: int, *, required: bool) -> tuple[str, ...]:
        if value is None:
            if required:
                raise self.error("missing", line, "answer")
            return ()
        if isinstance(value, str):
            items = [value]
        elif isinstance(value, list):
            if not value:
                raise self.error("empty list of answers", line, "answer")
            items = value
        else:
            raise self.error(f"must be a string or a list of strings, got {_type_name(value)}",
                             line, "answer")
        out: list[str] = []
        for i, a in enumerate(items):
            where = "answer" if isinstance(value, str) else f"answer[{i}]"
            if not isinstance(a, str):
                raise self.error(f"must be a string, got {_type_name(a)}", line, where)
            if not normalize(a):
                raise self.error("empty answer", line, where)
            out.append(self.encodable(a, line, where).strip())
        return tuple(out)

    def source_doc(self, value: Any, line: int, field_: str = "source") -> Document | None:
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise self.error(f"must be a string, got {_type_name(value)}", line, field_)
        try:
            return resolve_source(value, self.docs, self.base)
        except ValueError as exc:
            raise self.error(str(exc), line, field_) from None

    def default_doc(self, line: int, field_: str) -> Document:
        """The document spans refer to when a question names none: the only one open."""
        if len(self.docs) == 1:
            return self.docs[0]
        if not self.docs:
            raise self.error("no document is open to resolve references against", line, field_)
        raise self.error("several documents are open: name the one the references point into "
                         "with 'source'", line, "source")

    def span(self, start: Any, end: Any, doc: Document, line: int, where: str) -> tuple[int, int]:
        for name, v in (("start", start), ("end", end)):
            if v is None:
                raise self.error(f"missing '{name}'", line, where)
            if isinstance(v, bool) or not isinstance(v, int):
                if isinstance(v, float) and v.is_integer():
                    continue
                raise self.error(f"'{name}' must be a whole number, got {v!r}", line, where)
        a, b = int(start), int(end)
        n = len(doc.text)
        if a < 0 or b > n:
            raise self.error(f"span {a}..{b} is out of range: {doc.doc_id} has {n} characters",
                             line, where)
        if a >= b:
            raise self.error(f"start ({a}) must be smaller than end ({b})", line, where)
        return a, b

    def answer_warnings(self, answers: tuple[str, ...], doc: Document | None) -> list[str]:
        """A warning when no answer string occurs in the document (or in any open document)."""
        if not answers:
            return []
        pool = (doc,) if doc is not None else self.docs
        for a in answers:
            needle = normalize(a)
            for d in pool:
                if needle in normalized_text(d).text:
                    return []
        where = doc.doc_id if doc is not None else "the corpus"
        shown = answers[0] if len(answers) == 1 else " / ".join(answers)
        return [f"answer '{_clip(shown)}' occurs nowhere in {where}"]

    def build(self, question: str, answers: tuple[str, ...], doc: Document | None,
              refs: list[tuple[int, int]], line: int, warnings: list[str]) -> GoldQuestion:
        warnings = warnings + self.answer_warnings(answers, doc)
        if not answers and not refs:
            warnings.append("no answer and no reference could be placed: it can never be a hit")
        return GoldQuestion(question=question, answers=answers, source=doc.doc_id if doc else None,
                            references=tuple(refs), line=line, warnings=tuple(warnings))

    # -- JSONL -------------------------------------------------------------------------------
    def jsonl(self, text: str) -> list[GoldQuestion]:
        out: list[GoldQuestion] = []
        for lineno, raw in enumerate(text.split("\n"), 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise self.error(f"broken JSON: {exc.msg} (column {exc.colno})", lineno) from None
            except RecursionError:
                raise self.error("JSON nested too deeply", lineno) from None
            if not isinstance(obj, dict):
                raise self.error(f"expected a JSON object, got {_type_name(obj)}", lineno)
            out.append(self.jsonl_record(obj, lineno))
        return out

    def jsonl_record(self, obj: dict, line: int) -> GoldQuestion:
        question = self.question_text(obj.get("question"), line)
        raw_refs = obj.get("references")
        answer_value = obj.get("answers") if "answers" in obj and "answer" not in obj else obj.get("answer")
        answers = self.answers(answer_value, line, required=not raw_refs)
        doc = self.source_doc(obj.get("source"), line)
        refs: list[tuple[int, int]] = []
        warnings: list[str] = []
        if raw_refs is not None:
            if not isinstance(raw_refs, list):
                raise self.error(f"must be a list, got {_type_name(raw_refs)}", line, "references")
            if raw_refs and doc is None:
                doc = self.default_doc(line, "references")
            for i, item in enumerate(raw_refs):
                where = f"references[{i}]"
                assert doc is not None
                if isinstance(item, str):
                    passage: Any = item
                elif isinstance(item, dict):
                    start = item.get("start", item.get("start_index"))
                    end = item.get("end", item.get("end_index"))
                    if start is not None or end is not None:
                        span = self.span(start, end, doc, line, where)
                        refs.append(span)
                        content = item.get("content")
                        if isinstance(content, str) and content and doc.text[span[0]:span[1]] != content:
                            warnings.append(f"{where}: the text at {span[0]}..{span[1]} differs from "
                                            "its 'content' (was the document edited?)")
                        continue
                    passage = item.get("content", item.get("text"))
                    if passage is None:
                        raise self.error("needs 'start' and 'end', or 'content'", line, where)
                else:
                    raise self.error("must be {\"start\", \"end\"}, {\"content\"} or a string, got "
                                     f"{_type_name(item)}", line, where)
                if not isinstance(passage, str):
                    raise self.error(f"'content' must be a string, got {_type_name(passage)}", line, where)
                if not passage.strip():
                    raise self.error("empty passage", line, where)
                span_or_none, why = locate_passage(doc, passage)
                if span_or_none is None:
                    warnings.append(f"{where}: passage '{_clip(passage)}' {why}; reference dropped")
                else:
                    refs.append(span_or_none)
        return self.build(question, answers, doc, refs, line, warnings)

    # -- CSV: question,answer[,source] -------------------------------------------------------
    def csv(self, text: str) -> list[GoldQuestion]:
        rows = _csv_rows(text, self.path)
        if not rows:
            return []
        header_line, header = rows[0]
        names = [h.strip().lstrip("\ufeff").lower() for h in header]
        allowed = (["question", "answer"], ["question", "answer", "source"])
        if names not in allowed:
            raise self.error(f"CSV header must be 'question,answer[,source]' or "
                             f"'question,references,corpus_id', got '{','.join(header)}'", header_line)
        out: list[GoldQuestion] = []
        for line, row in rows[1:]:
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(names):
                raise self.error(f"expected {len(names)} columns, got {len(row)}", line)
            rec = dict(zip(names, row, strict=True))
            question = self.question_text(rec["question"], line)
            answers = self.answers(rec["answer"], line, required=True)
            doc = self.source_doc(rec.get("source") or None, line)
            out.append(self.build(question, answers, doc, [], line, []))
        return out

    # -- Chroma's CSV: question,references,corpus_id ---------------------------------------------
    def chroma(self, text: str) -> list[GoldQuestion]:
        rows = _csv_rows(text, self.path)
        header_line, header = rows[0]
        names = [h.strip().lstrip("\ufeff").lower() for h in header]
        unknown = [h for h in names if h and h not in ("question", "references", "corpus_id")]
        if unknown or len(set(n for n in names if n)) != len([n for n in names if n]):
            raise self.error("CSV header must be 'question,references,corpus_id', got "
                             f"'{','.join(header)}'", header_line)
        col = {n: i for i, n in enumerate(names) if n}
        out: list[GoldQuestion] = []
        for line, row in rows[1:]:
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(names):
                raise self.error(f"expected {len(names)} columns, got {len(row)}", line)
            question = self.question_text(row[col["question"]], line)
            corpus = row[col["corpus_id"]].strip()
            if not corpus:
                raise self.error("missing", line, "corpus_id")
            doc = self.source_doc(corpus, line, "corpus_id")
            assert doc is not None
            try:
                refs_raw = json.loads(row[col["references"]])
            except json.JSONDecodeError as exc:
                raise self.error(f"broken JSON: {exc.msg} (column {exc.colno})", line,
                                 "references") from None
            except RecursionError:
                raise self.error("JSON nested too deeply", line, "references") from None
            if not isinstance(refs_raw, list) or not refs_raw:
                raise self.error("must be a non-empty JSON list of {content, start_index, end_index}",
                                 line, "references")
            refs: list[tuple[int, int]] = []
            warnings: list[str] = []
            for i, item in enumerate(refs_raw):
                where = f"references[{i}]"
                if not isinstance(item, dict):
                    raise self.error(f"must be an object, got {_type_name(item)}", line, where)
                span = self.span(item.get("start_index"), item.get("end_index"), doc, line, where)
                content = item.get("content")
                if isinstance(content, str) and doc.text[span[0]:span[1]] != content:
                    warnings.append(f"{where}: the text at {span[0]}..{span[1]} differs from its "
                                    "'content' (was the corpus file changed?)")
                refs.append(span)
            out.append(self.build(question, (), doc, refs, line, warnings))
        return out


def _csv_rows(text: str, path: str) -> list[tuple[int, list[str]]]:
    """Rows with the line each starts on (quoted fields may span lines)."""
    reader = csv.reader(io.StringIO(text, newline=""))
    rows: list[tuple[int, list[str]]] = []
    prev = 0
    try:
        for row in reader:
            rows.append((prev + 1, row))
            prev = reader.line_num
    except csv.Error as exc:
        raise InputError(f"broken CSV: {exc}", path=path, line=prev + 1) from None
    return rows


def _type_name(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "a number",
            float: "a number", type(None): "null"}.get(type(v), type(v).__name__)


def _clip(s: str, n: int = 60) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


# -- writing ----------------------------------------------------------------------------------------

def question_record(q: GoldQuestion) -> dict:
    """The JSONL object for a question (the shape `load_gold` reads back)."""
    rec: dict[str, Any] = {"question": q.question}
    if q.answers:
        rec["answer"] = q.answers[0] if len(q.answers) == 1 else list(q.answers)
    if q.source:
        rec["source"] = q.source
    if q.references:
        rec["references"] = [{"start": a, "end": b} for a, b in q.references]
    return rec


def _check_question(p: Path, question: GoldQuestion) -> None:
    if not question.question.strip():
        raise InputError("empty question", path=str(p), field="question")
    if not question.answers and not question.references:
        raise InputError("a question needs an answer or a reference", path=str(p), field="answer")
    if any(not normalize(a) for a in question.answers):
        raise InputError("empty answer", path=str(p), field="answer")
    for a, b in question.references:
        if a < 0 or a >= b:
            raise InputError(f"start ({a}) must be smaller than end ({b})", path=str(p),
                             field="references")


def _same_question(rec: Any, q: GoldQuestion) -> bool:
    """Whether a line of the file holds `q` already: the same question text (case and spacing
    aside) about the same document (a side that names none matches any)."""
    if not isinstance(rec, dict) or not isinstance(rec.get("question"), str):
        return False
    if normalize(rec["question"]) != normalize(q.question):
        return False
    src = rec.get("source")
    return not src or not q.source or src == q.source


def _merged(rec: dict, q: GoldQuestion) -> dict:
    """An existing line with `q` folded in: answers united (the line's first), references replaced
    when `q` brings some, every other key of the line kept."""
    out = dict(rec)
    old = rec.get("answer", rec.get("answers"))
    answers = [old] if isinstance(old, str) else [a for a in old if isinstance(a, str)] \
        if isinstance(old, list) else []
    seen = {normalize(a) for a in answers}
    for a in q.answers:
        if normalize(a) not in seen:
            seen.add(normalize(a))
            answers.append(a)
    out.pop("answers", None)
    out.pop("answer", None)
    if answers:
        out["answer"] = answers[0] if len(answers) == 1 else answers
    if q.source and not rec.get("source"):
        out["source"] = q.source
    if q.references:
        out["references"] = [{"start": a, "end": b} for a, b in q.references]
    # Keep the line's key order, new keys last.
    return {**{k: out[k] for k in rec if k in out}, **{k: v for k, v in out.items() if k not in rec}}


def add_questions(path: str | os.PathLike[str], questions: Sequence[GoldQuestion]) -> tuple[str, ...]:
    """Add questions to a JSONL gold file (created if missing) in one atomic write, without
    duplicates: a question already in the file (same text, same document) is updated in its line
    (answers united, references replaced by the new ones) instead of appended again. Returns, per
    question, "added", "updated" or "unchanged"; nothing is written when all are unchanged."""
    from inspector.core.runtime.atomic import atomic_write_text

    p = Path(path)
    if p.suffix.lower() not in JSONL_SUFFIXES:
        raise InputError("questions can only be appended to a .jsonl gold file", path=str(p))
    for q in questions:
        _check_question(p, q)
    lines, parsed = _read_lines(p)  # a line that is not JSON is kept as it is; loading reports it
    outcomes: list[str] = []
    for q in questions:
        at = next((i for i, rec in enumerate(parsed) if _same_question(rec, q)), None)
        if at is None:
            rec = question_record(q)
            lines.append(json.dumps(rec, ensure_ascii=False))
            parsed.append(rec)
            outcomes.append("added")
            continue
        merged = _merged(parsed[at], q)
        if merged == parsed[at]:
            outcomes.append("unchanged")
        else:
            lines[at] = json.dumps(merged, ensure_ascii=False)
            parsed[at] = merged
            outcomes.append("updated")
    if any(o != "unchanged" for o in outcomes):
        atomic_write_text(p, "".join(line + "\n" for line in lines))
    return tuple(outcomes)


def append_question(path: str | os.PathLike[str], question: GoldQuestion) -> str:
    """Add one question to a JSONL gold file (created if missing), atomically: a crash leaves the
    old file or the new one. Saving the same question again updates its line instead of writing a
    duplicate (`add_questions`); returns "added", "updated" or "unchanged"."""
    return add_questions(path, (question,))[0]


def _read_lines(p: Path) -> tuple[list[str], list[Any]]:
    """A JSONL file's lines (without the final empty one) and each parsed (None where not JSON)."""
    try:
        old, _enc = decode_bytes(p.read_bytes(), str(p))
    except FileNotFoundError:
        return [], []
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=str(p)) from None
    if old.startswith("\ufeff"):
        old = old[1:]
    lines = old.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    parsed: list[Any] = []
    for raw in lines:
        try:
            parsed.append(json.loads(raw) if raw.strip() else None)
        except (json.JSONDecodeError, RecursionError):
            parsed.append(None)
    return lines, parsed


def question_line(path: str | os.PathLike[str], question: GoldQuestion) -> str | None:
    """The line (as written in the file) that holds `question` (same text, same document; see
    `add_questions`), or None: what an undo of adding it must put back."""
    lines, parsed = _read_lines(Path(path))
    return next((lines[i] for i, rec in enumerate(parsed) if _same_question(rec, question)), None)


def remove_question(path: str | os.PathLike[str], question: GoldQuestion, *,
                    restore: str | None = None) -> bool:
    """Undo an `add_questions` of `question`: remove the line that holds it, or, with `restore`
    (the line before, from `question_line`), put that line back in its place. One atomic write;
    every other line is kept byte for byte. False when no line holds it."""
    from inspector.core.runtime.atomic import atomic_write_text

    p = Path(path)
    lines, parsed = _read_lines(p)
    at = next((i for i, rec in enumerate(parsed) if _same_question(rec, question)), None)
    if at is None:
        return False
    if restore is None:
        del lines[at]
    else:
        lines[at] = restore.rstrip("\n")
    atomic_write_text(p, "".join(line + "\n" for line in lines))
    return True


def questions_from(items: Iterable[tuple[str, str | Sequence[str]]], source: str | None = None
                   ) -> tuple[GoldQuestion, ...]:
    """In-memory questions from (question, answer(s)) pairs (tests, the window's quick check)."""
    out = []
    for q, a in items:
        answers = (a,) if isinstance(a, str) else tuple(a)
        out.append(GoldQuestion(question=q, answers=answers, source=source))
    return tuple(out)


__all__ = ["GoldQuestion", "GoldSet", "load_gold", "append_question", "add_questions", "question_line",
           "remove_question", "normalize", "normalized_text", "answer_spans",
           "NormalizedText", "resolve_source", "locate_passage", "detect_format", "question_record",
           "questions_from"]
