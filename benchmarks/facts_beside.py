"""A one-slice text's facts read while it encodes, against before and after it (issue 31,
`tokens.FACTS_BESIDE_THE_ENCODE`): recursive cold on the sample handbook, both ways and chonkie's
call alternating in one process, `--rounds` rounds, in the order given by `--order` (the first
call of a round runs on a slightly colder machine: run both orders). Prints the medians, the
median per-round ratio beside / before, and chonkie / ours each way (above 1.0x we are faster).

    .venv/bin/python benchmarks/facts_beside.py [--rounds 41] [--order beside-first|before-first]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import HANDBOOK, forget_document_caches

from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text
from inspector.core.text import tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--order", choices=("beside-first", "before-first"), default="beside-first")
    args = ap.parse_args()
    text = HANDBOOK.read_text(encoding="utf-8")
    strategy, params = get_strategy("recursive"), {"size": 256, "overlap": 0}
    reference = strategy(from_text(text, "a.md"), params)
    calls = {"beside": lambda: strategy(from_text(text, "a.md"), params),
             "before": lambda: strategy(from_text(text, "a.md"), params)}
    try:
        import chonkie

        chunker = chonkie.RecursiveChunker(tokenizer=tokens.encoding(), chunk_size=256)
        memo = type(chunker)._estimate_token_count.cache_clear
        calls["chonkie"] = lambda: (memo(), chunker.chunk(text))
    except ImportError:
        print("chonkie not installed: ours only")
    names = list(calls) if args.order == "beside-first" else ["before", "beside", *list(calls)[2:]]
    times: dict[str, list[float]] = {name: [] for name in names}
    try:
        for _ in range(args.rounds):
            for name in names:
                forget_document_caches()
                tokens.FACTS_BESIDE_THE_ENCODE = name != "before"
                start = time.perf_counter()
                out = calls[name]()
                times[name].append((time.perf_counter() - start) * 1e3)
                if name != "chonkie":
                    assert out == reference
    finally:
        tokens.FACTS_BESIDE_THE_ENCODE = True
    med = {name: statistics.median(ts) for name, ts in times.items()}
    print(f"recursive cold, sample handbook, {args.rounds} rounds ({args.order}): "
          + ", ".join(f"{name} {ms:.2f} ms" for name, ms in med.items()))
    pair = statistics.median(a / b for a, b in zip(times["beside"], times["before"], strict=True))
    print(f"  beside / before {pair:.3f}")
    if "chonkie" in times:
        for way in ("beside", "before"):
            ratio = statistics.median(c / o for c, o in zip(times["chonkie"], times[way], strict=True))
            print(f"  chonkie / ours ({way}) {ratio:.2f}x")


if __name__ == "__main__":
    main()
