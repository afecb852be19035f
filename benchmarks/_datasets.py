"""The three gold sets the tuning benchmarks (generalization.py, defaults.py) measure on.

- `handbook`: the bundled sample handbook and the 64 questions the team wrote for it (exact answers).
- `chroma`: Chroma's five corpora and 472 questions with reference spans (a hit is a retrieved
  chunk overlapping a reference; recall / IoU as chunking_evaluation computes them). Each question
  is searched within its own corpus (`IndexSearch` honours a question's source), where Chroma's
  report searched one index over all five: our figures are not its figures.
- `chroma-small`: the same with its three smaller corpora (chatlogs, state_of_the_union,
  wikitexts: 207 KB of 1.45 MB, 276 questions), where exact dense vectors of a whole grid are
  affordable on two shared CPU cores.
- `public`: five real licensed documents (data/public), questions of one split ("tune" or "test").
  The test split is held out: only `defaults.py`, after its decision, reads it.
- `paraphrase`: the same five documents with their paraphrased questions
  (`<name>.paraphrase.gold.jsonl`, 118, mean word overlap 0.27: asked in other words than the
  page's), one split or all. No advice rule was chosen on them.
- `heldout`: other real licensed documents (data/heldout) with paraphrased questions only, kept
  to judge rules nobody chose on them (its README); one split or all.

Each dataset comes as a `Workbench` holding its documents and questions; the embedder and the
persistent embedding cache are the caller's (`make_workbench`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import ROOT

from inspector.core.evaluation.gold import GoldQuestion, load_gold
from inspector.core.workbench import Workbench

HANDBOOK_GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"
CHROMA = ROOT / "benchmarks" / "data" / "chroma"
PUBLIC = ROOT / "benchmarks" / "data" / "public"
HELDOUT = ROOT / "benchmarks" / "data" / "heldout"
#: Where the benchmarks keep their exact MiniLM vectors (git-ignored; see `bench_cache`).
CACHE_ROOT = ROOT / "benchmarks" / "out" / "cache"

DATASETS = ("handbook", "chroma", "public")
#: Also accepted by `load`: chroma-small, paraphrase.
EXTRA_DATASETS = ("chroma-small", "paraphrase", "heldout")
#: Sets whose questions come in halves: their name carries the split ("public-tune").
SPLIT_SETS = ("public", "paraphrase", "heldout")
SMALL_CORPORA = ("chatlogs", "state_of_the_union", "wikitexts")


@dataclass(frozen=True)
class Dataset:
    name: str
    workbench: Workbench
    questions: tuple[GoldQuestion, ...]
    spans: bool
    """True when the questions carry reference spans (recall / IoU are reported)."""


def bench_cache() -> Any:
    """The benchmarks' persistent embedding cache (`benchmarks/out/cache`, not the user's)."""
    from inspector.core.embedding.cache import EmbeddingCache

    return EmbeddingCache(CACHE_ROOT)


def folders(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir())


def public_split(wb: Workbench, split: str, kind: str = "gold", root: Path = PUBLIC) -> tuple[GoldQuestion, ...]:
    """The public documents' questions of one split ("tune", "test" or "all"), document by document
    (`kind` "paraphrase": their paraphrased questions; `root`: another set laid out the same way)."""
    out: list[GoldQuestion] = []
    for folder in folders(root):
        path = folder / (f"{folder.name}.gold.jsonl" if kind == "gold" else f"{folder.name}.{kind}.gold.jsonl")
        splits = {i: json.loads(line)["split"]
                  for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.strip()}
        gold = load_gold(path, wb.documents)
        out.extend(q for q in gold.questions if split == "all" or splits[q.line] == split)
    return tuple(out)


def load(name: str, *, embedder: Any = None, cache: Any = None, split: str = "tune") -> Dataset:
    """One dataset as a Workbench with its questions set (`split`: the public set's half)."""
    wb = Workbench(embedder=embedder, cache=cache, lazy_model=False, indexes=2)
    if name == "handbook":
        wb.open([ROOT / "sample_docs" / "handbook.md"])
        qs = tuple(wb.load_gold(HANDBOOK_GOLD).questions)
        spans = False
    elif name in ("chroma", "chroma-small"):
        wb.open([CHROMA / "corpora"])
        qs = tuple(wb.load_gold(CHROMA / "questions_df.csv").questions)
        if name == "chroma-small":
            keep = {f"{c}.md" for c in SMALL_CORPORA}
            wb.set_documents([d for d in wb.documents if d.doc_id in keep])
            qs = tuple(q for q in qs if q.source in keep)
        spans = True
    elif name in SPLIT_SETS:
        root = HELDOUT if name == "heldout" else PUBLIC
        wb.open([p / f"{p.name}.md" for p in folders(root)])
        qs = public_split(wb, split, "paraphrase" if name == "paraphrase" else "gold", root)
        spans = False
    else:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DATASETS + EXTRA_DATASETS)}")
    if not qs:
        raise ValueError(f"{name}: no questions")
    wb.set_gold(qs)
    return Dataset(name if name not in SPLIT_SETS else f"{name}-{split}", wb, qs, spans)
