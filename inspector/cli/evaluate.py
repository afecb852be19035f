"""`eval`, `compare` and `sweep`: gold-set scoring from the command line.

    chunk-inspector eval handbook.md --gold handbook.gold.jsonl --strategy markdown --k 5
    chunk-inspector compare handbook.md --gold g.jsonl --strategy markdown --against fixed_chars:500:0
    chunk-inspector sweep docs/ --gold g.jsonl --strategies markdown,recursive --sizes 128,256,512
    chunk-inspector compare docs/ --gold g.jsonl --strategy markdown --against-embedder st:./other-model
    chunk-inspector sweep docs/ --gold g.jsonl --strategies markdown,fixed_tokens --embedders minilm,st:./other

Bad input (a broken gold line, an unknown strategy, an unreadable config) ends with one line on
stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from inspector.cli.common import (
    RETRIEVER_CHOICES,
    CliError,
    add_device_args,
    add_embedder_args,
    add_encoding_arg,
    add_reranker_args,
    add_store_args,
    add_strategy_args,
    check_prices,
    check_store_flags,
    device_fields,
    device_line,
    embedder_line,
    embedder_report,
    embedder_spec,
    make_model,
    make_reranker,
    one_line_error,
    open_store,
    open_workbench,
    print_json,
    store_report,
    switch_model,
)
from inspector.core.api import (
    DEFAULT_EMBED_VIEW,
    DEFAULT_RETRIEVER,
    EMBED_VIEWS,
    FORMATS,
    RENDERERS,
    report_csv,
    report_json,
    report_markdown,
    report_text,
    sweep_text,
)

DEFAULT_SWEEP_STRATEGIES = ("markdown", "recursive", "sentences", "fixed_tokens", "paragraph")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", help="documents or folders (the corpus)")
    p.add_argument("--gold", required=True, help="gold set: .jsonl, or .csv (question,answer[,source] "
                                                 "or Chroma's question,references,corpus_id)")
    p.add_argument("--retriever", choices=RETRIEVER_CHOICES, default=None,
                   help=f"dense, bm25 or hybrid (reciprocal rank fusion); default {DEFAULT_RETRIEVER}")
    prefix = p.add_mutually_exclusive_group()
    prefix.add_argument("--prefix", dest="prefix", action="store_true", default=None,
                        help="embed the heading-path prefix with each chunk (default for markdown, "
                             "parent_child)")
    prefix.add_argument("--no-prefix", dest="prefix", action="store_false",
                        help="embed the span text alone (default for the naive strategies)")
    p.add_argument("--embedding", choices=("exact", "pooled"), default=None,
                   help="exact (default): embed each chunk as a production pipeline would; pooled: "
                        "the live preview from ~25-token piece vectors embedded once per document")
    p.add_argument("--embed-view", choices=EMBED_VIEWS, default=None,
                   help="what the model and BM25 read of each chunk: raw (the text as written) or clean "
                        "(link targets, reference definitions and table padding dropped, a lost table "
                        "header repeated; spans stay exact, fit_embedder counts the view); "
                        f"default {DEFAULT_EMBED_VIEW}")
    p.add_argument("--describe", action="store_true",
                   help="embed a contextual description with each chunk (title > path, the section's "
                        "first sentence, key words; no LLM) to measure what it does")
    p.add_argument("--format", choices=FORMATS, default="table",
                   help="table (default), json, markdown or csv")
    p.add_argument("--budget", type=int, default=None, metavar="TOKENS",
                   help="context budget: also score whether the answer is among the top-k chunks packed, "
                        "in rank order, into this many cl100k tokens (the chunk that crosses the budget "
                        "is cut there); a sweep then ranks by it")
    add_embedder_args(p)
    add_encoding_arg(p)
    add_device_args(p)
    p.add_argument("--engine", choices=("local", "ray"), default="local",
                   help="local (default): in this process; ray: chunking, embedding and scoring on a Ray "
                        "cluster (pip install 'chunk-inspector[ray]'), same results")
    p.add_argument("--address", default=None, metavar="HOST:PORT",
                   help="with --engine ray: join this cluster ('auto': the one running here; default: "
                        "start a local one)")
    p.add_argument("--workers", type=int, default=None, metavar="N",
                   help="with --engine ray: embedding actors and tasks at once (default: the cluster's "
                        "CPUs, or its GPUs)")
    p.add_argument("--embed-price", type=float, default=None, metavar="USD",
                   help="embedding price in dollars per million tokens: the bill's indexing cost")
    p.add_argument("--llm-price", type=float, default=None, metavar="USD",
                   help="the LLM's input price in dollars per million tokens: the bill's context cost "
                        "per question")


def add_commands(subparsers: Any) -> None:
    """Register `eval`, `compare` and `sweep` on the main CLI's subparsers."""
    p = subparsers.add_parser("eval", help="score a gold set against one chunking configuration")
    _common(p)
    add_strategy_args(p, default=None)  # type: ignore[arg-type]
    p.add_argument("--k", type=int, default=None, help="chunks retrieved per question (default 5)")
    p.add_argument("--config", help="JSON config {strategy, params, k, retriever, with_prefix}; "
                                    "flags given as well override it")
    add_reranker_args(p)
    add_store_args(p)
    p.set_defaults(func=_cmd_eval)
    p.error = one_line_error(p)

    p = subparsers.add_parser("compare", help="compare a configuration against another on a gold set")
    _common(p)
    add_strategy_args(p, default=None)  # type: ignore[arg-type]
    p.add_argument("--k", type=int, default=None, help="chunks retrieved per question (default 5)")
    p.add_argument("--config", help="JSON config for the configuration under test")
    p.add_argument("--against", default=None, metavar="STRATEGY[:SIZE[:OVERLAP]]",
                   help="the baseline, e.g. fixed_chars:500:0")
    p.add_argument("--against-embedder", default=None, metavar="SPEC",
                   help="instead of --against: the same chunks and questions embedded by a second model "
                        "(minilm, st:NAME_OR_PATH, openai:MODEL, hash), its figures beside --embedder's "
                        "with the paired interval and verdict")
    p.set_defaults(func=_cmd_compare)
    p.error = one_line_error(p)

    p = subparsers.add_parser("sweep", help="score a grid of strategy x size x overlap x k")
    _common(p)
    p.add_argument("--strategies", default=",".join(DEFAULT_SWEEP_STRATEGIES),
                   help="comma-separated strategy names")
    p.add_argument("--sizes", default="", help="comma-separated sizes (default: each strategy's)")
    p.add_argument("--overlaps", default="", help="comma-separated overlaps (default: each strategy's)")
    p.add_argument("--ks", default="5", help="comma-separated k values")
    p.add_argument("--top", type=int, default=0, help="print only the best N rows (table format)")
    p.add_argument("--confirm", type=int, default=0, metavar="N",
                   help="with --embedding pooled: score the N best rows again with exact embeddings")
    p.add_argument("--against", metavar="STRATEGY[:SIZE[:OVERLAP]]", default=None,
                   help="the current settings the recommendation is measured against (default: the "
                        "default strategy with its defaults)")
    p.add_argument("--folds", type=int, default=5,
                   help="cross-validation folds over questions for the recommendation (default 5)")
    p.add_argument("--embedders", default=None, metavar="SPEC,SPEC",
                   help="run the grid once per model (instead of --embedder) and say per model which "
                        "setting is best, and whether the best setting changes with the model")
    p.set_defaults(func=_cmd_sweep)
    p.error = one_line_error(p)


COMMANDS = ("eval", "compare", "sweep")


# -- steps of eval, compare and sweep -------------------------------------------------------------

def _read_config(path: str):
    from inspector.core.api import EvalConfig, InputError

    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputError("no such file", path=path) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {getattr(exc, 'strerror', None) or exc}", path=path) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"broken JSON: {exc.msg} (column {exc.colno})", path=path,
                         line=exc.lineno) from None
    except RecursionError:
        raise InputError("JSON nested too deeply", path=path, line=1) from None
    return EvalConfig.from_dict(data, path=path)


def _flag_params(strategy: str, args: argparse.Namespace, base: dict) -> dict:
    """`base` with what --param, then --size and --overlap set (validated, `with_size_overlap`)."""
    from inspector.cli.common import param_flags
    from inspector.core.api import get_strategy, with_size_overlap

    strat = get_strategy(strategy)
    extra = dict(base)
    extra.update(param_flags(strat, getattr(args, "param", None)))
    size = getattr(args, "size", None)
    overlap = getattr(args, "overlap", None)
    # An overlap the strategy cannot take is named before a missing size (paragraph --size --overlap).
    if overlap not in (None, 0) and strat.param_for_role("overlap") is None:
        raise ValueError(f"strategy '{strategy}' has no overlap parameter")
    return with_size_overlap(strat, size, overlap, base=extra)


def _config(args: argparse.Namespace):
    """The configuration from --config (if any) with the flags given on top."""
    from inspector.core.api import EvalConfig

    base = _read_config(args.config) if getattr(args, "config", None) else EvalConfig()
    strategy = args.strategy or base.strategy
    params = _flag_params(strategy, args, dict(base.params) if strategy == base.strategy else {})
    k = args.k if args.k is not None else base.k
    if k < 1:
        raise CliError(f"--k must be at least 1, got {k}")
    return EvalConfig(strategy=strategy, params=params, k=k,
                      retriever=args.retriever or base.retriever,
                      with_prefix=args.prefix if args.prefix is not None
                      else (base.with_prefix if getattr(args, "config", None) else None),
                      embedding=args.embedding or base.embedding,
                      describe=bool(args.describe or base.describe),
                      embed_view=args.embed_view or base.embed_view)


def _against(spec: str, like, forced_prefix: bool | None = None):
    """STRATEGY[:SIZE[:OVERLAP]] with k, retriever and prefix taken from the other side."""
    from inspector.core.api import EvalConfig, sized_params

    parts = spec.split(":")
    if len(parts) > 3 or not parts[0]:
        raise CliError(f"--against expects STRATEGY[:SIZE[:OVERLAP]], got {spec!r}")
    nums: list[int | None] = []
    for name, raw in zip(("SIZE", "OVERLAP"), parts[1:], strict=False):  # SIZE alone is fine
        if raw == "":
            nums.append(None)
            continue
        try:
            nums.append(int(raw))
        except ValueError:
            raise CliError(f"--against: {name} must be a whole number, got {raw!r}") from None
    nums += [None] * (2 - len(nums))
    params = sized_params(parts[0], nums[0], nums[1])
    # The other side keeps its own strategy's prefix default unless the user forced one.
    return EvalConfig(parts[0], params, like.k, like.retriever, forced_prefix, like.embedding, like.describe,
                      embed_view=like.embed_view)


def _ints(flag: str, raw: str) -> list[int | None]:
    if not raw.strip():
        return [None]
    out: list[int | None] = []
    for item in raw.split(","):
        item = item.strip()
        try:
            out.append(int(item))
        except ValueError:
            raise CliError(f"{flag} expects comma-separated whole numbers, got {item!r}") from None
    return out


def _budget(args: argparse.Namespace) -> int | None:
    budget = getattr(args, "budget", None)
    if budget is not None and budget < 1:
        raise CliError(f"--budget must be at least 1 token, got {budget}")
    return budget


def _rates(args: argparse.Namespace, wb: Any = None) -> Any:
    """The bill's rates: the prices given and the embedder's last measured speed on this machine."""
    from inspector.core.api import Rates, measured_rate

    check_prices(args)
    emb = getattr(wb, "embedder", None)
    return Rates(args.embed_price, args.llm_price, measured_rate(getattr(emb, "model_id", None)))


def _priced(args: argparse.Namespace) -> bool:
    """Tables show the bill when a price was given (JSON always carries it)."""
    return args.embed_price is not None or args.llm_price is not None


def _render(kind: str, fmt: str, result: Any, rates: Any = None) -> str:
    """A result in the chosen format (JSON as indented text); JSON and tables carry the bill."""
    fn = RENDERERS[(kind, fmt)]
    out = fn(result, rates=rates) if fmt in ("json", "table") and rates is not None else fn(result)
    return json.dumps(out, ensure_ascii=False, indent=2) if fmt == "json" else out


# -- engines ----------------------------------------------------------------------------------------

def _interruptible(cmd: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Ctrl-C ends a command with one line and status 130, not a traceback. The embedding cache
    stays whole either way: vectors are written as atomic segment files."""

    @functools.wraps(cmd)
    def run(args: argparse.Namespace) -> int:
        try:
            return cmd(args)
        except KeyboardInterrupt:
            print(f"error: {args.command}: cancelled; vectors embedded so far are kept in the cache",
                  file=sys.stderr)
            return 130

    return run


def _stage_printer() -> Callable[[str, int, int], None]:
    """Progress of the Ray engine's stages on stderr: a line when a stage starts and ends, and at
    most one a second in between."""
    from inspector.core.api import STAGE_UNITS

    last_stage, last_at = "", 0.0

    def show(stage: str, done: int, total: int) -> None:
        nonlocal last_stage, last_at
        now = time.monotonic()
        if stage == last_stage and 0 < done < total and now - last_at < 1.0:
            return
        last_stage, last_at = stage, now
        print(f"ray: {stage} {done:,}/{total:,} {STAGE_UNITS.get(stage, '')}".rstrip(), file=sys.stderr, flush=True)

    return show


@contextmanager
def _engine(args: argparse.Namespace, wb: Any) -> Iterator[Any]:
    """What runs `evaluate`, `compare` and `sweep`: the workbench itself (--engine local), or a
    RayEngine over it, whose cluster is shut down afterwards if it started one."""
    if args.engine == "local":
        if args.address is not None or args.workers is not None:
            raise CliError("--address and --workers need --engine ray")
        yield wb
        return
    from inspector.core.api import EngineError, RayEngine

    try:
        engine = RayEngine(wb, address=args.address, workers=args.workers, progress=_stage_printer())
    except EngineError as exc:
        raise CliError(str(exc)) from None
    s = engine.session
    where = f"joined {s.address}" if s.address else ("started a local cluster" if s.owned else "cluster")
    print(f"ray: {where} with {s.cpus} CPUs, {s.gpus} GPUs",
          file=sys.stderr, flush=True)
    try:
        yield engine
    finally:
        engine.close()


def _device_source(runner: Any) -> Any:
    """What the report's device line names: where the Ray engine's actors ran the model, if they
    did; else the driver's embedder."""
    info = getattr(runner, "device", None)
    if isinstance(info, dict):
        from types import SimpleNamespace

        return SimpleNamespace(**info)
    return runner.embedder


def _header(shown: Any, wb: Any) -> None:
    """The text reports' first lines: where vectors were computed, and by which model."""
    print(device_line(shown))
    line = embedder_line(wb.embedder)
    if line:
        print(line)


# -- eval -------------------------------------------------------------------------------------------

@_interruptible
def _cmd_eval(args: argparse.Namespace) -> int:
    check_store_flags(args)
    config = _config(args)
    budget = _budget(args)
    reranker, depth = make_reranker(args)
    if reranker is not None and depth < config.k:
        raise CliError(f"--rerank-depth ({depth}) is below k ({config.k}): the reranker could hand back "
                       f"only {depth} chunks")
    wb = open_workbench(args, [config.retriever])
    docs, gold = wb.documents, wb.gold
    source = None
    if args.store:
        source = open_store(args, wb)
        args.strategy = source.strategy
        config = _config(args)
    with _engine(args, wb) as runner:
        report = runner.evaluate(config, budget=budget)
        shown = _device_source(runner)
    figures = wb.rerank(config, reranker, depth) if reranker is not None else None
    rates = _rates(args, wb)
    table_rates = rates if _priced(args) else None
    if args.format == "json":
        print_json(report_json(report, config, gold=gold.path, documents=[d.doc_id for d in docs],
                           warnings=[w.one_line() for w in gold.warnings], rates=rates,
                           embedder=embedder_report(wb.embedder),
                           rerank=_rerank_json(figures) if figures is not None else None,
                           store=store_report(source),
                           **device_fields(shown)))
    elif args.format == "markdown":
        print(report_markdown(report, config, gold_path=gold.path,
                              document=", ".join(d.doc_id for d in docs)), end="")
    elif args.format == "csv":
        print(report_csv(report), end="")
    else:
        _header(shown, wb)
        print(report_text(report, config, multi_doc=len(docs) > 1, rates=table_rates), end="")
        if figures is not None:
            print(_rerank_text(figures))
    return 0


def _rerank_json(f: Any) -> dict[str, Any]:
    """The `rerank` object of eval's JSON: hit@k and MRR before and after, paired."""
    from dataclasses import asdict

    return {"reranker": reranker_report_of(f), "depth": f.depth, "k": f.k, "retriever": f.retriever,
            "before": {"hit_rate": round(f.before.hit_rate, 4), "mrr": round(f.before.mrr, 4)},
            "after": {"hit_rate": round(f.after.hit_rate, 4), "mrr": round(f.after.mrr, 4)},
            "ceiling": round(f.ceiling, 4),
            "paired": {m: {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(d).items()}
                       for m, d in f.paired.items()},
            "moves": [{"question": q.question, "rank_in_depth": a, "rank_after": b} for q, a, b in f.moves()],
            "pairs": f.pairs, "computed": f.computed}


def reranker_report_of(f: Any) -> dict[str, Any]:
    return dict(f.reranker_info) if f.reranker_info else {"model_id": f.reranker}


def _rerank_text(f: Any) -> str:
    """Two lines under eval's table: the figures before and after reranking, with the verdicts."""
    parts = []
    for metric, name in (("hit_rate", f"hit@{f.k}"), ("mrr", "MRR")):
        d = f.paired.get(metric)
        if d is None:
            continue
        parts.append(f"{name} {d.before:.3f} \u2192 {d.after:.3f} ({d.delta:+.3f} [{d.ci[0]:+.3f}, {d.ci[1]:+.3f}], "
                     f"{d.verdict})")
    return (f"\nreranked by {f.reranker} (the retriever's top {f.depth} \u2192 {f.k}): " + "; ".join(parts)
            + f"\nceiling: hit@{f.depth} {f.ceiling:.3f} (a reranker only reorders what the retriever found)")


# -- compare ----------------------------------------------------------------------------------------

def _models(args: argparse.Namespace, texts: list[str], retriever: str, flag: str) -> list[tuple[Any, Any]]:
    """(spec, model) for each model named, every one checked before any work: a malformed spec, a
    folder that is not there, a model that cannot run here is one line (exit 2). Each --embed-*
    option goes to the kinds that read it."""
    if retriever == "bm25":
        raise CliError(f"{flag} compares embedding models, and bm25 uses none; choose --retriever dense or hybrid")
    out = []
    for text in texts:
        spec = embedder_spec(args, text, lenient=True)
        out.append((spec, make_model(args, spec)))
    return out


@_interruptible
def _cmd_compare(args: argparse.Namespace) -> int:
    if args.against_embedder is not None:
        return _compare_embedders(args)
    if args.against is None:
        raise CliError("give --against STRATEGY[:SIZE[:OVERLAP]] or --against-embedder SPEC")
    config = _config(args)
    baseline = _against(args.against, config, args.prefix)
    wb = open_workbench(args, [config.retriever, baseline.retriever])
    with _engine(args, wb) as runner:
        cmp = runner.compare(baseline, config, budget=_budget(args))
        shown = _device_source(runner)
    rates = _rates(args, wb)
    if args.format == "json":
        print_json({**RENDERERS[("comparison", "json")](cmp, rates=rates), **device_fields(shown),
                    "embedder": embedder_report(wb.embedder)})
        return 0
    if args.format == "table":
        _header(shown, wb)
        if not _priced(args):
            rates = None
    print(_render("comparison", args.format, cmp, rates), end="")
    return 0


def _compare_embedders(args: argparse.Namespace) -> int:
    """The same chunks and questions under --embedder (A, the baseline) and --against-embedder (B):
    both reports, the paired difference with its interval and verdict, both `embedder` objects."""
    from inspector.core.api import compare_shared

    if args.against is not None:
        raise CliError("give --against or --against-embedder, not both")
    args.retriever = args.retriever or "dense"  # models differ only where vectors rank
    config = _config(args)
    (spec_a, _), (spec_b, model_b) = _models(args, [args.embedder or "minilm", args.against_embedder],
                                             config.retriever, "--against-embedder")
    budget = _budget(args)
    wb = open_workbench(args, [config.retriever], spec=spec_a)
    with _engine(args, wb) as runner:
        before = runner.evaluate(config, budget=budget)
        shown = _device_source(runner)
    rates = _rates(args, wb)
    info_a, line_a = embedder_report(wb.embedder), embedder_line(wb.embedder)
    switch_model(wb, spec_b, model_b)
    with _engine(args, wb) as runner:
        after = runner.evaluate(config, budget=budget)
    info_b, line_b = embedder_report(wb.embedder), embedder_line(wb.embedder)
    cmp = compare_shared(before, after, before_config=config, after_config=config)
    if cmp is None:  # the same gold set on both sides: never, unless it holds no question
        raise CliError("the gold set holds no question about these documents")
    if args.format == "json":
        out = RENDERERS[("comparison", "json")](cmp, rates=rates)
        out["before"]["embedder"], out["after"]["embedder"] = info_a, info_b
        print_json({**out, **device_fields(shown), "embedder": info_a, "against_embedder": info_b})
        return 0
    if args.format == "table":
        print(device_line(shown))
        print(f"A (baseline) {line_a}\nB            {line_b}\nthe same chunks and questions; only the model differs")
        if not _priced(args):
            rates = None
    elif args.format == "markdown":
        print(f"Models: A `{info_a['spec']}`, B `{info_b['spec']}` (the same chunks and questions)\n")
    print(_render("comparison", args.format, cmp, rates), end="")
    return 0


# -- sweep ------------------------------------------------------------------------------------------

@_interruptible
def _cmd_sweep(args: argparse.Namespace) -> int:
    from inspector.core.api import EvalConfig, get_strategy, grid

    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    if not strategies:
        raise CliError("--strategies names no strategy")
    for s in strategies:
        get_strategy(s)
    sizes = _ints("--sizes", args.sizes)
    overlaps = _ints("--overlaps", args.overlaps)
    ks = [k for k in _ints("--ks", args.ks) if k is not None] or [5]
    if any(k < 1 for k in ks):
        raise CliError("--ks values must be at least 1")
    # Models differ only where vectors rank: --embedders means dense unless a retriever is named.
    retriever = args.retriever or ("dense" if args.embedders is not None else DEFAULT_RETRIEVER)
    configs, skipped = grid(strategies, sizes, overlaps, ks, retriever=retriever,
                            with_prefix=args.prefix, embedding=args.embedding or "exact",
                            describe=args.describe)
    if args.embed_view:
        configs = [dataclasses.replace(c, embed_view=args.embed_view) for c in configs]
    if not configs:
        raise CliError("the grid holds no valid configuration: " + "; ".join(r for _c, r in skipped[:3]))
    against = _against(args.against or EvalConfig().strategy, configs[0], args.prefix)
    if args.embedders is not None:
        return _sweep_embedders(args, configs, skipped, against, retriever)
    wb = open_workbench(args, [retriever])
    with _engine(args, wb) as runner:
        result = runner.sweep(configs, skipped=skipped, confirm=args.confirm, against=against,
                              budget=_budget(args), folds=max(2, args.folds))
        shown = _device_source(runner)
    rates = _rates(args, wb)
    if args.format == "json":
        print_json({**RENDERERS[("sweep", "json")](result, rates=rates), **device_fields(shown),
                    "embedder": embedder_report(wb.embedder)})
    elif args.format == "table":
        _header(shown, wb)
        print(sweep_text(result, top=args.top, rates=rates if _priced(args) else None), end="")
    else:
        print(_render("sweep", args.format, result, rates), end="")
    return 0


def _sweep_embedders(args: argparse.Namespace, configs: list, skipped: Any, against: Any, retriever: str) -> int:
    """The grid once per model of --embedders (on the same documents and questions), then which
    setting is best under each model and whether the best setting changes with the model."""
    texts = [t.strip() for t in args.embedders.split(",") if t.strip()]
    if not texts:
        raise CliError("--embedders names no model")
    if args.embedder not in (None, "minilm"):
        raise CliError("give --embedder or --embedders, not both")
    models = _models(args, texts, retriever, "--embedders")
    wb = open_workbench(args, [retriever], spec=models[0][0])
    results: list[tuple[Any, Any, Any]] = []  # (embedder object, sweep result, rates)
    shown: Any = None
    for i, (spec, model) in enumerate(models):
        if i:
            switch_model(wb, spec, model)
        with _engine(args, wb) as runner:
            result = runner.sweep(configs, skipped=skipped, confirm=args.confirm, against=against,
                                  budget=_budget(args), folds=max(2, args.folds))
            shown = shown if shown is not None else _device_source(runner)
        results.append((embedder_report(wb.embedder), result, _rates(args, wb)))
    verdict = _best_by_model([(info["spec"], result) for info, result, _r in results])
    if args.format == "json":
        print_json({"models": [{"embedder": info, **RENDERERS[("sweep", "json")](result, rates=rates)}
                               for info, result, rates in results],
                    **verdict, **device_fields(shown)})
        return 0
    if args.format == "table":
        print(device_line(shown))
    for info, result, rates in results:
        if args.format == "table":
            print(f"\n== {info['spec']} ==")
            print(sweep_text(result, top=args.top, rates=rates if _priced(args) else None), end="")
        elif args.format == "markdown":
            print(f"\n## Embedder `{info['spec']}`\n")
            print(_render("sweep", args.format, result, rates), end="")
        else:  # csv: one table per model, each after a line naming it
            print(f"# embedder: {info['spec']}")
            print(_render("sweep", args.format, result, rates), end="")
    if args.format in ("table", "markdown"):
        print("\n" + _best_text(verdict))
    return 0


def _best_by_model(results: list[tuple[str, Any]]) -> dict[str, Any]:
    """Per model its best row (the sweep's first), and for every other model's best how it scores
    under this model and whether it ties with this model's best (its paired interval holds 0)."""
    best = []
    for spec, result in results:
        rows = result.rows
        top = rows[0]
        others = []
        for other_spec, other in results:
            if other_spec == spec:
                continue
            theirs = other.rows[0].config
            row = next((r for r in rows if r.config == theirs), None)
            if row is None or row is top:  # the same best: nothing to weigh
                continue
            others.append({"embedder": other_spec, "label": theirs.label(),
                           "hit_rate": round(row.report.hit_rate, 4), "mrr": round(row.report.mrr, 4),
                           "tied_with_best": bool(row is top or row.tied_with_best)})
        best.append({"embedder": spec, "label": top.config.label(), "config": top.config.to_dict(),
                     "hit_rate": round(top.report.hit_rate, 4), "mrr": round(top.report.mrr, 4),
                     "others_best_here": others})
    labels = {b["label"] for b in best}
    changes = len(labels) > 1
    beyond = changes and any(not o["tied_with_best"] for b in best for o in b["others_best_here"])
    return {"best": best, "best_changes_with_model": changes, "best_changes_beyond_noise": beyond}


def _best_text(verdict: dict[str, Any]) -> str:
    lines = ["best setting per model (ranked as each table is):"]
    for b in verdict["best"]:
        lines.append(f"  {b['embedder']}: {b['label']} (hit@k {b['hit_rate']:.3f}, MRR {b['mrr']:.3f})")
        for o in b["others_best_here"]:
            tie = "tied with the best here" if o["tied_with_best"] else "worse here beyond noise"
            lines.append(f"      {o['embedder']}'s best scores {o['hit_rate']:.3f} here ({tie})")
    if not verdict["best_changes_with_model"]:
        lines.append("the best setting is the same for every model")
    elif verdict["best_changes_beyond_noise"]:
        lines.append("the best setting changes with the model, beyond noise for at least one model")
    else:
        lines.append("the best setting changes with the model, but within noise: each model's best ties "
                     "with the other's on these questions")
    return "\n".join(lines)
