"""The exact hit-rate trace along the size slider: which positions to score, and the scores so far.

One number for the current position says little about whether the next notch is better; a curve
over the nearby notches does. The window scores the notches around the current size in the
background (exact embeddings, or BM25), nearest first, and draws them under the slider. This
module is the plain-data half of that:

- `follow` says which configuration a slider position stands for: moving the size drags the
  parameters declared below it (`less_than`) and pushes those declared at least it
  (`at_least`), exactly as the strategy panel does, so a trace point is the configuration the
  user gets by moving the slider there;
- `plan_trace` lists the configurations to score (the current value, then up to `radius`
  notches on each side, nearest first) and every notch's configuration, so scores computed
  earlier for this context are shown too;
- `TraceCache` remembers scores by scope (corpus content, gold questions, embedding model) and
  configuration: moving back to a notch, or back to a strategy, finds its score again, and
  nothing computed under another gold set, k or retriever can be shown by mistake;
- `snapshot` puts plan and cache together as the `Trace` a widget draws.

Computing a score is `Workbench.evaluate` on a worker; nothing here runs a model.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspector.core.chunking.params import Strategy
from inspector.core.documents.document import Document
from inspector.core.evaluation.config import EmbedView, EvalConfig
from inspector.core.retrieval.kinds import Retriever
from inspector.core.runtime.lru import SizedLRU
from inspector.core.viewmodel.scale import SliderScale

Number = int | float

#: Notches scored on each side of the current size.
RADIUS = 3


def follow(strategy: Strategy, params: Mapping[str, Any], name: str, value: Number) -> dict[str, Any] | None:
    """The validated parameters the strategy panel reaches when `name` is moved to `value`: a
    parameter that must stay below it is dragged down to one unit under it, one that must be at
    least it is pushed up to it, along chains (parent_size drags child_size, which drags
    child_overlap). None when that still breaks a rule (a follower below its own minimum)."""
    out = dict(params)
    out[name] = value
    kinds = {p.name: p for p in strategy.params}
    moved = {name}
    for _ in range(len(strategy.params) + 1):
        changed = False
        for c in strategy.constraints():
            if c.lesser not in out or c.greater not in out or c.holds(out):
                continue
            lesser = kinds[c.lesser]
            gap = (1 if lesser.kind == "int" else lesser.step) if c.strict else 0
            if c.greater in moved and c.lesser not in moved:
                out[c.lesser] = out[c.greater] - gap
                moved.add(c.lesser)
            elif c.lesser in moved and c.greater not in moved:
                out[c.greater] = out[c.lesser] + gap
                moved.add(c.greater)
            else:
                continue
            changed = True
        if not changed:
            break
    try:
        return strategy.validate(out)
    except ValueError:
        return None


@dataclass(frozen=True, slots=True)
class TracePlan:
    """What a trace scores and shows for one context (strategy, other parameters, k, retriever)."""

    param: str
    """The parameter traced: the strategy's "size" role."""
    current: Number
    """Its value now."""
    todo: tuple[tuple[Number, EvalConfig], ...]
    """(value, configuration) to score, nearest first: the current value, then the notches around it."""
    shown: tuple[tuple[Number, EvalConfig], ...]
    """(value, configuration) of every notch and the current value, ascending: drawn once scored."""


def plan_trace(strategy: Strategy, params: Mapping[str, Any], scale: SliderScale, *, k: int,
               retriever: Retriever, with_prefix: bool, radius: int = RADIUS,
               embed_view: EmbedView = "raw") -> TracePlan | None:
    """The plan for the size slider of `strategy` at `params` (None when the strategy has no size
    parameter, `params` are invalid, or its configurations cannot be scored)."""
    p = strategy.param_for_role("size")
    if p is None or p.name not in params:
        return None
    try:
        strategy.validate(params)  # the current settings themselves must be valid to be traced
    except ValueError:
        return None
    current = params[p.name]
    configs: dict[Number, EvalConfig | None] = {}

    def config(v: Number) -> EvalConfig | None:
        if v not in configs:
            followed = follow(strategy, params, p.name, v)
            try:
                configs[v] = None if followed is None else EvalConfig(
                    strategy.name, followed, k, retriever, with_prefix, "exact", embed_view=embed_view)
            except ValueError:
                configs[v] = None
        return configs[v]

    if config(current) is None:
        return None
    todo = tuple((v, c) for v in (current, *scale.neighbours(current, radius))
                 if (c := config(v)) is not None)
    shown = tuple((v, c) for v in sorted({*scale.values, current}) if (c := config(v)) is not None)
    return TracePlan(p.name, current, todo, shown)


@dataclass(frozen=True, slots=True)
class TraceScore:
    """One position's exact score."""

    hit_rate: float
    hits: int
    questions: int
    context_tokens: float | None = None
    """Mean context tokens per question handed to the LLM (the top k's span text), when known."""
    truncated: float | None = None
    """Share of the embedded chunks the embedder cuts (dense/hybrid), None when not measured."""


@dataclass(frozen=True, slots=True)
class TraceScope:
    """What decides a score besides the configuration: the documents' content, the gold questions
    and the embedding model ("" for BM25, which needs none). Hashed once: the cache is asked
    about every notch on every re-plan, and a gold set has dozens of questions."""

    docs: tuple[tuple[str, str], ...]
    """(doc_id, sha256) of each document retrieval covers, in order."""
    questions: tuple[Any, ...]
    model_id: str
    _hash: int = field(default=0, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.docs, self.questions, self.model_id)))

    def __hash__(self) -> int:
        return self._hash


def trace_scope(docs: Sequence[Document], questions: Sequence[Any], model_id: str) -> TraceScope:
    """The scope of scores over `docs` for `questions` with the model `model_id`."""
    return TraceScope(tuple((d.doc_id, d.sha256) for d in docs), tuple(questions), model_id)


class TraceCache:
    """Scores by (scope, configuration), bounded, safe to read from a worker while the GUI thread
    writes (the core's locked LRU)."""

    def __init__(self, max_items: int = 4096) -> None:
        self._lru: SizedLRU[TraceScore] = SizedLRU(max_items, max_items)

    def get(self, scope: Hashable, config: EvalConfig) -> TraceScore | None:
        return self._lru.lookup((scope, config))

    def put(self, scope: Hashable, config: EvalConfig, score: TraceScore) -> None:
        self._lru.put((scope, config), score)

    def __len__(self) -> int:
        return len(self._lru)

    def clear(self) -> None:
        self._lru.clear()


@dataclass(frozen=True, slots=True)
class TracePoint:
    """One position drawn on the trace."""

    value: Number
    score: TraceScore | None
    """None while it is still to be scored."""
    current: bool = False


@dataclass(frozen=True, slots=True)
class Trace:
    """What the trace widget draws (plain data, one snapshot)."""

    param: str
    points: tuple[TracePoint, ...]
    """Scored notches of this context, and the planned ones still pending; ascending by value."""
    kind: str
    """"exact" (the model's own embeddings) or "bm25": never the pooled preview."""
    k: int
    status: str = ""
    """Why nothing is drawn, or "" (e.g. the model is still loading)."""
    pending: int = 0
    """Planned positions not scored yet."""

    @property
    def scored(self) -> tuple[TracePoint, ...]:
        return tuple(p for p in self.points if p.score is not None)

    def best(self) -> tuple[TracePoint, ...]:
        """The scored points with the highest hit rate (all of them when they tie), ascending."""
        scored = self.scored
        if not scored:
            return ()
        top = max(p.score.hit_rate for p in scored if p.score is not None)
        return tuple(p for p in scored if p.score is not None and p.score.hit_rate == top)


def snapshot(plan: TracePlan, cache: TraceCache, scope: Hashable, *, kind: str, k: int) -> Trace:
    """The trace for `plan`: every notch scored under `scope`, and the planned ones still to do."""
    todo = {v for v, _c in plan.todo}
    points: list[TracePoint] = []
    pending = 0
    for v, c in plan.shown:
        score = cache.get(scope, c)
        if score is None and v not in todo:
            continue
        pending += score is None
        points.append(TracePoint(v, score, v == plan.current))
    return Trace(plan.param, tuple(points), kind, k, pending=pending)


__all__ = ["follow", "plan_trace", "TracePlan", "TraceScore", "TraceCache", "TracePoint", "Trace",
           "TraceScope", "trace_scope", "snapshot", "RADIUS"]
