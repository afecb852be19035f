"""Chunking a large document in the helper process (`inspector.core.runtime.offload`).

The window's chunking job (`inspector.qt.controllers.chunk_jobs`) sends a large document here
instead of chunking it on a worker thread, whose Python would starve the GUI thread of the GIL
(dragging the size slider over a 20 MB document: 1-3 s of Python per move). Two calls, as the
job's two stages: `chunk_stage` (the strategy's chunks, their statistics, the headings) and
`annotate_stage` (word pieces measured for each chunk). Both answer plain data: chunks as columns
(`packed`), which the caller unpacks.

The helper keeps what it was sent: documents by content (a 20 MB text is pickled once, not on
every slider move) and the last stage-one chunks, which stage two annotates. The caller sends a
document only when the helper says it lacks it (`NeedDocument`), and the helper's own caches
(tokens, word pieces, structure) stay warm between moves as they would in the window's process.

Only the built-in strategies that need nothing but the document are run here (`can_run`):
`semantic` needs the embedding model, which lives in the window's process, and a strategy the
user registered exists only there.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from inspector.core.chunking.chunk import anchored
from inspector.core.chunking.embed_view import with_view
from inspector.core.chunking.packed import PackedChunks, pack
from inspector.core.chunking.stats import ChunkStats
from inspector.core.documents.document import Document
from inspector.core.runtime import offload
from inspector.core.runtime.gcpause import paused_gc
from inspector.core.runtime.lru import SizedLRU

if TYPE_CHECKING:
    from inspector.core.text.structure import Outline


def warm_up() -> None:
    """The helper's first job (`Offload.warm_up`): import what its jobs use, the chunkers (this
    module's jobs) and bm25s (`retrieval.index`'s BM25 job), so the first document sent after
    launch does not wait a second for the imports."""
    import bm25s  # noqa: F401

    from inspector.core.chunking import builtins

    builtins.load()


def corpus_warm_up() -> None:
    """The first job of each corpus pool process (`offload.corpus_pool`): the chunkers and the
    token encoding's tables, nothing else (no BM25: its jobs go to the window's helper)."""
    from inspector.core.chunking import builtins
    from inspector.core.text.tokens import encoding

    builtins.load()
    encoding()


#: Strategies that need more than the document and their parameters.
NOT_HERE = frozenset({"semantic"})


class NeedDocument(Exception):
    """The helper does not hold the document it was asked about: send it along."""


@dataclass(frozen=True, slots=True)
class Stage:
    """What one call answers."""

    chunks: PackedChunks
    stats: ChunkStats
    outline: Outline | None = None
    """The document's outline (stage one only): its headings are shown beside the chunks, and
    the window's process keeps it (`structure.remember_outline`) rather than scan the text again."""

    @property
    def headings(self) -> tuple[tuple[int, int, int], ...]:
        """(start, end, level) of every heading (stage one; none for stage two)."""
        from inspector.core.text.structure import heading_marks

        return () if self.outline is None else heading_marks(self.outline)


DocKey = tuple[str, str, str, str]

#: Documents sent to this helper, by content and name (4 at most, 128 M characters: two of the
#: largest a user can open, 50 MB).
_DOCS: SizedLRU[Document] = SizedLRU(4, 128_000_000)
offload.holding(_DOCS.total_size)  # a helper keeping them may rightly be large (`retire_if_grown`)
#: The last stage-one chunks: (key, chunks).
_LAST: list[Any] = [None, ()]


def doc_key(doc: Document) -> DocKey:
    return (doc.sha256, doc.doc_id, doc.name, doc.kind)


def _last_key(key: DocKey, strategy: str, params: Mapping[str, Any]) -> tuple[Any, ...]:
    # The piece model too: chunks fitted to one model's limit are not another's.
    from inspector.core.text.wordpieces import current_piece_spec

    return (key, strategy, repr(sorted(dict(params).items())), current_piece_spec())


def can_run(strategy: str) -> bool:
    """Whether `strategy` can be run in the helper (a built-in the user has not replaced, which
    needs nothing but the document)."""
    from inspector.core.chunking.registry import BUILTINS, strategies

    builtin = {s.name: s for s in BUILTINS}.get(strategy)
    return strategy not in NOT_HERE and builtin is not None and strategies().get(strategy) is builtin


def _received(doc: Any) -> Document | None:
    """The document a job was sent: a parcel unpickled in a process is the document already; one
    still in this process (the pool died and `Offload` runs the calls left here) holds it."""
    return doc.doc if isinstance(doc, _DocumentParcel) else doc


def _document(key: DocKey, doc: Document | None) -> Document:
    doc = _received(doc)
    if doc is not None:
        _DOCS.put(key, doc, len(doc.text))
        return doc
    held = _DOCS.lookup(key)
    if held is None:
        raise NeedDocument(key[1])
    return held


class _DocumentParcel:
    """A document whose text travels through a file (`offload.ship`); unpickled in the helper
    as the `Document` again (None when the text did not arrive: `_document` then asks for it)."""

    def __init__(self, doc: Document, text: Any) -> None:
        self.doc, self.text = doc, text

    def __reduce__(self) -> tuple[Any, ...]:
        # Every field but the text as the document itself pickles them; the text beside it.
        return (_document_of, (replace(self.doc, text=""), self.text, self.doc.sha256))


def _document_of(shell: Document, text: str | None, sha256: str) -> Document | None:
    if text is None:
        return None
    doc = replace(shell, text=text)
    object.__setattr__(doc, "_sha256", sha256)  # the sender's, of this very text
    return doc


@contextlib.contextmanager
def shipped(doc: Document) -> Iterator[Any]:
    """`doc` as `chunk_stage` and `annotate_stage` should be sent it: a large one's text through a
    file (`offload.ship`: pickling 20 MB in the pipe's feeder thread held the GIL for 42 ms)."""
    with offload.ship(doc.text) as text:
        yield doc if text is doc.text else _DocumentParcel(doc, text)


def _use_model(pieces: tuple[str, str, int, int] | str | None) -> None:
    """Count pieces in the helper as the window does: `pieces` is the window's piece model
    (`wordpieces.piece_override()`: None for the bundled model), or a model folder as the
    window sent it before piece models existed."""
    from inspector.core.text.wordpieces import use_model_path, use_piece_spec

    if isinstance(pieces, str):
        use_model_path(pieces)
    else:
        use_piece_spec(pieces)


def chunk_stage(key: DocKey, doc: Document | None, strategy: str, params: Mapping[str, Any],
                pieces: tuple[str, str, int, int] | str | None, with_prefix: bool = True,
                view: str = "raw") -> Stage:
    """Stage one: the strategy's chunks of the document (`anchored` for `with_prefix`, marked
    with the embedding `view`), their statistics and the headings."""
    from inspector.core.chunking.registry import get_strategy
    from inspector.core.chunking.stats import chunk_stats
    from inspector.core.text.structure import outline_of

    _use_model(pieces)
    d = _document(key, doc)
    with paused_gc():
        chunks = get_strategy(strategy)(d, params)
        _LAST[:] = [_last_key(key, strategy, params), chunks]
        shown = with_view(d, anchored(chunks, with_prefix), view)
        return Stage(pack(shown), chunk_stats(d, shown), outline_of(d))  # no parse for the headings


def annotate_stage(key: DocKey, doc: Document | None, strategy: str, params: Mapping[str, Any],
                   pieces: tuple[str, str, int, int] | str | None, with_prefix: bool,
                   document_tokens: int, view: str = "raw") -> Stage:
    """Stage two: the chunks of stage one with their word pieces measured (`annotate`: of the
    text the `view` sends)."""
    from inspector.core.chunking.annotate import annotate
    from inspector.core.chunking.registry import get_strategy
    from inspector.core.chunking.stats import chunk_stats

    _use_model(pieces)
    d = _document(key, doc)
    with paused_gc():
        last_key, chunks = _LAST
        if last_key != _last_key(key, strategy, params):
            chunks = get_strategy(strategy)(d, params)
        done = annotate(d, with_view(d, chunks, view), with_prefix=with_prefix)  # checks for cancellation
        return Stage(pack(done), chunk_stats(d, done, document_tokens=document_tokens))


def chunk_job(sent: Document | None, strategy: str, params: Mapping[str, Any],
              pieces: tuple[str, str, int, int] | str | None) -> PackedChunks:
    """One document of a corpus chunked in a pool process (`ChunkStore.chunk_each`): the
    strategy's chunks, as columns. Nothing is kept but what the chunkers cache themselves."""
    from inspector.core.chunking.registry import get_strategy

    _use_model(pieces)
    doc = _received(sent)
    if doc is None:  # its text did not arrive (the caller gave up on it meanwhile)
        raise NeedDocument("")
    with paused_gc():
        return pack(get_strategy(strategy)(doc, params))
