"""The held-out set (data/heldout, issue 29): what each document holds, and nothing more.

Prints the table of benchmarks/data/heldout/README.md, per document: size, cl100k tokens, headings,
tables, list items (any depth, as markdown-it-py parses them with the app's settings), questions per
split, mean word overlap and the share below 0.5 (`overlap.py`), and where the answers sit. It runs
no retriever, chunker or embedder on purpose: the set judges the advice rules and must stay unseen
by anything that tunes them.

    .venv/bin/python benchmarks/heldout_data.py
"""

from __future__ import annotations

import sys

from _datasets import HELDOUT, folders
from public_data import inventory


def main() -> int:
    names = [p.name for p in folders(HELDOUT)]
    print("| document | KB | cl100k tokens | headings | tables | list items | questions tune/test "
          "| mean overlap | below 0.5 | answers in list / table / other |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    every: list[float] = []
    for name in names:
        s = inventory(name, HELDOUT)
        ov = s["overlaps"]
        every += ov
        other = sum(s["where"].values()) - s["where"]["list"] - s["where"]["table"]
        print(f"| `{name}` | {s['kb']:.1f} | {s['tokens']:,} | {s['headings']} | {s['tables']} | "
              f"{s['items']} | {s['split']['tune']}/{s['split']['test']} | {sum(ov) / len(ov):.2f} | "
              f"{sum(v < 0.5 for v in ov) / len(ov):.0%} | "
              f"{s['where']['list']} / {s['where']['table']} / {other} |")
    if every:
        print(f"\n{len(every)} questions; mean overlap {sum(every) / len(every):.2f}, "
              f"{sum(v < 0.5 for v in every) / len(every):.0%} below 0.5")
    return 0


if __name__ == "__main__":
    sys.exit(main())
