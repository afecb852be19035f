"""PDF structure against hand-checked Markdown: headings, tables, reading order, speed (issue 30).

    python benchmarks/pdf_structure.py [--backend builtin|plain|docling] [--files a,b] [--repeat 1]

The PDFs and their ground-truth Markdown are docling's test files (benchmarks/data/pdf/, MIT,
see PROVENANCE.md there). Per file and overall:

- headings: the ground truth's `#` lines against the extracted text's heading lines, titles
  matched one to one after lower-casing and dropping punctuation and spaces; recall, precision.
  Plain text has no heading lines: 0 found.
- tables: ground-truth tables (runs of `|` lines) found as a table in the output (best output
  table by cell-text F1, found when F1 >= 0.5), and the mean cell-text F1 over the ground
  truth's tables (0 for a table not found). Cells compared as normalized text, as multisets.
- order: difflib's ratio between the word sequences (Markdown syntax dropped) of ground truth
  and output, 1.0 when every word is there in the same order.
- seconds per page: the conversion's wall time over the page count (best of --repeat runs), and
  the CPU time of this process over the page count (less swayed by other work on the machine);
  one untimed conversion first, so imports are not charged to the first file.

`--backend plain` measures the pypdf text the app produced before issue 30; `docling` needs the
optional docling package and its models. Files tuned on and files held out are listed in TUNED
and HELD_OUT; the overall line is printed for each group too.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "benchmarks" / "data" / "pdf"
#: The files the extractor's thresholds were chosen on ...
#: (normal_4pages moved here in the second round of tuning, once its misses had been looked at,
#: table_mislabeled_as_picture in the third, the Persian form right_to_left_03 in the fourth) ...
TUNED = ("amt_handbook_sample", "redp5110_sampled", "2305.03393v1-pg9", "multi_page", "normal_4pages",
         "table_mislabeled_as_picture", "right_to_left_03")
#: ... and the ones it was only measured on, never looked at while tuning (the right-to-left
#: pages came in with the third round, measured before it and after it).
HELD_OUT = ("code_and_formula", "picture_classification", "right_to_left_01")

_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


def norm_title(text: str) -> str:
    """Case, punctuation and spaces dropped (Unicode letters and digits kept)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if ch.isalnum())


def headings(markdown: str) -> list[str]:
    out = []
    in_fence = False
    for line in markdown.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if in_fence:
            continue
        m = _HEADING_RE.match(line)
        if m and norm_title(m.group(2)):
            out.append(norm_title(m.group(2)))
    return out


def tables(markdown: str) -> list[list[list[str]]]:
    """Each GFM table as rows of cells (the delimiter row dropped)."""
    out: list[list[list[str]]] = []
    cur: list[list[str]] = []
    for line in markdown.split("\n") + [""]:
        s = line.strip()
        if s.startswith("|"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", s.strip("|"))]
            if not all(re.fullmatch(r":?-+:?", c) for c in cells if c) or not any(cells):
                cur.append(cells)
            continue
        if cur:
            out.append(cur)
            cur = []
    return out


def cell_f1(gold: list[list[str]], found: list[list[str]]) -> float:
    g = Counter(n for row in gold for c in row if (n := norm_title(c)))
    f = Counter(n for row in found for c in row if (n := norm_title(c)))
    if not g or not f:
        return 0.0
    tp = sum((g & f).values())
    if tp == 0:
        return 0.0
    p, r = tp / sum(f.values()), tp / sum(g.values())
    return 2 * p * r / (p + r)


_WORD_RE = re.compile(r"\w+", re.UNICODE)


def words(markdown: str) -> list[str]:
    return [w.lower() for w in _WORD_RE.findall(unicodedata.normalize("NFKC", markdown))]


@dataclass
class Score:
    name: str
    pages: int
    seconds: float
    gold_h: int
    found_h: int
    matched_h: int
    gold_t: int
    found_t: int
    tables_found: int
    cell_f1_sum: float
    order: float
    cpu: float = 0.0

    def line(self) -> str:
        rec = self.matched_h / self.gold_h if self.gold_h else float("nan")
        prec = self.matched_h / self.found_h if self.found_h else float("nan")
        tab = f"{self.tables_found}/{self.gold_t}" if self.gold_t else "-"
        f1 = f"{self.cell_f1_sum / self.gold_t:.2f}" if self.gold_t else "-"
        return (f"| {self.name} | {self.pages} | {self.matched_h}/{self.gold_h} | {rec:.2f} | {prec:.2f} "
                f"({self.found_h}) | {tab} ({self.found_t}) | {f1} | {self.order:.2f} | "
                f"{self.seconds / max(self.pages, 1):.3f} | {self.cpu / max(self.pages, 1):.3f} |")


def match_headings(gold: list[str], found: list[str]) -> int:
    left = Counter(found)
    n = 0
    for g in gold:
        if left[g] > 0:
            left[g] -= 1
            n += 1
    return n


def convert(backend: str, data: bytes, path: str) -> tuple[str, dict]:
    if backend == "plain":
        from inspector.core.documents.formats import pdf_to_text

        text, _kind, meta = pdf_to_text(data, path)
        return text, meta
    from inspector.core.documents.pdf_convert import convert_pdf

    text, _kind, meta = convert_pdf(data, path, backend=backend)
    return text, meta


def score_file(name: str, backend: str, repeat: int) -> tuple[Score, dict]:
    pdf = DATA / f"{name}.pdf"
    gold = (DATA / f"{name}.md").read_text(encoding="utf-8")
    data = pdf.read_bytes()
    best = cpu = float("inf")
    text, meta = "", {}
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        text, meta = convert(backend, data, str(pdf))
        best = min(best, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    gh, fh = headings(gold), headings(text)
    gt, ft = tables(gold), tables(text)
    found = 0
    f1_sum = 0.0
    for g in gt:
        best_f1 = max((cell_f1(g, f) for f in ft), default=0.0)
        f1_sum += best_f1
        found += best_f1 >= 0.5
    gw, fw = words(gold), words(text)
    order = difflib.SequenceMatcher(None, gw, fw, autojunk=False).ratio() if gw else 0.0
    return Score(name, int(meta.get("pages", 1)), best, len(gh), len(fh), match_headings(gh, fh),
                 len(gt), len(ft), found, f1_sum, order, cpu), meta


def total(name: str, scores: list[Score]) -> Score:
    pages = sum(s.pages for s in scores)
    words_weighted = sum(s.order * s.pages for s in scores) / max(pages, 1)
    return Score(name, pages, sum(s.seconds for s in scores), sum(s.gold_h for s in scores),
                 sum(s.found_h for s in scores), sum(s.matched_h for s in scores),
                 sum(s.gold_t for s in scores), sum(s.found_t for s in scores),
                 sum(s.tables_found for s in scores), sum(s.cell_f1_sum for s in scores), words_weighted,
                 sum(s.cpu for s in scores))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--backend", default="builtin", choices=("builtin", "plain", "docling"))
    ap.add_argument("--files", default="", help="comma-separated names (default: all)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--show", action="store_true", help="print each file's extracted text")
    args = ap.parse_args()
    names = [n for n in args.files.split(",") if n] or list(TUNED + HELD_OUT)
    print(f"backend: {args.backend}")
    print("| file | pages | headings matched | recall | precision (found) | tables found (output tables) "
          "| cell F1 | order | s/page | CPU s/page |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    convert(args.backend, (DATA / f"{names[0]}.pdf").read_bytes(), names[0])  # warm-up: imports, caches
    scores = []
    for name in names:
        s, meta = score_file(name, args.backend, args.repeat)
        scores.append(s)
        print(s.line())
        if args.show:
            text, _ = convert(args.backend, (DATA / f"{name}.pdf").read_bytes(), name)
            print(text)
            print(meta.get("structure_note", ""))
    groups = [("tuned", [s for s in scores if s.name in TUNED]),
              ("held out", [s for s in scores if s.name in HELD_OUT]), ("overall", scores)]
    for label, group in groups:
        if group:
            print(total(f"**{label}**", group).line())
    issue_six = [s for s in scores if s.name in ("amt_handbook_sample", "redp5110_sampled", "2305.03393v1-pg9",
                                                  "multi_page", "normal_4pages", "code_and_formula")]
    if len(issue_six) == 6:
        print(total("**the issue's six**", issue_six).line())


if __name__ == "__main__":
    main()
