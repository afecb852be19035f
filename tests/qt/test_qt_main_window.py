"""The main window end to end: open, switch strategy, move sliders, persist, drop files, close."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QColor, QDropEvent
from PySide6.QtWidgets import QDockWidget, QLabel

from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.params import Strategy
from inspector.core.chunking.registry import (
    chunk_document,
    register_strategy,
    unregister,
)
from inspector.core.viewmodel import settings_schema as keys
from inspector.qt.settings import Settings, ini_store

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"


def test_open_switch_strategy_and_drag_sliders(qtbot, make_window, open_doc, wait_complete):
    w = make_window()
    open_doc(w)
    doc = w.state.document
    assert w.windowTitle().startswith("handbook.md")
    w.strategy_panel.combo.setCurrentText("sentences")
    r = wait_complete(w)
    assert r.request.strategy == "sentences"
    size = w.strategy_panel.control("size")
    size.slider.setValue(size.slider.value() + 40)  # as a drag would
    with qtbot.waitSignal(w.controller.requested, timeout=5000):
        pass
    r = wait_complete(w)
    params = w.state.params
    assert r.request.params == params and params["size"] == size.value()
    expected = annotate(doc, chunk_document(doc, "sentences", params), with_prefix=w.state.with_prefix)
    assert r.chunks == expected
    assert w.view.result is r and w.table.model.chunks == expected
    assert w.stats_panel.stats.count == len(expected)
    assert f"{len(expected):,} chunks" in w.info.text()
    # The overview strip has one mark per chunk boundary.
    assert len(w.strip.boundaries) == len(expected)


def test_settings_round_trip(qtbot, make_window, open_doc, wait_complete, tmp_path):
    store_path = str(tmp_path / "persist.ini")
    w = make_window(store=ini_store(store_path))
    open_doc(w)
    w.strategy_panel.set_strategy("fixed_tokens")
    w.strategy_panel.set_value("size", 96)
    default_prefix = w.state.with_prefix
    w.strategy_panel.prefix.setChecked(not default_prefix)
    w.only_flagged_action.trigger()
    w.stats_dock.hide()
    wait_complete(w)
    w.resize(640, 480)  # within the offscreen screen (800x600), which restoreGeometry clamps to
    size = (w.width(), w.height())
    w.close()
    s = Settings(ini_store(store_path))
    assert s.get(keys.STRATEGY) == "fixed_tokens"
    assert s.get(keys.PARAMS)["fixed_tokens"]["size"] == 96
    assert s.get(keys.WITH_PREFIX) == {"fixed_tokens": not default_prefix} and s.get(keys.ONLY_FLAGGED) is True
    assert s.get(keys.RECENT_FILES) == [str(HANDBOOK.resolve())]

    w2 = make_window(store=ini_store(store_path), size=(500, 400))
    w2.restore_settings()
    assert w2.state.strategy == "fixed_tokens" and w2.state.params["size"] == 96
    assert w2.strategy_panel.values()["size"] == 96
    assert w2.state.with_prefix is (not default_prefix) and w2.table.proxy.only_flagged
    assert w2.stats_dock.isHidden()
    assert (w2.width(), w2.height()) == size != (500, 400)
    recent = [a.text() for a in w2.recent_menu.actions()]
    assert any(str(HANDBOOK.resolve()) in t for t in recent)


def test_corrupt_settings_fall_back_to_defaults(qtbot, make_window, tmp_path):
    path = tmp_path / "bad.ini"
    path.write_text("[chunking]\nstrategy=no_such_strategy\nparams={not json\nwith_prefix=maybe\n"
                    "[window]\nstate=garbage\n")
    w = make_window(store=ini_store(str(path)))
    assert w.state.strategy == "markdown" and w.state.with_prefix is True


def test_drop_files_and_folders(qtbot, make_window, wait_complete, tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\n\nFirst document. It has two sentences.\n")
    (corpus / "b.txt").write_text("Second document, plain text.\n\nAnother paragraph.\n")
    (corpus / "broken.md").write_bytes(b"\x00\x01\x02binary\x00" * 10)
    w = make_window()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(corpus))])
    event = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    w.dropEvent(event)
    wait_complete(w)
    assert [d.doc_id for d in w.state.documents] == ["a.md", "b.txt"]
    assert w.doc_combo.count() == 2 and w._doc_combo_action.isVisible()
    assert "broken.md" in w.message.text()  # the bad file is reported, the rest opened
    w.doc_combo.setCurrentIndex(1)
    r = wait_complete(w)
    assert r.document.doc_id == "b.txt" and w.view.toPlainText() == r.document.text


def test_unreadable_file_is_reported_in_the_status_bar(qtbot, make_window, tmp_path):
    w = make_window()
    bad = tmp_path / "image.md"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 50)
    assert not w.open_paths([str(bad)])
    assert "image.md" in w.message.text() and "PNG" in w.message.text()
    assert w.state.document is None
    assert not w.open_paths([str(tmp_path / "missing.md")])
    assert "no such file" in w.message.text()


def test_worker_errors_reach_the_user(qtbot, make_window, open_doc):
    def broken(doc, params):
        raise RuntimeError("strategy exploded")

    register_strategy(Strategy("broken_demo", broken, (), "always fails"))
    try:
        w = make_window()
        open_doc(w)
        with qtbot.waitSignal(w.state.errorChanged, timeout=5000,
                              check_params_cb=lambda m: "strategy exploded" in m):
            w.state.set_strategy("broken_demo")
        assert "RuntimeError: strategy exploded" in w.message.text()
        qtbot.waitUntil(lambda: not w.busy.isVisible(), timeout=5000)
        w.state.set_strategy("markdown")
        qtbot.waitUntil(lambda: w.message.text() == "", timeout=10_000)  # resolved
    finally:
        unregister("broken_demo")


def test_busy_indicator_shows_while_work_is_pending(qtbot, make_window, open_doc):
    w = make_window(debounce_ms=150)
    open_doc(w)
    w.strategy_panel.set_value("size", 333)
    assert w.busy.isVisible()
    qtbot.waitUntil(lambda: not w.busy.isVisible(), timeout=10_000)
    assert w.state.result.request.params["size"] == 333


def test_find_bar(qtbot, make_window, open_doc):
    w = make_window()
    open_doc(w)
    qtbot.keyClick(w, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert w.find_bar.isVisible()
    w.find_bar.field.setText("Elterngeld")
    assert w.find_bar.find_next()
    cur = w.view.textCursor()
    assert cur.selectedText() == "Elterngeld"
    first = cur.selectionStart()
    assert w.find_bar.find_next() and w.view.textCursor().selectionStart() > first
    w.find_bar.field.setText("no such phrase anywhere")
    assert not w.find_bar.find_next() and w.find_bar.status.text() == "not found"
    qtbot.keyClick(w.find_bar.field, Qt.Key.Key_Escape)
    assert not w.find_bar.isVisible()


def test_overview_strip_jumps_and_takes_marks(qtbot, make_window, open_doc):
    w = make_window()
    r = open_doc(w)
    strip = w.strip
    qtbot.mouseClick(strip, Qt.MouseButton.LeftButton, pos=QPoint(5, int(strip.height() * 0.9)))
    first, last = w.view.visible_line_fractions()
    assert first <= 0.9 <= last + 0.05 and first > 0.5
    w.mark_chunks("retrieved", [r.index.ids[0], r.index.ids[-1]], QColor("red"))
    marks = strip.marks("retrieved")
    assert len(marks) == 2 and marks[0] < 0.05 and marks[1] > 0.9
    w.mark_chunks("retrieved", [])
    assert strip.marks("retrieved") == ()


def test_add_panel_is_the_hook_for_more_docks(qtbot, make_window):
    w = make_window()
    dock = w.add_panel(QLabel("gold set goes here"), "Gold set")
    assert isinstance(dock, QDockWidget) and dock.objectName() == "dock_gold_set"
    assert dock.toggleViewAction() in w.panels_menu.actions()


def test_closing_while_a_long_job_runs(qtbot, make_window, tmp_path):
    text = HANDBOOK.read_text(encoding="utf-8")
    body = text.split("---\n", 2)[2]
    big = tmp_path / "big.md"
    big.write_text("".join(f"# Part {i}\n\n{body}\n" for i in range(20)), encoding="utf-8")  # ~2 MB
    w = make_window()
    w.state.set_strategy("parent_child")
    assert w.open_paths([str(big)])
    qtbot.waitUntil(lambda: w.runner.active_threads() == 1 or w.state.result is not None, timeout=5000)
    assert w.state.busy
    w.close()  # cancels the job: the core checks for cancellation inside its long loops
    assert w.runner.active_threads() == 0  # the fixture also fails on leaked threads
    assert not w.state.busy


def test_detail_pane_shows_exactly_the_embedded_text(qtbot, make_window, open_doc):
    w = make_window()
    w.state.set_strategy("markdown")
    w.strategy_panel.set_value("fit_embedder", False)  # keep chunks the embedder cuts short
    r = open_doc(w)
    doc = w.state.document
    c = next(c for c in r.chunks if c.truncated_at is not None)
    w.state.select(c.id)
    assert w.state.with_prefix
    assert w.detail.shown_text() == c.embedded_text(doc, with_prefix=True)
    assert f"Chunk {c.id}" in w.detail.header.text() and f"{c.embed_dropped} dropped" in w.detail.header.text()
    # The tail the embedder never reads is struck through, the rest is not.
    body_at = len(c.prefix) + 2
    cut = body_at + (c.truncated_at - c.start)
    cursor = w.detail.text.textCursor()
    cursor.setPosition(cut + 2)
    assert cursor.charFormat().fontStrikeOut()
    cursor.setPosition(body_at + 2)
    assert not cursor.charFormat().fontStrikeOut()
    w.strategy_panel.prefix.setChecked(False)
    assert w.detail.shown_text() == c.embedded_text(doc, with_prefix=False)
