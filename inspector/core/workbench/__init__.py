"""The workbench: one corpus and gold set, and everything computed from them, for the command line,
the window and the Ray engine. Its parts, one job each:

- `corpus.Corpus`: the documents and the gold set, and which questions are about which documents;
- `chunk_store.ChunkStore`: every document's chunks under a strategy, remembered (and the window's
  staged chunking, which remembers nothing);
- `index_store.IndexStore`: the embedder, pooled piece vectors and indexes (BM25, exact, pooled);
- `evaluator.Evaluator`: evaluate, compare, sweep, recommend (`score_group`, shared with Ray);
- `staging.Staging`: the window's preview → exact stages, a policy object the window's retrieval
  controller owns.

`Workbench` puts them together behind one set of methods, the CLI's and the tests' door; each
method hands the call to the part that decides it. Everything they remember (chunks, indexes,
reports, pooled vectors) sits in locked LRUs, so runner threads may call at once. What they are
given (documents, gold set, embedder) is replaced whole, never mutated, so a job that started
keeps a consistent view.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from inspector.core.workbench.chunk_store import ChunksByDoc, ChunkStore

# The parts that evaluate and retrieve (and through them the evaluation and retrieval packages) are
# imported when a workbench is made, not with this package: the window's chunking imports the
# chunk store, which lives here, and must not import them before its first chunks are painted
# (issue 31). `from inspector.core.workbench import RetrievalRequest` still works (`__getattr__`).
if TYPE_CHECKING:
    from inspector.core.chunking.chunk import Chunk
    from inspector.core.documents.document import Document, LoadResult
    from inspector.core.evaluation.compare import Comparison
    from inspector.core.evaluation.config import Cancel, EvalConfig, IndexFactory, Progress
    from inspector.core.evaluation.gold import GoldQuestion, GoldSet
    from inspector.core.evaluation.metrics import Report
    from inspector.core.evaluation.sweep import SweepResult
    from inspector.core.retrieval.kinds import Retriever
    from inspector.core.workbench.corpus import Gold
    from inspector.core.workbench.index_store import IndexStore
    from inspector.core.workbench.staging import RetrievalRequest, RetrievalResult, Staging

#: Names this package handed out before its parts were imported lazily -> their module.
_LAZY = {"Corpus": "corpus", "Gold": "corpus", "Evaluator": "evaluator", "IndexStore": "index_store",
         "RetrievalRequest": "staging", "RetrievalResult": "staging", "Staging": "staging"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"inspector.core.workbench.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

if TYPE_CHECKING:  # the model's modules load when first used
    from inspector.core.embedding.cache import VectorCache
    from inspector.core.embedding.embedder import Embedder
    from inspector.core.evaluation.reranked import RerankFigures
    from inspector.core.retrieval.index import Hit, Index
    from inspector.core.retrieval.pooled import PooledVectors
    from inspector.core.retrieval.rerank import Reranker
    from inspector.core.stores.source import StoreSource


class Workbench:
    """A corpus, a gold set and everything computed from them.

    `embedder`: the embedding model (None: the bundled one, made when first needed, unless
    `lazy_model=False`); `cache`: the persistent embedding cache (None: vectors are not persisted);
    `index_factory`: how indexes are built (tests hand in their own); `indexes`: how many indexes
    are remembered; `index_store`: an index store made elsewhere, used instead of one made from
    those settings (the Ray tasks' own, whose pooled vectors come from shared piece tables)."""

    def __init__(self, documents: Sequence[Document] = (), gold: Gold = None, *,
                 embedder: Embedder | None = None, cache: VectorCache | None = None,
                 index_factory: IndexFactory | None = None, lazy_model: bool = True, indexes: int = 6,
                 index_store: IndexStore | None = None) -> None:
        from inspector.core.workbench.corpus import Corpus
        from inspector.core.workbench.evaluator import Evaluator
        from inspector.core.workbench.index_store import IndexStore

        self.corpus = Corpus(documents, gold)
        self.chunk_store = ChunkStore(lambda: self.corpus.documents)
        self.index_store = index_store if index_store is not None else IndexStore(
            embedder=embedder, cache=cache, index_factory=index_factory, lazy_model=lazy_model, indexes=indexes)
        self.evaluator = Evaluator(self.corpus, self.chunk_store, self.index_store)
        self._reports = 4 * indexes
        self._staging: Staging | None = None

    # -- what it was given (the parts hold it) ------------------------------------------------------
    @property
    def documents(self) -> tuple[Document, ...]:
        return self.corpus.documents

    @property
    def gold(self) -> Gold:
        return self.corpus.gold

    @gold.setter
    def gold(self, gold: Gold) -> None:
        self.corpus.set_gold(gold)

    @property
    def embedder(self) -> Embedder | None:
        return self.index_store.embedder

    @embedder.setter
    def embedder(self, embedder: Embedder | None) -> None:
        self.index_store.embedder = embedder

    @property
    def cache(self) -> VectorCache | None:
        return self.index_store.cache

    @cache.setter
    def cache(self, cache: VectorCache | None) -> None:
        self.index_store.cache = cache

    @property
    def index_factory(self) -> IndexFactory | None:
        return self.index_store.index_factory

    @property
    def lazy_model(self) -> bool:
        return self.index_store.lazy_model

    @property
    def staging(self) -> Staging:
        """The preview → exact staging over this workbench's stores (made when first asked for)."""
        if self._staging is None:
            from inspector.core.workbench.staging import Staging

            self._staging = Staging(self.chunk_store, self.index_store, reports=self._reports)
        return self._staging

    # -- corpus and gold set ------------------------------------------------------------------------
    def open(self, paths: Sequence[str | os.PathLike[str]], *, encoding: str | None = None) -> LoadResult:
        """Load files and folders as the corpus (`Corpus.open`)."""
        return self.corpus.open(paths, encoding=encoding)

    def set_documents(self, documents: Sequence[Document]) -> None:
        self.corpus.set_documents(documents)

    def load_gold(self, path: str | os.PathLike[str]) -> GoldSet:
        """Read a gold file against the corpus (`Corpus.load_gold`)."""
        return self.corpus.load_gold(path)

    def set_gold(self, gold: Gold) -> None:
        self.corpus.set_gold(gold)

    def questions(self, docs: Sequence[Document] | None = None) -> tuple[GoldQuestion, ...]:
        """The gold questions about these documents (`Corpus.questions`)."""
        return self.corpus.questions(docs)

    # -- chunks (`ChunkStore`) ----------------------------------------------------------------------
    def chunk(self, doc: Document, strategy: str, params: Mapping[str, Any] | None = None) -> tuple[Chunk, ...]:
        return self.chunk_store.chunk(doc, strategy, params)

    def chunk_corpus(self, strategy: str, params: Mapping[str, Any] | None = None,
                     docs: Sequence[Document] | None = None, *, lenient: bool = False
                     ) -> dict[str, tuple[Chunk, ...]]:
        return self.chunk_store.chunk_corpus(strategy, params, docs, lenient=lenient)

    def chunks_for(self, config: EvalConfig, docs: Sequence[Document] | None = None, *,
                   lenient: bool = False) -> dict[str, tuple[Chunk, ...]]:
        return self.chunk_store.chunks_for(config, docs, lenient=lenient)

    # -- embedder and indexes (`IndexStore`) ----------------------------------------------------------
    def embedder_for(self, retriever: Retriever) -> Embedder | None:
        return self.index_store.embedder_for(retriever)

    def pooled_vectors(self, doc: Document) -> PooledVectors | None:
        return self.index_store.pooled_vectors(doc)

    def build_pooled(self, doc: Document, *, progress: Callable[[int, int], None] | None = None,
                     cancel: Cancel | None = None) -> PooledVectors:
        return self.index_store.build_pooled(doc, progress=progress, cancel=cancel)

    def exact_cached(self, docs: Sequence[Document], chunks_by_doc: ChunksByDoc, with_prefix: bool) -> bool:
        return self.index_store.exact_cached(docs, chunks_by_doc, with_prefix)

    def build_index(self, config: EvalConfig, chunks_by_doc: ChunksByDoc,
                    docs: Sequence[Document] | None = None, *, progress: Progress | None = None,
                    cancel: Cancel | None = None) -> Any:
        """An index over these chunks as `config` asks (the corpus's documents by default)."""
        return self.index_store.build_index(config, chunks_by_doc, self.documents if docs is None else docs,
                                        progress=progress, cancel=cancel)

    def predict_exact(self, docs: Sequence[Document], chunks_by_doc: ChunksByDoc, with_prefix: bool,
                      *, uncached_only: bool = False) -> float | None:
        return self.index_store.predict_exact(docs, chunks_by_doc, with_prefix, uncached_only=uncached_only)

    def forget_indexes(self) -> None:
        """Drop remembered indexes and reports (e.g. after the embedder changed)."""
        self.index_store.forget()
        if self._staging is not None:
            self._staging.forget()

    # -- ask ----------------------------------------------------------------------------------------
    def ask(self, question: str, config: EvalConfig, *, docs: Sequence[str] | None = None,
            heading_prefix: Sequence[str] | None = None, reranker: Reranker | None = None,
            rerank_depth: int = 50) -> list[Hit]:
        """The top-k hits for one question over the corpus, with optional metadata filters. With a
        `reranker`, the retriever's top `rerank_depth` reordered by it and cut to k (each hit's
        `rank_before` the retriever's rank)."""
        chunks = self.chunks_for(config)
        index = self.build_index(config, chunks)
        if reranker is None:
            return list(index.search(question, k=config.k, retriever=config.retriever, docs=docs,
                                     heading_prefix=heading_prefix))
        from inspector.core.retrieval.rerank import rerank_hits

        pool = index.search(question, k=max(rerank_depth, config.k), retriever=config.retriever, docs=docs,
                            heading_prefix=heading_prefix)
        return list(rerank_hits(pool, question, reranker, config.k, rerank_depth, docs=index.docs,
                                with_prefix=bool(config.with_prefix)).hits)

    def rerank(self, config: EvalConfig, reranker: Reranker, depth: int = 50, *,
               progress: Callable[[int, int], None] | None = None) -> RerankFigures:
        return self.evaluator.rerank(config, reranker, depth, progress=progress)

    def open_store(self, spec: str, *, source_key: str | None = None, limit: int | None = None) -> StoreSource:
        """Read the user's vector store, place its records on the corpus and register them as the
        strategy `source.strategy` (`stores.source.StoreSource`): evaluate, compare and sweep then
        score its chunks on its own vectors."""
        from inspector.core.stores.source import open_store

        return open_store(spec, self.documents, source_key=source_key, limit=limit)

    def set_embedder(self, embedder: Embedder | None) -> None:
        """Embed with this model from now on: word pieces, truncation flags and `fit_embedder`
        budgets follow its tokenizer and limit (`use_embedder_pieces`), and the `semantic`
        strategy's sentence vectors come from it (`set_semantic_embedder`); indexes built with the
        previous one are forgotten (chunks are kept per piece model by the chunk store; semantic
        chunks are not kept there, and its distances are kept per model)."""
        from inspector.core.chunking.semantic import set_semantic_embedder
        from inspector.core.text.wordpieces import use_embedder_pieces

        if embedder is not None:
            use_embedder_pieces(embedder)
            set_semantic_embedder(embedder)
        self.embedder = embedder
        self.forget_indexes()

    # -- evaluate, compare, sweep (`Evaluator`) -------------------------------------------------------
    def evaluate(self, config: EvalConfig, *, chunks_by_doc: ChunksByDoc | None = None,
                 questions: Sequence[GoldQuestion] | None = None,
                 docs: Sequence[Document] | None = None, budget: int | None = None) -> Report:
        return self.evaluator.evaluate(config, chunks_by_doc=chunks_by_doc, questions=questions, docs=docs,
                                       budget=budget)

    def compare(self, a: EvalConfig, b: EvalConfig, *, progress: Progress | None = None,
                cancel: Cancel | None = None, budget: int | None = None) -> Comparison:
        return self.evaluator.compare(a, b, progress=progress, cancel=cancel, budget=budget)

    def sweep(self, configs: Iterable[EvalConfig], *, progress: Progress | None = None,
              cancel: Cancel | None = None, skipped: Sequence[tuple[str, str]] = (),
              confirm: int = 0, docs: Sequence[Document] | None = None,
              against: EvalConfig | None = None, budget: int | None = None, folds: int = 5,
              seed: int = 0) -> SweepResult:
        return self.evaluator.sweep(configs, progress=progress, cancel=cancel, skipped=skipped, confirm=confirm,
                                    docs=docs, against=against, budget=budget, folds=folds, seed=seed)

    # -- the window's staging (`Staging`) -----------------------------------------------------------
    def stages(self, req: RetrievalRequest, cancelled: Callable[[], bool],
               progress: Callable[[int, int, str], None]) -> Iterator[RetrievalResult]:
        return self.staging.stages(req, cancelled, progress)

    def exact_index(self, req: RetrievalRequest, *, progress: Callable[[int, int], None] | None = None,
                    cancel: Cancel | None = None) -> Index:
        return self.staging.exact_index(req, progress=progress, cancel=cancel)


__all__ = ["Workbench"]
