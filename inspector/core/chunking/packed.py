"""Chunks as columns, to cross a process boundary cheaply.

Pickling a tuple of `Chunk`s sends every field of every chunk and, on the other side, runs the
dataclass's `__setstate__` per chunk: 37,000 chunks of a 20 MB document took 350 ms to unpickle,
most of it holding the GIL. As columns (arrays of numbers, and tables of the few distinct heading
paths, prefixes, flag sets, roles and document ids, referred to by index) they pickle in
milliseconds, and `unpack` rebuilds the chunks in a plain Python loop, which lets other threads
run between its steps.
"""

from __future__ import annotations

from array import array
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from inspector.core.chunking.chunk import _CHUNK_SETTERS, Chunk

_new = object.__new__

#: Stored for None in the integer columns that may be None (parent_id, embed_tokens, truncated_at).
_NONE = -1


@dataclass(frozen=True, slots=True)
class PackedChunks:
    """Columns of a chunk tuple (see the module's docstring); `unpack()` gives the chunks back."""

    ints: array
    """Per chunk, 7 ints: id, start, end, token_count, parent_id, embed_tokens, embed_dropped."""
    truncated_at: array
    refs: array
    """Per chunk, 5 indexes into `table`: heading_path, prefix, flags, role, doc_id."""
    table: tuple[Hashable, ...]
    """The distinct values the refs point at."""
    metas: tuple[tuple[int, dict[str, Any]], ...]
    """(position, meta) of the chunks whose meta is not empty."""

    def __len__(self) -> int:
        return len(self.truncated_at)

    def unpack(self) -> tuple[Chunk, ...]:
        """The chunks, equal to those packed."""
        ints, refs, table, cut = self.ints, self.refs, self.table, self.truncated_at
        metas = dict(self.metas)
        out: list[Chunk] = []
        append = out.append
        (s_id, s_start, s_end, s_tokens, s_path, s_prefix, s_parent, s_flags, s_role, s_doc, s_embed, s_dropped,
         s_cut, s_meta) = _CHUNK_SETTERS
        for i in range(len(cut)):
            j, r = 7 * i, 5 * i
            c = _new(Chunk)
            s_id(c, ints[j])
            s_start(c, ints[j + 1])
            s_end(c, ints[j + 2])
            s_tokens(c, ints[j + 3])
            s_path(c, table[refs[r]])
            s_prefix(c, table[refs[r + 1]])
            parent = ints[j + 4]
            s_parent(c, None if parent == _NONE else parent)
            s_flags(c, table[refs[r + 2]])
            s_role(c, table[refs[r + 3]])
            s_doc(c, table[refs[r + 4]])
            embed = ints[j + 5]
            s_embed(c, None if embed == _NONE else embed)
            s_dropped(c, ints[j + 6])
            at = cut[i]
            s_cut(c, None if at == _NONE else at)
            s_meta(c, metas.get(i) or {})
            append(c)
        return tuple(out)


def pack(chunks: Sequence[Chunk]) -> PackedChunks:
    """`chunks` as columns (their values must be what `Chunk` declares: ints >= 0 or None)."""
    index: dict[Hashable, int] = {}
    table: list[Hashable] = []

    def ref(value: Hashable) -> int:
        k = index.get(value)
        if k is None:
            k = index[value] = len(table)
            table.append(value)
        return k

    ints = array("q")
    refs = array("q")
    cut = array("q")
    metas: list[tuple[int, dict[str, Any]]] = []
    for i, c in enumerate(chunks):
        ints.extend((c.id, c.start, c.end, c.token_count, _NONE if c.parent_id is None else c.parent_id,
                     _NONE if c.embed_tokens is None else c.embed_tokens, c.embed_dropped))
        refs.extend((ref(c.heading_path), ref(c.prefix), ref(c.flags), ref(c.role), ref(c.doc_id)))
        cut.append(_NONE if c.truncated_at is None else c.truncated_at)
        if c.meta:
            metas.append((i, dict(c.meta)))
    return PackedChunks(ints, cut, refs, tuple(table), tuple(metas))
