"""Imported chunks: a JSONL of chunks made by another pipeline, placed back onto the document.

One record per line, as LangChain and LlamaIndex write them:

* LangChain `Document`: `{"page_content": ..., "metadata": {"start_index": 120, "source": ...}}`
  (also what `inspector.core.chunking.records.chunk_record` writes, with `end_index`);
* LlamaIndex `TextNode.to_json()`: `{"text": ..., "start_char_idx": 120, "end_char_idx": 300}`.

Offsets are used when they check out (the text there equals the chunk's text modulo whitespace);
otherwise the chunk is aligned by its text, in file order, with `external.align_chunks`. Chunks go
through `SpanContext.make`, so token counts, heading paths, prefixes and flags are computed the same
way as for every strategy, and `imported_strategy` makes the file one more strategy to compare.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.external import (
    AlignmentReport,
    SquashedText,
    Unaligned,
    align_chunks,
    record_report,
    register_external,
    squash_whitespace,
)
from inspector.core.chunking.params import Strategy
from inspector.core.documents.document import Document
from inspector.core.errors import InputError

#: Field names that may hold a chunk's text, in order of preference.
TEXT_FIELDS = ("page_content", "text", "content", "chunk", "chunk_text")
_START_FIELDS = ("start_char_idx", "start_index", "start")
_END_FIELDS = ("end_char_idx", "end_index", "end")
_DOC_FIELDS = ("doc_id", "source", "file_path", "file_name", "filename")
_ID_FIELDS = ("chunk_id", "id", "id_", "node_id")
MAX_LISTED_WARNINGS = 5


@dataclass(frozen=True, slots=True)
class ChunkRecord:
    """One line of an imported chunk file."""

    line: int
    """1-based line number in the file."""
    text: str
    start: int | None = None
    """Claimed start offset (None if absent or LangChain's "not found" -1)."""
    end: int | None = None
    doc_names: tuple[str, ...] = ()
    """Values that name the record's document (doc_id, source, file name ...)."""
    ident: str | None = None
    """The record's own chunk id, if it has one."""


@dataclass(frozen=True, slots=True)
class ImportResult:
    """Imported chunks placed on one document."""

    chunks: tuple[Chunk, ...]
    unaligned: tuple[Unaligned, ...]
    """Records that could not be placed; `line` is the line of the file."""
    warnings: tuple[str, ...] = ()
    """Offsets that did not check out, records of other documents skipped, ..."""


def _field(rec: Mapping[str, Any], meta: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    for name in names:
        if name in rec:
            return rec[name]
    for name in names:
        if name in meta:
            return meta[name]
    return None


def _offset(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def read_chunk_records(path: str | os.PathLike[str]) -> list[ChunkRecord]:
    """Parse a chunk JSONL; InputError names the file and line of a broken record."""
    shown = str(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise InputError("no such file", path=shown) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", path=shown) from None
    try:
        content = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 (byte {exc.start})", path=shown) from None
    records: list[ChunkRecord] = []
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"broken JSON: {exc.msg} (column {exc.colno})", path=shown, line=number) from None
        if not isinstance(rec, dict):
            raise InputError(f"expected a JSON object, got {type(rec).__name__}", path=shown, line=number)
        meta = rec.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        text = None
        for name in TEXT_FIELDS:
            if name in rec:
                text = rec[name]
                if not isinstance(text, str):
                    raise InputError(f"must be a string, got {type(text).__name__}", path=shown,
                                     line=number, field=name)
                break
        if text is None:
            raise InputError(f"no chunk text: expected a '{TEXT_FIELDS[0]}' or '{TEXT_FIELDS[1]}' field",
                             path=shown, line=number)
        names = tuple(v for v in (_field(rec, meta, (f,)) for f in _DOC_FIELDS) if isinstance(v, str) and v)
        ident = _field(rec, meta, _ID_FIELDS)
        records.append(ChunkRecord(number, text, _offset(_field(rec, meta, _START_FIELDS)),
                                   _offset(_field(rec, meta, _END_FIELDS)), names,
                                   None if ident is None else str(ident)))
    if not records:
        raise InputError("holds no chunk records", path=shown)
    return records


def _names_doc(name: str, doc: Document) -> bool:
    if name in (doc.doc_id, doc.name) or (doc.path and name == doc.path):
        return True
    return Path(name).name == doc.name


def _records_for(doc: Document, records: list[ChunkRecord], warnings: list[str]) -> list[ChunkRecord]:
    """The records of this document when the file holds several (by doc_id/source/file name)."""
    named = [r for r in records if r.doc_names]
    if not named:
        return records
    mine = [r for r in records if not r.doc_names or any(_names_doc(n, doc) for n in r.doc_names)]
    if len(mine) == len(records):
        return records
    if any(r.doc_names for r in mine):
        warnings.append(f"skipped {len(records) - len(mine)} records of other documents")
        return mine
    warnings.append(f"no record names {doc.doc_id}; all {len(records)} records aligned against it")
    return records


def _checked_span(doc: Document, nt: SquashedText, rec: ChunkRecord) -> tuple[int, int] | None:
    """The record's own offsets, trimmed, when the text there matches the record modulo whitespace."""
    if rec.start is None:
        return None
    text = doc.text
    p = squash_whitespace(rec.text)
    if not p or rec.start >= len(text):
        return None
    if rec.end is not None and (not rec.start < rec.end <= len(text)
                                or squash_whitespace(text[rec.start:rec.end]) != p):
        return None
    ns = nt.to_norm(rec.start)
    if not nt.norm.startswith(p, ns):
        return None
    return nt.span(ns, len(p))


def align_records(doc: Document, records: list[ChunkRecord], path: str = "") -> ImportResult:
    """Place records on the document: checked offsets first, text alignment for the rest."""
    from inspector.core.chunking.common import SpanContext

    warnings: list[str] = []
    recs = _records_for(doc, records, warnings)
    nt = SquashedText(doc.text)
    pieces: list[str | tuple[int, int]] = []
    bad_offsets: list[int] = []
    for rec in recs:
        span = _checked_span(doc, nt, rec)
        if span is None and rec.start is not None:
            bad_offsets.append(rec.line)
        pieces.append(span if span is not None else rec.text)
    if bad_offsets:
        listed = ", ".join(str(n) for n in bad_offsets[:MAX_LISTED_WARNINGS])
        more = f" and {len(bad_offsets) - MAX_LISTED_WARNINGS} more" if len(bad_offsets) > MAX_LISTED_WARNINGS else ""
        warnings.append(f"offsets do not match the text on line(s) {listed}{more}; aligned by text instead")
    result = align_chunks(doc.text, pieces, normalized=nt)
    unaligned = tuple(replace(u, line=recs[u.index].line, preview=recs[u.index].text[:60])
                      for u in result.unaligned)
    chunks: tuple[Chunk, ...] = ()
    if result.spans:
        made = SpanContext(doc).make(result.spans)
        out = []
        for c, i in zip(made, result.indices, strict=True):
            rec = recs[i]
            extra: dict[str, Any] = {"import_line": rec.line}
            if rec.ident is not None:
                extra["import_id"] = rec.ident
            out.append(replace(c, meta={**c.meta, **extra}))
        chunks = tuple(out)
    if path:
        warnings = [f"{path}: {w}" for w in warnings]
    return ImportResult(chunks, unaligned, tuple(warnings))


def load_chunk_jsonl(path: str | os.PathLike[str], doc: Document) -> ImportResult:
    """Chunks from a JSONL file (LangChain or LlamaIndex shape) placed on `doc`.

    Raises InputError (file and line) for unreadable files, broken JSON lines and records
    without text. Records that cannot be placed are in `unaligned`, never dropped silently.
    """
    return align_records(doc, read_chunk_records(path), str(path))


def imported_strategy(name: str, path: str | os.PathLike[str], *, register: bool = True) -> Strategy:
    """A strategy that returns the chunks in `path` for whichever document it is run on.

    The file is parsed now (so a broken file fails here, with its line) and again whenever it
    changes on disk. What could not be placed is in `external.last_alignment_report(name, doc_id)`.
    """
    p = Path(path)
    shown = str(p)
    state: dict[str, Any] = {"records": read_chunk_records(p), "stamp": _stamp(p)}

    def run(doc: Document, params: Mapping[str, Any]) -> tuple[Chunk, ...]:
        stamp = _stamp(p)
        if stamp != state["stamp"]:
            state["records"], state["stamp"] = read_chunk_records(p), stamp
        result = align_records(doc, state["records"], shown)
        record_report(AlignmentReport(name, doc.doc_id, len(state["records"]), result.unaligned,
                                      result.warnings))
        return result.chunks

    strategy = Strategy(name, run, (), f"Chunks imported from {p.name}, placed on the document")
    if register:
        register_external(strategy)
    return strategy


def _stamp(p: Path) -> tuple[int, int] | None:
    try:
        st = p.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size
