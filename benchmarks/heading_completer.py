"""The heading filter's completer at a keystroke (issue 31: on the GUI thread): the rule applied
path by path (`heading_filter.heading_matches` over every path, as `heading_completions` did before
`HeadingCatalog`) against the catalog made once per document, on the sample handbook and the
handbook repeated to 1 MB and to `--big` MB. Prints the catalog's making and the median of
`--repeat` calls for each typed text.

    .venv/bin/python benchmarks/heading_completer.py [--big 20] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from _common import HANDBOOK, big_markdown

from inspector.core.documents.document import from_text
from inspector.core.text.heading_filter import HeadingCatalog
from inspector.core.text.structure import outline_of
from tests.core.test_heading_filter import _completions_by_the_rule as _by_the_rule  # the tests' reference

TYPED = ("p", "parental > g", "e", "employee handbook (3) > parental", "x")


def _ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big", type=float, default=20.0)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    docs = {"sample handbook": HANDBOOK.read_text(encoding="utf-8"), "1 MB": big_markdown(1_000_000),
            f"{args.big:g} MB": big_markdown(int(args.big * 1_000_000))}
    for name, text in docs.items():
        paths = [h.path for h in outline_of(from_text(text, "d.md")).headings if h.path]
        start = time.perf_counter()
        catalog = HeadingCatalog(paths)
        made = (time.perf_counter() - start) * 1e3
        rule = [_ms(lambda t=t: _by_the_rule(t, paths), args.repeat) for t in TYPED]
        fast = [_ms(lambda t=t: catalog.completions(t), args.repeat) for t in TYPED]
        assert all(catalog.completions(t) == _by_the_rule(t, paths) for t in TYPED)
        print(f"{name}: {len(paths):,} headings; catalog made in {made:.1f} ms; per keystroke, rule / catalog (ms): "
              + ", ".join(f"{t!r} {r:.1f} / {f:.2f}" for t, r, f in zip(TYPED, rule, fast, strict=True)))


if __name__ == "__main__":
    main()
