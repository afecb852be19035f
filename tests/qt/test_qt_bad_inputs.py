"""Every bad input gets a clear answer in the window, nothing is lost, nothing hangs.

Each bad file goes through the window's open path (`open_paths`, what the dialogs, drops and the
recent list call) while the handbook and its gold set are open: the message is exactly the line
the CLI prints for the same file (the CLI is run on it in-process), it is in the status bar and in
a non-modal box, the handbook and its gold set stay, and the window goes on working. Then worker
failures, closing mid-job, pathological inputs (checked by what is painted, never by timing) and
documents that hold HTML (shown as text, never fetched).
"""

from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextOption

from inspector.cli import main as cli_main
from inspector.core.chunking.params import Strategy
from inspector.core.chunking.registry import (
    chunk_document,
    register_strategy,
    unregister,
)
from inspector.core.documents.document import load_document

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
BAD = ROOT / "tests" / "data" / "bad"


def cli_lines(capsys, *args) -> list[str]:
    """What `chunk-inspector chunks ARGS` prints on stderr, one entry per line."""
    capsys.readouterr()
    cli_main(["chunks", *map(str, args)])
    return capsys.readouterr().err.strip().splitlines()


def cli_error(capsys, path) -> str:
    """The one line the CLI prints for a file it refuses (without "error: ")."""
    [line] = cli_lines(capsys, path)
    assert line.startswith("error: "), line
    return line[len("error: "):]


@pytest.fixture
def handbook_window(make_window, open_doc):
    """A window showing the handbook, its gold set loaded from beside it."""
    w = make_window()
    open_doc(w)
    assert w.retrieval.gold is not None  # handbook.gold.jsonl, found beside the document
    return w


def assert_unchanged(w, doc, result, gold) -> None:
    assert w.state.document is doc and w.state.documents == (doc,)
    assert w.view.toPlainText() == doc.text and w.view.document_ is doc
    assert w.state.result is result and w.table.model.chunks == result.chunks
    assert w.retrieval.gold is gold
    assert w.windowTitle().startswith(doc.name)


def assert_usable(w, qtbot, wait_complete) -> None:
    """The window still works: a strategy switch re-chunks the document shown."""
    w.strategy_panel.set_strategy("sentences")
    r = wait_complete(w)
    assert r.request.strategy == "sentences" and r.document is w.state.document
    expected = chunk_document(r.document, "sentences", w.state.params)
    assert [(c.start, c.end) for c in r.chunks] == [(c.start, c.end) for c in expected]


def _huge(tmp_path: Path) -> Path:
    p = tmp_path / "huge.md"
    with open(p, "wb") as fh:  # sparse: 51 MB on paper, nothing written
        fh.truncate(51 * 2**20)
    return p


def _broken_docx(tmp_path: Path) -> Path:
    p = tmp_path / "broken.docx"
    p.write_bytes(b"PK\x03\x04 not really a zip archive")
    return p


BAD_FILES = {
    "png": lambda tmp: BAD / "image.png",
    "png named .md": lambda tmp: BAD / "image_named.md",
    "pdf bytes named .md": lambda tmp: BAD / "pdf_bytes.md",
    "NUL bytes": lambda tmp: BAD / "nul_bytes.md",
    "invalid UTF-8": lambda tmp: BAD / "invalid_utf8.md",
    "truncated pdf": lambda tmp: BAD / "truncated.pdf",
    "broken docx": _broken_docx,
    "over the size limit": _huge,
    "missing": lambda tmp: tmp / "missing.md",
    "device": lambda tmp: _link(tmp / "zero.md", "/dev/zero"),
}


def _link(p: Path, target: str) -> Path:
    p.symlink_to(target)
    return p


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_bad_file_gets_the_cli_line_and_the_open_document_stays(case, qtbot, handbook_window, wait_complete,
                                                               tmp_path, capsys):
    w = handbook_window
    doc, result, gold = w.state.document, w.state.result, w.retrieval.gold
    path = BAD_FILES[case](tmp_path)
    expected = cli_error(capsys, path)
    assert str(path) in expected

    assert not w.open_paths([str(path)])
    assert w.messages.last_error == expected
    assert w.message.text() == expected and w.messages.kind == "error"
    box = w.messages.box
    assert box is not None and box.isVisible() and box.text() == expected
    assert not box.isModal() and box.windowModality() == Qt.WindowModality.NonModal  # never blocks
    assert_unchanged(w, doc, result, gold)
    assert str(path.resolve()) not in w.recent_files()
    assert_usable(w, qtbot, wait_complete)
    # And the next open of a good file works, replacing the handbook.
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nA good document after a bad one.\n", encoding="utf-8")
    assert w.open_paths([str(good)])
    assert wait_complete(w).document.doc_id == "good.md"


def test_the_same_bad_file_twice_reuses_one_box(qtbot, handbook_window):
    w = handbook_window
    assert not w.open_paths([str(BAD / "nul_bytes.md")])
    first = w.messages.box
    assert not w.open_paths([str(BAD / "image.png")])
    assert w.messages.box is first and "PNG" in first.text()


@pytest.mark.parametrize("name", ["empty.md", "whitespace_only.md"])
def test_empty_documents_are_refused_and_nothing_is_replaced(name, qtbot, handbook_window, wait_complete, capsys):
    """The CLI chunks an empty file to 0 chunks without an error; the window refuses to open it:
    replacing the handbook and its gold set with nothing to look at would only lose them."""
    lines = cli_lines(capsys, BAD / name)
    assert not any(x.startswith(("error", "warning")) for x in lines)
    w = handbook_window
    doc, result, gold = w.state.document, w.state.result, w.retrieval.gold
    steps = list(w.history.history.undo_steps)
    assert not w.open_paths([str(BAD / name)])
    expected = f"{BAD / name}: no text to open (the file is empty or only whitespace); handbook.md stays open"
    assert w.messages.kind == "error" and w.message.text() == expected
    assert w.messages.box is not None and w.messages.box.isVisible() and not w.messages.box.isModal()
    assert_unchanged(w, doc, result, gold)
    w.history.history.flush()
    assert w.history.history.undo_steps == steps  # nothing was replaced: nothing new to undo
    assert str((BAD / name).resolve()) not in w.recent_files()
    assert_usable(w, qtbot, wait_complete)


def test_encodings_the_loader_handles_open_like_the_cli(qtbot, make_window, wait_complete):
    w = make_window()
    for name in ("latin1.md", "cp1252_quotes.txt", "utf16le_bom.md", "utf16be_nobom.md", "utf8_bom.md"):
        assert w.open_paths([str(BAD / name)]), w.message.text()
        r = wait_complete(w)
        doc = load_document(BAD / name)
        assert r.document.text == doc.text and w.view.toPlainText() == doc.text
        expected = chunk_document(doc, w.state.strategy, w.state.params)
        assert [(c.start, c.end) for c in r.chunks] == [(c.start, c.end) for c in expected]
        assert w.messages.last_error == ""


def _mixed_folder(root: Path, monkeypatch) -> dict[str, str]:
    """Good files with unreadable and binary ones mixed in; returns bad file -> expected text."""
    root.mkdir()
    (root / "good.md").write_text("# Good\n\nSome text. Two sentences.\n", encoding="utf-8")
    (root / "also_good.txt").write_text("Plain text, one paragraph.\n\nAnother one.\n", encoding="utf-8")
    (root / "dangling.md").symlink_to(root / "gone.md")
    os.mkfifo(root / "pipe.md")
    (root / "image.md").write_bytes((BAD / "image_named.md").read_bytes())
    (root / "broken.md").write_bytes((BAD / "invalid_utf8.md").read_bytes())
    (root / "locked.md").write_text("# Locked\n\nsecret\n", encoding="utf-8")
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:  # tests run as root: chmod 000 would not stop the read
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    return {"dangling.md": "no such file", "pipe.md": "a named pipe", "image.md": "binary file (a PNG image)",
            "broken.md": ":4: invalid UTF-8", "locked.md": "cannot read: Permission denied"}


@pytest.mark.timeout(120)
def test_folder_with_bad_files_opens_the_good_ones_and_lists_each_bad_one_once(
        qtbot, handbook_window, wait_complete, tmp_path, monkeypatch, capsys):
    folder = tmp_path / "corpus"
    bad = _mixed_folder(folder, monkeypatch)
    cli = [x[len("warning: "):] for x in cli_lines(capsys, folder) if x.startswith("warning: ")]
    assert len(cli) == len(bad)
    w = handbook_window
    assert w.open_paths([str(folder)])
    wait_complete(w)
    assert [d.doc_id for d in w.state.documents] == ["also_good.txt", "good.md"]
    assert sorted(w.state.load_problems) == sorted(cli)  # the CLI's lines, each once
    problems = w.corpus_panel.problem_rows()
    assert sorted(r.problems[0] for r in problems) == sorted(cli)
    for name, needle in bad.items():
        [row] = [r for r in problems if r.name == name]
        assert str(folder / name) in row.problems[0] and needle in row.problems[0]
    assert w.message.text().startswith("skipped ") and f"(and {len(bad) - 1} more)" in w.message.text()
    # The details list each skipped file, then what the open replaced (Edit ▸ Undo brings it back).
    *skipped, replaced = w.messages.details.splitlines()
    assert sorted(skipped) == sorted(cli)
    assert replaced.startswith("Replaced handbook.md") and "Edit ▸ Undo" in replaced
    assert w.corpus_dock.isVisible()


def test_several_files_with_a_bad_one_open_the_rest(qtbot, handbook_window, wait_complete, tmp_path, capsys):
    a = tmp_path / "a.md"
    a.write_text("# A\n\nFirst.\n", encoding="utf-8")
    b = tmp_path / "b.md"
    b.write_text("# B\n\nSecond.\n", encoding="utf-8")
    bad = BAD / "nul_bytes.md"
    expected = cli_error(capsys, bad)
    w = handbook_window
    assert w.open_paths([str(a), str(bad), str(b)])
    wait_complete(w)
    assert [d.doc_id for d in w.state.documents] == ["a.md", "b.md"]
    assert w.state.load_problems == (expected,)
    assert w.message.text() == f"skipped {expected}"
    assert [r.problems for r in w.corpus_panel.problem_rows()] == [(expected,)]


def test_folder_of_only_bad_files_keeps_the_open_document(qtbot, handbook_window, wait_complete, tmp_path, capsys):
    folder = tmp_path / "allbad"
    folder.mkdir()
    for name in ("image_named.md", "nul_bytes.md"):
        (folder / name).write_bytes((BAD / name).read_bytes())
    cli = [x for x in cli_lines(capsys, folder)]
    w = handbook_window
    doc, result, gold = w.state.document, w.state.result, w.retrieval.gold
    assert not w.open_paths([str(folder)])
    first = cli[0][len("warning: "):]
    assert w.message.text() == f"{first} (+1 more)"
    assert w.messages.box.isVisible() and "nul_bytes.md" in w.messages.box.detailedText()
    assert_unchanged(w, doc, result, gold)
    assert_usable(w, qtbot, wait_complete)


def test_a_loader_bug_is_reported_not_raised(qtbot, handbook_window, tmp_path, monkeypatch):
    """An exception that is not an InputError (a converter bug) becomes one line plus details."""
    from inspector.core.documents import document as document_module

    def boom(paths, **kw):
        raise KeyError("word/document.xml")

    monkeypatch.setattr(document_module, "load_paths", boom)
    w = handbook_window
    doc = w.state.document
    assert not w.open_paths([str(tmp_path / "x.docx")])
    assert w.message.text() == f"{tmp_path / 'x.docx'}: could not be opened (KeyError: 'word/document.xml')"
    assert "Traceback" in w.messages.details and w.messages.details_button.isVisible()
    assert w.state.document is doc


# -- worker failures --------------------------------------------------------------------------------

def test_a_strategy_that_raises_reaches_the_user_with_its_traceback(qtbot, make_window, open_doc, wait_complete):
    def exploding_splitter(doc, params):
        raise RuntimeError("strategy exploded")

    register_strategy(Strategy("exploding_demo", exploding_splitter, (), "always fails"))
    try:
        w = make_window()
        before = open_doc(w)
        with qtbot.waitSignal(w.messages.errorShown, timeout=10_000):
            w.strategy_panel.set_strategy("exploding_demo")
        assert w.message.text() == "RuntimeError: strategy exploded" == w.messages.last_error
        assert "Traceback" in w.messages.details and "exploding_splitter" in w.messages.details
        assert w.messages.details_button.isVisible()
        w.messages.details_button.click()
        assert w.messages.box.isVisible() and "exploding_splitter" in w.messages.box.detailedText()
        assert not w.messages.box.isModal()
        qtbot.waitUntil(lambda: not w.state.busy, timeout=5000)
        assert w.state.result is before  # the last good chunks stay on screen
        w.strategy_panel.set_strategy("markdown")
        r = wait_complete(w)
        assert r.request.strategy == "markdown" and w.message.text() == ""
    finally:
        unregister("exploding_demo")


def test_a_bad_parameter_is_one_line_without_a_traceback(qtbot, make_window, open_doc):
    def picky(doc, params):
        raise ValueError("size must be a multiple of 7")

    register_strategy(Strategy("picky_demo", picky, (), "refuses"))
    try:
        w = make_window()
        open_doc(w)
        with qtbot.waitSignal(w.messages.errorShown, timeout=10_000):
            w.state.set_strategy("picky_demo")
        assert w.message.text() == "size must be a multiple of 7"
        assert w.messages.details == "" and not w.messages.details_button.isVisible()
    finally:
        unregister("picky_demo")


@pytest.mark.timeout(120)
def test_closing_while_a_strategy_runs_cancels_it(qtbot, make_window, open_doc):
    """The worker runs strategies inside the core's cancel scope: a long strategy that checks
    `check_cancelled()` stops when the window closes, and no thread is left running."""
    from inspector.core.runtime.cancel import check_cancelled

    started, stopped = threading.Event(), threading.Event()

    def long_running(doc, params):
        started.set()
        deadline = time.monotonic() + 30  # a bound, so a broken cancel fails the test, not the run
        try:
            while time.monotonic() < deadline:
                check_cancelled()
                time.sleep(0.005)
        finally:
            stopped.set()
        return ()

    register_strategy(Strategy("long_demo", long_running, (), "runs until cancelled"))
    try:
        w = make_window()
        open_doc(w)
        w.state.set_strategy("long_demo")
        assert started.wait(10)
        assert w.state.busy and w.runner.active_threads() == 1
        w.close()
        assert stopped.is_set() and w.runner.active_threads() == 0
        assert w.corpus_panel.runner.active_threads() == 0 and w.retrieval.runner.active_threads() == 0
    finally:
        unregister("long_demo")


# -- pathological inputs ----------------------------------------------------------------------------

def _painted_matches_core(w) -> None:
    """What the last paint drew is what the core says is in the painted range."""
    w.view.viewport().repaint()
    rec = w.view.last_paint
    r = w.state.result
    assert rec is not None
    assert rec.segments == r.index.segments_in(rec.lo, rec.hi)
    assert rec.chunk_ids == tuple(r.index.chunks_in(rec.lo, rec.hi))
    return rec


@pytest.mark.timeout(240)
def test_a_one_megabyte_line_paints_only_what_is_on_screen(qtbot, make_window, wait_complete, tmp_path):
    line = tmp_path / "line.md"
    line.write_text("x" * 1_000_000, encoding="utf-8")  # no space anywhere: one 1 MB "word"
    w = make_window()
    w.strategy_panel.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 250)
    assert w.open_paths([str(line)])
    r = wait_complete(w, timeout=120_000)
    assert len(r.chunks) == 4000
    # A run that long is wrapped anywhere: Qt lays it out in quadratic time otherwise.
    assert w.view.wordWrapMode() == QTextOption.WrapMode.WrapAnywhere
    for fraction in (0.0, 0.5, 1.0):
        sb = w.view.verticalScrollBar()
        sb.setValue(int(sb.maximum() * fraction))
        rec = _painted_matches_core(w)
        # The painted range is the screenful of wrapped lines, not the whole 1 MB block.
        assert 0 < rec.hi - rec.lo < 20_000 and len(rec.chunk_ids) < 100
        if fraction == 1.0:
            assert rec.hi == len(r.document.text) and rec.chunk_ids[-1] == r.index.ids[-1]
    # Clicking selects the chunk under the pointer; the table and detail follow.
    mid = QPoint(w.view.viewport().width() // 2, w.view.viewport().height() // 2)
    cid = w.view.click_at(mid)
    assert cid in w.view.last_paint.chunk_ids and w.state.selection == cid
    assert w.detail.shown_text().endswith(r.document.text[r.chunk(cid).start:r.chunk(cid).end])


@pytest.mark.timeout(240)
def test_a_table_of_ten_thousand_rows(qtbot, make_window, wait_complete, tmp_path):
    rows = "".join(f"| {i} | item {i} | {i * 7 % 101} |\n" for i in range(10_000))
    table = tmp_path / "table.md"
    table.write_text("# Inventory\n\n| id | name | count |\n|---|---|---|\n" + rows, encoding="utf-8")
    w = make_window()
    assert w.open_paths([str(table)])
    r = wait_complete(w, timeout=120_000)
    doc = r.document
    expected = chunk_document(doc, "markdown", w.state.params)
    assert [(c.start, c.end) for c in r.chunks] == [(c.start, c.end) for c in expected]
    assert sum("split_table" in c.flags for c in r.chunks) > 0
    assert w.table.model.rowCount() == len(r.chunks)
    sb = w.view.verticalScrollBar()
    sb.setValue(sb.maximum() // 2)
    rec = _painted_matches_core(w)
    assert rec.chunk_ids and rec.hi - rec.lo < 10_000
    w.view.select_relative(1)
    first = w.state.selection
    w.view.select_relative(1)
    assert w.state.selection == r.index.ids[r.index.rank(first) + 1]


@pytest.mark.timeout(240)
def test_tiny_size_with_large_overlap(qtbot, make_window, wait_complete, tmp_path):
    text = HANDBOOK.read_text(encoding="utf-8")[:8000]
    small = tmp_path / "small.md"
    small.write_text(text, encoding="utf-8")
    w = make_window()
    w.strategy_panel.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 10)
    w.strategy_panel.set_value("overlap", 9)  # each character starts a chunk
    assert w.state.params == {"size": 10, "overlap": 9}
    assert w.open_paths([str(small)])
    r = wait_complete(w, timeout=120_000)
    doc = r.document
    expected = chunk_document(doc, "fixed_chars", {"size": 10, "overlap": 9})
    assert len(r.chunks) == len(expected) > 5000
    assert w.table.model.rowCount() == len(expected) and w.stats_panel.stats.count == len(expected)
    rec = _painted_matches_core(w)
    assert len(rec.segments) < 5000  # a screenful, not the document
    assert w.view.gutter.lanes() >= 10  # ten chunks cover each character: ten lanes
    # Slider moves still come through: back to no overlap.
    w.strategy_panel.set_value("overlap", 0)
    r2 = wait_complete(w)
    assert r2.request.params["overlap"] == 0 and len(r2.chunks) < len(expected) / 5


# -- documents are text ------------------------------------------------------------------------------

def test_html_in_a_document_is_shown_verbatim_and_never_fetched(qtbot, make_window, wait_complete, tmp_path):
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    port = server.getsockname()[1]
    try:
        img = f'<img src="http://127.0.0.1:{port}/x.png" onerror="alert(1)">'
        md = (f"# Page <img src=\"http://127.0.0.1:{port}/heading.png\">\n\n<script>alert('x')</script>\n\n"
              f"Text with {img} inline.\n\n![remote](http://127.0.0.1:{port}/y.png)\n\n"
              f'<iframe src="http://127.0.0.1:{port}/frame"></iframe>\n')
        path = tmp_path / "html.md"
        path.write_text(md, encoding="utf-8")
        w = make_window()
        assert w.open_paths([str(path)])
        r = wait_complete(w)
        assert w.view.toPlainText() == md  # every tag verbatim, as text
        assert img in w.view.toPlainText()
        c = next(c for c in r.chunks if img in r.document.text[c.start:c.end])
        w.state.select(c.id)
        assert img in w.detail.shown_text()
        row = w.table.model.row_of(c.id)
        from inspector.qt.panels.chunk_table import COL_PATH
        tip = w.table.model.index(row, COL_PATH).data(Qt.ItemDataRole.ToolTipRole)
        assert tip is None or "&lt;img" in tip  # escaped: shown as text, not rendered
        for widget in (w.view.viewport(), w.detail.text.viewport(), w.table.view.viewport(), w.message):
            widget.repaint()
        qtbot.wait(50)
        with pytest.raises(BlockingIOError):
            server.accept()  # nobody connected: nothing was fetched
        assert w.view.document().toHtml().count("<img") == 0  # no image in the text document
    finally:
        server.close()


# -- a long session ------------------------------------------------------------------------------------

@pytest.mark.timeout(240)
def test_a_long_session_keeps_neither_old_documents_nor_unbounded_caches(qtbot, make_window, wait_complete,
                                                                        tmp_path, monkeypatch):
    """Open document after document in one window: the window keeps only the one shown and the
    few its undo history may put back (a bounded number of steps), and the core's per-document
    caches stay within their character budgets (benchmarks/gui_memory.py measures the resident
    memory of the same session with 20 documents of 1-2 MB)."""
    import gc

    from inspector.core.documents.document import Document
    from inspector.core.text import structure, tokens, wordpieces

    budget = 150_000
    for cache in (structure._STRUCTURES, tokens._INDEXES, wordpieces._INDEXES):
        monkeypatch.setattr(cache, "max_size", budget)
    body = HANDBOOK.read_text(encoding="utf-8")
    w = make_window()
    w.history.history.max_steps = 2  # Undo may bring back the last two documents, no more
    for k in range(8):
        p = tmp_path / f"session{k}.md"
        p.write_text(body.replace("# ", f"# S{k} ", 50), encoding="utf-8")  # ~95 k characters, distinct
        assert w.open_paths([str(p)])
        wait_complete(w)
        w.view.viewport().repaint()
    gc.collect()
    alive = {o.doc_id for o in gc.get_objects() if isinstance(o, Document) and o.doc_id.startswith("session")}
    assert alive == {"session5.md", "session6.md", "session7.md"}
    w.history.history.undo_steps.clear()
    gc.collect()
    alive = {o.doc_id for o in gc.get_objects() if isinstance(o, Document) and o.doc_id.startswith("session")}
    assert alive == {"session7.md"}
    for cache in (structure._STRUCTURES, tokens._INDEXES, wordpieces._INDEXES):
        assert cache.total_size() <= budget


def test_big_or_converted_inputs_load_off_the_gui_thread(qtbot, make_window, wait_complete, tmp_path,
                                                        monkeypatch):
    """Menus, drag-and-drop and recent files open big inputs on a worker thread (the window stays
    responsive); small plain files still open at once; bad ones report the same line."""
    from inspector.qt.actions import file_actions as mw

    small = tmp_path / "small.md"
    small.write_text("# Small\n\nA short document.\n", encoding="utf-8")
    big = tmp_path / "big.md"
    big.write_text("# Big\n\n" + "Some words in a sentence. " * 400, encoding="utf-8")
    monkeypatch.setattr(mw, "BACKGROUND_LOAD_BYTES", 5_000)
    assert not mw.needs_background_load([str(small)]) and mw.needs_background_load([str(big)])
    assert mw.needs_background_load([str(tmp_path / "report.pdf")])
    # A file whose encoding is guessed (charset-normalizer: 220 ms for 2.7 MB of Latin-1) goes
    # off the GUI thread whatever its size; UTF-8, BOMs and BOM-less UTF-16 do not.
    assert mw.needs_background_load([str(BAD / "latin1.md")]) and mw.needs_background_load([str(BAD)])
    for name in ("utf8_bom.md", "utf16le_bom.md", "utf16be_nobom.md", "crlf.md"):
        assert not mw.needs_background_load([str(BAD / name)]), name
    w = make_window()
    rid = w.open_user_paths([str(BAD / "latin1.md")])
    assert rid is not True and isinstance(rid, int)
    qtbot.waitUntil(lambda: w.state.document is not None and w.state.document.name == "latin1.md", timeout=10_000)
    wait_complete(w)
    latin1 = load_document(BAD / "latin1.md")
    assert w.state.document.text == latin1.text
    assert w.messages.kind == "warning"  # announced as when it opens at once
    assert w.message.text() == f"latin1.md: Read as {latin1.encoding}: not valid UTF-8 at line 1, column 6"
    assert w.open_user_paths([str(small)]) is True  # synchronous
    assert w.state.document.name == "small.md"
    rid = w.open_user_paths([str(big)])
    assert rid is not True and isinstance(rid, int)
    qtbot.waitUntil(lambda: w.state.document is not None and w.state.document.name == "big.md", timeout=10_000)
    wait_complete(w)
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 truncated")
    w.open_user_paths([str(broken)])
    qtbot.waitUntil(lambda: "broken.pdf" in w.messages.last_error, timeout=10_000)
    assert w.state.document.name == "big.md"  # what was open stays open
