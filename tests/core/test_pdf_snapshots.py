"""The built-in PDF extractor's Markdown of the ten benchmark PDFs, compared with the stored copy
(tests/data/pdf_markdown/, issue 30): a speed-up or a tidy-up of the extractor must not move its
output; a change that means to rewrites the copies (`--update`) and shows the diff in its commit."""

from __future__ import annotations

import difflib
import itertools
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PDFS = ROOT / "benchmarks" / "data" / "pdf"
STORED = ROOT / "tests" / "data" / "pdf_markdown"
NAMES = sorted(p.stem for p in PDFS.glob("*.pdf"))


def _markdown(name: str) -> str:
    from inspector.core.documents.pdf_convert import builtin_pdf

    path = PDFS / f"{name}.pdf"
    text, kind, _meta = builtin_pdf(path.read_bytes(), str(path))
    assert kind == "markdown"
    return text


def test_every_benchmark_pdf_has_its_stored_markdown():
    assert len(NAMES) == 10
    assert sorted(p.stem for p in STORED.glob("*.md") if p.stem != "README") == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_the_markdown_of_a_benchmark_pdf_is_the_stored_one(name):
    want = (STORED / f"{name}.md").read_text(encoding="utf-8")
    got = _markdown(name)
    if got != want:
        diff = "".join(itertools.islice(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                             "stored", "now"), 60))
        pytest.fail(f"{name}.pdf's Markdown moved (update with `python {Path(__file__).name} --update` "
                    f"if meant):\n{diff}")


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: test_pdf_snapshots.py --update   (rewrites tests/data/pdf_markdown/*.md)")
    sys.path.insert(0, str(ROOT))
    from inspector.core.runtime.atomic import atomic_write_text

    for stem in NAMES:
        atomic_write_text(STORED / f"{stem}.md", _markdown(stem))
        print(f"wrote {stem}.md")
