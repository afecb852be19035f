"""A grid of configurations and its rows, best first (the running is the workbench's)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from inspector.core.chunking.registry import get_strategy
from inspector.core.evaluation.config import Embedding, EvalConfig, sized_params
from inspector.core.evaluation.findings import Finding
from inspector.core.evaluation.metrics import (
    Report,
)
from inspector.core.retrieval.kinds import Retriever


@dataclass(frozen=True, slots=True)
class SweepRow:
    config: EvalConfig
    report: Report
    exact: Report | None = None
    """For a pooled row confirmed afterwards: the same configuration with exact embeddings."""
    tied_with_best: bool = False
    """This row cannot be told apart from the best row on these questions (its paired bootstrap
    interval of per-question differences to the best contains 0): one of a tie group, not a loser."""
    current: bool = False
    """The configuration the recommendation is measured against (`--against`, the window's)."""


#: Switch when the probability that the candidate beats the current settings is at least this.
P_SWITCH = 0.9

#: A finding that only partly affects the retriever (the embedder's cut under hybrid, whose BM25
#: half reads the whole chunk) licenses a switch only at this probability, halfway between a full
#: finding's "not estimated worse" (about 0.5) and no finding's `P_SWITCH`. Issue 29: on Chroma's
#: small corpora with hybrid, switching on the cut alone (P(better) 0.49-0.80) lost 1.4-3.6 points
#: on unseen questions, while on the public set, where hybrid loses 3-5 points to the cut, the
#: switches it keeps (P 0.80-0.99) gained +1.1 to +5.3.
P_PARTIAL = 0.7


@dataclass(frozen=True, slots=True)
class Recommendation:
    """What the sweep advises, chosen by k-fold cross-validation over questions (selection.py)."""

    config: EvalConfig
    """The configuration chosen on all questions (the current one when `keep_current`)."""
    current: EvalConfig
    keep_current: bool
    """True unless the cross-validated gain's interval excludes zero (and, for hit rates, McNemar
    agrees): the differences seen are then within noise, and switching is not advised."""
    gain: float
    """Mean held-out gain over the current configuration: what the selection rule earns on
    questions it did not choose by."""
    gain_ci: tuple[float, float]
    p_value: float | None
    metric: str
    """"hit_rate", or "hit_at_budget" when a context budget is given."""
    basis: str
    """"exact" when every row was scored with exact embeddings (or BM25), "pooled" otherwise."""
    in_sample: float
    """The chosen configuration's score on all questions (what the table shows)."""
    cross_validated: float
    """The rule's held-out score: the honest estimate for the next questions."""
    optimism: float
    """in_sample - cross_validated."""
    questions: int
    folds: int
    findings: tuple[Finding, ...] = ()
    """What is wrong with the current configuration's chunks, found without the gold set."""
    candidate_findings: tuple[Finding, ...] = ()
    """The same for `config`, the best-looking configuration."""
    fixes: tuple[str, ...] = ()
    """Kinds of `findings` that `config` removes (only those that touch this retriever: a finding
    whose `affects` is "none" is listed in `findings` but never fixed)."""
    p_better: float | None = None
    """Probability that switching beats the current configuration (paired bootstrap of the
    held-out differences, `Selection.p_better`)."""
    questions_to_confirm: int | None = None
    """Questions a gold set would need to confirm the gain at 95 % (`Selection.questions_to_confirm`)."""
    reason: str = ""
    """Why: "best" (the current configuration is the best row), "confirmed" (the held-out gain's
    interval excludes 0), "fixes" (the candidate removes a finding and is not estimated worse; for
    a finding that only partly affects the retriever, P(better) >= `P_PARTIAL` as well),
    "likely" (P(better) >= `P_SWITCH`), "unsure" (kept: none of these)."""
    context_tokens: float | None = None
    """Mean context tokens per question handed to the LLM by `best` (top k, or within the budget)."""
    current_context_tokens: float | None = None
    """The same for the current configuration."""
    candidate_context_tokens: float | None = None
    """The same for `config`, the best-looking configuration."""
    top: EvalConfig | None = None
    """The sweep's first row (best hit rate, or hit rate within the budget, in-sample)."""
    top_findings: tuple[Finding, ...] = ()
    """`top`'s findings: the first row is never called best without them (a size whose chunks
    the embedder cuts can rank first on hit@k while the model never reads their tails)."""

    @property
    def fixes_partly(self) -> bool:
        """Every fault `config` fixes touches the retriever only partly (the embedder's cut under
        hybrid): a switch for it needed P(better) >= `P_PARTIAL` as well."""
        full = {f.kind for f in self.findings if f.affects == "full"}
        return bool(self.fixes) and not full.intersection(self.fixes)

    @property
    def best(self) -> EvalConfig:
        """What to use: the recommendation, or the current configuration when it should stay."""
        return self.current if self.keep_current else self.config


@dataclass(frozen=True, slots=True)
class SweepResult:
    rows: tuple[SweepRow, ...]
    """Best first: hit rate (hit rate at the budget, when one is given), then MRR, then IoU and
    recall, then fewer embedded tokens."""
    skipped: tuple[tuple[str, str], ...] = ()
    """(combination, reason) for grid points the strategy cannot take (e.g. overlap >= size)."""
    cancelled: bool = False
    """True when `cancel()` stopped the sweep; `rows` then holds what was finished."""
    recommendation: Recommendation | None = None
    """Cross-validated advice against the current configuration (None without questions or rows)."""
    budget: int | None = None


def rank_key(row: SweepRow) -> tuple:
    r = row.report
    first = r.hit_at_budget if r.hit_at_budget is not None else r.hit_rate
    return (-first, -r.hit_rate, -r.mrr, -(r.iou if r.iou is not None else 0.0),
            -(r.recall if r.recall is not None else 0.0), r.cost.embedded_tokens, row.config.label())


def grid(strategies: Sequence[str], sizes: Sequence[int | None] = (None,),
         overlaps: Sequence[int | None] = (None,), ks: Sequence[int] = (5,), *,
         retriever: Retriever = "dense", with_prefix: bool | None = None, embedding: Embedding = "exact",
         describe: bool = False) -> tuple[list[EvalConfig], list[tuple[str, str]]]:
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
                    cfg = EvalConfig(strategy, params, k, retriever, with_prefix, embedding, describe)
                    if cfg not in seen:
                        seen.add(cfg)
                        configs.append(cfg)
    return configs, skipped
