"""Render the README screenshots offscreen: `python -m inspector.qt.screenshots docs`.

window.png          the sample handbook, `markdown` strategy, a chunk selected, the hit-rate trace
                    under the size slider (the default retriever; the bundled model loads)
window-overlap.png  the same document with `fixed_chars` 500/50, showing overlap regions
ask.png             a question with its top-5 chunks outlined and the Reader (real model, exact)
gold.png            the gold set panel, `markdown` pinned as baseline, `fixed_chars` 500/0 against it
compare.png         `markdown` pinned, `recursive` 128 against it: the baseline lane beside the text,
                    boundaries moved/added/removed, a broken question's answer in view (BM25, no model)
audit.png           audit mode at 1400x900: the Reader at full height, judged cards, the summary
audit-1024.png      the same at 1024x700 (the smallest window it is meant for)
map.png             the embedding map (real model, exact): a gold question, its hits, its answer's chunk
                    and the chunks holding the answers of missed questions, hovering the #1 hit
laptop.png          the window at a laptop's 1280x800 as `make run` opens it (the handbook, its gold set
                    in front), a question asked
small.png           the same at 1024x700: one column of tabs on the left, the bottom docks full width
drafts.png          drafted questions under review, the gold coverage view, the quick question bar (BM25)
pdf-page.png        docling's Redbook sample PDF, a chunk with a table selected, View ▸ PDF Page beside
                    the text with the chunk's words marked on the page (pdf-page-1024.png at 1024x700)
Pass --dark for dark-palette versions (window-dark.png, ...). Every shot but compare.png and
drafts.png loads the bundled embedding model (the first run embeds the handbook: a minute or so on a laptop CPU);
--no-model skips ask.png, gold.png and the audit shots, answers with BM25 in laptop.png and
small.png and leaves the window shots with a trace waiting for the model; `--audit-bm25` renders
the audit shots with BM25 (no model).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SIZE = (1400, 900)
RETRIEVAL_SIZE = (1600, 1000)
"""ask.png and gold.png: wider, so the Reader and the gold table have room beside the text."""


def _themed_app(dark: bool):
    """The application, in the light or the dark palette."""
    from inspector.qt.app import apply_palette, create_app

    app = create_app()
    apply_palette(app, "dark" if dark else "light")
    return app


def _shot_window(app, folder: Path, size: tuple[int, int], *, synchronous_retrieval: bool = True):
    """A shown window with its settings in `folder`, chunking synchronously and without debounce
    (a screenshot shows a settled state), at `size`."""
    from inspector.qt.controllers.chunk_jobs import ChunkRunner
    from inspector.qt.main_window import MainWindow
    from inspector.qt.settings import ini_store

    window = MainWindow(ini_store(str(folder / "settings.ini")), runner=ChunkRunner(synchronous=True),
                        debounce_ms=0, synchronous_retrieval=synchronous_retrieval)
    window.resize(*size)
    window.show()
    _settle(app)
    return window


@contextmanager
def _shown(app, size: tuple[int, int], *, synchronous_retrieval: bool = True) -> Iterator[tuple[Any, Path]]:
    """A shown window at `size` with its settings in a temporary folder (yielded beside it, for
    copies of the handbook), closed and its events settled when the shot is done."""
    with tempfile.TemporaryDirectory() as tmp:
        window = _shot_window(app, Path(tmp), size, synchronous_retrieval=synchronous_retrieval)
        try:
            yield window, Path(tmp)
        finally:
            window.close()
            _settle(app)


def _start(out_dir: Path, dark: bool) -> tuple[Any, str]:
    """The themed application and the file-name suffix of the palette; `out_dir` made."""
    app = _themed_app(dark)
    out_dir.mkdir(parents=True, exist_ok=True)
    return app, "-dark" if dark else ""


def _save(app, window, path: Path, rounds: int = 5) -> Path:
    """Settle the window's events and save it to `path`."""
    _settle(app, rounds)
    window.grab().save(str(path))
    return path


def _settle(app, rounds: int = 5) -> None:
    import time

    for _ in range(rounds):
        app.processEvents()
        time.sleep(0.01)


def _grab_at(app, window, heading: str, fallback: float, path: Path) -> Path:
    """Select the chunk at `heading` (else at that fraction of the text), scroll it into view with
    a little context above, and save the window to `path`."""
    text = window.state.document.text
    target = text.find(heading)
    window.state.select(_chunk_at(window, target if target >= 0 else int(len(text) * fallback)))
    window.view.scroll_to_offset(window.state.selected_chunk().start, context_lines=2)
    return _save(app, window, path)


def _wait_for_trace(app, window, timeout: float = 1800.0) -> None:
    """Process events until the trace under the size slider has scored its positions and nothing
    else runs (the trace holds back while anything the user waits for runs)."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        _settle(app, 2)
        t, r = window.trace.trace, window.retrieval
        if t is not None and (t.points or t.status) and not t.pending and not window.trace.runner.busy \
                and not r.runner.busy and not r.exact_pending and r.pooled_building is None \
                and not r.loader.busy and not window.state.busy:
            return
    raise TimeoutError("the hit-rate trace did not settle")


def render(out_dir: Path, *, dark: bool = False, model: bool = True) -> list[Path]:
    from inspector.qt.actions.file_actions import sample_path

    app, suffix = _start(out_dir, dark)
    written: list[Path] = []
    with _shown(app, SIZE, synchronous_retrieval=False) as (window, _tmp):
        window.default_layout()
        _settle(app)
        window.open_paths([str(sample_path())])
        window.state.set_strategy("markdown")
        window.controller.submit_now()
        window.table_dock.raise_()  # the gold set came to the front with the handbook; here: the chunks
        _settle(app)
        if model:
            window.start_model()
        _wait_for_trace(app, window)
        # Select the refund-tier chunk (a trap in the sample set): the table fits, but the caveat
        # after it runs past the embedder's 256 word pieces, so its end is shaded in the text and
        # struck through in the detail pane. Put it in view with a little context above.
        written.append(_grab_at(app, window, "### Refund eligibility by tier", 1 / 3,
                                out_dir / f"window{suffix}.png"))

        window.state.set_strategy("fixed_chars")
        window.strategy_panel.set_value("size", 500)
        window.strategy_panel.set_value("overlap", 50)
        window.controller.submit_now()
        _settle(app)
        _wait_for_trace(app, window)
        written.append(_grab_at(app, window, "#### Laptop replacement cycle", 1 / 2,
                                out_dir / f"window-overlap{suffix}.png"))
    return written


ASK_QUESTION = "How long is parental allowance paid in Germany?"


def render_retrieval(out_dir: Path, *, dark: bool = False) -> list[Path]:
    """ask.png and gold.png, with the real model and exact embeddings (everything synchronous)."""
    from PySide6.QtCore import Qt

    from inspector.qt.actions.file_actions import sample_path

    app, suffix = _start(out_dir, dark)
    written: list[Path] = []
    with _shown(app, RETRIEVAL_SIZE) as (window, _tmp):
        window.default_layout()
        window.resizeDocks([window.reader_dock], [470], Qt.Orientation.Horizontal)
        window.state.set_strategy("markdown")
        window.open_paths([str(sample_path())])
        _settle(app)
        window.start_model()
        window.retrieval.set_settle_ms(0)

        # ask.png: the question, its hits outlined (#1 in view), the Reader beside.
        window.question_bar.ask(ASK_QUESTION)
        _settle(app, 20)
        window.reader_dock.raise_()
        window.view.goto_hit(0)
        written.append(_save(app, window, out_dir / f"ask{suffix}.png"))

        # gold.png: markdown pinned, fixed_chars 500/0 against it; the panel taller, a broken
        # question selected so its answer is marked in the text.
        window.retrieval.pin_baseline()
        window.state.set_strategy("fixed_chars")
        window.strategy_panel.set_value("size", 500)
        window.strategy_panel.set_value("overlap", 0)
        window.controller.submit_now()
        window.retrieval.refresh(exact=True)
        _settle(app, 20)
        window.gold_dock.raise_()
        window.resizeDocks([window.gold_dock], [390], Qt.Orientation.Vertical)
        _settle(app)
        broke = window.retrieval.comparison.broke if window.retrieval.comparison is not None else ()
        target = next((c.question for c in broke if c.question.question == ASK_QUESTION),
                      broke[0].question if broke else None)
        if target is not None:
            window.gold_panel.select_question(target)
            window.retrieval.refresh(exact=True)
            _settle(app, 20)
        written.append(_save(app, window, out_dir / f"gold{suffix}.png", rounds=0))
    return written


def render_compare(out_dir: Path, *, dark: bool = False) -> list[Path]:
    """compare.png: the baseline's boundaries beside the current ones on the text (BM25: fast, no
    model; the lanes do not depend on the retriever)."""
    from PySide6.QtCore import Qt

    from inspector.qt.actions.file_actions import sample_path

    app, suffix = _start(out_dir, dark)
    with _shown(app, RETRIEVAL_SIZE) as (window, _tmp):
        window.default_layout()
        # The text gets the width the Reader and the detail pane would take: the lanes are the point.
        window.detail_dock.hide()
        window.reader_dock.hide()
        window.retrieval.set_retriever("bm25")
        window.state.set_strategy("markdown")
        window.open_paths([str(sample_path())])
        _settle(app)
        window.retrieval.pin_baseline()
        window.state.set_strategy("recursive")
        window.strategy_panel.set_value("size", COMPARE_SIZE)
        window.strategy_panel.set_value("overlap", 0)
        window.controller.submit_now()
        _settle(app, 10)
        window.gold_dock.raise_()
        window.resizeDocks([window.gold_dock], [400], Qt.Orientation.Vertical)
        _settle(app)
        cmp = window.retrieval.comparison
        broke = cmp.broke if cmp is not None else ()
        target = next((c.question for c in broke if c.question.question == COMPARE_QUESTION),
                      broke[0].question if broke else None)
        if target is not None:
            window.gold_panel.select_question(target)
            _settle(app, 10)
            window.reader_dock.hide()  # asking shows it; here the text needs the room
            _settle(app)
        path = _save(app, window, out_dir / f"compare{suffix}.png", rounds=0)
    return [path]


COMPARE_SIZE = 128
COMPARE_QUESTION = ASK_QUESTION

LAPTOP_SIZE = (1280, 800)
SMALL_SIZE = (1024, 700)


def render_sizes(out_dir: Path, *, dark: bool = False, model: bool = True) -> list[Path]:
    """laptop.png and small.png: the default layout for a laptop's screen and a small window, as
    `make run` opens the handbook (its gold set loads and comes to the front), a question asked.
    With `model` the bundled model answers (exact embeddings), else BM25."""
    from inspector.qt.actions.file_actions import sample_path

    app, suffix = _start(out_dir, dark)
    written: list[Path] = []
    for name, size in (("laptop", LAPTOP_SIZE), ("small", SMALL_SIZE)):
        with _shown(app, size) as (window, _tmp):
            window.state.set_strategy("markdown")
            window.open_paths([str(sample_path())])
            _settle(app)
            if model:
                window.start_model()
                window.retrieval.set_settle_ms(0)
            else:
                window.retrieval.set_retriever("bm25")
            window.question_bar.ask(ASK_QUESTION)
            _settle(app, 20)
            window.gold_dock.raise_()  # asking showed the Reader; the gold set stays in front below
            window.view.goto_hit(0)
            written.append(_save(app, window, out_dir / f"{name}{suffix}.png"))
    return written


AUDIT_SIZES = ((1400, 900, "audit"), (1024, 700, "audit-1024"))
AUDIT_SECOND = "How long is statutory maternity leave in France?"


def render_audit(out_dir: Path, *, dark: bool = False, retriever: str = "dense") -> list[Path]:
    """audit.png and audit-1024.png: audit mode on a copy of the handbook (the audit file is written
    beside it), two gold questions judged, the third card of the first one current."""
    import shutil

    from inspector.qt.actions.file_actions import sample_path

    app, suffix = _start(out_dir, dark)
    written: list[Path] = []
    for width, height, name in AUDIT_SIZES:
        with _shown(app, (width, height)) as (window, tmp):
            doc = tmp / "handbook.md"
            shutil.copy(sample_path(), doc)
            shutil.copy(Path(sample_path()).with_name("handbook.gold.jsonl"), tmp / "handbook.gold.jsonl")
            window.default_layout()
            window.state.set_strategy("markdown")
            window.open_paths([str(doc)])
            _settle(app)
            if retriever == "dense":
                window.start_model()
                window.retrieval.set_settle_ms(0)
            else:
                window.retrieval.set_retriever(retriever)
            window.audit_mode.set_active(True)
            _settle(app)
            reader = window.reader
            for question, marks in ((AUDIT_SECOND, ("relevant", "not", "partly", "not", "not")),
                                    (ASK_QUESTION, ("relevant", "not"))):
                window.retrieval.ask(question)
                _settle(app, 20)
                reader.set_current(0)
                for m in marks:
                    reader.judge_current(m)
                    _settle(app)
            written.append(_save(app, window, out_dir / f"{name}{suffix}.png", rounds=10))
    return written


def render_map(out_dir: Path, *, dark: bool = False) -> list[Path]:
    """map.png: View ▸ Embedding Map beside the text, a gold question asked (real model, exact)."""
    from PySide6.QtCore import Qt

    from inspector.qt.actions.file_actions import sample_path

    app, suffix = _start(out_dir, dark)
    with _shown(app, RETRIEVAL_SIZE) as (window, _tmp):
        window.default_layout()
        window.state.set_strategy("markdown")
        window.open_paths([str(sample_path())])
        _settle(app)
        window.start_model()
        window.retrieval.set_settle_ms(0)
        for dock in (window.table_dock, window.gold_dock, window.detail_dock):
            dock.hide()
        window.embedding_map_dock.show()
        window.resizeDocks([window.embedding_map_dock], [560], Qt.Orientation.Vertical)
        target = next((q for q in window.retrieval.gold_questions if q.question == ASK_QUESTION), None)
        if target is not None:
            window.gold_panel.select_question(target)
        else:
            window.question_bar.ask(ASK_QUESTION)
        _settle(app, 20)
        window.reader_dock.raise_()
        window.view.goto_hit(0)
        m = window.embedding_map
        for _ in range(200):  # the map's worker: wait for the exact index's map
            r = window.retrieval.result
            if m.data is not None and r is not None and m.data.result is r and not m.runner.busy:
                break
            _settle(app, 2)
        if m.data is not None and m.data.result.hits:
            top = m.rows.get((m.data.result.hits[0].matched.doc_id, m.data.result.hits[0].matched.id,
                              m.data.result.hits[0].matched.role))
            if top is not None:
                m.hover.setText(m.hover_text(top))
        path = _save(app, window, out_dir / f"map{suffix}.png")
    return [path]


def render_drafts(out_dir: Path, *, dark: bool = False) -> list[Path]:
    """drafts.png: drafted questions under review (two accepted, one rejected, the fourth current,
    its answer marked in the text), the coverage view beside the text, the quick question bar open
    (BM25: no model needed). Works on a copy of the handbook and its gold set."""
    import shutil

    from PySide6.QtCore import Qt

    from inspector.qt.actions.file_actions import sample_path

    app, suffix = _start(out_dir, dark)
    with _shown(app, RETRIEVAL_SIZE) as (window, tmp):
        doc = tmp / "handbook.md"
        shutil.copy(sample_path(), doc)
        shutil.copy(Path(sample_path()).with_name("handbook.gold.jsonl"), tmp / "handbook.gold.jsonl")
        window.default_layout()
        window.detail_dock.hide()
        window.reader_dock.hide()
        window.retrieval.set_retriever("bm25")
        window.state.set_strategy("markdown")
        window.open_paths([str(doc)])
        _settle(app)
        tools = window.gold_tools
        tools.show_coverage()
        tools.drafts.count.setValue(DRAFTS_COUNT)
        tools.open_drafts()
        _settle(app, 10)
        panel = tools.drafts
        panel.set_current(0)
        panel.accept_current()
        panel.reject_current()
        panel.accept_current()
        window.resizeDocks([tools.drafts_dock], [380], Qt.Orientation.Vertical)
        window.resizeDocks([window.strategy_dock], [400], Qt.Orientation.Horizontal)
        tools.bar.open_bar()
        panel.tree.setFocus()
        _settle(app, 10)
        panel.set_current(panel.current_index())  # the current draft's answer in view
        tools.show_draft(panel.current().draft if panel.current() is not None else None)
        # The BM25 hit-rate trace under the size slider appeared after the docks were sized: size
        # them again (View ▸ Reset Layout) so the strategy column has room for it.
        window.dock_layout.apply()
        _settle(app, 5)
        tools.drafts_dock.raise_()  # the gold set, loaded with the document, raises its own tab
        tools.coverage_dock.raise_()
        path = _save(app, window, out_dir / f"drafts{suffix}.png", rounds=10)
    return [path]


DRAFTS_COUNT = 40


PDF_SIZES = ((1400, 900, "pdf-page"), (1024, 700, "pdf-page-1024"))


def render_pdf(out_dir: Path, *, dark: bool = False) -> list[Path]:
    """pdf-page.png and pdf-page-1024.png: docling's Redbook sample (benchmarks/data/pdf, MIT)
    opened with the built-in PDF structure, the chunk holding its first table selected and View ▸
    PDF Page shown, the chunk's words marked on the page (no model)."""
    import time

    pdf = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "pdf" / "redp5110_sampled.pdf"
    app, suffix = _start(out_dir, dark)
    written: list[Path] = []
    for width, height, name in PDF_SIZES:
        with _shown(app, (width, height)) as (window, _tmp):
            window.state.set_strategy("markdown")
            window.open_paths([str(pdf)])
            _settle(app)
            text = window.state.document.text
            window.pdf_page.reveal()
            window.state.select(_chunk_at(window, text.index("| User action")))
            window.view.scroll_to_offset(text.index("| User action"))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not (window.pdf_page.rendered and window.pdf_page.marks):
                _settle(app, 2)
            written.append(_save(app, window, out_dir / f"{name}{suffix}.png"))
    return written


def _chunk_at(window, offset: int) -> int:
    ids = window.view.chunk_ids_at(offset)
    if ids:
        return ids[0]
    r = window.state.result
    return r.index.ids[0] if r is not None and len(r.index) else -1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", nargs="?", default="docs")
    parser.add_argument("--dark", action="store_true", help="render with the dark palette")
    parser.add_argument("--no-model", action="store_true",
                        help="skip ask.png, gold.png and the audit shots; BM25 in the other shots")
    parser.add_argument("--only-audit", action="store_true", help="render the audit shots only")
    parser.add_argument("--audit-bm25", action="store_true", help="render the audit shots with BM25 (no model)")
    parser.add_argument("--only-map", action="store_true", help="render map.png only (loads the model)")
    parser.add_argument("--only-drafts", action="store_true", help="render drafts.png only (BM25, no model)")
    parser.add_argument("--only-pdf", action="store_true", help="render the PDF page shots only (no model)")
    args = parser.parse_args(argv)
    out, dark, model = Path(args.out_dir), args.dark, not args.no_model
    only = {"pdf": args.only_pdf, "drafts": args.only_drafts, "map": args.only_map}
    shots: list[Callable[[], list[Path]]]
    if any(only.values()):
        pick = next(name for name, chosen in only.items() if chosen)
        shots = [{"pdf": lambda: render_pdf(out, dark=dark), "drafts": lambda: render_drafts(out, dark=dark),
                  "map": lambda: render_map(out, dark=dark)}[pick]]
    else:
        shots = []
        if not args.only_audit:
            shots += [lambda: render(out, dark=dark, model=model), lambda: render_compare(out, dark=dark),
                      lambda: render_drafts(out, dark=dark), lambda: render_pdf(out, dark=dark),
                      lambda: render_sizes(out, dark=dark, model=model)]
            if model:
                shots += [lambda: render_retrieval(out, dark=dark), lambda: render_map(out, dark=dark)]
        if args.audit_bm25 or model:
            shots.append(lambda: render_audit(out, dark=dark, retriever="bm25" if args.audit_bm25 else "dense"))
    for shot in shots:
        for path in shot():
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
