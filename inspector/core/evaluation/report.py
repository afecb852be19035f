"""Every way a report leaves the program: JSON data, the terminal table, Markdown and CSV.

One module for the three kinds of result (one configuration's `Report`, a `Comparison` of two, a
`SweepResult` of many) in four formats, so the command line (`--format table|json|markdown|csv`)
and the window's exports write the same thing.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from typing import Any

from inspector.core.evaluation.bill import Rates, bill_dict, bill_for, bill_line
from inspector.core.evaluation.compare import Comparison, QuestionChange
from inspector.core.evaluation.config import EvalConfig, units_sentence
from inspector.core.evaluation.format import num
from inspector.core.evaluation.metrics import SPAN_METRICS, QuestionResult, Report
from inspector.core.evaluation.reranked import RerankFigures
from inspector.core.evaluation.sweep import SweepResult
from inspector.core.evaluation.uncertainty import paired_deltas, report_intervals

FORMATS = ("table", "json", "markdown", "csv")

#: What the figures of a window report were computed with.
MODE_NAMES = {"exact": "exact embeddings", "pooled": "pooled preview (approximate)",
              "fallback": "BM25 stand-in (the embedding model was not ready)"}


def retrieval_line(config: EvalConfig | None, mode: str | None = None) -> str:
    """What answered, for people: "BM25 keyword scores (no embeddings)", "dense, exact
    embeddings", "hybrid: BM25 + pooled preview (approximate)". `mode` is the stage's ("exact",
    "pooled", "fallback"); None reads it from the configuration. BM25 has no vectors to name: a
    report of a BM25 configuration that said "exact embeddings" sent readers looking for a model
    that never ran (issue 26)."""
    if mode == "fallback":
        return MODE_NAMES["fallback"]
    retriever = config.retriever if config is not None else "dense"
    if retriever == "bm25":
        return "BM25 keyword scores (no embeddings)"
    if mode is None:
        mode = config.embedding if config is not None else "exact"
    vectors = MODE_NAMES.get(mode, mode)
    if config is not None and mode == "exact":
        from inspector.core.stores.spec import is_store_strategy  # the stores' package: when asked

        if is_store_strategy(config.strategy):
            # A vector store's chunks are scored on the vectors it holds: no chunk was embedded
            # here, which "exact embeddings" would say.
            vectors = "the store's own vectors"
    return f"hybrid: BM25 + {vectors}" if retriever == "hybrid" else f"dense, {vectors}"


def _fmt(v: float | None, digits: int = 3) -> str:
    """A figure in the plain-text reports: "-" when missing (ASCII, for terminals and pipes)."""
    return num(v, digits, none="-")


def _cell(text: Any) -> str:
    """A Markdown table cell: pipes escaped, one line."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _csv(rows: Sequence[Sequence[Any]]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    for row in rows:
        w.writerow(["" if v is None else v for v in row])
    return out.getvalue()


# -- plain data for JSON (the CLI's --format json and the window's exports) ---------------------

def _num(v: float | None, digits: int = 4) -> float | None:
    return None if v is None else round(v, digits)


def _interval(ci: Sequence[float] | None) -> list[float | None] | None:
    return None if ci is None else [_num(ci[0]), _num(ci[1])]


#: Seed of the intervals in `report_dict`: the same report always exports the same JSON.
INTERVAL_SEED = 0


def report_dict(report: Report, rates: Rates | None = None) -> dict[str, Any]:
    """The report as JSON-ready data (the CLI's `--format json` and the window's export).
    `<metric>_ci` are 95% bootstrap intervals over questions (`uncertainty.report_intervals`,
    2000 resamples, fixed seed); None where the metric is. `span_questions`: the questions with
    reference spans, which recall, precision and IoU are the means of. `cost` carries the bill (`bill.py`):
    dollars where `rates` has prices, the embedding-time estimate where it has a measurement."""
    cis = report_intervals(report, seed=INTERVAL_SEED)
    return {
        "hit_rate": _num(report.hit_rate),
        "mrr": _num(report.mrr),
        "k": report.k,
        "recall": _num(report.recall),
        "precision": _num(report.precision),
        "iou": _num(report.iou),
        "hits": report.hits,
        "total": len(report.questions),
        "span_questions": report.span_questions,
        "questions": [question_dict(r) for r in report.questions],
        "cost": {"chunks": report.cost.chunks, "embedded_tokens": report.cost.embedded_tokens,
                 "document_tokens": report.cost.document_tokens,
                 "inflation": _num(report.cost.inflation), **bill_dict(bill_for(report, rates))},
        "context_tokens_mean": _num(report.context_tokens_mean, 2),
        "budget": report.budget,
        "hit_at_budget": _num(report.hit_at_budget),
        "tokens_sent_mean": _num(report.tokens_sent_mean, 2),
        **{name: _interval(ci) for name, ci in cis.items()},
    }


def question_dict(r: QuestionResult) -> dict[str, Any]:
    q = r.question
    d = r.diagnosis
    return {
        "question": q.question,
        "answers": list(q.answers),
        "source": q.source,
        "line": q.line,
        "hit": r.hit,
        "rank": r.rank,
        "diagnosis": d.message if d else None,
        "diagnosis_kind": d.kind if d else None,
        "diagnosis_chunks": list(d.chunks) if d else [],
        "deep_rank": d.deep_rank if d else None,
        "retrieved": list(r.retrieved),
        "retrieved_ids": [int(key.rsplit("#", 1)[1]) for key in r.retrieved],
        "recall": _num(r.recall),
        "precision": _num(r.precision),
        "iou": _num(r.iou),
        "warnings": list(q.warnings),
        "context_tokens": r.context_tokens,
        "budget_hit": r.budget_hit,
        "tokens_sent": r.tokens_sent,
    }



# -- one report ---------------------------------------------------------------------------------------

def report_json(report: Report, config: EvalConfig | None = None, *, rates: Rates | None = None,
                **extra: Any) -> dict[str, Any]:
    """The report as JSON-ready data, with its configuration and any extra top-level fields."""
    data = report_dict(report, rates)
    if config is not None:
        data["config"] = config.to_dict()
    data.update(extra)
    return data


def _ci(ci: Sequence[float] | None) -> str:
    return "" if ci is None else f" [{ci[0]:.2f}, {ci[1]:.2f}]"


def summary_line(report: Report) -> str:
    """hit@k, MRR and the span metrics on one line, each with its 95 % bootstrap interval."""
    ci = report_intervals(report, seed=INTERVAL_SEED)
    line = (f"hit@{report.k} {report.hit_rate:.3f}{_ci(ci['hit_rate_ci'])} ({report.hits}/{len(report.questions)})"
            f"  MRR {report.mrr:.3f}{_ci(ci['mrr_ci'])}  recall {_fmt(report.recall)}{_ci(ci['recall_ci'])}"
            f"  precision {_fmt(report.precision)}  IoU {_fmt(report.iou)}{_ci(ci['iou_ci'])}")
    scope = report.span_scope()
    if scope:
        line += f"\nrecall, precision and IoU: over the {scope} with reference spans"
    if report.context_tokens_mean is not None:
        line += f"\ncontext: {report.context_tokens_mean:,.0f} tokens handed to the LLM per question (top {report.k})"
    if report.budget is not None and report.hit_at_budget is not None:
        line += (f"\nhit@budget {report.hit_at_budget:.3f}{_ci(ci.get('hit_at_budget_ci'))} within {report.budget:,} "
                 f"tokens (mean {report.tokens_sent_mean or 0:,.0f} sent; the chunk that crosses the budget is cut)")
    return line


def cost_line(report: Report) -> str:
    c = report.cost
    return (f"index: {c.chunks} chunks, {c.embedded_tokens} embedded tokens for "
            f"{c.document_tokens} document tokens (inflation {c.inflation:.2f}x)")


def report_text(report: Report, config: EvalConfig | None, *, multi_doc: bool = False,
                rates: Rates | None = None) -> str:
    """The terminal table: figures, then every question with its rank, diagnosis and hits."""
    lines = []
    if config is not None:
        lines.append(f"config: {config.label()}")
    lines += [summary_line(report), cost_line(report)]
    if rates is not None:
        lines.append(bill_line(bill_for(report, rates)))
    lines += ["", f"{'hit':<4} {'rank':>4}  question"]
    for r in report.questions:
        rank = str(r.rank) if r.rank else "-"
        lines.append(f"{'yes' if r.hit else 'MISS':<4} {rank:>4}  {r.question.question}")
        if r.diagnosis is not None:
            lines.append(f"{'':<11}{r.diagnosis.message}")
        shown = r.retrieved if multi_doc else [key.rsplit("#", 1)[1] for key in r.retrieved]
        lines.append(f"{'':<11}retrieved: {', '.join(shown) or 'nothing'}")
    return "\n".join(lines) + "\n"


def report_markdown(report: Report, config: EvalConfig | None, *, mode: str | None = None,
                    gold_path: str = "", document: str = "") -> str:
    """The report as a Markdown document: configuration, figures, every question. `mode`: the
    window's stage ("exact", "pooled", "fallback"; None: the configuration's embedding)."""
    lines = ["# Retrieval evaluation", ""]
    if document:
        lines.append(f"- Document: `{document}`")
    if gold_path:
        lines.append(f"- Gold set: `{gold_path}` ({len(report.questions)} questions)")
    if config is not None:
        lines.append(f"- Configuration: `{config.label()}`")
    lines.append(f"- Retrieval: {retrieval_line(config, mode)}")
    lines += ["", "| Metric | Value |", "| --- | ---: |",
              f"| Hit rate@{report.k} | {report.hit_rate:.3f} ({report.hits}/{len(report.questions)}) |",
              f"| MRR | {report.mrr:.3f} |"]
    if report.recall is not None:
        scope = report.span_scope()
        scope = f" ({scope})" if scope else ""
        lines += [f"| Recall@{report.k}{scope} | {num(report.recall)} |",
                  f"| Precision@{report.k}{scope} | {num(report.precision)} |",
                  f"| IoU{scope} | {num(report.iou)} |"]
    c = report.cost
    lines += [f"| Chunks indexed | {c.chunks:,} |", f"| Embedded tokens | {c.embedded_tokens:,} |",
              f"| Token inflation | {c.inflation:.2f}× |", "",
              "| # | Question | Answer | Hit | Rank | Diagnosis |", "| ---: | --- | --- | :---: | ---: | --- |"]
    for i, r in enumerate(report.questions, 1):
        q = r.question
        answer = " / ".join(q.answers) if q.answers else ", ".join(f"{a}–{b}" for a, b in q.references)
        diag = r.diagnosis.message if r.diagnosis is not None else ""
        lines.append(f"| {q.line or i} | {_cell(q.question)} | {_cell(answer)} | {'hit' if r.hit else 'miss'} | "
                     f"{r.rank or '–'} | {_cell(diag)} |")
    return "\n".join(lines) + "\n"


CSV_FIELDS = ("line", "question", "answers", "source", "hit", "rank", "recall", "precision", "iou",
              "diagnosis_kind", "diagnosis", "retrieved")


def report_csv(report: Report) -> str:
    """One row per question (the fields of the JSON, lists joined with ' | ')."""
    rows: list[Sequence[Any]] = [CSV_FIELDS]
    for r in report.questions:
        d = question_dict(r)
        rows.append([d["line"], d["question"], " | ".join(d["answers"]), d["source"] or "",
                     "true" if d["hit"] else "false", d["rank"] or "", d["recall"], d["precision"],
                     d["iou"], d["diagnosis_kind"] or "", d["diagnosis"] or "", " | ".join(d["retrieved"])])
    return _csv(rows)


# -- a comparison -------------------------------------------------------------------------------------

def _change_dict(ch: QuestionChange) -> dict[str, Any]:
    return {"question": ch.question.question, "line": ch.question.line,
            "before_rank": ch.before.rank, "after_rank": ch.after.rank,
            "before_diagnosis": ch.before.diagnosis.message if ch.before.diagnosis else None,
            "after_diagnosis": ch.after.diagnosis.message if ch.after.diagnosis else None}


def _paired(cmp: Comparison) -> dict[str, Any]:
    """Each metric's paired difference (B - A) with its interval, McNemar's p for hit rates, and
    the verdict: "better", "worse" or "within noise"."""
    out: dict[str, Any] = {}
    for name, d in paired_deltas(cmp.before, cmp.after, seed=INTERVAL_SEED).items():
        out[name] = {"delta": _num(d.delta), "ci": [_num(d.ci[0]), _num(d.ci[1])], "verdict": d.verdict,
                     "p_value": _num(d.p_value), "questions_needed": d.questions_needed, "questions": d.n}
    return out


def needed_phrase(metric: str, needed: int, compared: int) -> str:
    """"~24 questions would tell them apart at this difference", said of the questions the metric
    is measured on: a span metric's are those with reference spans ("~24 questions with reference
    spans ...; 11 compared"); said of all, it read as met by a gold set of 64 that has 11 of them."""
    if metric in SPAN_METRICS:
        return (f"~{needed:,} questions with reference spans would tell them apart at this difference; "
                f"{compared} compared")
    return f"~{needed:,} questions would tell them apart at this difference"


def comparison_json(cmp: Comparison, rates: Rates | None = None) -> dict[str, Any]:
    return {"before": report_json(cmp.before, cmp.before_config, rates=rates),
            "after": report_json(cmp.after, cmp.after_config, rates=rates),
            "deltas": {d.name: {"before": d.before, "after": d.after, "delta": d.delta} for d in cmp.deltas},
            "paired": _paired(cmp),
            "fixed": [_change_dict(c) for c in cmp.fixed],
            "broke": [_change_dict(c) for c in cmp.broke]}


def verdict_line(name: str, d: dict[str, Any]) -> str:
    """"hit_rate: +0.031 [-0.02, +0.08], within noise (McNemar p 0.45; ~260 questions would tell)"."""
    ci = d["ci"]
    text = f"{name}: {d['delta']:+.3f} [{ci[0]:+.2f}, {ci[1]:+.2f}], {d['verdict']}"
    extra = []
    if d.get("p_value") is not None:
        extra.append(f"McNemar p {d['p_value']:.2g}")
    if d["verdict"] == "within noise" and d.get("questions_needed"):
        extra.append(needed_phrase(name, d["questions_needed"], d.get("questions", 0)))
    return text + (f" ({'; '.join(extra)})" if extra else "")


def comparison_text(cmp: Comparison, rates: Rates | None = None) -> str:
    before = cmp.before_config.label() if cmp.before_config else "A"
    after = cmp.after_config.label() if cmp.after_config else "B"
    lines = [f"A (baseline): {before}", f"   {summary_line(cmp.before)}"]
    if rates is not None:
        lines.append(f"   {bill_line(bill_for(cmp.before, rates))}")
    lines += [f"B:            {after}", f"   {summary_line(cmp.after)}"]
    if rates is not None:
        lines.append(f"   {bill_line(bill_for(cmp.after, rates))}")
    lines += ["", f"{'metric':<16} {'A':>10} {'B':>10} {'B - A':>10}"]
    for d in cmp.deltas:
        digits = 0 if d.name in ("chunks", "embedded_tokens") else 3
        delta = "-" if d.delta is None else f"{d.delta:+.{digits}f}"
        lines.append(f"{d.name:<16} {_fmt(d.before, digits):>10} {_fmt(d.after, digits):>10} {delta:>10}")
    paired = _paired(cmp)
    if paired:
        lines += ["", "B - A, paired over the same questions (95 % interval):"]
        lines += [f"  {verdict_line(name, d)}" for name, d in paired.items()]
    for title, items in (("fixed by B", cmp.fixed), ("broken by B", cmp.broke)):
        lines += ["", f"{title}: {len(items)}"]
        for ch in items:
            lines.append(f"  {ch.question.question}")
            why = ch.before.diagnosis if ch.before.diagnosis else ch.after.diagnosis
            if why is not None:
                lines.append(f"      {'A' if ch.before.diagnosis else 'B'}: {why.message}")
    return "\n".join(lines) + "\n"


def comparison_markdown(cmp: Comparison) -> str:
    before = cmp.before_config.label() if cmp.before_config else "A"
    after = cmp.after_config.label() if cmp.after_config else "B"
    lines = ["# Comparison", "", f"- A (baseline): `{before}`", f"- B: `{after}`", "",
             "| Metric | A | B | B − A |", "| --- | ---: | ---: | ---: |"]
    for d in cmp.deltas:
        digits = 0 if d.name in ("chunks", "embedded_tokens") else 3
        delta = "–" if d.delta is None else f"{d.delta:+.{digits}f}"
        lines.append(f"| {d.name} | {num(d.before, digits)} | {num(d.after, digits)} | {delta} |")
    for title, items in (("Fixed by B", cmp.fixed), ("Broken by B", cmp.broke)):
        lines += ["", f"## {title} ({len(items)})", ""]
        for ch in items:
            why = ch.before.diagnosis if ch.before.diagnosis else ch.after.diagnosis
            lines.append(f"- {_cell(ch.question.question)}" + (f" — {_cell(why.message)}" if why else ""))
    return "\n".join(lines) + "\n"


def comparison_csv(cmp: Comparison) -> str:
    rows: list[Sequence[Any]] = [("question", "line", "change", "before_rank", "after_rank",
                                  "before_diagnosis", "after_diagnosis")]
    for change, items in (("fixed", cmp.fixed), ("broke", cmp.broke)):
        for ch in items:
            d = _change_dict(ch)
            rows.append((d["question"], d["line"], change, d["before_rank"], d["after_rank"],
                         d["before_diagnosis"], d["after_diagnosis"]))
    return _csv(rows)


# -- before and after reranking ----------------------------------------------------------------------

def rerank_json(fig: RerankFigures, rates: Rates | None = None) -> dict[str, Any]:
    """Reranking's figures as JSON-ready data: the comparison's before/after reports, deltas and
    paired verdicts (`comparison_json`), plus the reranker, the depth, the ceiling (hit@depth) and
    every question's rank within the retriever's top `depth` and after reranking."""
    data = comparison_json(fig.comparison, rates)
    data["paired"] = {name: v for name, v in data["paired"].items() if name in fig.paired}
    data.update({
        "reranker": dict(fig.reranker_info), "k": fig.k, "depth": fig.depth, "retriever": fig.retriever,
        "ceiling": _num(fig.ceiling), "pairs": fig.pairs, "pairs_computed": fig.computed,
        "rerank_seconds": _num(fig.seconds, 3),
        "moves": [{"question": q.question, "line": q.line, "rank_within_depth": d, "rank_after": a}
                  for q, d, a in fig.moves()],
    })
    return data


def rerank_text(fig: RerankFigures) -> str:
    """The terminal table: hit@k and MRR before and after reranking, the paired verdicts, the
    ceiling, and the questions reranking fixed or broke with their ranks."""
    b, a = fig.before, fig.after
    n = len(b.questions)
    lines = [f"reranker: {fig.reranker_info.get('spec') or fig.reranker} (top {fig.depth} of {fig.retriever} "
             f"reranked to {fig.k})",
             f"{'':<22}{'hit@' + str(fig.k):>10} {'MRR':>8}",
             f"{'before (' + fig.retriever + ')':<22}{b.hit_rate:>10.3f} {b.mrr:>8.3f}  ({b.hits}/{n})",
             f"{'after (reranked)':<22}{a.hit_rate:>10.3f} {a.mrr:>8.3f}  ({a.hits}/{n})",
             f"ceiling: hit@{fig.depth} {fig.ceiling:.3f} (reranking only reorders the retriever's top {fig.depth})"]
    paired = _paired(fig.comparison)
    lines += ["", "after - before, paired over the same questions (95 % interval):"]
    lines += [f"  {verdict_line(name, d)}" for name, d in paired.items() if name in fig.paired]
    depth_rank = {id(q): d for q, d, _a in fig.moves()}
    for title, items in (("fixed by reranking", fig.comparison.fixed), ("broken by reranking", fig.comparison.broke)):
        lines += ["", f"{title}: {len(items)}"]
        for ch in items:
            was = depth_rank.get(id(ch.question))
            lines.append(f"  {was if was is not None else '-'} -> {ch.after.rank or '-'}  {ch.question.question}")
    lines.append(f"\n{fig.pairs} pairs read, {fig.computed} scored by the model in {fig.seconds:.1f} s")
    return "\n".join(lines) + "\n"


# -- a sweep ------------------------------------------------------------------------------------------

def _sweep_row_dict(row: Any, rates: Rates | None = None) -> dict[str, Any]:
    r = row.report
    ci = report_intervals(r, seed=INTERVAL_SEED)
    return {"config": row.config.to_dict(), "label": row.config.label(),
            "hit_rate": round(r.hit_rate, 4), "hit_rate_ci": _interval(ci["hit_rate_ci"]), "mrr": round(r.mrr, 4),
            "hit_at_budget": _num(r.hit_at_budget), "hit_at_budget_ci": _interval(ci.get("hit_at_budget_ci")),
            "context_tokens_mean": _num(r.context_tokens_mean, 1), "tokens_sent_mean": _num(r.tokens_sent_mean, 1),
            "tied_with_best": row.tied_with_best, "current": row.current,
            "recall": _num(r.recall), "precision": _num(r.precision), "iou": _num(r.iou),
            "cost": {"chunks": r.cost.chunks, "embedded_tokens": r.cost.embedded_tokens,
                     "inflation": round(r.cost.inflation, 4), **bill_dict(bill_for(r, rates))},
            "exact": None if row.exact is None else {
                "hit_rate": round(row.exact.hit_rate, 4), "mrr": round(row.exact.mrr, 4),
                "recall": _num(row.exact.recall)}}


def recommendation_json(rec: Any) -> dict[str, Any] | None:
    if rec is None:
        return None
    return {"config": rec.best.to_dict(), "label": rec.best.label(), "keep_current": rec.keep_current,
            "chosen": rec.config.to_dict(), "current": rec.current.to_dict(),
            "gain": _num(rec.gain), "gain_ci": _interval(rec.gain_ci), "p_value": _num(rec.p_value),
            "p_better": _num(rec.p_better), "questions_to_confirm": rec.questions_to_confirm,
            "reason": rec.reason, "settle": settle_text(rec) or None, "fixes_partly": rec.fixes_partly,
            "findings": [f.to_dict() for f in rec.findings],
            "candidate_findings": [f.to_dict() for f in rec.candidate_findings], "fixes": list(rec.fixes),
            "top": rec.top.to_dict() if rec.top is not None else None,
            "top_findings": [f.to_dict() for f in rec.top_findings],
            "context_tokens_per_question": _num(rec.context_tokens, 1),
            "current_context_tokens_per_question": _num(rec.current_context_tokens, 1),
            "candidate_context_tokens_per_question": _num(rec.candidate_context_tokens, 1),
            "context_tokens_delta": _num(_delta(rec.context_tokens, rec.current_context_tokens), 1),
            "metric": rec.metric, "basis": rec.basis, "in_sample": _num(rec.in_sample),
            "cross_validated": _num(rec.cross_validated), "optimism": _num(rec.optimism),
            "questions": rec.questions, "folds": rec.folds}


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def settle_text(rec: Any) -> str:
    """What would settle a kept recommendation ("" when there is nothing to settle)."""
    if not rec.keep_current or rec.config == rec.current:
        return ""
    if rec.questions_to_confirm is None:
        return ("the best-looking row is not estimated better on held-out questions; more questions "
                "would only tell how close they are")
    more = max(0, rec.questions_to_confirm - rec.questions)
    return (f"about {rec.questions_to_confirm} questions (now {rec.questions}, {more} more) would confirm "
            f"a gain of this size, if it is real")


def _ctx(tokens: float | None) -> str:
    return "-" if tokens is None else f"{tokens:,.0f}"


def recommendation_text(rec: Any) -> str:
    """What is wrong with the current settings, then two or three sentences a person can act on,
    each choice with the context tokens it hands the LLM per question."""
    if rec is None:
        return ""
    from inspector.core.evaluation.findings import findings_text

    gain = f"{rec.gain:+.3f} [{rec.gain_ci[0]:+.2f}, {rec.gain_ci[1]:+.2f}]"
    p = "" if rec.p_better is None else f", P(better) {rec.p_better:.2f}"
    head = (f"recommendation ({rec.folds}-fold cross-validation over {rec.questions} questions, "
            f"{rec.metric}, {rec.basis} scores):")
    cur_ctx = f"{_ctx(rec.current_context_tokens)} context tokens/question"
    cand_ctx = (f"{_ctx(rec.candidate_context_tokens)} context tokens/question "
                f"({_signed(_delta(rec.candidate_context_tokens, rec.current_context_tokens))})")
    fixes = f"; it fixes {', '.join(rec.fixes)}" if rec.fixes else ""
    if rec.config == rec.current:
        body = f"keep {rec.current.label()}: it is the best row ({cur_ctx})"
    elif rec.keep_current:
        body = (f"keep {rec.current.label()} ({cur_ctx}): the best-looking row ({rec.config.label()}, "
                f"{cand_ctx}) gains {gain}{p} on held-out questions, which is within noise"
                f"{fixes}\n  what would settle it: {settle_text(rec)}")
    else:
        why = {"confirmed": "the gain is confirmed", "fixes": _fixes_why(rec),
               "likely": "it is likely better"}.get(rec.reason, "")
        body = (f"switch to {rec.config.label()} ({cand_ctx}): it gains {gain}{p} over "
                f"{rec.current.label()} on held-out questions{fixes}; {why}")
    lines = [head]
    if rec.findings:
        lines.append(f"  findings on {rec.current.label()} (measured without the gold set; its figures in brackets):")
        lines.append(findings_text(rec.findings, indent="    "))
    lines.append(f"  {body}")
    if rec.top is not None and rec.top != rec.current and rec.top_findings:
        lines.append(f"  the first row ({rec.top.label()}) is not fault-free: "
                     + "; ".join(f"{f.kind} ({f.share:.0%}): {f.detail}{f' ({f.note})' if f.note else ''}"
                                for f in rec.top_findings))
    lines.append(f"  the winner's in-sample {rec.in_sample:.3f} is {rec.optimism:+.3f} more "
                 f"optimistic than its cross-validated {rec.cross_validated:.3f}")
    return "\n".join(lines)


def _fixes_why(rec: Any) -> str:
    """Why a fix was reason enough to switch: a fault that partly affects the retriever (the
    embedder's cut under hybrid) needs a likely gain too."""
    from inspector.core.evaluation.sweep import P_PARTIAL

    if rec.fixes_partly:
        return (f"it fixes a fault that partly affects {rec.current.retriever} and is likely better "
                f"(P(better) >= {P_PARTIAL})")
    return "it fixes a fault of the current chunks and is not estimated worse"


def _signed(x: float | None) -> str:
    return "-" if x is None else f"{x:+,.0f}"


def sweep_json(result: SweepResult, rates: Rates | None = None) -> dict[str, Any]:
    return {"rows": [_sweep_row_dict(row, rates) for row in result.rows],
            "skipped": [{"point": p, "reason": why} for p, why in result.skipped],
            "budget": result.budget,
            "findings": ([f.to_dict() for f in result.recommendation.findings]
                         if result.recommendation is not None else []),
            "recommendation": recommendation_json(result.recommendation)}


def _bill_cells(r: Report, rates: Rates | None) -> str:
    """The sweep table's bill columns: index $, context $ per question, embedding time."""
    if rates is None:
        return ""
    from inspector.core.evaluation.bill import format_seconds, format_usd

    b = bill_for(r, rates)
    return (f"{format_usd(b.embed_usd):>10} {format_usd(b.context_usd_per_question):>10} "
            f"{format_seconds(b.embed_seconds_estimate):>10} ")


def sweep_text(result: SweepResult, *, top: int = 0, rates: Rates | None = None) -> str:
    rows = result.rows[:top] if top > 0 else result.rows
    budget = result.budget is not None
    head = f"{'hit@B':>6} " if budget else ""
    money = f"{'index $':>10} {'$/question':>10} {'embed':>10} " if rates is not None else ""
    lines = [f"{'#':>3}  {head}{'hit@k':>6} {'MRR':>6} {'recall':>7} {'prec':>6} {'IoU':>6} {'chunks':>6} "
             f"{'tokens':>7} {'ctx':>5}  {money}configuration"]
    for i, row in enumerate(rows, 1):
        r = row.report
        mark = "*" if row.current else ("=" if row.tied_with_best else " ")
        at_budget = f"{_fmt(r.hit_at_budget):>6} " if budget else ""
        lines.append(f"{i:>3}{mark} {at_budget}{r.hit_rate:>6.3f} {r.mrr:>6.3f} {_fmt(r.recall):>7} "
                     f"{_fmt(r.precision):>6} "
                     f"{_fmt(r.iou):>6} {r.cost.chunks:>6} {r.cost.embedded_tokens:>7} "
                     f"{r.context_tokens_mean or 0:>5.0f}  {_bill_cells(r, rates)}{row.config.label()}")
        if row.exact is not None:
            e = row.exact
            gap = abs(e.hit_rate - r.hit_rate) * 100
            note = f"  <- differs from pooled by {gap:.1f} points" if gap > 1.0 else ""
            lines.append(f"    exact {e.hit_rate:>6.3f} {e.mrr:>6.3f} {_fmt(e.recall):>7}{note}")
    lines.append("= tied with the best (the difference is within noise on these questions);  * current settings;"
                 "  ctx: tokens handed to the LLM per question")
    units = units_sentence([row.config.strategy for row in result.rows])
    if units:  # size=128 is 128 characters in one row and 128 tokens in the next
        lines.append(units)
    if result.recommendation is not None:
        lines.append(recommendation_text(result.recommendation))
    if result.skipped:
        lines.append(f"skipped {len(result.skipped)} grid points, e.g. {result.skipped[0][0]}: "
                     f"{result.skipped[0][1]}")
    if rates is not None:
        lines.append("index $: embedded tokens x the embedding price;  $/question: context tokens x the LLM "
                     "input price;  embed: time to embed them at this machine's measured speed")
    return "\n".join(lines) + "\n"


SWEEP_CSV_FIELDS = ("rank", "configuration", "strategy", "params", "k", "retriever", "with_prefix",
                    "embedding", "hit_rate", "mrr", "recall", "precision", "iou", "chunks",
                    "embedded_tokens", "inflation", "exact_hit_rate", "exact_mrr", "hit_at_budget",
                    "context_tokens_mean", "tied_with_best", "current")


def sweep_csv(result: SweepResult) -> str:
    rows: list[Sequence[Any]] = [SWEEP_CSV_FIELDS]
    for i, row in enumerate(result.rows, 1):
        d, c = _sweep_row_dict(row), row.config
        params = " ".join(f"{k}={v}" for k, v in c.params.items())
        e = d["exact"] or {}
        rows.append((i, d["label"], c.strategy, params, c.k, c.retriever, c.with_prefix, c.embedding,
                     d["hit_rate"], d["mrr"], d["recall"], d["precision"], d["iou"], d["cost"]["chunks"],
                     d["cost"]["embedded_tokens"], d["cost"]["inflation"], e.get("hit_rate"), e.get("mrr"),
                     d["hit_at_budget"], d["context_tokens_mean"], d["tied_with_best"], d["current"]))
    return _csv(rows)


def sweep_markdown(result: SweepResult, *, top: int = 0) -> str:
    rows = result.rows[:top] if top > 0 else result.rows
    lines = ["# Sweep", "", "| # | Configuration | Hit rate | MRR | Recall | IoU | Chunks | Tokens | Exact hit rate |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for i, row in enumerate(rows, 1):
        r = row.report
        exact = "–" if row.exact is None else f"{row.exact.hit_rate:.3f}"
        lines.append(f"| {i} | `{row.config.label()}` | {r.hit_rate:.3f} | {r.mrr:.3f} | {num(r.recall)} | "
                     f"{num(r.iou)} | {r.cost.chunks:,} | {r.cost.embedded_tokens:,} | {exact} |")
    if result.skipped:
        lines += ["", f"Skipped {len(result.skipped)} grid points, e.g. {_cell(result.skipped[0][0])}: "
                      f"{_cell(result.skipped[0][1])}"]
    return "\n".join(lines) + "\n"


RENDERERS: dict[tuple[str, str], Callable[..., Any]] = {
    ("report", "json"): report_json, ("report", "table"): report_text,
    ("report", "markdown"): report_markdown, ("report", "csv"): report_csv,
    ("comparison", "json"): comparison_json, ("comparison", "table"): comparison_text,
    ("comparison", "markdown"): comparison_markdown, ("comparison", "csv"): comparison_csv,
    ("sweep", "json"): sweep_json, ("sweep", "table"): sweep_text,
    ("sweep", "markdown"): sweep_markdown, ("sweep", "csv"): sweep_csv,
}
