"""The public evaluation set (data/public): what each document holds, and a BM25 sanity baseline.

Prints, per document: size, cl100k tokens, headings, tables, list items (any depth, as
markdown-it-py parses them with the app's settings), questions per split, where the answers sit;
then BM25 hit@1, hit@5 and MRR over all of a document's questions with the default `markdown`
strategy, through the command line exactly as a user would run it. Nothing here is tuned.

    .venv/bin/python benchmarks/public_data.py [--no-bm25]
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from _common import ROOT

from inspector.core.documents.document import load_document
from inspector.core.text.structure import _parser
from inspector.core.text.tokens import count_text

PUBLIC = ROOT / "benchmarks" / "data" / "public"
CLI = "import sys; from inspector.cli import main; sys.exit(main())"


def inventory(name: str, root: Path = PUBLIC) -> dict:
    """What one document of a set laid out as data/public holds (`root`: data/heldout too), and
    its gold file's splits, answer places and recorded word overlaps (where lines carry one)."""
    path = root / name / f"{name}.md"
    doc = load_document(path)
    kinds = Counter(t.type for t in _parser().parse(doc.text))
    recs = [json.loads(line) for line in
            (root / name / f"{name}.gold.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return {
        "kb": path.stat().st_size / 1024,
        "tokens": count_text(doc.text),
        "headings": kinds["heading_open"],
        "tables": kinds["table_open"],
        "items": kinds["list_item_open"],
        "split": Counter(r["split"] for r in recs),
        "where": Counter(r["where"] for r in recs),
        "overlaps": [r["overlap"] for r in recs if "overlap" in r],
    }


def bm25(name: str) -> dict:
    folder = PUBLIC / name
    out = subprocess.run(
        [sys.executable, "-c", CLI, "eval", str(folder / f"{name}.md"), "--gold",
         str(folder / f"{name}.gold.jsonl"), "--retriever", "bm25", "--k", "5", "--format", "json"],
        cwd=ROOT, capture_output=True, text=True, check=True)
    data = json.loads(out.stdout)
    ranks = [q["rank"] for q in data["questions"]]
    return {"hit1": sum(r == 1 for r in ranks) / len(ranks), "hit5": data["hit_rate"],
            "mrr": data["mrr"], "chunks": data["cost"]["chunks"], "config": data["config"]}


def main() -> int:
    names = sorted(p.name for p in PUBLIC.iterdir() if p.is_dir())
    print("| document | KB | cl100k tokens | headings | tables | list items | questions tune/test "
          "| answers in list / table / other |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        s = inventory(name)
        other = sum(s["where"].values()) - s["where"]["list"] - s["where"]["table"]
        print(f"| {name} | {s['kb']:.1f} | {s['tokens']:,} | {s['headings']} | {s['tables']} | "
              f"{s['items']} | {s['split']['tune']}/{s['split']['test']} | "
              f"{s['where']['list']} / {s['where']['table']} / {other} |")
    if "--no-bm25" in sys.argv:
        return 0
    print("\n| document | chunks | BM25 hit@1 | hit@5 | MRR |")
    print("|---|---|---|---|---|")
    config = None
    for name in names:
        b = bm25(name)
        config = b["config"]
        print(f"| {name} | {b['chunks']} | {b['hit1']:.3f} | {b['hit5']:.3f} | {b['mrr']:.3f} |")
    print(f"\n(all questions of each document, both splits; config {config})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
