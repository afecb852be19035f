"""Sentence boundaries in seven languages: our English-shaped rule against sentencex, and what
`sentence_spans` now does (sentencex where it measured better).

    python benchmarks/sentence_split.py [--speed-kb 1000]

The samples (tests/data/languages/*.txt) hold one sentence per line, so every boundary is known.
Printed per language: precision, recall and F1 of the sentence ends found, and the share of
sentences found exactly; then the time to split ~1 MB of German with each (per paragraph, as the
chunkers call it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from inspector.core.text.language import align_pieces, detect_language  # noqa: E402
from inspector.core.text.structure import _english_sentences, paragraph_spans, sentence_spans  # noqa: E402

SAMPLES = ROOT / "tests" / "data" / "languages"
LANGS = ("en", "de", "fr", "zh", "ja", "ar", "hi")
NO_SPACE = ("zh", "ja")


def sample(lang: str) -> tuple[str, list[tuple[int, int]]]:
    """The sample document and its sentence spans."""
    paras = [p.split("\n") for p in (SAMPLES / f"{lang}.txt").read_text(encoding="utf-8").strip().split("\n\n")]
    joiner = "" if lang in NO_SPACE else " "
    text = ""
    spans = []
    for i, para in enumerate(paras):
        if i:
            text += "\n\n"
        for j, s in enumerate(para):
            if j:
                text += joiner
            spans.append((len(text), len(text) + len(s)))
            text += s
    return text, spans


def score(found: list[tuple[int, int]], gold: list[tuple[int, int]]) -> tuple[float, float, float, float]:
    fe, ge = {b for _a, b in found}, {b for _a, b in gold}
    tp = len(fe & ge)
    p = tp / len(fe) if fe else 0.0
    r = tp / len(ge) if ge else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f, len(set(found) & set(gold)) / len(gold)


def english_rule(text: str) -> list[tuple[int, int]]:
    """Our splitter's rule alone (no language detection), per paragraph."""
    out: list[tuple[int, int]] = []
    for a, b in paragraph_spans(text):
        _english_sentences(text, a, b, out)
    return out


def sentencex_only(text: str, lang: str) -> list[tuple[int, int]]:
    """sentencex alone, per paragraph, its pieces laid onto the text and trimmed."""
    from sentencex import segment

    out = []
    for a, b in paragraph_spans(text):
        for x, y in align_pieces(text, a, b, segment(lang, text[a:b])) or []:
            while x < y and text[x].isspace():
                x += 1
            while y > x and text[y - 1].isspace():
                y -= 1
            if x < y:
                out.append((x, y))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--speed-kb", type=int, default=1000)
    args = ap.parse_args()
    print(f"{'lang':<5} {'detected':<9} {'ours P/R/F1/exact':<24} {'sentencex P/R/F1/exact':<24} now F1")
    for lang in LANGS:
        text, gold = sample(lang)
        ours = english_rule(text)
        theirs = sentencex_only(text, lang)
        now = sentence_spans(text)
        fmt = "{:.2f}/{:.2f}/{:.2f}/{:.2f}"
        print(f"{lang:<5} {detect_language(text).code:<9} {fmt.format(*score(ours, gold)):<24} "
              f"{fmt.format(*score(theirs, gold)):<24} {score(now, gold)[2]:.2f}")
    text, _gold = sample("de")
    big = ("\n\n".join([text] * (args.speed_kb * 1000 // len(text.encode()) + 1)))
    for name, fn in (("ours", lambda: english_rule(big)), ("sentencex", lambda: sentencex_only(big, "de")),
                     ("sentence_spans", lambda: sentence_spans(big))):
        t = time.perf_counter()
        n = len(fn())
        print(f"{name:<10} {len(big.encode()) / 1e6:.2f} MB German: {n:,} sentences in "
              f"{(time.perf_counter() - t) * 1000:,.0f} ms")


if __name__ == "__main__":
    main()
