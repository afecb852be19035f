"""Configurations scored on a gold set: one, two side by side (compare), or a grid (sweep).

A configuration is plain data (`EvalConfig`: strategy, params, k, retriever, prefix); running it
chunks every document, builds an index and evaluates. A sweep chunks and indexes each distinct
(strategy, params) once and scores every k from one search, so a grid over k costs one index.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from inspector.core.chunk import Chunk, chunk_document, get_strategy
from inspector.core.document import Document
from inspector.core.embedding import Cancelled
from inspector.core.errors import InputError
from inspector.core.evaluate import IndexSearch, QuestionResult, Report, evaluate
from inspector.core.gold import GoldQuestion, GoldSet

RETRIEVERS = ("dense", "bm25", "hybrid")
EMBEDDINGS = ("exact", "pooled")

#: `index_factory(docs, chunks_by_doc, config) -> index` (anything with `search`); the default
#: builds `inspector.core.retrieval.build_index`.
IndexFactory = Callable[[Sequence[Document], Mapping[str, tuple[Chunk, ...]], "EvalConfig"], Any]
Progress = Callable[[int, int, str], None]
Cancel = Callable[[], bool]


@dataclass(frozen=True, slots=True)
class EvalConfig:
    """Everything that decides a score besides the gold set and the documents."""

    strategy: str = "markdown"
    params: Mapping[str, Any] = field(default_factory=dict)
    """Strategy parameters, validated (defaults filled in)."""
    k: int = 5
    retriever: str = "dense"
    """"dense", "bm25" or "hybrid"."""
    with_prefix: bool | None = None
    """Embed the heading-path prefix beside each chunk's text; None takes the strategy's default
    (`Strategy.prefix_default`) and is resolved to a bool on construction."""
    embedding: str = "exact"
    """"exact": each chunk's text through the model, as a production pipeline does (truncated at
    the model's limit); "pooled": the live preview from piece vectors (`inspector.core.pooled`)."""

    def __post_init__(self) -> None:
        strat = get_strategy(self.strategy)
        object.__setattr__(self, "params", dict(strat.validate(self.params)))
        if self.with_prefix is None:
            object.__setattr__(self, "with_prefix", strat.prefix_default)
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"k must be a whole number of at least 1, got {self.k!r}")
        if self.retriever not in RETRIEVERS:
            raise ValueError(f"retriever must be one of {', '.join(RETRIEVERS)}, got {self.retriever!r}")
        if self.embedding not in EMBEDDINGS:
            raise ValueError(f"embedding must be one of {', '.join(EMBEDDINGS)}, got {self.embedding!r}")

    def __hash__(self) -> int:
        return hash((self.strategy, tuple(sorted(self.params.items())), self.k, self.retriever,
                     self.with_prefix, self.embedding))

    @property
    def chunking_key(self) -> tuple:
        """Configurations with equal keys share chunks and index (they differ in k only)."""
        return (self.strategy, tuple(sorted(self.params.items())), self.retriever, self.with_prefix,
                self.embedding)

    def label(self) -> str:
        """Short text for tables: "markdown size=400 hard_cap=1000 k=5 dense"."""
        params = " ".join(f"{k}={v}" for k, v in self.params.items())
        prefix = "" if self.with_prefix else " no-prefix"
        pooled = " pooled" if self.embedding == "pooled" and self.retriever != "bm25" else ""
        return f"{self.strategy}{' ' + params if params else ''} k={self.k} {self.retriever}{prefix}{pooled}"

    def to_dict(self) -> dict[str, Any]:
        """The shape `--config` files use (the window exports it)."""
        return {"strategy": self.strategy, "params": dict(self.params), "k": self.k,
                "retriever": self.retriever, "with_prefix": self.with_prefix,
                "embedding": self.embedding}

    @classmethod
    def from_dict(cls, data: Any, *, path: str | None = None) -> EvalConfig:
        """Validate a config object (InputError naming the field)."""
        if not isinstance(data, dict):
            raise InputError("a config must be a JSON object", path=path)
        known = {"strategy", "params", "k", "retriever", "with_prefix", "embedding"}
        extra = sorted(set(data) - known)
        if extra:
            raise InputError(f"unknown key (known: {', '.join(sorted(known))})", path=path,
                             field=extra[0])
        kwargs: dict[str, Any] = {}
        if "strategy" in data:
            if not isinstance(data["strategy"], str):
                raise InputError("must be a string", path=path, field="strategy")
            kwargs["strategy"] = data["strategy"]
        if "params" in data:
            if not isinstance(data["params"], dict):
                raise InputError("must be an object", path=path, field="params")
            kwargs["params"] = data["params"]
        if "k" in data:
            if isinstance(data["k"], bool) or not isinstance(data["k"], int) or data["k"] < 1:
                raise InputError(f"must be a whole number of at least 1, got {data['k']!r}",
                                 path=path, field="k")
            kwargs["k"] = data["k"]
        if "retriever" in data:
            if data["retriever"] not in RETRIEVERS:
                raise InputError(f"must be one of {', '.join(RETRIEVERS)}, got {data['retriever']!r}",
                                 path=path, field="retriever")
            kwargs["retriever"] = data["retriever"]
        if "embedding" in data:
            if data["embedding"] not in EMBEDDINGS:
                raise InputError(f"must be one of {', '.join(EMBEDDINGS)}, got {data['embedding']!r}",
                                 path=path, field="embedding")
            kwargs["embedding"] = data["embedding"]
        if "with_prefix" in data:
            if not isinstance(data["with_prefix"], bool):
                raise InputError("must be true or false", path=path, field="with_prefix")
            kwargs["with_prefix"] = data["with_prefix"]
        try:
            return cls(**kwargs)
        except ValueError as exc:
            fld = "strategy" if "unknown strategy" in str(exc) else "params"
            raise InputError(str(exc), path=path, field=fld) from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False)


def sized_params(strategy: str, size: int | None = None, overlap: int | None = None,
                 base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A strategy's params with a generic size and overlap put where the strategy keeps them
    (`size`, else `parent_size`; `overlap`, else `child_overlap`). ValueError when the strategy has
    no such parameter or the values break its constraints."""
    strat = get_strategy(strategy)
    names = {p.name for p in strat.params}
    params = dict(base or {})
    if size is not None:
        slot = next((n for n in ("size", "parent_size") if n in names), None)
        if slot is None:
            raise ValueError(f"strategy '{strategy}' has no size parameter")
        params[slot] = size
        # Markdown's hard cap must stay at or above the soft cap; follow a larger size.
        if "hard_cap" in names and "hard_cap" not in (base or {}):
            params["hard_cap"] = max(int(strat.defaults()["hard_cap"]), size)
    if overlap is not None:
        slot = next((n for n in ("overlap", "child_overlap") if n in names), None)
        if slot is None:
            if overlap == 0:
                return strat.validate(params)
            raise ValueError(f"strategy '{strategy}' has no overlap parameter")
        params[slot] = overlap
    return strat.validate(params)


# -- running ----------------------------------------------------------------------------------------

def chunk_corpus(docs: Sequence[Document], config: EvalConfig) -> dict[str, tuple[Chunk, ...]]:
    return {d.doc_id: chunk_document(d, config.strategy, config.params) for d in docs}


def default_index_factory(embedder: Any = None, cache: Any = None, progress: Any = None,
                          cancel: Cancel | None = None) -> IndexFactory:
    """Builds `retrieval.build_index` indexes; no embedder is loaded for BM25 alone."""

    def build(docs: Sequence[Document], chunks_by_doc: Mapping[str, tuple[Chunk, ...]],
              config: EvalConfig) -> Any:
        from inspector.core import retrieval

        emb = embedder
        if config.retriever == "bm25":
            emb = None
        elif emb is None:
            from inspector.core.embedding import default_embedder

            emb = default_embedder()
        vectors = None
        if emb is not None and config.embedding == "pooled":
            from inspector.core import pooled

            pv = {d.doc_id: pooled.pooled_for(d, emb, progress=progress, cancel=cancel) for d in docs}
            vectors = pooled.index_vectors(chunks_by_doc, pv, with_prefix=config.with_prefix)
        return retrieval.build_index(docs, chunks_by_doc, emb, with_prefix=config.with_prefix,
                                     cache=cache, progress=progress, cancel=cancel, vectors=vectors)

    return build


def run_config(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document], config: EvalConfig,
               *, embedder: Any = None, cache: Any = None, index_factory: IndexFactory | None = None,
               chunks_by_doc: Mapping[str, tuple[Chunk, ...]] | None = None) -> Report:
    """Chunk, index and evaluate one configuration."""
    factory = index_factory or default_index_factory(embedder, cache)
    chunks = chunks_by_doc if chunks_by_doc is not None else chunk_corpus(docs, config)
    index = factory(docs, chunks, config)
    search = IndexSearch(index, retriever=config.retriever, multi_doc=len(docs) > 1)
    return evaluate(gold, docs, chunks, search, config.k)


# -- compare ----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class MetricDelta:
    name: str
    before: float | None
    after: float | None

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


@dataclass(frozen=True, slots=True)
class QuestionChange:
    """A question whose outcome differs between two configurations."""

    question: GoldQuestion
    before: QuestionResult
    after: QuestionResult


@dataclass(frozen=True, slots=True)
class Comparison:
    """Configuration B against A on one gold set."""

    before: Report
    after: Report
    deltas: tuple[MetricDelta, ...]
    fixed: tuple[QuestionChange, ...]
    """Missed by A, hit by B."""
    broke: tuple[QuestionChange, ...]
    """Hit by A, missed by B."""
    before_config: EvalConfig | None = None
    after_config: EvalConfig | None = None

    def delta(self, name: str) -> float | None:
        return next(d.delta for d in self.deltas if d.name == name)


def _metrics(r: Report) -> dict[str, float | None]:
    return {"hit_rate": r.hit_rate, "mrr": r.mrr, "recall": r.recall, "precision": r.precision,
            "iou": r.iou, "chunks": float(r.cost.chunks),
            "embedded_tokens": float(r.cost.embedded_tokens), "inflation": r.cost.inflation}


def compare_reports(before: Report, after: Report, *, before_config: EvalConfig | None = None,
                    after_config: EvalConfig | None = None) -> Comparison:
    """Every metric's change and the questions fixed or broken (the same gold set in both)."""
    if len(before.questions) != len(after.questions):
        raise ValueError("the two reports are on different gold sets")
    mb, ma = _metrics(before), _metrics(after)
    deltas = tuple(MetricDelta(name, mb[name], ma[name]) for name in mb)
    fixed, broke = [], []
    for b, a in zip(before.questions, after.questions):
        if not b.hit and a.hit:
            fixed.append(QuestionChange(a.question, b, a))
        elif b.hit and not a.hit:
            broke.append(QuestionChange(a.question, b, a))
    return Comparison(before, after, deltas, tuple(fixed), tuple(broke), before_config, after_config)


def compare(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document], a: EvalConfig,
            b: EvalConfig, *, embedder: Any = None, cache: Any = None,
            index_factory: IndexFactory | None = None, progress: Progress | None = None,
            cancel: Cancel | None = None) -> Comparison:
    """Score A and B on the same gold set and compare them."""
    reports = []
    for i, config in enumerate((a, b)):
        if cancel is not None and cancel():
            raise Cancelled()
        if progress is not None:
            progress(i, 2, config.label())
        reports.append(run_config(gold, docs, config, embedder=embedder, cache=cache,
                                  index_factory=index_factory))
    if progress is not None:
        progress(2, 2, "")
    return compare_reports(reports[0], reports[1], before_config=a, after_config=b)


# -- sweep ------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class SweepRow:
    config: EvalConfig
    report: Report
    exact: Report | None = None
    """For a pooled row confirmed afterwards: the same configuration with exact embeddings."""


@dataclass(frozen=True, slots=True)
class SweepResult:
    rows: tuple[SweepRow, ...]
    """Best first: hit rate, then MRR, then IoU and recall, then fewer embedded tokens."""
    skipped: tuple[tuple[str, str], ...] = ()
    """(combination, reason) for grid points the strategy cannot take (e.g. overlap >= size)."""
    cancelled: bool = False
    """True when `cancel()` stopped the sweep; `rows` then holds what was finished."""


def rank_key(row: SweepRow) -> tuple:
    r = row.report
    return (-r.hit_rate, -r.mrr, -(r.iou if r.iou is not None else 0.0),
            -(r.recall if r.recall is not None else 0.0), r.cost.embedded_tokens, row.config.label())


def grid(strategies: Sequence[str], sizes: Sequence[int | None] = (None,),
         overlaps: Sequence[int | None] = (None,), ks: Sequence[int] = (5,), *,
         retriever: str = "dense", with_prefix: bool | None = None, embedding: str = "exact"
         ) -> tuple[list[EvalConfig], list[tuple[str, str]]]:
    """The distinct configurations of strategy × size × overlap × k, and the skipped points.
    A strategy without a size (or overlap) parameter contributes one point for all sizes."""
    configs: list[EvalConfig] = []
    skipped: list[tuple[str, str]] = []
    seen: set[EvalConfig] = set()
    for strategy in strategies:
        get_strategy(strategy)  # unknown names are an error, not a skipped point
        for size in sizes or (None,):
            for overlap in overlaps or (None,):
                try:
                    params = sized_params(strategy, size, overlap)
                except ValueError as exc:
                    if "has no size parameter" in str(exc):
                        try:
                            params = sized_params(strategy, None, overlap)
                        except ValueError as exc2:
                            skipped.append((f"{strategy} size={size} overlap={overlap}", str(exc2)))
                            continue
                    else:
                        skipped.append((f"{strategy} size={size} overlap={overlap}", str(exc)))
                        continue
                for k in ks:
                    cfg = EvalConfig(strategy, params, k, retriever, with_prefix, embedding)
                    if cfg not in seen:
                        seen.add(cfg)
                        configs.append(cfg)
    return configs, skipped


def sweep(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document],
          configs: Iterable[EvalConfig], *, embedder: Any = None, cache: Any = None,
          index_factory: IndexFactory | None = None, progress: Progress | None = None,
          cancel: Cancel | None = None, skipped: Sequence[tuple[str, str]] = (),
          confirm: int = 0) -> SweepResult:
    """Score every configuration; rows come back best first. Configurations that differ only in
    k share one index and one search (as deep as the largest k). With `confirm=N`, the N best
    pooled rows are scored again with exact embeddings (`SweepRow.exact`): pooled vectors make
    the grid fast, the exact figure is what a production pipeline will see."""
    configs = list(configs)
    factory = index_factory or default_index_factory(embedder, cache, cancel=cancel)
    groups: dict[tuple, list[EvalConfig]] = {}
    for c in configs:
        groups.setdefault(c.chunking_key, []).append(c)
    questions = tuple(gold.questions if isinstance(gold, GoldSet) else gold)
    rows: list[SweepRow] = []
    done = 0
    total = len(configs)
    cancelled = False
    for members in groups.values():
        if cancel is not None and cancel():
            cancelled = True
            break
        first = members[0]
        if progress is not None:
            progress(done, total, first.label())
        chunks = chunk_corpus(docs, first)
        try:
            index = factory(docs, chunks, first)
        except Cancelled:
            cancelled = True
            break
        if cancel is not None and cancel():
            cancelled = True
            break
        search = IndexSearch(index, retriever=first.retriever, multi_doc=len(docs) > 1)
        deepest = max(c.k for c in members)
        results = search.many(questions, deepest)
        for c in sorted(members, key=lambda c: c.k):
            rows.append(SweepRow(c, evaluate(questions, docs, chunks, search, c.k, results=results)))
            done += 1
    if progress is not None and not cancelled:
        progress(total, total, "")
    rows.sort(key=rank_key)
    if confirm and not cancelled:
        confirmed = []
        for i, row in enumerate(rows):
            if i < confirm and row.config.embedding == "pooled" and row.config.retriever != "bm25":
                if cancel is not None and cancel():
                    cancelled = True
                    confirmed.extend(rows[i:])
                    break
                if progress is not None:
                    progress(i, confirm, f"confirming {row.config.label()} with exact embeddings")
                exact_cfg = replace(row.config, embedding="exact")
                try:
                    exact = run_config(questions, docs, exact_cfg, embedder=embedder, cache=cache)
                except Cancelled:
                    cancelled = True
                    confirmed.extend(rows[i:])
                    break
                row = SweepRow(row.config, row.report, exact)
            confirmed.append(row)
        rows = confirmed
    return SweepResult(tuple(rows), tuple(skipped), cancelled)


def sweep_grid(gold: GoldSet | Sequence[GoldQuestion], docs: Sequence[Document], *,
               strategies: Sequence[str], sizes: Sequence[int | None] = (None,),
               overlaps: Sequence[int | None] = (None,), ks: Sequence[int] = (5,),
               retriever: str = "dense", with_prefix: bool | None = None, embedding: str = "exact",
               **kwargs: Any) -> SweepResult:
    """`grid` then `sweep`."""
    configs, skipped = grid(strategies, sizes, overlaps, ks, retriever=retriever,
                            with_prefix=with_prefix, embedding=embedding)
    return sweep(gold, docs, configs, skipped=skipped, **kwargs)


__all__ = ["EvalConfig", "sized_params", "run_config", "compare", "compare_reports", "Comparison",
           "MetricDelta", "QuestionChange", "sweep", "sweep_grid", "grid", "SweepResult", "SweepRow",
           "Cancelled", "rank_key", "chunk_corpus", "default_index_factory", "RETRIEVERS"]
