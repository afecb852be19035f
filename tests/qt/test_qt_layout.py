"""The window at a laptop's 1280x800 and at 1024x700: nothing clipped, the text readable, the gold
panel's buttons in view; the reading aids (legend, stale veil, hits across a corpus, the heading
completer, the Open filter, the theme switch)."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QWidget

from inspector.core.chunking.params import Strategy
from inspector.core.chunking.registry import chunk_document, register_strategy, unregister
from inspector.core.viewmodel import settings_schema as keys
from inspector.qt.settings import Settings, ini_store

#: (window size, least text width, least question-field width) the layout promises.
SIZES = [((1024, 700), 420, 300), ((1280, 800), 540, 500)]


def _rect_in(w: QWidget, window: QWidget) -> QRect:
    return QRect(w.mapTo(window, QPoint(0, 0)), w.size())


def assert_unclipped(w: QWidget, window: QWidget, min_w: int = 1, min_h: int = 1) -> None:
    """Shown, at least min_w x min_h, inside the window, and not covered or cut by any parent."""
    assert w.isVisible(), w
    assert w.width() >= min_w and w.height() >= min_h, (w, w.size())
    assert window.rect().contains(_rect_in(w, window)), (w, _rect_in(w, window), window.rect())
    assert w.visibleRegion().boundingRect() == w.rect(), (w, w.visibleRegion().boundingRect(), w.rect())


def _settled(qtbot, w) -> None:
    qtbot.waitUntil(lambda: w.dock_layout.compact is not None, timeout=5000)
    qtbot.wait(50)


@pytest.mark.parametrize("size,text_min,field_min", SIZES)
def test_small_windows_keep_the_text_the_question_and_the_gold_buttons(qtbot, hash_window, open_doc, wait_result,
                                                                       size, text_min, field_min):
    w = hash_window(size=size)
    _settled(qtbot, w)
    assert w.table_dock.isVisible() and w.gold_dock.visibleRegion().isEmpty()  # no gold set yet
    open_doc(w)  # the sample handbook, as `make run` opens it: its gold set loads with it
    wait_result(w, gold=True)
    qtbot.wait(50)
    assert w.dock_layout.compact is (size[0] < 1200)
    assert_unclipped(w.view, w, text_min, 250)
    bar = w.question_bar
    assert_unclipped(bar.field, w, field_min)
    for part in (bar.k_spin, bar.retriever, bar.heading_filter, bar.mode):
        assert_unclipped(part, w, part.minimumSizeHint().width())
    # The gold set opened with the document: its tab is in front, its buttons in view.
    assert w.gold_dock.isVisible() and not w.gold_dock.visibleRegion().isEmpty()
    assert w.table_dock.visibleRegion().isEmpty()
    g = w.gold_panel
    for button in (g.load_button, g.pin_button, g.clear_button):
        assert_unclipped(button, w, button.sizeHint().width(), button.sizeHint().height())
    assert_unclipped(g.view.viewport(), w, 300, 100)
    # Pinned, the questions fixed and broken are in view too, beside or under the figures.
    g.pin_button.click()
    w.state.set_strategy("fixed_chars")
    wait_result(w, gold=True)
    qtbot.waitUntil(lambda: w.retrieval.comparison is not None, timeout=10_000)
    qtbot.wait(50)
    assert_unclipped(g.changes.viewport(), w, 200, 40)
    assert g.changes.count() > 2
    assert_unclipped(g.view.viewport(), w, 300, 100)
    assert g.view.horizontalHeader().sectionSize(1) >= 120  # the Question column is readable


def test_the_arrangement_follows_the_window_until_the_user_moves_a_dock(qtbot, make_window):
    w = make_window(size=(1400, 900))
    _settled(qtbot, w)
    assert w.dock_layout.compact is False
    assert w.reader_dock not in w.tabifiedDockWidgets(w.strategy_dock)
    w.resize(1024, 700)
    qtbot.waitUntil(lambda: w.dock_layout.compact is True, timeout=5000)
    assert w.reader_dock in w.tabifiedDockWidgets(w.strategy_dock)  # one column of tabs
    # The user moves a dock: from now on the window leaves the arrangement alone.
    from PySide6.QtCore import Qt

    w.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, w.detail_dock)
    assert w.dock_layout.auto is False
    w.resize(1400, 900)
    qtbot.wait(50)
    assert w.dock_layout.compact is True
    w.dock_layout.reset()  # View ▸ Reset Layout
    assert w.dock_layout.auto is True and w.dock_layout.compact is False


def test_the_legend_explains_what_is_drawn(qtbot, make_window):
    from inspector.qt.panels.legend import Swatch

    w = make_window()
    w.legend_action.trigger()
    legend = w.view_actions.legend
    qtbot.waitExposed(legend)
    names = [n for n, _m in legend.entries]
    for expected in ("Chunks", "Overlap", "Never embedded", "Cut mid-sentence", "Split table", "Selected chunk",
                     "Computing…", "Retrieved chunk", "Gold answer", "Kept", "Moved", "Added", "Removed",
                     "Flag: truncated", "Flag: stub", "Flag: no heading"):
        assert expected in names
    # Every swatch draws something: more than the background's one colour.
    for swatch in legend.findChildren(Swatch):
        img = swatch.grab().toImage()
        colours = {img.pixel(x, y) for x in range(0, img.width(), 3) for y in range(0, img.height(), 3)}
        assert len(colours) > 1, swatch.painter


_RELEASE_SLOW = threading.Event()


def _slow(doc, params):
    _RELEASE_SLOW.wait(30)  # computing until the test has looked at the veil
    return chunk_document(doc, "paragraph", {})


def test_stale_chunks_are_veiled_while_a_slow_strategy_computes(qtbot, make_window, open_doc, wait_complete):
    _RELEASE_SLOW.clear()
    register_strategy(Strategy("slow_test_layout", _slow, (), "waits until released, then splits on blank lines"))
    try:
        w = make_window()
        open_doc(w)
        before = w.state.result
        assert not w.stale.shown
        w.stale.set_delay_ms(0)
        w.state.set_strategy("slow_test_layout")
        qtbot.waitUntil(lambda: w.stale.shown, timeout=5000)
        # The old chunks are still on screen, under a veil that says what is being computed.
        assert w.state.result is before and before.request.strategy == "markdown"
        for veil in w.stale.veils:
            assert veil.isVisible() and veil.mapTo(w, QPoint(0, 0)) == veil.target.mapTo(w, QPoint(0, 0))
            assert veil.size() == veil.target.size()
            assert "slow_test_layout" in veil.text
        assert w.gold_panel.splitter.count() == 2  # the veil is no pane of the splitter
        assert {v.target for v in w.stale.veils} == {w.view, w.stats_panel, w.table, w.gold_panel.splitter}
        _RELEASE_SLOW.set()
        r = wait_complete(w)
        assert r.request.strategy == "slow_test_layout"
        qtbot.waitUntil(lambda: not w.stale.shown, timeout=5000)
        assert not any(v.isVisible() for v in w.stale.veils)
    finally:
        _RELEASE_SLOW.set()
        unregister("slow_test_layout")


def _two_documents(tmp_path):
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.md").write_text("# Refunds\n\nRefunds are issued within 14 days.\n\n"
                                 "## Receipts\n\nReceipts are required for every refund.\n", encoding="utf-8")
    (folder / "b.md").write_text("# Wildlife\n\nZebras migrate across the savanna every spring.\n\n"
                                 "## Lions\n\nLions hunt at night in small prides, zebras flee.\n", encoding="utf-8")
    return folder


def test_hits_in_other_documents_are_counted_and_one_click_away(qtbot, hash_window, wait_complete, wait_result,
                                                                tmp_path):
    from inspector.qt.panels.corpus_panel import COL_HITS
    from inspector.qt.panels.question_bar import hit_counts

    w = hash_window(start=False)
    w.retrieval.set_retriever("bm25")
    assert w.open_paths([str(_two_documents(tmp_path))])
    wait_complete(w)
    assert w.state.document.doc_id == "a.md"
    question = "When do zebras migrate and flee?"
    w.question_bar.ask(question)
    r = wait_result(w, question=question)
    counts = hit_counts(r)
    assert counts["b.md"][0] >= 1 and counts["b.md"][1] == 1  # the best hit is in b.md
    model = w.corpus_panel.model
    qtbot.waitUntil(lambda: model.rows[1].hits == counts["b.md"], timeout=5000)
    assert model.index(1, COL_HITS).data() == f"{counts['b.md'][0]} · #1"
    assert model.index(0, COL_HITS).data() == (f"{counts['a.md'][0]} · #{counts['a.md'][1]}" if "a.md" in counts
                                               else "–")
    # The question bar offers them: "+n elsewhere", a menu of the hits in b.md.
    bar = w.question_bar
    assert bar.elsewhere.isVisibleTo(w) and bar.elsewhere.text() == f"+{counts['b.md'][0]} elsewhere"
    first = bar.elsewhere_menu.actions()[0]
    doc_id, start, end = first.data()
    assert doc_id == "b.md" and first.text().startswith("#1 ")
    first.trigger()
    assert w.state.document.doc_id == "b.md"
    wait_result(w, question=question)
    qtbot.waitUntil(lambda: w.view.current_hit >= 0, timeout=5000)
    hit = w.view.hits[w.view.current_hit]
    assert (hit.start, hit.end) == (start, end) and hit.rank == 1
    top, bottom = w.view.y_range(start, end)
    assert 0 <= top < w.view.viewport().height()  # scrolled into view
    # Back in a.md through the list: selecting its row shows it at its best hit, if it has one.
    w.corpus_panel.view.selectRow(0)
    wait_result(w, question=question)
    assert w.state.document.doc_id == "a.md"
    if "a.md" in counts:
        qtbot.waitUntil(lambda: w.view.current_hit >= 0, timeout=5000)
    # No question: no counts.
    bar.clear()
    qtbot.waitUntil(lambda: model.rows[1].hits is None, timeout=5000)
    assert model.index(1, COL_HITS).data() == "" and not bar.elsewhere.isVisibleTo(w)


def test_heading_filter_completes_and_matches_by_prefix(qtbot, hash_window, open_doc, wait_result):
    w = hash_window()
    open_doc(w)
    bar = w.question_bar
    assert bar.completions("parental > ger") == ["Parental leave > Germany"]
    offered = bar.completions("leave")
    assert "Parental leave" in offered and "Sick leave" in offered
    assert all("leave" in o.split(" > ")[0].lower() for o in offered)
    assert bar.heading_filter.completer() is bar.completer
    question = "How long is parental allowance paid?"
    bar.ask(question)
    bar.set_filters("parental > germ")
    r = wait_result(w, question=question)
    assert r.request.heading_prefix == ("Employee Handbook", "parental", "germ")
    assert r.hits and all(h.matched.heading_path[:3] == ("Employee Handbook", "Parental leave", "Germany")
                          for h in r.hits)


def _catalog_makings(monkeypatch) -> list[str]:
    """The names of the threads that make a heading catalog from here on (the kept ones emptied)."""
    import threading

    from inspector.core.text import heading_filter

    heading_filter._CATALOGS.clear()
    made_on: list[str] = []
    real = heading_filter.HeadingCatalog.__init__

    def recording(self, paths):
        made_on.append(threading.current_thread().name)
        real(self, paths)

    monkeypatch.setattr(heading_filter.HeadingCatalog, "__init__", recording)
    return made_on


def _catalog_kept(doc) -> bool:
    from inspector.core.text import heading_filter

    return heading_filter._CATALOGS.lookup((doc.sha256, doc.kind, doc.name)) is not None


def _two_titled_documents(tmp_path) -> None:
    from tests.core.test_heading_filter import _TWO_TITLES

    for name, text in _TWO_TITLES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")


def test_the_heading_catalog_is_made_on_the_chunking_thread(qtbot, hash_window, open_doc, monkeypatch):
    """The completer's catalog is made by the chunking job once the chunks are in (a 20 MB
    document's took 0.3 s on the GUI thread at the first keystroke; issue 31): the completer
    then makes none and answers from it."""
    import threading

    made_on = _catalog_makings(monkeypatch)
    w = hash_window()
    open_doc(w)
    doc = w.state.document
    qtbot.waitUntil(lambda: _catalog_kept(doc), timeout=10_000)
    assert made_on and threading.current_thread().name not in made_on, made_on
    made_on.clear()
    assert w.question_bar.completions("parental > ger") == ["Parental leave > Germany"]
    assert made_on == []


def test_a_heading_filter_over_a_folder_keeps_every_documents_section(qtbot, hash_window, wait_result, tmp_path):
    """A folder whose documents have titles of their own: "parental" over all documents keeps
    both documents' "Parental leave" (the shown document's title was put in front, which kept its
    chunks alone), the completer offers both documents' paths, and with one document chosen the
    filter is resolved with that document's title (not the shown one's)."""
    _two_titled_documents(tmp_path)
    w = hash_window()
    assert w.open_paths([str(tmp_path)])
    qtbot.waitUntil(lambda: len(w.state.documents) == 2 and w.state.document is not None, timeout=20_000)
    shown = w.state.document.doc_id
    bar = w.question_bar
    offered = bar.completions("parental")
    assert {"Parental leave > Germany", "Parental leave > France"} <= set(offered), offered
    question = "How long is parental leave paid?"
    bar.ask(question)
    bar.set_filters("parental")
    r = wait_result(w, question=question)
    assert r.request.heading_prefix == ("parental",)
    assert {(h.matched.doc_id, h.matched.heading_path[1]) for h in r.hits} == {
        ("a.md", "Parental leave"), ("b.md", "Parental leave")}
    other = "b.md" if shown == "a.md" else "a.md"
    bar.set_filters("parental", other)
    r = wait_result(w, question=question)
    title = "Policy B" if other == "b.md" else "Handbook A"
    assert r.request.heading_prefix == (title, "parental")
    assert r.hits and {h.matched.doc_id for h in r.hits} == {other}
    assert all(p.startswith("Parental leave") for p in bar.completions("parental"))
    assert ("Parental leave > France" in bar.completions("parental")) is (other == "b.md")


def test_a_folders_heading_catalogs_are_made_off_the_gui_thread(qtbot, hash_window, tmp_path, monkeypatch):
    """Over a folder the completer offers every document's paths; their catalogs are made by the
    chunking job (the shown document) and the corpus counts (the others), so the first keystroke
    makes none on the GUI thread."""
    import threading

    _two_titled_documents(tmp_path)
    made_on = _catalog_makings(monkeypatch)
    w = hash_window()
    assert w.open_paths([str(tmp_path)])
    qtbot.waitUntil(lambda: len(w.state.documents) == 2 and all(_catalog_kept(d) for d in w.state.documents),
                    timeout=20_000)
    assert len(made_on) == 2 and threading.current_thread().name not in made_on, made_on
    assert {"Parental leave > Germany", "Parental leave > France"} <= set(w.question_bar.completions("parental"))
    assert len(made_on) == 2


def test_a_folders_heading_catalogs_are_made_off_the_gui_thread_under_an_embedding_strategy(
        qtbot, hash_window, tmp_path, monkeypatch):
    """Under a strategy that needs the embedding model the other documents are not counted, and
    their catalogs were made at the first keystroke, on the GUI thread: now by a job of the
    corpus panel's own."""
    import threading

    _two_titled_documents(tmp_path)
    made_on = _catalog_makings(monkeypatch)
    w = hash_window()
    w.state.set_strategy("semantic")
    assert w.open_paths([str(tmp_path)])
    qtbot.waitUntil(lambda: len(w.state.documents) == 2 and all(_catalog_kept(d) for d in w.state.documents),
                    timeout=20_000)
    assert w.corpus_panel.model.pending_note.startswith("counted when shown")
    assert len(made_on) == 2 and threading.current_thread().name not in made_on, made_on
    assert {"Parental leave > Germany", "Parental leave > France"} <= set(w.question_bar.completions("parental"))
    assert len(made_on) == 2


def test_heading_completions_are_shown_whole(qtbot, hash_window, open_doc):
    """The popup is as wide as its longest heading path (the field is at most 220 px, and the
    popup had its width: "Parental leave > …"), up to half the window, and never under the field."""
    w = hash_window()
    w.resize(1024, 700)
    open_doc(w)
    bar = w.question_bar
    popup = bar.completer.popup()
    for typed in ("parental > ger", "leave", "p"):
        offered = bar.completions(typed)
        widest = max(popup.fontMetrics().horizontalAdvance(s) for s in offered)
        assert popup.minimumWidth() >= min(widest, w.width() // 2 - 40), typed
        assert bar.heading_filter.width() <= popup.minimumWidth() <= max(bar.heading_filter.width(), w.width() // 2)
    assert bar.completions("no such heading at all") == [] and popup.minimumWidth() == 0


def test_closing_the_window_with_a_heading_filter_typed_raises_nothing(qtbot, make_window, open_doc):
    """The field's focus leaves as the window closes (editingFinished): no filter request to a
    retrieval already shut down ("runner is shut down" / "Signal source has been deleted")."""
    w = make_window()
    open_doc(w)
    bar = w.question_bar
    bar.heading_filter.setText("parental > g")
    w.close()
    bar.heading_filter.editingFinished.emit()  # as Qt emits it when the focus goes
    assert w.retrieval.heading_prefix is None


def test_open_dialog_offers_every_supported_format(qtbot, make_window, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    seen = {}

    def fake(parent, caption, folder, filters):
        seen["filters"] = filters
        return [], ""

    monkeypatch.setattr(QFileDialog, "getOpenFileNames", staticmethod(fake))
    w = make_window()
    w.open_action.trigger()
    default = seen["filters"].split(";;")[0]
    for suffix in ("*.md", "*.txt", "*.pdf", "*.docx", "*.html", "*.htm"):
        assert suffix in default


def test_theme_switch_repaints_and_is_remembered(qtbot, make_window, tmp_path):
    from inspector.qt.app import set_theme
    from inspector.qt.theme import Theme

    store = str(tmp_path / "theme.ini")
    app = QApplication.instance()
    try:
        w = make_window(store=ini_store(store))
        assert w.view_actions.theme_actions["system"].isChecked()
        w.view_actions.theme_actions["dark"].trigger()  # View ▸ Theme ▸ Dark
        assert Theme.for_palette(app.palette()).dark
        qtbot.waitUntil(lambda: w.view.theme.dark, timeout=5000)
        w.close()
        assert Settings(ini_store(store)).get(keys.THEME) == "dark"
        set_theme(app, "system")
        assert not Theme.for_palette(app.palette()).dark
        w2 = make_window(store=ini_store(store))  # a new start: the choice comes back
        assert w2.view_actions.theme_actions["dark"].isChecked() and Theme.for_palette(app.palette()).dark
        w2.view_actions.set_theme("light")
        assert not Theme.for_palette(app.palette()).dark
        assert Settings(ini_store(store)).get(keys.THEME) == "light"
    finally:
        set_theme(app, "system")


def test_laptop_and_small_screenshots_render(qapp, tmp_path):
    from PySide6.QtGui import QImage

    from inspector.qt.screenshots import LAPTOP_SIZE, SMALL_SIZE, render_sizes

    paths = render_sizes(tmp_path, model=False)
    assert [p.name for p in paths] == ["laptop.png", "small.png"]
    for p, size in zip(paths, (LAPTOP_SIZE, SMALL_SIZE), strict=True):
        img = QImage(str(p))
        assert (img.width(), img.height()) == size


def test_the_slider_trace_gets_room_instead_of_squeezing_the_strategy_rows(qtbot, hash_window, open_doc,
                                                                         wait_result):
    """The trace under the size slider appears after the docks were sized (its first scores come
    from a background job): the strategy dock grows for it at a laptop's size, and its rows never
    overlap (they did: the trace drew over the Size and Hard cap rows)."""
    w = hash_window(size=(1280, 800))
    _settled(qtbot, w)
    open_doc(w)
    wait_result(w, gold=True)
    qtbot.waitUntil(lambda: w.strategy_panel.trace_strip is not None and w.strategy_panel.trace_strip.isVisible()
                    and bool(w.trace.trace.scored), timeout=30_000)
    panel = w.strategy_panel
    strip = panel.trace_strip

    def laid_out() -> None:  # the dock grows for the strip on a later turn of the event loop
        assert_unclipped(strip.plot, w, 100, strip.plot.minimumHeight())
        assert_unclipped(strip.caption, w, 100, strip.caption.heightForWidth(strip.caption.width()))
        rows = [panel.control(name) for name in panel.controls]
        rects = [_rect_in(c, w) for c in rows] + [_rect_in(strip, w)]
        for i, a in enumerate(rects):
            for b in rects[i + 1:]:
                assert not a.intersects(b), (a, b)
        for ctl in rows:
            assert_unclipped(ctl, w, 1, ctl.minimumSizeHint().height())

    qtbot.waitUntil(laid_out, timeout=10_000)  # raises the last AssertionError if it never holds


def _public_corpus(tmp_path):
    """The benchmark's five public documents (long file names) as one folder."""
    import shutil
    from pathlib import Path

    folder = tmp_path / "public"
    folder.mkdir()
    root = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "public"
    for md in sorted(root.glob("*/*.md")):
        if md.name != "PROVENANCE.md":
            shutil.copy(md, folder / md.name)
    return folder


def test_a_corpus_in_a_small_window_keeps_the_question_field_and_every_toolbar_action(
        qtbot, hash_window, wait_complete, wait_result, tmp_path):
    """Issue 26: at 1024x700 with a corpus open, the document filter (as wide as its longest file
    name) squeezed the question field to about 115 px, and the toolbar (the Document box shown)
    hid Audit Mode behind »."""
    from PySide6.QtWidgets import QToolBar, QToolButton

    w = hash_window(size=(1024, 700), start=False)
    w.retrieval.set_retriever("bm25")
    _settled(qtbot, w)
    assert w.open_paths([str(_public_corpus(tmp_path))])
    wait_complete(w)
    assert len(w.state.documents) == 5
    tb = w.findChild(QToolBar, "toolbar_main")
    extension = tb.findChild(QToolButton, "qt_toolbar_ext_button")

    def all_actions_shown() -> bool:
        return all(tb.widgetForAction(a) is not None and tb.widgetForAction(a).isVisible()
                   for a in tb.actions() if a.isVisible()) and not (extension and extension.isVisible())

    qtbot.waitUntil(all_actions_shown, timeout=5000)
    audit = tb.widgetForAction(w.audit_mode.action)
    assert_unclipped(audit, w, audit.sizeHint().width())
    assert w.toolbar_fit.icon_only()  # the chunk buttons gave their texts, not the actions their places
    bar = w.question_bar
    assert bar.doc_filter.isVisible()
    assert_unclipped(bar.field, w, 300)
    # A question with hits in the other documents: "+n elsewhere" and the hit count join the row.
    question = "How many days of annual leave do I get?"
    bar.ask(question)
    wait_result(w, question=question)
    qtbot.waitUntil(lambda: bar.elsewhere.isVisible(), timeout=5000)
    qtbot.wait(50)
    assert_unclipped(bar.field, w, 250)
    for part in (bar.k_spin, bar.retriever, bar.heading_filter, bar.doc_filter, bar.elsewhere, bar.mode):
        assert_unclipped(part, w, part.minimumSizeHint().width())
    assert bar.doc_filter.view().minimumWidth() > bar.doc_filter.fontMetrics().horizontalAdvance(
        "sourcegraph_travel_pto.md")  # its list shows whole names
    # Wide again: every button has its text back.
    w.resize(1400, 900)
    qtbot.waitUntil(lambda: not w.toolbar_fit.icon_only(), timeout=5000)
    assert all_actions_shown()
