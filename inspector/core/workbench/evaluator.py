"""The evaluator: chunk, index and score configurations on the gold set over the whole corpus —
one (`evaluate`), two against each other (`compare`), a grid (`sweep`) with its cross-validated
advice (`recommend`). `score_group` is the one scoring both engines share: the local sweep calls
it, and so does each evaluation task of the Ray engine (`inspector.core.distributed`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document
from inspector.core.evaluation.compare import Comparison, compare_reports
from inspector.core.evaluation.config import Cancel, EvalConfig, Progress
from inspector.core.evaluation.findings import CutEvidence, Finding, annotated, cut_evidence, findings, with_evidence
from inspector.core.evaluation.gold import GoldQuestion
from inspector.core.evaluation.metrics import IndexSearch, QuestionResult, Report, evaluate
from inspector.core.evaluation.sweep import P_PARTIAL, P_SWITCH, Recommendation, SweepResult, SweepRow, rank_key
from inspector.core.runtime.cancel import Cancelled
from inspector.core.runtime.lru import SizedLRU
from inspector.core.workbench.chunk_store import ChunksByDoc, ChunkStore
from inspector.core.workbench.corpus import Corpus
from inspector.core.workbench.index_store import IndexStore

if TYPE_CHECKING:
    from inspector.core.evaluation.reranked import RerankFigures
    from inspector.core.retrieval.index import Index, SearchIndex
    from inspector.core.retrieval.rerank import Reranker


#: Configurations whose annotated chunks the evaluator keeps (`Evaluator._annotated`): a
#: recommendation measures the start and each candidate that might fix it.
ANNOTATED_KEPT = 4


def score_group(members: Sequence[EvalConfig], index: SearchIndex, chunks: ChunksByDoc, docs: Sequence[Document],
                questions: Sequence[GoldQuestion], *, budget: int | None = None,
                against: EvalConfig | None = None) -> list[SweepRow]:
    """Sweep rows of configurations that share chunks and index (they differ in k only): one
    search as deep as the largest k, each k scored from it. The local sweep calls it, and so does
    each evaluation task of the Ray engine (`inspector.core.distributed`): one scoring, two engines."""
    first = members[0]
    search = IndexSearch(index, retriever=first.retriever, multi_doc=len(docs) > 1)
    results = search.many(questions, max(c.k for c in members))
    return [SweepRow(c, evaluate(questions, docs, chunks, search, c.k, results=results, budget=budget),
                     current=c == against)
            for c in sorted(members, key=lambda c: c.k)]


def recommend(rows: Sequence[SweepRow], current: EvalConfig, *, budget: int | None = None,
              folds: int = 5, seed: int = 0,
              findings_for: Callable[[EvalConfig], tuple[Finding, ...]] | None = None,
              evidence_for: Callable[[EvalConfig, Sequence[QuestionResult]], CutEvidence] | None = None,
              ) -> tuple[list[SweepRow], Recommendation]:
    """Cross-validated advice over sweep rows (one gold set) against the `current` row, and the
    rows marked `tied_with_best`. Scores are exact where every row has an exact figure (BM25
    rows, exact sweeps, or pooled rows all confirmed); otherwise the rows' own (pooled) ones, and
    the recommendation says so (`basis`).

    Switch to the best-looking row when its held-out gain is confirmed (interval above 0 and, for
    hit rates, McNemar), when it removes a finding of the current chunks (`findings_for`: the
    configuration's `Finding`s, measured without the gold set) and the held-out gain is not
    below 0, or when the probability that it beats the current row is at least `P_SWITCH` and
    the current chunks have a finding (a fault-free start needs a confirmed gain). A finding
    counts as far as it affects the retriever (`Finding.affects`): one that does not (the
    embedder's cut under BM25) licenses nothing, one that partly does (the cut under hybrid)
    licenses a switch only with P(better) >= `P_PARTIAL` too. Issue 29: a
    broken configuration was kept at P = 0.97 because 30 questions could not confirm a 17-point
    gain. When that keeps the current row and its chunks have a finding, the choice is made
    again, cross-validated, among the rows that remove one, and taken when not estimated worse.
    Otherwise keep the current row.

    `evidence_for(current, its question results)`: the gold set's figures on the embedder's cut
    (`findings.cut_evidence`, on the questions the rows were scored on), put beside the finding
    (`Finding.evidence`) for the user to read; they do not change the advice (a rule that let a
    cut whose tail questions were hit as often as the others license nothing changed 1 of 40
    measured runs, for the worse: benchmarks/README.md, issue 29)."""
    from inspector.core.evaluation.findings import fixed_by
    from inspector.core.evaluation.selection import cross_validated_choice, score_matrix

    rows = list(rows)
    metric = "hit_at_budget" if budget is not None else "hit_rate"
    exact_all = all(r.exact is not None or r.config.embedding == "exact" or r.config.retriever == "bm25"
                    for r in rows)
    reports = [(r.exact if r.exact is not None else r.report) if exact_all else r.report for r in rows]
    cur = next(i for i, r in enumerate(rows) if r.config == current)
    matrix, kept = score_matrix(reports, metric)
    cost = [float(r.cost.embedded_tokens) for r in reports]
    sel = cross_validated_choice(matrix, cur, cost, folds=folds, seed=seed)
    marked = [replace(r, tied_with_best=bool(sel.tied_with_best[i]), current=i == cur) for i, r in enumerate(rows)]
    found = findings_for(current) if findings_for is not None else ()
    if evidence_for is not None and any(f.kind == "truncated_by_embedder" and f.counts for f in found):
        found = with_evidence(found, evidence_for(current, reports[cur].questions))
    # What the embedder drops costs BM25 nothing: it reads the whole span (`affects` "none").
    relevant = tuple(f for f in found if f.counts)
    full = {f.kind for f in relevant if f.affects == "full"}

    def licensed(fixes: tuple[str, ...], gain: float, p_better: float | None) -> bool:
        """A fix is worth switching for when the candidate is not estimated worse; a fix of only
        partial findings when it is also likely better (P_PARTIAL)."""
        if not fixes or gain < 0.0:
            return False
        return bool(full.intersection(fixes)) or (p_better is not None and p_better >= P_PARTIAL)

    def fixes_of(config: EvalConfig) -> tuple[tuple[str, ...], tuple[Finding, ...]]:
        """(kinds of `relevant` that `config` removes, its own findings)."""
        if config == current or findings_for is None:
            return (), found
        theirs = findings_for(config)
        # A candidate whose own chunks the embedder cuts fixes nothing worth switching for.
        if config.retriever != "bm25" and any(f.kind == "truncated_by_embedder" for f in theirs) \
                and not any(f.kind == "truncated_by_embedder" for f in found):
            return (), theirs
        return fixed_by(relevant, theirs), theirs

    idx = sel.config_index
    chosen = rows[idx].config
    fixes, theirs = fixes_of(chosen)
    if chosen == current:
        keep, reason = True, "best"
    elif not sel.keep_current:
        keep, reason = False, "confirmed"
    elif licensed(fixes, sel.gain, sel.p_better):
        keep, reason = False, "fixes"
    elif sel.p_better >= P_SWITCH and relevant:
        # Only settings with a fault are left on a likelihood: from a fault-free start a P(better)
        # of 0.94 on 30 questions lost 5.9 points on unseen ones (handbook, dense; generalization.py).
        keep, reason = False, "likely"
    else:
        keep, reason = True, "unsure"
    if keep and relevant and findings_for is not None:
        # The current chunks have a fault: choose again, cross-validated, among the rows that
        # remove one (issue 29: from fixed_chars 2000/0 the best-looking row over the whole grid
        # was estimated worse on one split while every row that fits the embedder gained ~15 points).
        fixing = {i: fixes_of(r.config) for i, r in enumerate(rows) if i != cur}
        subset = [cur] + [i for i, (f, _t) in fixing.items() if f]
        if len(subset) > 1:
            sub = cross_validated_choice(matrix[subset], 0, [cost[i] for i in subset], folds=folds, seed=seed)
            pick = subset[sub.config_index]
            if sub.config_index != 0 and (not sub.keep_current or licensed(fixing[pick][0], sub.gain, sub.p_better)):
                sel, idx = sub, pick
                chosen = rows[idx].config
                fixes, theirs = fixing[idx]
                keep, reason = False, "confirmed" if not sub.keep_current else "fixes"
    ctx = [r.tokens_sent_mean if budget is not None else r.context_tokens_mean for r in reports]
    top = min(rows, key=rank_key).config
    known = {current: found, chosen: theirs}
    top_found = known[top] if top in known else (findings_for(top) if findings_for is not None else ())
    # A fault that does not touch the retriever (the embedder's cut under BM25) is no reason to
    # doubt the first row.
    top_found = tuple(f for f in top_found if f.affects != "none")
    rec = Recommendation(
        config=chosen, current=current, keep_current=keep,
        gain=sel.gain, gain_ci=sel.gain_ci, p_value=sel.p_value, metric=metric,
        basis="exact" if exact_all else "pooled", in_sample=sel.in_sample_score,
        cross_validated=sel.cv_score, optimism=sel.optimism, questions=len(kept), folds=len(sel.folds),
        findings=found, candidate_findings=theirs, fixes=fixes, p_better=sel.p_better,
        questions_to_confirm=sel.questions_to_confirm, reason=reason,
        context_tokens=ctx[cur] if keep else ctx[idx], current_context_tokens=ctx[cur],
        candidate_context_tokens=ctx[idx], top=top, top_findings=top_found)
    return marked, rec


class Evaluator:
    """Scores configurations on the corpus's gold set with the chunk and index stores it is given."""

    def __init__(self, corpus: Corpus, chunk_store: ChunkStore, index_store: IndexStore) -> None:
        self.corpus = corpus
        self.chunk_store = chunk_store
        self.index_store = index_store
        self._annotated_memo: SizedLRU[Mapping[str, Sequence[Chunk]]] = SizedLRU(ANNOTATED_KEPT, ANNOTATED_KEPT)

    def evaluate(self, config: EvalConfig, *, chunks_by_doc: ChunksByDoc | None = None,
                 questions: Sequence[GoldQuestion] | None = None,
                 docs: Sequence[Document] | None = None, budget: int | None = None) -> Report:
        """Chunk, index and score one configuration on the gold set (the whole corpus). `budget`:
        also score what fits into that many cl100k tokens of context (`Report.hit_at_budget`)."""
        docs = list(self.corpus.documents if docs is None else docs)
        chunks = chunks_by_doc if chunks_by_doc is not None else self.chunk_store.chunks_for(config, docs)
        index = self.index_store.build_index(config, chunks, docs)
        search = IndexSearch(index, retriever=config.retriever, multi_doc=len(docs) > 1)
        qs = self.corpus.questions(docs) if questions is None else tuple(questions)
        return evaluate(qs, docs, chunks, search, config.k, budget=budget)

    def rerank(self, config: EvalConfig, reranker: Reranker, depth: int = 50, *,
               progress: Callable[[int, int], None] | None = None,
               docs: Sequence[Document] | None = None) -> RerankFigures:
        """The gold set scored with `config`'s retriever top k, and with its top `depth` reranked
        to k by `reranker`: `evaluation.reranked.RerankFigures` (both reports, the ceiling at
        `depth`, the paired comparison)."""
        from inspector.core.evaluation.reranked import rerank_figures

        docs = list(self.corpus.documents if docs is None else docs)
        chunks = self.chunk_store.chunks_for(config, docs)
        # The reranker reads the hits' texts from the index: the app's own Index (an index_factory
        # of a test stands in for scoring only).
        index = cast("Index", self.index_store.build_index(config, chunks, docs))
        return rerank_figures(index, self.corpus.questions(docs), reranker, config.k, depth,
                              retriever=config.retriever, multi_doc=len(docs) > 1, chunks_by_doc=chunks,
                              progress=progress)

    def compare(self, a: EvalConfig, b: EvalConfig, *, progress: Progress | None = None,
                cancel: Cancel | None = None, budget: int | None = None) -> Comparison:
        """Score A (the baseline) and B on the same gold set and compare them."""
        reports = []
        for i, config in enumerate((a, b)):
            if cancel is not None and cancel():
                raise Cancelled()
            if progress is not None:
                progress(i, 2, config.label())
            reports.append(self.evaluate(config, budget=budget))
        if progress is not None:
            progress(2, 2, "")
        return compare_reports(reports[0], reports[1], before_config=a, after_config=b)

    def sweep(self, configs: Iterable[EvalConfig], *, progress: Progress | None = None,
              cancel: Cancel | None = None, skipped: Sequence[tuple[str, str]] = (),
              confirm: int = 0, docs: Sequence[Document] | None = None,
              against: EvalConfig | None = None, budget: int | None = None, folds: int = 5,
              seed: int = 0) -> SweepResult:
        """Score every configuration; rows come back best first. Configurations that differ only in
        k share one index and one search (as deep as the largest k). With `confirm=N`, the N best
        pooled rows are scored again with exact embeddings (`SweepRow.exact`): pooled vectors make
        the grid fast, the exact figure is what a production pipeline will see.

        `against`: the current configuration (scored too if the grid lacks it); the result then
        carries a `Recommendation` chosen by `folds`-fold cross-validation over the questions, and
        every row says whether it is `tied_with_best`. `budget`: rows are ranked, and the
        recommendation chosen, by the hit rate at that context budget."""
        configs = list(configs)
        if against is not None and against not in configs:
            configs.append(against)
        docs = list(self.corpus.documents if docs is None else docs)
        groups: dict[tuple, list[EvalConfig]] = {}
        for c in configs:
            groups.setdefault(c.chunking_key, []).append(c)
        questions = self.corpus.questions(docs)
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
            chunks = self.chunk_store.chunks_for(first, docs)
            try:
                index = self.index_store.build_index(first, chunks, docs, cancel=cancel)
            except Cancelled:
                cancelled = True
                break
            if cancel is not None and cancel():
                cancelled = True
                break
            rows.extend(score_group(members, index, chunks, docs, questions, budget=budget, against=against))
            done += len(members)
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
                    try:
                        exact = self.evaluate(replace(row.config, embedding="exact"), docs=docs, budget=budget)
                    except Cancelled:
                        cancelled = True
                        confirmed.extend(rows[i:])
                        break
                    row = replace(row, exact=exact)
                confirmed.append(row)
            rows = confirmed
        recommendation = None
        if against is not None and not cancelled and questions and rows:
            rows, recommendation = recommend(rows, against, budget=budget, folds=folds, seed=seed,
                                             findings_for=self.findings_for(docs),
                                             evidence_for=self.evidence_for(docs))
        return SweepResult(tuple(rows), tuple(skipped), cancelled, recommendation, budget)

    def findings_for(self, docs: Sequence[Document] | None = None) -> Callable[[EvalConfig], tuple[Finding, ...]]:
        """`config -> its chunks' findings` over `docs` (the corpus by default), from the chunk store."""
        docs = list(self.corpus.documents if docs is None else docs)

        def measure(config: EvalConfig) -> tuple[Finding, ...]:
            return findings(docs, self._annotated(config, docs), config)
        return measure

    def evidence_for(self, docs: Sequence[Document] | None = None,
                     ) -> Callable[[EvalConfig, Sequence[QuestionResult]], CutEvidence]:
        """`(config, its question results) -> the gold set's word on its embedder's cut` over
        `docs` (the corpus by default), from the chunk store (`findings.cut_evidence`)."""
        docs = list(self.corpus.documents if docs is None else docs)

        def measure(config: EvalConfig, results: Sequence[QuestionResult]) -> CutEvidence:
            return cut_evidence(docs, self._annotated(config, docs), config, results)
        return measure

    def _annotated(self, config: EvalConfig, docs: Sequence[Document]) -> Mapping[str, Sequence[Chunk]]:
        """`config`'s chunks of `docs` measured in the embedder's word pieces, made once for the
        findings and the gold set's figures on the cut that a recommendation asks of the same
        start (`findings.annotated`; kept for the last few configurations and models)."""
        from inspector.core.text.wordpieces import current_piece_spec, max_seq_length

        limit = max_seq_length()
        key = (config, tuple((d.doc_id, d.sha256) for d in docs), current_piece_spec(), limit)
        return self._annotated_memo.get_or_make(
            key, lambda: annotated(docs, self.chunk_store.chunks_for(config, docs), bool(config.with_prefix), limit),
            1)


__all__ = ["Evaluator", "score_group", "recommend"]
