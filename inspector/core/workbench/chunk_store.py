"""The chunk store: every document's chunks under a strategy and its parameters, remembered, and
the window's staged chunking (the chunks first, their word pieces after; large documents in the
helper process).

Two clients, two ways of keeping:

- `chunk`, `chunk_corpus`, `chunks_for` (the CLI, evaluation, sweeps, the other documents of the
  window's corpus) remember what they made in a locked LRU sized in chunks, so a sweep or a
  question over the corpus chunks each document once per setting;
- `stages` (the window's chunk job) remembers nothing: the window holds the chunks it shows, and
  a drag over the size slider would otherwise fill the store with chunkings nobody asks for again
  (issue 17's soak). Its one memory is the helper process's: a large document is sent there once
  and chunked there at every move (`inspector.core.chunking.helper_jobs`).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from inspector.core.chunking.chunk import Chunk, anchored
from inspector.core.chunking.embed_view import with_view
from inspector.core.chunking.fit import counting_view
from inspector.core.chunking.params import Strategy
from inspector.core.chunking.registry import get_strategy
from inspector.core.chunking.stats import ChunkStats
from inspector.core.documents.document import Document
from inspector.core.evaluation.config import EvalConfig
from inspector.core.runtime.cancel import Cancelled, check_cancelled
from inspector.core.runtime.gcpause import paused_gc
from inspector.core.runtime.lru import SizedLRU
from inspector.core.text.embed_view import HEADER_KEY, VIEW_KEY

log = logging.getLogger(__name__)

ChunksByDoc = Mapping[str, tuple[Chunk, ...]]

#: Chunks the store remembers over all its chunkings (about 600 bytes each; the most recent
#: chunking is kept whatever its size). Sized by documents' characters (64 M) instead, a soak's
#: sweeps and drags kept 90,000 chunks, 53 MB of small objects whose churn left the window's
#: small-object arenas fragmented (issue 17).
CHUNK_CACHE_CHUNKS = 40_000

#: Word pieces are measured in batches of this many chunks (`stages`), checking for cancellation
#: in between.
ANNOTATE_BATCH = 100
#: Documents at least this long are chunked in the helper process when there is one
#: (`inspector.core.runtime.offload`: the window's). Not only big ones: a 40 KB page with an
#: overlap near the size makes thousands of chunks, and measuring their word pieces on a thread
#: kept the GUI thread waiting for the GIL (the soak's watchdog found it there). A round trip
#: costs a few milliseconds.
HELPER_FROM_CHARS = 16_000
#: `chunk_each` sends a corpus to the pool processes when the documents to chunk hold at least
#: this many characters in all: below it, starting the pool and the round trips cost more than a
#: second core saves.
PARALLEL_FROM_CHARS = 1_000_000

#: Fingerprints of the last chunk tuples asked about, by identity: (the tuple, its fingerprint).
#: The window asks again for the same chunks at every question, preview and exact stage, and with
#: a large overlap hashing them is tens of milliseconds of Python beside the GUI thread.
_FINGERPRINTS: SizedLRU[tuple[Sequence[Chunk], str]] = SizedLRU(16, 16)

T = TypeVar("T")


def _counted(valid: Mapping[str, Any], view: str) -> str:
    """The embedding view a strategy's `fit_embedder` budget counts (issue 29): `view` when the
    budget is on, else "raw" (no budget reads it: the spans are the same under every view)."""
    return view if view != "raw" and valid.get("fit_embedder") else "raw"


def chunks_fingerprint(chunks: Sequence[Chunk]) -> str:
    """What decides an index's texts besides the document: spans, roles, parents, prefixes."""
    if isinstance(chunks, tuple):  # immutable: its fingerprint can be kept
        held = _FINGERPRINTS.lookup(id(chunks))
        if held is not None and held[0] is chunks:
            return held[1]
        fp = _fingerprint(chunks)
        _FINGERPRINTS.put(id(chunks), (chunks, fp))  # the tuple is held, so its id is not reused
        return fp
    return _fingerprint(chunks)


def _fingerprint(chunks: Sequence[Chunk]) -> str:
    """What decides an index's texts: the spans, their prefixes, and the embedding view each is
    sent under (with a split table's repeated header row), which `Chunk.embedded_text` reads from
    `meta` (a view changes no span, so without it raw and clean chunks would share one index)."""
    h = hashlib.blake2b(digest_size=16)
    for n, c in enumerate(chunks):
        if not n % 512:
            check_cancelled()
        view = f"|{c.meta.get(VIEW_KEY, '')}|{c.meta.get(HEADER_KEY, '')}" if c.meta else ""
        h.update(f"{c.id}|{c.start}|{c.end}|{c.role}|{c.parent_id}|{c.prefix}{view}\x00"
                 .encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def corpus_fingerprint(docs: Sequence[Document], chunks_by_doc: ChunksByDoc) -> str:
    """One key for an index over these documents and chunks."""
    return "|".join(f"{d.doc_id}:{d.sha256}:{chunks_fingerprint(chunks_by_doc[d.doc_id])}"
                    for d in docs if d.doc_id in chunks_by_doc)


@dataclass(frozen=True, slots=True)
class ChunkStage:
    """One stage of the window's chunking of a document (`ChunkStore.stages`)."""

    chunks: tuple[Chunk, ...]
    """The strategy's chunks; annotated with word pieces once `complete`."""
    stats: ChunkStats
    headings: tuple[tuple[int, int, int], ...]
    """(start, end, level) of every heading of the document."""
    complete: bool
    """False for the first stage (no word pieces yet), True once the embedder counts are in."""


class ChunkStore:
    """Chunks by (document content, strategy, params), remembered in a locked LRU sized in chunks;
    `documents()` says which documents `chunk_corpus` covers when it is not told (the corpus's)."""

    def __init__(self, documents: Callable[[], Sequence[Document]] | None = None, *,
                 capacity: int | None = None) -> None:
        self.documents: Callable[[], Sequence[Document]] = documents if documents is not None else tuple
        self._cache: SizedLRU[tuple[Chunk, ...]] = SizedLRU(
            64, CHUNK_CACHE_CHUNKS if capacity is None else capacity)
        # Keys being chunked right now (by `chunk` on some thread, or in the corpus pool), each
        # with the event set when that ends: a second caller waits for the first instead of
        # chunking the same document at the same time (opening a folder: the count job's pool and
        # the retrieval thread both want every document).
        self._making: dict[Any, threading.Event] = {}
        self._making_lock = threading.Lock()

    def _claim(self, key: Any) -> threading.Event | None:
        """Claim `key` for making (its event, to `_release`), or None when another caller is
        making it."""
        with self._making_lock:
            if key in self._making:
                return None
            ev = self._making[key] = threading.Event()
            return ev

    def _release(self, key: Any) -> None:
        with self._making_lock:
            ev = self._making.pop(key, None)
        if ev is not None:
            ev.set()

    def _remembered(self, key: Any, make: Callable[[], tuple[Chunk, ...]]) -> tuple[Chunk, ...]:
        """The chunks remembered under `key`, else made here, or waited for while another caller
        makes them (made here after all when that one failed or was cancelled)."""
        while True:
            held = self._cache.lookup(key)
            if held is not None:
                return held
            if self._claim(key) is not None:
                try:
                    value = make()
                    self._cache.put(key, value, len(value))  # sized in chunks
                    return value
                finally:
                    self._release(key)
            with self._making_lock:
                ev = self._making.get(key)
            while ev is not None and not ev.wait(0.05):
                check_cancelled()

    def chunk(self, doc: Document, strategy: str, params: Mapping[str, Any] | None = None, *,
              view: str = "raw") -> tuple[Chunk, ...]:
        """One document's chunks, remembered per (document content, strategy, params, the embedder's
        piece model, and the embedding `view` where a `fit_embedder` budget counts its text). The
        strategy object is part of the key, so a strategy registered again under the same name is
        rerun."""
        strat = get_strategy(strategy)
        if strat.needs_embedder:
            return strat(doc, params)  # depends on the model it is handed: not remembered here
        valid = strat.validate(params)
        # The embedder's tokenizer and limit are part of the key: `fit_embedder` budgets and the
        # truncation flags follow them, so another model's chunks are never served from here.
        key = self._key(doc, strat, valid, view)
        counted = _counted(valid, view)

        def make() -> tuple[Chunk, ...]:
            with counting_view(counted):
                return strat.func(doc, valid)
        return self._remembered(key, make)

    def _key(self, doc: Document, strat: Strategy, valid: Mapping[str, Any], view: str = "raw") -> tuple[Any, ...]:
        from inspector.core.text.wordpieces import current_piece_spec

        key = (doc.doc_id, doc.sha256, strat, tuple(sorted(valid.items(), key=lambda kv: kv[0])),
               current_piece_spec())
        counted = _counted(valid, view)
        return key if counted == "raw" else (*key, counted)

    def chunk_each(self, docs: Sequence[Document], strategy: str, params: Mapping[str, Any] | None = None,
                   *, parallel: bool | None = None, pool: Any = None, view: str = "raw"
                   ) -> Iterator[tuple[int, tuple[Chunk, ...] | None, Exception | None]]:
        """Every document's chunks, remembered as `chunk` remembers them, computed in processes
        (`offload.corpus_pool`: one per core) when `parallel` (None: when there is more than one
        core and more than one document to chunk, the strategy can run there and the documents
        are worth the trip, `PARALLEL_FROM_CHARS`). Yields (position in `docs`, chunks, None), or
        (position, None, the exception) for a document that could not be chunked, as each ends:
        remembered ones first, then in the order the processes finish. The chunks are those `chunk`
        makes, equal field by field (tests/core/test_parallel_corpus.py). Cancellation: the
        caller's cancel scope, checked between documents and, in the pool, inside each. `pool`: an
        `offload.Offload` to use instead of `corpus_pool` (a benchmark's one-process pool).
        `view`: the embedding view a `fit_embedder` budget counts (`chunk`); such chunks are made in
        this process."""
        from inspector.core.chunking import helper_jobs
        from inspector.core.runtime import offload
        from inspector.core.text.wordpieces import piece_override

        strat = get_strategy(strategy)
        valid = strat.validate(params)
        todo: list[int] = []
        for i, doc in enumerate(docs):
            held = None if strat.needs_embedder else self._cache.lookup(self._key(doc, strat, valid, view))
            if held is not None:
                yield i, held, None
            else:
                todo.append(i)
        if _counted(valid, view) != "raw":
            parallel = False  # the pool's processes count the text as written
        if parallel is None:
            parallel = (len(todo) > 1 and offload.cores() > 1 and helper_jobs.can_run(strategy)
                        and sum(len(docs[i].text) for i in todo) >= PARALLEL_FROM_CHARS)
        if not parallel or not todo:
            for i in todo:
                check_cancelled()
                try:
                    yield i, self.chunk(docs[i], strategy, valid, view=view), None
                except Cancelled:
                    raise
                except Exception as exc:  # noqa: BLE001  (reported with its document)
                    yield i, None, exc
            return
        spec = piece_override()
        model_arg = tuple(spec) if spec is not None else None
        if pool is None:
            pool = offload.corpus_pool(helper_jobs.corpus_warm_up)
        keys = {i: self._key(docs[i], strat, valid) for i in todo}
        mine = [i for i in todo if self._claim(keys[i]) is not None]  # the others: being made elsewhere
        try:
            with contextlib.ExitStack() as stack:  # long texts through files (offload.ship)
                calls = [(stack.enter_context(helper_jobs.shipped(docs[i])), strategy, valid, model_arg)
                         for i in mine]
                for n, packed, failure in pool.call_each(helper_jobs.chunk_job, calls):
                    i = mine[n]
                    if failure is not None:
                        self._release(keys[i])
                        yield i, None, failure if isinstance(failure, Exception) else RuntimeError(str(failure))
                        continue
                    with paused_gc():
                        chunks = packed.unpack()
                    self._cache.put(keys[i], chunks, len(chunks))
                    self._release(keys[i])
                    yield i, chunks, None
        finally:
            for i in mine:
                self._release(keys[i])
        claimed = set(mine)
        for i in (i for i in todo if i not in claimed):
            try:  # made by another caller meanwhile: waited for (or made here if that one failed)
                yield i, self.chunk(docs[i], strategy, valid, view=view), None
            except Cancelled:
                raise
            except Exception as exc:  # noqa: BLE001  (reported with its document)
                yield i, None, exc

    def chunk_corpus(self, strategy: str, params: Mapping[str, Any] | None = None,
                     docs: Sequence[Document] | None = None, *, lenient: bool = False,
                     view: str = "raw") -> dict[str, tuple[Chunk, ...]]:
        """Every document's chunks by doc_id. `lenient`: a document that is blank or that the
        strategy cannot chunk is left out (logged) instead of raising — the window's corpus mode,
        where one odd file must not take retrieval over the others down. (A folder's documents
        are chunked in processes by `chunk_each`, which fills this store first.) `view`: the
        embedding view a `fit_embedder` budget counts (`chunk`)."""
        todo = tuple(self.documents() if docs is None else docs)
        out: dict[str, tuple[Chunk, ...]] = {}
        for d in todo:
            if not lenient:
                out[d.doc_id] = self.chunk(d, strategy, params, view=view)
                continue
            if not d.text.strip():
                continue
            try:
                chunks = self.chunk(d, strategy, params, view=view)
            except Cancelled:
                raise
            except Exception:  # noqa: BLE001  (a document this strategy cannot chunk is left out)
                log.warning("%s left out: it could not be chunked", d.doc_id, exc_info=True)
                continue
            if chunks:
                out[d.doc_id] = chunks
        return out

    def chunks_for(self, config: EvalConfig, docs: Sequence[Document] | None = None, *,
                   lenient: bool = False) -> dict[str, tuple[Chunk, ...]]:
        """The corpus chunked as `config` says, with contextual descriptions in the prefixes when
        `config.describe`, marked with the embedding view when `config.embed_view` is not "raw"
        (spans unchanged by the marking; a `fit_embedder` budget counts the view's text)."""
        chunks = self.chunk_corpus(config.strategy, config.params, docs, lenient=lenient, view=config.embed_view)
        if not config.describe and config.embed_view == "raw":
            return chunks
        by_id = {d.doc_id: d for d in (self.documents() if docs is None else docs)}
        if config.describe:
            from inspector.core.chunking.descriptions import with_descriptions

            chunks = {doc_id: with_descriptions(by_id[doc_id], cs) for doc_id, cs in chunks.items()}
        if config.embed_view != "raw":
            from inspector.core.chunking.embed_view import with_view

            chunks = {doc_id: with_view(by_id[doc_id], cs, config.embed_view) for doc_id, cs in chunks.items()}
        return chunks

    # -- the window's staged chunking ---------------------------------------------------------------
    def stages(self, doc: Document, strategy: str, params: Mapping[str, Any], *, with_prefix: bool,
               cancelled: Callable[[], bool], shape: Callable[[ChunkStage, T | None], T],
               view: str = "raw") -> Iterator[T]:
        """The window's chunking of one document in two stages: the strategy's chunks with their
        statistics and the headings, then the same chunks with their word pieces measured
        (`annotate`, in batches of `ANNOTATE_BATCH`, `cancelled()` checked between them: a
        superseded request stops with `Cancelled`). A large document is chunked in the helper
        process when there is one (`HELPER_FROM_CHARS`); the GIL-heavy part then never runs in
        the caller's process. Nothing is remembered (the module's docstring).

        `shape(stage, previous)` turns each stage into what the caller keeps (the window's view
        data: span indexes, line numbers), inside the same pause of the garbage collector as the
        chunking itself, so that all of it is promoted at once; `previous` is what it made of the
        first stage (None for the first). `view`: the embedding view a `fit_embedder` budget
        counts (`chunk`); such chunks are made in this process."""
        from inspector.core.chunking.helper_jobs import can_run
        from inspector.core.runtime import offload

        counted = "raw" if view == "raw" else _counted(get_strategy(strategy).validate(params), view)
        if offload.default().wanted(len(doc.text), HELPER_FROM_CHARS) and can_run(strategy) and counted == "raw":
            yield from self._stages_in_helper(doc, strategy, params, with_prefix, cancelled, shape, view)
            return
        from inspector.core.chunking.stats import chunk_stats
        from inspector.core.text.structure import heading_marks, outline_of

        strat = get_strategy(strategy)
        # Tens of thousands of chunks, segments and marks, all acyclic: no full garbage collection
        # (which holds the GIL for as long as it walks every object) while they are made.
        with paused_gc():
            with counting_view(counted):
                chunks = strat(doc, params)  # inside the caller's cancel_scope
            chunks = with_view(doc, anchored(chunks, with_prefix), view)
            if cancelled():
                raise Cancelled
            # The outline's (the strategy's own, most often): no parse for the headings alone.
            headings = heading_marks(outline_of(doc))
            stats = chunk_stats(doc, chunks)
            first = shape(ChunkStage(chunks, stats, headings, complete=False), None)
        yield first
        try:
            from inspector.core.chunking.annotate import annotate
        except ImportError:  # word pieces unavailable: the first stage is all there is
            yield shape(ChunkStage(chunks, stats, headings, complete=True), first)
            return
        annotated: list[Chunk] = []
        with paused_gc():
            for k in range(0, len(chunks), ANNOTATE_BATCH):
                if cancelled():
                    raise Cancelled
                annotated.extend(annotate(doc, chunks[k:k + ANNOTATE_BATCH], with_prefix=with_prefix))
            done = tuple(annotated)
            complete = shape(ChunkStage(done, chunk_stats(doc, done, document_tokens=stats.document_tokens),
                                        headings, complete=True), first)
        yield complete

    def _stages_in_helper(self, doc: Document, strategy: str, params: Mapping[str, Any], with_prefix: bool,
                          cancelled: Callable[[], bool], shape: Callable[[ChunkStage, T | None], T],
                          view: str) -> Iterator[T]:
        """`stages` for a large document: both stages computed in the helper process, which
        answers chunks as columns; this thread only unpacks them (and `shape` indexes their spans:
        plain Python loops, which another thread can interrupt)."""
        from inspector.core.chunking import helper_jobs
        from inspector.core.runtime import offload
        from inspector.core.text.structure import remember_outline
        from inspector.core.text.wordpieces import piece_override

        helper = offload.default()
        key = helper_jobs.doc_key(doc)
        # The helper counts pieces as this process does: the embedder's own tokenizer and limit.
        spec = piece_override()
        model_arg = tuple(spec) if spec is not None else None

        def call(fn: Callable[..., helper_jobs.Stage], *args: Any) -> helper_jobs.Stage:
            try:
                return helper.call(fn, key, None, *args)
            except helper_jobs.NeedDocument:
                with helper_jobs.shipped(doc) as sent:
                    return helper.call(fn, key, sent, *args)

        params = dict(params)
        stage = call(helper_jobs.chunk_stage, strategy, params, model_arg, with_prefix, view)
        if cancelled():
            raise Cancelled
        if stage.outline is not None:  # this process's outline: the GUI thread asks for it (heading filter)
            remember_outline(doc, stage.outline)
        with paused_gc():
            headings = stage.headings
            first = shape(ChunkStage(stage.chunks.unpack(), stage.stats, headings, complete=False), None)
        yield first
        stage = call(helper_jobs.annotate_stage, strategy, params, model_arg, with_prefix,
                     stage.stats.document_tokens, view)
        if cancelled():
            raise Cancelled
        with paused_gc():
            complete = shape(ChunkStage(stage.chunks.unpack(), stage.stats, headings, complete=True), first)
        yield complete


__all__ = ["ChunkStore", "ChunkStage", "ChunksByDoc", "CHUNK_CACHE_CHUNKS", "HELPER_FROM_CHARS", "PARALLEL_FROM_CHARS",
           "ANNOTATE_BATCH",
           "chunks_fingerprint", "corpus_fingerprint"]
