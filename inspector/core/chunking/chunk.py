"""Chunks: spans of a document plus what a retrieval pipeline attaches to them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the chunk type loads without the document's numpy (issue 31)
    from inspector.core.documents.document import Document

#: Flags a chunk can carry (shown in the table and painted on the text).
FLAGS = ("no_heading", "cut_mid_sentence", "split_table", "over_budget", "truncated_by_embedder", "stub")

STUB_TOKENS = 32
"""A chunk of fewer cl100k tokens than this is a `stub`, for every strategy: about one sentence,
too little text to stand on its own, yet short vectors of a heading and a lead-in ("We are involved
in the following organizations:") sit close to any question about their topic and outrank the
content they introduce (testers saw such a 14-token chunk ranked first for both questions about the
table after it). `markdown` merges chunks below this floor into a neighbour by default."""


PREFIX_SEPARATOR = " > "


def embedded(prefix: str, body: str) -> str:
    """What is embedded for a span `body` under `prefix`: the prefix, a blank line, the body
    (the body alone without a prefix). `Chunk.embedded_text` and the helper process's BM25
    indexing (`inspector.core.retrieval.index`) both make it here."""
    return f"{prefix}\n\n{body}" if prefix else body


@dataclass(frozen=True, slots=True)
class Chunk:
    """A span of a document's text plus what a retrieval pipeline would attach to it."""

    id: int
    """Position in the strategy's output (0-based); unique within one document's chunks."""
    start: int
    """Code-point offset into `Document.text` where the chunk starts."""
    end: int
    """Offset just past the chunk's last character: the text is `doc.text[start:end]`."""
    token_count: int
    """Exact cl100k count of the span text (`len(enc.encode(text))`)."""
    heading_path: tuple[str, ...] = ()
    """Headings enclosing the chunk's start (Markdown)."""
    prefix: str = ""
    """Context prefix: title > heading path (> table header for split tables). Kept beside the span."""
    parent_id: int | None = None
    """For children of `parent_child`: the id of the parent chunk."""
    flags: frozenset[str] = frozenset()
    """Subset of FLAGS."""
    role: str = "chunk"
    """"chunk", or "parent"/"child" for parent_child."""
    doc_id: str = ""
    """Document the span belongs to (corpus mode)."""
    embed_tokens: int | None = None
    """Word pieces the embedding model sees for prefix + text (incl. [CLS]/[SEP]), when measured."""
    embed_dropped: int = 0
    """Word pieces beyond the model's limit, silently dropped by the embedder."""
    truncated_at: int | None = None
    """Offset in the document where the embedder stops reading (None if nothing is dropped)."""
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    """Extra per-chunk facts (e.g. page number, table header text)."""

    @property
    def key(self) -> str:
        """Corpus-wide identifier, e.g. "handbook.md#12"."""
        return f"{self.doc_id}#{self.id}"

    def text(self, doc: Document) -> str:
        return doc.text[self.start:self.end]

    def embedded_text(self, doc: Document, *, with_prefix: bool = True) -> str:
        """Exactly what is embedded: prefix, a blank line, then the span text, or its embedding
        view when the chunk carries one (`inspector.core.chunking.embed_view`)."""
        prefix, body, _cut = self.embedded_parts(doc, with_prefix=with_prefix)
        return embedded(prefix, body)

    def embedded_parts(self, doc: Document, *, with_prefix: bool = True) -> tuple[str, str, int | None]:
        """What is embedded in its parts: (prefix, body, cut). `embedded_text` joins prefix and
        body with a blank line; the body is the span text, or its embedding view (a split table's
        header row put in front unless the prefix carries it); `cut` is where in the body the
        embedder stops reading (`truncated_at`), None when it reads it all or the view hides where."""
        prefix = self.prefix if with_prefix else ""
        at = self.truncated_at if self.truncated_at is not None and self.start <= self.truncated_at < self.end else None
        view = self.meta.get("embed_view") if self.meta else None
        if not view:
            return prefix, doc.text[self.start:self.end], None if at is None else at - self.start
        from inspector.core.text.embed_view import view_text

        header = self.meta.get("table_header", "")
        prefix_sent, body = view_text(doc.text, self.start, self.end, prefix, view, header)
        cut = None
        if at is not None:  # the view of the part read, under the same prefix (which may carry the header)
            kept = view_text(doc.text, self.start, at, prefix, view, header)[1]
            cut = len(kept) if body.startswith(kept) else None
        return prefix_sent, body, cut

    def with_flags(self, *add: str) -> Chunk:
        return replace(self, flags=self.flags | frozenset(add))


_CHUNK_FIELDS = tuple(f for f in Chunk.__dataclass_fields__)


_CHUNK_SETTERS = tuple(Chunk.__dict__[name].__set__ for name in _CHUNK_FIELDS)


_new = object.__new__


def new_chunk(id: int, start: int, end: int, token_count: int, heading_path: tuple[str, ...],
              prefix: str, parent_id: int | None, flags: frozenset[str], role: str, doc_id: str,
              meta: Mapping[str, Any]) -> Chunk:
    """The same object `Chunk(...)` makes, in half the time: a frozen dataclass's generated
    `__init__` goes through `object.__setattr__` per field, which dominates building thousands of
    chunks on every slider move. This fills the slots directly (a test checks equality)."""
    c = _new(Chunk)
    for setter, value in zip(_CHUNK_SETTERS, (id, start, end, token_count, heading_path, prefix,
                                              parent_id, flags, role, doc_id, None, 0, None, meta), strict=True):
        setter(c, value)
    return c


def anchored(chunks: tuple[Chunk, ...], with_prefix: bool) -> tuple[Chunk, ...]:
    """`chunks` as the embedder sees them: `no_heading` (the span holds no heading, so nothing in
    it says which section it belongs to) is dropped from a chunk under a heading whose context
    prefix (title > heading path) is embedded with it, since the model then reads its section.
    Without the prefix, or before the first heading, the flag stays."""
    if not with_prefix:
        return chunks
    if not any("no_heading" in c.flags and c.heading_path and c.prefix for c in chunks):
        return chunks
    return tuple(replace(c, flags=c.flags - {"no_heading"}) if "no_heading" in c.flags and c.heading_path and c.prefix
                 else c for c in chunks)
