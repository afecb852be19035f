"""A grid of configurations and its rows, best first (the running is the workbench's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from inspector.core.chunking.registry import get_strategy
from inspector.core.evaluation.config import EvalConfig, sized_params
from inspector.core.evaluation.metrics import (
    Report,
)


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
    Sizes and overlaps go to each strategy's "size"/"overlap" roles (`sized_params`); a strategy
    without a size role contributes one point for all sizes, one without an overlap role one
    point for overlap 0 (other overlaps are skipped points)."""
    configs: list[EvalConfig] = []
    skipped: list[tuple[str, str]] = []
    seen: set[EvalConfig] = set()
    for strategy in strategies:
        # Unknown names are an error, not a skipped point.
        sized = get_strategy(strategy).param_for_role("size") is not None
        for size in sizes or (None,):
            for overlap in overlaps or (None,):
                try:
                    params = sized_params(strategy, size if sized else None, overlap)
                except ValueError as exc:
                    skipped.append((f"{strategy} size={size} overlap={overlap}", str(exc)))
                    continue
                for k in ks:
                    cfg = EvalConfig(strategy, params, k, retriever, with_prefix, embedding)
                    if cfg not in seen:
                        seen.add(cfg)
                        configs.append(cfg)
    return configs, skipped
