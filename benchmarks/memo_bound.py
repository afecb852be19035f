"""Our recursive chunker counted chonkie's way: a study of the handbook x11 target (issue 31).

chonkie's recursive chunker is faster than ours on the handbook x11 (the sample handbook repeated
to ~1 MB) because it counts each piece of text once and answers the ten other copies from a
memo. This script asks whether that way of counting, kept exact, would let ours meet it.

"memo" below is our `recursive` strategy, unchanged, with the document's token index replaced by
a counter that encodes the text between line cuts once per distinct stretch and adds up:
- A line cut is a place after a line break before a character that is not whitespace (or one
  space and such a character). It is a piece boundary of cl100k's expression whatever came
  before, so a span's count is the sum of its stretches' counts (`tokens._line_cut`, the
  argument the encode's slices rest on).
- The chunks are checked equal to ours, count for count and path for path.

Printed: the cold call of ours, of the memo way and of each peer, in rounds (each once a round,
memos and caches emptied before each), medians, and each one's time over ours and over the memo
way's (the median of each round's ratio: above 1.0x, ours or the memo way is the faster).

    .venv/bin/python benchmarks/memo_bound.py [--doc handbook|chroma|sample|all] [--repeat N]
"""

from __future__ import annotations

import argparse
import bisect
import re
from collections.abc import Callable

from _common import HANDBOOK, big_markdown, chroma_text, forget_document_caches, p50
from peers import _peers, _ratio, _rounds

from inspector.core.chunking import common
from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text
from inspector.core.text.tokens import encoding

#: A line cut: after a line break, before a character that is not whitespace or before one
#: space and one (`tokens._line_cut`).
_CUT = re.compile(r"\n(?=\S| \S)")


class _StretchCounter:
    """Exact counts of spans of `text` as the sum of its stretches between line cuts, each
    distinct stretch encoded once (what `SpanContext` reads of a token index: count, counts)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.cuts = [m.end() for m in _CUT.finditer(text)]
        self.memo: dict[str, int] = {}
        self.encode = encoding().encode_ordinary

    def _stretch(self, a: int, b: int) -> int:
        s = self.text[a:b]
        n = self.memo.get(s)
        if n is None:
            n = self.memo[s] = len(self.encode(s))
        return n

    def count(self, a: int, b: int) -> int:
        if b <= a:
            return 0
        cuts = self.cuts
        i, j = bisect.bisect_right(cuts, a), bisect.bisect_left(cuts, b)
        if i >= j:
            return self._stretch(a, b)
        n = self._stretch(a, cuts[i]) + self._stretch(cuts[j - 1], b)
        for k in range(i, j - 1):
            n += self._stretch(cuts[k], cuts[k + 1])
        return n

    def counts(self, spans: list[tuple[int, int]]) -> list[int]:
        return [self.count(a, b) for a, b in spans]


def _memo_way(text: str, params: dict) -> Callable[[], object]:
    """Our recursive strategy on a fresh document with `_StretchCounter` for its token index."""
    strat = get_strategy("recursive")
    real = common.token_index

    def counter(doc, meanwhile=None, *, tail=False):  # noqa: ARG001  (token_index's signature)
        if meanwhile is not None:
            meanwhile()
        return _StretchCounter(doc.text)

    def call() -> object:
        common.token_index = counter
        try:
            return strat(from_text(text, "big.md"), params)
        finally:
            common.token_index = real

    return call


def run(name: str, text: str, repeat: int) -> None:
    params = {"size": 256, "overlap": 0}
    strat = get_strategy("recursive")

    def ours() -> object:
        return strat(from_text(text, "big.md"), params)

    memo = _memo_way(text, params)
    forget_document_caches()
    same = ours() == memo()
    calls = {"ours": (ours, forget_document_caches), "memo": (memo, forget_document_caches)}
    calls.update(_peers("recursive", text))
    times = _rounds(calls, repeat)
    print(f"\n== {name}: {len(text.encode()) / 1e6:.2f} MB, recursive 256/0, {repeat} rounds; "
          f"memo way's chunks equal ours: {same}")
    for key in calls:
        print(f"  {key:<10} {p50(times[key]):7.0f} ms   it / ours {_ratio(times[key], times['ours']):5.2f}x"
              f"   it / memo {_ratio(times[key], times['memo']):5.2f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--doc", choices=("handbook", "chroma", "sample", "all"), default="all")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    docs = {"sample handbook": lambda: HANDBOOK.read_text(encoding="utf-8"), "handbook x11": big_markdown,
            "chroma": chroma_text}
    for name, make in docs.items():
        if args.doc == "all" or name.split()[-1].startswith(args.doc) or name.startswith(args.doc):
            run(name, make(), args.repeat)


if __name__ == "__main__":
    main()
