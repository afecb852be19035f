"""The Markdown structure from markdown-it-py (the reference) against the compiled path
(`inspector/core/text/markdown_fast.py`: markdown-it.rs, with markdown-it-py re-reading the regions
where the two disagree), issue 31: CPU time of `parse_markdown` on the 1 MB document `peers.py`
uses and on every Markdown file of `data/` and `sample_docs/`, whether the Structures are
identical, and, with `--search N`, N generated documents compared (hypothesis, the generators of
tests/core/test_structure_fast.py; the shortest differences found are printed). `--files DIR`
adds every *.md under DIR (package READMEs, say).

    .venv/bin/python benchmarks/markdown_parsers.py [--search 20000] [--files DIR]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from _common import ROOT, big_markdown

from inspector.core.text import markdown_fast
from inspector.core.text.markdown_blocks import _parser, reference_parser
from inspector.core.text.structure import parse_markdown


def _cpu_ms(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best * 1000


def _differs(text: str) -> bool:
    return parse_markdown(text, "n") != parse_markdown(text, "n", parser=reference_parser())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--search", type=int, default=0, help="generated documents to compare")
    ap.add_argument("--files", type=Path, help="a folder whose *.md files are compared too")
    args = ap.parse_args()
    if markdown_fast._compiled_parser() is None:
        print("markdown-it-pyrs is not installed: parse_markdown is markdown-it-py alone")
        return
    text = big_markdown()
    fast = _cpu_ms(lambda: parse_markdown(text))
    ref = _cpu_ms(lambda: parse_markdown(text, parser=_parser()))
    print(f"peers document {len(text.encode()) / 1e6:.2f} MB: compiled path {fast:.0f} ms CPU, markdown-it-py "
          f"{ref:.0f} ms ({ref / fast:.2f}x); identical: {not _differs(text)}")
    files = sorted((ROOT / "benchmarks" / "data").rglob("*.md")) + sorted((ROOT / "sample_docs").rglob("*.md"))
    if args.files:
        files += sorted(args.files.rglob("*.md"))
    texts = []
    for f in files:
        try:
            texts.append(f.read_text(encoding="utf-8").replace("\r\n", "\n").replace("\r", "\n"))
        except (UnicodeDecodeError, OSError):
            continue
    fast = _cpu_ms(lambda: [parse_markdown(t) for t in texts], repeat=1)
    ref = _cpu_ms(lambda: [parse_markdown(t, parser=_parser()) for t in texts], repeat=1)
    different = sum(_differs(t) for t in texts)
    print(f"{len(texts)} Markdown files, {sum(map(len, texts)) / 1e6:.2f} M characters: compiled path {fast:.0f} ms "
          f"CPU, markdown-it-py {ref:.0f} ms; different: {different}")
    if args.search:
        _search(args.search)


def _search(n: int) -> None:
    import sys

    from hypothesis import HealthCheck, given, settings

    sys.path.insert(0, str(ROOT))
    from tests.core.strategies_for_tests import any_text
    from tests.core.test_structure import _markdown
    from tests.core.test_structure_fast import _after_table, _tricky_markdown

    found: list[str] = []
    dense = markdown_fast.DENSE_SUSPECTS
    markdown_fast.DENSE_SUSPECTS = 0  # short texts are dense with suspect lines: test the regions

    @settings(max_examples=n, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(_tricky_markdown | _after_table | _markdown | any_text.filter(lambda t: "\r" not in t and "\0" not in t))
    def compare(text: str) -> None:
        if _differs(text):
            found.append(text)

    compare()
    markdown_fast.DENSE_SUSPECTS = dense
    print(f"{n} generated documents: {len(found)} different")
    for text in sorted(found, key=len)[:10]:
        print(f"  {text!r}")


if __name__ == "__main__":
    main()
