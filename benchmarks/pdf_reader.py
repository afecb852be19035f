"""A PDF's pages read our way and pdfplumber's way, side by side in one process (issue 31).

Our way (`documents/pdf_content.py`): the content streams read by `content_objects` and run by
`FastInterpreter`, each character made into pdfplumber's dict as it is drawn. pdfplumber's way:
its own `page.layout` (pdfminer's parser and interpreter, an `LTChar` per character), each
character's dict then copied from it (`parse_objects_fast`'s `char`). Everything else is the
same (the built-in backend's structure, the collector paused per page), so the ratio is what the
reading alone changes. Each file is converted both ways, alternating, in this process, with
nothing kept on disk; the Markdown must be the same both ways (checked: the run stops if not).

The ten docling test PDFs (benchmarks/data/pdf, MIT) by default; any PDFs given as arguments
instead (the system's manuals, say: /usr/share/doc/*/*.pdf).

    .venv/bin/python benchmarks/pdf_reader.py [--rounds 3] [PDF ...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ["CHUNK_INSPECTOR_DOCUMENT_CACHE"] = "0"  # before the converters are imported

from _common import ROOT  # noqa: E402

from inspector.core.documents import pdf_content  # noqa: E402
from inspector.core.documents.pdf_convert import builtin_pdf  # noqa: E402

PDFS = sorted((ROOT / "benchmarks" / "data" / "pdf").glob("*.pdf"))


def _pdfplumbers_layout(page, chars=None):
    """pdfplumber's own reading of the page (its `layout` property), no character made as drawn."""
    return page.layout, None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pdfs", nargs="*", type=Path, help="PDFs to read (default: the ten benchmark PDFs)")
    ap.add_argument("--rounds", type=int, default=3, help="conversions each way, alternating (the best is kept)")
    args = ap.parse_args()
    ours = pdf_content.page_layout
    ways = {"ours": ours, "pdfplumber": _pdfplumbers_layout}
    totals = dict.fromkeys(ways, 0.0)
    print(f"{'file':40s} {'pages':>5s} {'pdfplumber':>11s} {'ours':>9s} {'ratio':>7s}")
    for path in args.pdfs or PDFS:
        data = path.read_bytes()
        best = dict.fromkeys(ways, float("inf"))
        texts: dict[str, str] = {}
        pages = 0
        for r in range(args.rounds):
            for name in (ways if r % 2 == 0 else reversed(list(ways))):
                pdf_content.page_layout = ways[name]
                try:
                    t = time.perf_counter()
                    text, _kind, meta = builtin_pdf(data, str(path))
                    best[name] = min(best[name], time.perf_counter() - t)
                finally:
                    pdf_content.page_layout = ours
                texts[name] = text
                pages = int(meta.get("pages", 0))
        if texts["ours"] != texts["pdfplumber"]:
            sys.exit(f"{path.name}: the two readings gave different Markdown")
        for name in ways:
            totals[name] += best[name]
        print(f"{path.name[:40]:40s} {pages:5d} {best['pdfplumber']:10.3f}s {best['ours']:8.3f}s "
              f"{best['pdfplumber'] / best['ours']:6.2f}x")
    print(f"{'all':40s} {'':5s} {totals['pdfplumber']:10.3f}s {totals['ours']:8.3f}s "
          f"{totals['pdfplumber'] / totals['ours']:6.2f}x  (best of {args.rounds} each, the same Markdown both ways)")


if __name__ == "__main__":
    main()
