"""Two ways of building a one-slice text's token index (issue 31), compared in one process:
a strategy's cold call (`--strategy`, recursive by default), each way and chonkie's recursive call
alternating, `--rounds` rounds, in the order given by
`--order` (the first call of a round runs on a slightly colder machine: run both orders). Prints
the medians, the median per-round ratio on / off, and chonkie / ours each way (above 1.0x we are
faster).

`--way facts`: the text's facts read while it encodes, against before it
(`tokens.FACTS_BESIDE_THE_ENCODE`). `--way tail`: a share of the text (`--share`, by default
`tokens.TAIL_SHARE`) encoded by the calling thread once its work meanwhile is done, against the
encoding thread encoding it all (`TAIL_SHARE` 0).

Documents (`--doc`): the sample handbook (95 KB), and three of Chroma's public corpora that are
one slice each (benchmarks/data/chroma, MIT: chatlogs 40 KB, state_of_the_union 49 KB, wikitexts
119 KB; `--doc all` runs the four).

    .venv/bin/python benchmarks/one_slice_ways.py [--way facts|tail] [--share 0.3] [--rounds 41]
        [--order on-first|off-first] [--doc sample|chatlogs|state_of_the_union|wikitexts|all]
        [--strategy recursive|fixed_tokens|markdown]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import HANDBOOK, ROOT, forget_document_caches

from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text
from inspector.core.text import tokens

CORPORA = ROOT / "benchmarks" / "data" / "chroma" / "corpora"
ONE_SLICE_CORPORA = ("chatlogs", "state_of_the_union", "wikitexts")
DOCS = {"sample": HANDBOOK, **{name: CORPORA / f"{name}.md" for name in ONE_SLICE_CORPORA}}


def _ways(way: str, share: float) -> tuple[str, dict[str, object], object]:
    """The module attribute a way sets, its value on and off, and the value to restore."""
    if way == "facts":
        return "FACTS_BESIDE_THE_ENCODE", {"on": True, "off": False}, tokens.FACTS_BESIDE_THE_ENCODE
    return "TAIL_SHARE", {"on": share, "off": 0.0}, tokens.TAIL_SHARE


PARAMS = {"recursive": {"size": 256, "overlap": 0}, "fixed_tokens": {"size": 256, "overlap": 32}, "markdown": {}}


def compare(name: str, text: str, way: str, share: float, rounds: int, order: str, strategy_name: str) -> None:
    strategy, params = get_strategy(strategy_name), PARAMS[strategy_name]
    attr, values, kept = _ways(way, share)
    reference = strategy(from_text(text, "a.md"), params)
    calls = {"on": lambda: strategy(from_text(text, "a.md"), params),
             "off": lambda: strategy(from_text(text, "a.md"), params)}
    try:
        import chonkie

        chunker = chonkie.RecursiveChunker(tokenizer=tokens.encoding(), chunk_size=256)
        memo = type(chunker)._estimate_token_count.cache_clear
        if strategy_name == "recursive":
            calls["chonkie"] = lambda: (memo(), chunker.chunk(text))
    except ImportError:
        pass
    names = list(calls) if order == "on-first" else ["off", "on", *list(calls)[2:]]
    times: dict[str, list[float]] = {n: [] for n in names}
    try:
        for _ in range(rounds):
            for n in names:
                forget_document_caches()
                setattr(tokens, attr, values.get(n, kept))
                start = time.perf_counter()
                out = calls[n]()
                times[n].append((time.perf_counter() - start) * 1e3)
                if n != "chonkie":
                    assert out == reference
    finally:
        setattr(tokens, attr, kept)
    med = {n: statistics.median(ts) for n, ts in times.items()}
    print(f"{name} ({len(text):,} chars), {strategy_name}, {way} {values['on']} vs {values['off']}, {rounds} rounds "
          f"({order}): "
          + ", ".join(f"{n} {ms:.2f} ms" for n, ms in med.items()))
    pair = statistics.median(a / b for a, b in zip(times["on"], times["off"], strict=True))
    print(f"  on / off {pair:.3f}")
    if "chonkie" in times:
        ratios = {n: statistics.median(c / o for c, o in zip(times["chonkie"], times[n], strict=True))
                  for n in ("on", "off")}
        print("  " + ", ".join(f"chonkie / ours ({n}) {r:.2f}x" for n, r in ratios.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--way", choices=("facts", "tail"), default="tail")
    ap.add_argument("--share", type=float, default=tokens.TAIL_SHARE or 0.3)
    ap.add_argument("--rounds", type=int, default=41)
    ap.add_argument("--order", choices=("on-first", "off-first"), default="on-first")
    ap.add_argument("--doc", choices=(*DOCS, "all"), default="sample")
    ap.add_argument("--strategy", choices=tuple(PARAMS), default="recursive",
                    help="chonkie's call is timed beside recursive only")
    args = ap.parse_args()
    try:
        import chonkie  # noqa: F401
    except ImportError:
        print("chonkie not installed: ours only")
    for name, path in DOCS.items():
        if args.doc in (name, "all"):
            text = path.read_text(encoding="utf-8")
            assert len(text) <= tokens.ENCODE_SLICE, name
            compare(name, text, args.way, args.share, args.rounds, args.order, args.strategy)


if __name__ == "__main__":
    main()
