"""Size x strategy under two embedding models: does the best chunking setting change with the model?

Issue 28, item 7. The app's tuning figures are the figures of one model (the bundled MiniLM, 256
word pieces). Here the same grid (strategy x size, overlap 0, dense retrieval, k = 5) is scored on
the same chunks and questions under two real models:

- `minilm`: the bundled all-MiniLM-L6-v2;
- `minilm-2l`: its first two transformer layers (tokenizer, pooling and normalization unchanged),
  saved into a temp folder as tests/support/models.py does, and loaded as `st:FOLDER`, exactly as a
  user's sentence-transformers folder is.

`--models` picks others (issue 28's fast static family): `static` is a static model made from the
bundled one's input embedding rows, `static-distill` one distilled from it (model2vec's recipe,
`inspector/core/embedding/static_model.py`; about 4 minutes to build on two cores), both loaded as
`static:FOLDER`; `NAME=SPEC` adds any model (`mine=st:/models/bge-small`, `s=static:/tmp/potion`).
Beside each model's figures: its embedding speed in texts/s on 256 chunks of the dataset
(fixed_tokens 256), timed without the cache after one warm-up call.

Datasets: Chroma's corpora (benchmarks/data/chroma; by default the three small corpora, chatlogs,
state_of_the_union and wikitexts, with their questions: `--chroma full` takes all five, which is
hours on two cores) and the public set (benchmarks/data/public, the held-out `test` questions).

Printed per dataset: hit@5 with its 95 % bootstrap interval for every grid point under each model,
each model's best setting, how the other model's best scores under it (paired difference with its
interval and verdict, `uncertainty.paired_deltas`), and whether the best setting changes.

    python benchmarks/model_sizes.py [--strategies fixed_tokens,recursive,markdown] [--sizes 128,256,512]
                                     [--datasets chroma,public] [--chroma small|full]
                                     [--models minilm,minilm-2l,static,static-distill,NAME=SPEC]
    python benchmarks/model_sizes.py --quick    # run_all's reduced mode: public set, 2 settings

Vectors go to the benchmarks' cache (benchmarks/out/cache), kept per model identity: a second run
embeds nothing new.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from benchmarks._datasets import bench_cache, load  # noqa: E402
from inspector.core.embedding.spec import embedder_info, make_embedder, parse_embedder_spec  # noqa: E402
from inspector.core.evaluation.sweep import grid  # noqa: E402
from inspector.core.evaluation.uncertainty import paired_deltas, report_intervals  # noqa: E402
from tests.support.models import build_two_layer_minilm  # noqa: E402

SEED = 0


BUILT = ("minilm", "minilm-2l", "static", "static-distill")


def models(folder: Path, names: str = "minilm,minilm-2l") -> list[tuple[str, object]]:
    """(name, embedder) of the models named; those built from the bundled one go into `folder`."""
    from inspector.core.embedding.static_model import build_static_minilm

    out = []
    for item in names.split(","):
        name, sep, text = item.strip().partition("=")
        if not sep:
            if name not in BUILT:
                raise SystemExit(f"unknown model {name!r} (use {', '.join(BUILT)} or NAME=SPEC)")
            t0 = time.perf_counter()
            text = {"minilm": lambda: "minilm",
                    "minilm-2l": lambda: f"st:{build_two_layer_minilm(folder / name)}",
                    "static": lambda: f"static:{build_static_minilm(folder / name, method='input')}",
                    "static-distill": lambda: f"static:{build_static_minilm(folder / name, method='distill')}",
                    }[name]()
            if name != "minilm":
                print(f"  built {name} in {time.perf_counter() - t0:.0f} s", flush=True)
        out.append((name, make_embedder(parse_embedder_spec(text), device="cpu")))
    return out


def texts_per_second(emb: object, ds: object, n: int = 256) -> float:
    """Texts embedded per second on `n` chunks of the dataset (fixed_tokens 256), no cache."""
    from inspector.core.api import chunk_document

    texts: list[str] = []
    for doc in ds.workbench.documents:  # type: ignore[attr-defined]
        for c in chunk_document(doc, "fixed_tokens", {"size": 256, "overlap": 0}):
            texts.append(c.embedded_text(doc))
        if len(texts) >= n:
            break
    texts = texts[:n]
    emb.encode(texts[:8])  # type: ignore[attr-defined]  # warm-up: loading and first-call costs
    t0 = time.perf_counter()
    emb.encode(texts)  # type: ignore[attr-defined]
    return len(texts) / (time.perf_counter() - t0)


def run_dataset(name: str, chroma: str, configs: list, model_list: list) -> None:
    key = {"chroma": "chroma-small" if chroma == "small" else "chroma", "public": "public"}[name]
    results: dict[str, dict[str, object]] = {}
    for mname, emb in model_list:
        t0 = time.perf_counter()
        ds = load(key, embedder=emb, cache=bench_cache(), split="test")
        ds.workbench.set_embedder(emb)
        res = ds.workbench.sweep(configs)
        results[mname] = {r.config.label(): r.report for r in res.rows}
        info = embedder_info(emb)
        spec = str(info["spec"]).replace(str(Path(tempfile.gettempdir())), "$TMP")
        speed = texts_per_second(emb, ds)
        print(f"  {mname}: {spec} ({info['dims']} dims, reads {info['max_tokens']} tokens), "
              f"{len(ds.questions)} questions, {len(ds.workbench.documents)} documents, "
              f"{time.perf_counter() - t0:.0f} s; embeds {speed:,.0f} texts/s", flush=True)
    labels = [c.label() for c in configs]
    names = [m for m, _e in model_list]
    width = max(len(x) for x in labels)
    print(f"\n  {'setting':<{width}}  " + "  ".join(f"{n + ' hit@5 [95 % CI]':>28}" for n in names))
    for label in labels:
        cells = []
        for n in names:
            r = results[n][label]
            ci = report_intervals(r, seed=SEED, metrics=["hit_rate"])["hit_rate_ci"]
            cells.append(f"{r.hit_rate:>8.3f} [{ci[0]:.3f}, {ci[1]:.3f}]".rjust(28))
        print(f"  {label:<{width}}  " + "  ".join(cells))
    best = {}
    for n in names:
        # Best by hit@5, ties broken by MRR (the sweep table's order).
        best[n] = max(labels, key=lambda lb, n=n: (results[n][lb].hit_rate, results[n][lb].mrr))
    print()
    for n in names:
        r = results[n][best[n]]
        print(f"  best under {n}: {best[n]} (hit@5 {r.hit_rate:.3f}, MRR {r.mrr:.3f})")
        for other in names:
            if other == n or best[other] == best[n]:
                continue
            d = paired_deltas(results[n][best[n]], results[n][best[other]], seed=SEED)["hit_rate"]
            print(f"      {other}'s best ({best[other]}) under {n}: {results[n][best[other]].hit_rate:.3f}, "
                  f"{d.delta:+.3f} [{d.ci[0]:+.3f}, {d.ci[1]:+.3f}], {d.verdict}")
    same = len(set(best.values())) == 1
    print(f"  the best setting {'is the same for every model' if same else 'changes with the model'}")
    order = {n: sorted(labels, key=lambda lb, n=n: -results[n][lb].hit_rate) for n in names}
    print("  order by hit@5: " + "; ".join(f"{n}: " + " > ".join(order[n][:3]) + " ..." for n in names))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--strategies", default="fixed_tokens,recursive,markdown")
    ap.add_argument("--sizes", default="128,256,512")
    ap.add_argument("--datasets", default="chroma,public")
    ap.add_argument("--chroma", choices=("small", "full"), default="small")
    ap.add_argument("--models", default="minilm,minilm-2l",
                    help=f"comma-separated: {', '.join(BUILT)} (built from the bundled model), or NAME=SPEC")
    ap.add_argument("--quick", action="store_true",
                    help="reduced mode (run_all): the public set, fixed_tokens and recursive at 256, "
                         "minilm and static")
    args = ap.parse_args()
    if args.quick:
        args.datasets, args.strategies, args.sizes, args.models = "public", "fixed_tokens,recursive", "256", \
            "minilm,static"
    sizes = [int(s) for s in args.sizes.split(",")]
    configs, skipped = grid(args.strategies.split(","), sizes, [0], [5], retriever="dense")
    print(f"model_sizes: {len(configs)} settings ({args.strategies} x {args.sizes}, overlap 0, dense, k=5)"
          + (f", {len(skipped)} skipped" if skipped else ""))
    if args.quick:
        print("QUICK (run_all's reduced mode): the public set, 2 settings, minilm beside static")
    if args.chroma == "small" and "chroma" in args.datasets.split(","):
        print("chroma: SUBSAMPLED to the three small corpora (chatlogs, state_of_the_union, wikitexts) and "
              "their questions; --chroma full for all five")
    if "public" in args.datasets.split(","):
        print("public: the held-out `test` questions")
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="model-sizes-") as tmp:
        model_list = models(Path(tmp), args.models)
        for name in args.datasets.split(","):
            print(f"\n== {name} ==", flush=True)
            run_dataset(name, args.chroma, configs, model_list)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
