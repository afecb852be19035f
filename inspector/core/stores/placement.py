"""Placing a store's records on the opened documents, as spans (STYLE.md lesson 1).

Each record names its source document in its metadata: "source" (LangChain's loaders), else
"file_path", "file_name" or "filename" (LlamaIndex and others), or the key the user names
(`source_key`). A source matches an opened document by its path or doc_id exactly, else by the
most trailing path components in common ("/home/ann/docs/hr/handbook.md" matches the opened
"hr/handbook.md" before "it/handbook.md"; a bare "handbook.md" matches either, so it is
ambiguous between them). With one document open, records that name no source are placed on it.

The records of one document then go through the imported chunks' alignment
(`chunking.imported.align_records`): a `start_index` (LangChain's `add_start_index=True`) is used
when the text there is the record's text, whitespace aside; otherwise the record is aligned by its
text. The alignment places pieces in document order, and a store returns records in its own order
(Qdrant's by point id, a random UUID for LangChain), so the records are first sorted by where they
start: the checked start_index, else where their text next occurs (records that repeat a text take
its occurrences in turn, so a paragraph indexed twice lands on both places).

Nothing is dropped silently: every record not placed is in `Placement.unplaced` with its reason.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.external import SquashedText, squash_whitespace
from inspector.core.chunking.imported import ChunkRecord, align_records
from inspector.core.documents.document import Document
from inspector.core.stores.collection import StoreCollection, meta_value

SOURCE_KEYS = ("source", "file_path", "file_name", "filename")
"""Metadata keys that name a record's source document, in order of preference."""
START_KEYS = ("start_index", "start_char_idx")
END_KEYS = ("end_index", "end_char_idx")

NO_TEXT = "no text"
NO_SOURCE = "no source"
SOURCE_NOT_OPENED = "source not opened"
SOURCE_AMBIGUOUS = "source ambiguous"
TEXT_NOT_FOUND = "text not found"
TEXT_AMBIGUOUS = "text ambiguous"
REASONS = (NO_TEXT, NO_SOURCE, SOURCE_NOT_OPENED, SOURCE_AMBIGUOUS, TEXT_NOT_FOUND, TEXT_AMBIGUOUS)
"""Why a record was not placed, as `UnplacedRecord.reason` says it."""

PREVIEW_CHARS = 60


@dataclass(frozen=True, slots=True)
class UnplacedRecord:
    """A record of the store that is on no document."""

    row: int
    """Its position in the StoreCollection (the row of its vector)."""
    id: str
    """Its id in the store."""
    reason: str
    """One of REASONS."""
    detail: str
    """The reason in a sentence, naming what was looked for."""
    source: str | None
    """The source its metadata names (None when it names none)."""
    preview: str
    """The first PREVIEW_CHARS characters of its text."""


@dataclass(frozen=True, slots=True)
class Placement:
    """A store's records as chunks on the opened documents."""

    chunks: Mapping[str, tuple[Chunk, ...]]
    """Chunks by doc_id (every opened document, an empty tuple for those no record is on); each
    chunk's meta holds "store_id" and "store_row"."""
    rows: Mapping[tuple[str, int], int]
    """(doc_id, chunk id) -> the store's row (record and vector) the chunk came from. Two records
    with the same text are two chunks, each with its own row."""
    unplaced: tuple[UnplacedRecord, ...]
    """Records not placed, in row order."""
    warnings: tuple[str, ...] = ()
    """Placed, but worth saying: start_index values that did not match, records without a source
    put on the only document, records that repeat another one's span."""
    records: int = 0
    """Records looked at (placed + unplaced)."""

    @property
    def placed(self) -> int:
        return sum(len(cs) for cs in self.chunks.values())

    def row_of(self, chunk: Chunk) -> int:
        """The store's row of a chunk of this placement."""
        return self.rows[(chunk.doc_id, chunk.id)]

    def counts(self) -> dict[str, int]:
        """Unplaced records by reason (only reasons that occur)."""
        out: dict[str, int] = {}
        for u in self.unplaced:
            out[u.reason] = out.get(u.reason, 0) + 1
        return out

    def summary(self) -> str:
        """"placed 140 of 143 records on 1 document; not placed: 2 source not opened, 1 text not found"."""
        docs = sum(1 for cs in self.chunks.values() if cs)
        line = f"placed {self.placed} of {self.records} records on {docs} document{'s' if docs != 1 else ''}"
        if self.unplaced:
            line += "; not placed: " + ", ".join(f"{n} {r}" for r, n in self.counts().items())
        return line


# -- sources ---------------------------------------------------------------------------------------

_SEP_RE = re.compile(r"[\\/]+")


def _parts(path: str) -> tuple[str, ...]:
    """Path components, '/' and '\\' alike (a store filled on Windows names "C:\\docs\\a.md")."""
    if path.lower().startswith("file://"):
        path = path[7:]
    return tuple(p for p in _SEP_RE.split(path.strip()) if p not in ("", "."))


def _common_tail(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


class _Sources:
    """Matches a record's source to an opened document (see the module's docstring)."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.exact: dict[str, list[Document]] = {}
        for d in docs:
            for key in {d.path, d.doc_id}:
                if key:
                    self.exact.setdefault(key, []).append(d)
        self.parts = [(d, [_parts(p) for p in {d.path, d.doc_id, d.name} if p]) for d in docs]
        self.memo: dict[str, tuple[Document | None, str, str]] = {}

    def match(self, source: str) -> tuple[Document | None, str, str]:
        """(document, "", "") or (None, reason, detail)."""
        hit = self.memo.get(source)
        if hit is None:
            hit = self.memo[source] = self._match(source)
        return hit

    def _match(self, source: str) -> tuple[Document | None, str, str]:
        exact = self.exact.get(source)
        if exact is not None and len(exact) == 1:
            return exact[0], "", ""
        want = _parts(source)
        best = 0
        winners: list[Document] = []
        for doc, candidates in self.parts:
            score = max((_common_tail(want, p) for p in candidates), default=0)
            if score > best:
                best, winners = score, [doc]
            elif score == best and score:
                winners.append(doc)
        if not winners:
            return None, SOURCE_NOT_OPENED, f"its source {source!r} is none of the opened documents"
        if len(winners) > 1:
            names = ", ".join(d.doc_id for d in winners[:5])
            return None, SOURCE_AMBIGUOUS, f"its source {source!r} could be any of {names}"
        return winners[0], "", ""


def record_source(meta: Mapping[str, Any], source_key: str | None = None) -> str | None:
    """The source document a record's metadata names (None when it names none)."""
    for key in (source_key,) if source_key else SOURCE_KEYS:
        value = meta_value(meta, key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _offset(meta: Mapping[str, Any], keys: tuple[str, ...]) -> int | None:
    """A non-negative integer offset (LangChain writes -1 for "not found"; JSON may give 12.0)."""
    for key in keys:
        value = meta.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, int):
            return value if value >= 0 else None
    return None


# -- placing ---------------------------------------------------------------------------------------

def place_records(collection: StoreCollection, docs: Sequence[Document], *,
                  source_key: str | None = None) -> Placement:
    """Place every record of `collection` on one of `docs` (see the module's docstring).

    `source_key` (default: the collection's own, else SOURCE_KEYS) names the metadata key that
    holds a record's source document.
    """
    key = source_key or collection.source_key
    sources = _Sources(docs)
    only = docs[0] if len(docs) == 1 else None
    per_doc: dict[str, list[int]] = {d.doc_id: [] for d in docs}
    unplaced: list[UnplacedRecord] = []
    warnings: list[str] = []
    unnamed = 0
    looked_for = repr(key) if key else ", ".join(repr(k) for k in SOURCE_KEYS)

    def skip(row: int, reason: str, detail: str, source: str | None) -> None:
        unplaced.append(UnplacedRecord(row, collection.ids[row], reason, detail, source,
                                       collection.texts[row][:PREVIEW_CHARS]))

    for row, (text, meta) in enumerate(zip(collection.texts, collection.metadatas, strict=True)):
        source = record_source(meta, key)
        if not text.strip():
            skip(row, NO_TEXT, "the record holds no text", source)
            continue
        if source is None:
            if only is not None:
                per_doc[only.doc_id].append(row)
                unnamed += 1
            else:
                skip(row, NO_SOURCE, f"its metadata names no source document (looked for {looked_for})", None)
            continue
        doc, reason, detail = sources.match(source)
        if doc is None:
            skip(row, reason, detail, source)
            continue
        per_doc[doc.doc_id].append(row)
    if unnamed and only is not None:
        warnings.append(f"{unnamed} record{'s name' if unnamed != 1 else ' names'} no source "
                        f"({looked_for}); placed on the only open document, {only.doc_id}")
    chunks: dict[str, tuple[Chunk, ...]] = {}
    rows: dict[tuple[str, int], int] = {}
    for doc in docs:
        placed, lost, notes = _place_on(doc, per_doc[doc.doc_id], collection, key)
        chunks[doc.doc_id] = placed
        for c in placed:
            rows[(doc.doc_id, c.id)] = c.meta["store_row"]
        unplaced.extend(lost)
        warnings.extend(notes)
    unplaced.sort(key=lambda u: u.row)
    return Placement(chunks, rows, tuple(unplaced), tuple(warnings), len(collection.texts))


def _place_on(doc: Document, rows: list[int], collection: StoreCollection,
              source_key: str | None) -> tuple[tuple[Chunk, ...], list[UnplacedRecord], list[str]]:
    """The records `rows` aligned on `doc`: chunks (meta "store_row", "store_id"), the records
    that could not be placed, and warnings."""
    if not rows:
        return (), [], []
    nt = SquashedText(doc.text)
    norm = nt.norm
    n_norm = len(norm)
    records: list[tuple[int, int, ChunkRecord]] = []
    taken: set[tuple[str, int]] = set()
    cursor = 0
    bad_starts = 0
    for row in rows:
        text = collection.texts[row]
        meta = collection.metadatas[row]
        squashed = squash_whitespace(text)
        start = _offset(meta, START_KEYS)
        checked = (start is not None and start < len(doc.text)
                   and norm.startswith(squashed, nt.to_norm(start)))
        if start is not None and not checked:
            bad_starts += 1
        if checked:
            assert start is not None
            at = nt.to_norm(start)
        else:
            at = _next_free(norm, squashed, cursor, taken)
        if at >= 0:
            taken.add((squashed, at))
            cursor = at
        key = at if at >= 0 else n_norm  # text found nowhere: last, where the alignment reports it
        rec = ChunkRecord(row + 1, text, start if checked else None,
                          _offset(meta, END_KEYS) if checked else None, (), collection.ids[row])
        records.append((key, row, rec))
    records.sort(key=lambda r: (r[0], r[1]))
    result = align_records(doc, [r[2] for r in records])
    # align_records' own warnings speak of a file's lines; the start_index check above says it
    # in a store's words (and no record of another document reaches it: no doc_names are given).
    chunks: list[Chunk] = []
    for c in result.chunks:
        row = c.meta["import_line"] - 1
        meta = {k: v for k, v in c.meta.items() if k not in ("import_line", "import_id")}
        meta.update(store_row=row, store_id=collection.ids[row])
        chunks.append(replace(c, meta=meta))
    lost = []
    for u in result.unaligned:
        row = (u.line or 0) - 1
        reason = TEXT_AMBIGUOUS if "ambiguous" in u.reason else TEXT_NOT_FOUND
        meta = collection.metadatas[row]
        lost.append(UnplacedRecord(row, collection.ids[row], reason, f"{u.reason} ({doc.doc_id})",
                                   record_source(meta, source_key), collection.texts[row][:PREVIEW_CHARS]))
    notes: list[str] = []
    if bad_starts:
        notes.append(f"{doc.doc_id}: the start_index of {bad_starts} record{'s does' if bad_starts != 1 else ' does'} "
                     "not match the text there (edited after indexing?); placed by their text instead")
    seen: set[tuple[int, int]] = set()
    repeats = 0
    for c in chunks:
        if (c.start, c.end) in seen:
            repeats += 1
        seen.add((c.start, c.end))
    if repeats:
        notes.append(f"{doc.doc_id}: {repeats} record{'s' if repeats != 1 else ''} repeat another record's "
                     "text at the same place (added to the store twice?)")
    return tuple(chunks), lost, notes


def _next_free(norm: str, squashed: str, cursor: int, taken: set[tuple[str, int]]) -> int:
    """Where `squashed` next occurs in `norm` from `cursor` (then from the top) at a place no
    record with the same text has taken; its first occurrence when all are taken; -1 if none."""
    if not squashed:
        return -1
    first = -1
    for begin in (cursor, 0) if cursor else (0,):
        at = norm.find(squashed, begin)
        while at >= 0:
            if first < 0 or at < first:
                first = at
            if (squashed, at) not in taken:
                return at
            at = norm.find(squashed, at + 1)
    return first
