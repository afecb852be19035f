"""View ▸ PDF Page and Settings ▸ PDF Backend (issue 30): the page the selected chunk came from is
rendered off the GUI thread and follows the selection; the backend choice is remembered and
changes what a PDF opened afterwards becomes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor

from inspector.core.documents import pdf_convert
from inspector.core.viewmodel.settings_schema import PDF_BACKEND
from inspector.qt.settings import Settings
from tests.pdf_fixture import grid, make_layout_pdf, text_lines

BODY = ["Employees in Germany get fourteen weeks of parental leave, paid in full by",
        "the company, and may take it in up to three parts within the first three years."]


def _pdf(tmp_path):
    page1 = [("text", 72, 60, 18, "B", "Leave handbook")] + text_lines(72, 100, BODY)
    page2 = ([("text", 72, 60, 14, "B", "Refund limits")] + text_lines(72, 90, BODY)
             + grid(72, 300, [150, 200], [["Item", "Limit"], ["Hotel", "150 EUR per night"],
                                          ["Meals", "40 EUR per day"]]))
    path = tmp_path / "handbook.pdf"
    path.write_bytes(make_layout_pdf([page1, page2]))
    return path


def _dark_rows(pixmap) -> set[int]:
    """Rows (in tenths of the height) holding a dark pixel: where the page has ink."""
    img = pixmap.toImage()
    rows = set()
    for y in range(0, img.height(), 3):
        for x in range(0, img.width(), 3):
            if QColor(img.pixel(x, y)).lightness() < 100:
                rows.add(10 * y // img.height())
                break
    return rows


@dataclass
class OpenedPdf:
    window: Any
    path: Path
    result: Any
    """The complete chunking of the PDF."""
    shown: list[tuple[str, str, str]]
    """Messages the window showed while opening it."""

    @property
    def panel(self) -> Any:
        return self.window.pdf_page

    def chunk_with(self, words: str) -> Any:
        text = self.window.state.document.text
        return next(c for c in self.result.chunks if words in text[c.start:c.end])


@pytest.fixture
def opened_pdf(make_window, open_doc, tmp_path) -> OpenedPdf:
    """The two-page handbook PDF opened in a 1400 x 900 window, its PDF Page dock not yet shown."""
    w = make_window(size=(1400, 900))
    path = _pdf(tmp_path)
    shown: list[tuple[str, str, str]] = []
    w.messages.shown.connect(lambda *m: shown.append(m))
    return OpenedPdf(w, path, open_doc(w, path), shown)


def test_the_page_of_the_selected_chunk_is_rendered_and_follows_it(qtbot, opened_pdf):
    w, path, shown, panel = opened_pdf.window, opened_pdf.path, opened_pdf.shown, opened_pdf.panel
    assert w.state.document.kind == "markdown"
    assert any(text.startswith("handbook.pdf: Built-in PDF structure: 2 headings") for _kind, text, _d in shown)
    assert not w.pdf_page_dock.isVisible() and panel.rendered is None  # nothing rendered while hidden
    w.pdf_page_dock.show()
    qtbot.waitUntil(lambda: panel.rendered is not None and panel.rendered[1] == 1, timeout=10_000)
    first = _dark_rows(panel.image.pixmap())
    on_two = opened_pdf.chunk_with("Hotel")
    w.state.select(on_two.id)
    qtbot.waitUntil(lambda: panel.rendered is not None and panel.rendered[1] == 2, timeout=10_000)
    assert panel.rendered[0] == str(path.resolve())
    assert "Page 2 of 2" in panel.caption.text() and f"chunk {on_two.id} on page 2" in panel.caption.text()
    second = _dark_rows(panel.image.pixmap())
    # Page 1 has ink only in its top fifth; page 2's table (300-354 pt of 792) in its fourth tenth.
    assert first and max(first) <= 1 and 3 in second, (first, second)
    panel.prev_button.click()
    qtbot.waitUntil(lambda: panel.rendered[1] == 1, timeout=10_000)
    assert not panel.prev_button.isEnabled() and panel.next_button.isEnabled()


def test_a_markdown_document_has_no_page_to_show(qtbot, make_window, open_doc):
    w = make_window()
    open_doc(w)
    w.pdf_page_dock.show()
    assert w.pdf_page.path == "" and "No PDF open" in w.pdf_page.caption.text()
    assert not w.pdf_page.next_button.isEnabled()


def test_the_pdf_backend_setting_is_remembered_and_used(qtbot, make_window, open_doc, settings_store, tmp_path):
    path = _pdf(tmp_path)
    w = make_window()
    names = [a.data() for a in w.pdf_backend_actions.menu.actions()]
    assert names == ["builtin", "plain", "docling"]
    assert w.pdf_backend_actions.actions["builtin"].isChecked()
    try:
        w.pdf_backend_actions.actions["plain"].trigger()
        assert Settings(settings_store).get(PDF_BACKEND) == "plain"
        open_doc(w, path)
        assert w.state.document.kind == "text" and "# Leave handbook" not in w.state.document.text
        w.close()
        pdf_convert.set_pdf_backend("builtin")
        again = make_window()  # the same store: the choice comes back
        assert again.pdf_backend_actions.actions["plain"].isChecked() and pdf_convert.pdf_backend() == "plain"
        if not pdf_convert.docling_available():
            docling = again.pdf_backend_actions.actions["docling"]
            assert not docling.isEnabled() and "pip install" in docling.toolTip()
    finally:
        pdf_convert.set_pdf_backend("builtin")


def _highlighted_rows(pixmap) -> set[int]:
    """Rows (in hundredths of the height) where the highlight's orange-yellow tint shows."""
    img = pixmap.toImage()
    rows = set()
    for y in range(0, img.height(), 2):
        for x in range(0, img.width(), 4):
            c = QColor(img.pixel(x, y))
            if c.red() > 200 and c.green() > 150 and c.blue() < 200 and c.red() - c.blue() > 60:
                rows.add(100 * y // img.height())
                break
    return rows


def test_the_chunks_words_are_marked_on_the_page(qtbot, opened_pdf):
    # The chunk holding the table is marked where the table is drawn (300-354 pt of 792: 38-45 %
    # of the page's height), and nowhere near the page's heading; another chunk moves the marks.
    w, panel = opened_pdf.window, opened_pdf.panel
    w.pdf_page_dock.show()
    table = opened_pdf.chunk_with("Hotel")
    w.state.select(table.id)
    qtbot.waitUntil(lambda: panel.rendered is not None and panel.rendered[1] == 2 and bool(panel.marks), timeout=10_000)
    assert "Hotel" in panel.marked_text
    tops = [round(m[1], 2) for m in panel.marks]
    assert any(0.37 <= t <= 0.46 for t in tops), panel.marks
    rows = _highlighted_rows(panel.image.pixmap())
    assert rows & set(range(37, 46)), rows
    # Unmarked before: the same page drawn for a chunk elsewhere has no highlight there.
    first = opened_pdf.chunk_with("Leave handbook")
    w.state.select(first.id)
    qtbot.waitUntil(lambda: panel.rendered is not None and panel.rendered[1] == 1 and bool(panel.marks), timeout=10_000)
    assert all(m[1] < 0.2 for m in panel.marks), panel.marks
    assert not _highlighted_rows(panel.image.pixmap()) & set(range(30, 60))


def test_dock_tab_titles_read_whole_in_a_small_window(qtbot, make_window, open_doc, tmp_path):
    # At 1024 x 700 the left column holds five tabs (Strategy ... PDF Page); Qt's default cut
    # every title to a few letters. Each tab is now as wide as its title, with scroll arrows.
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QTabBar

    w = make_window(size=(1024, 700))
    open_doc(w, _pdf(tmp_path))
    w.pdf_page.reveal()
    qtbot.waitUntil(lambda: w.pdf_page_dock.isVisible(), timeout=5_000)
    # The column as narrow as a user may drag it (or as the Redbook screenshot had it).
    w.resizeDocks([w.pdf_page_dock], [280], Qt.Orientation.Horizontal)
    qtbot.waitUntil(lambda: w.pdf_page_dock.width() < 320, timeout=5_000)
    bars = [b for b in w.findChildren(QTabBar) if b.isVisible() and b.count() > 4]
    assert bars
    for bar in bars:
        for i in range(bar.count()):
            need = bar.fontMetrics().horizontalAdvance(bar.tabText(i))
            assert bar.tabRect(i).width() >= need, (bar.tabText(i), bar.tabRect(i).width(), need)


def test_docling_missing_is_one_line_in_the_window(qtbot, make_window, settings_store):
    # A stored "docling" on a machine without the package: the window opens on the built-in
    # backend and says why in one line; choosing docling anyway is a one-line error.
    if pdf_convert.docling_available():
        pytest.skip("docling is installed here: the missing-package message cannot show")
    Settings(settings_store).set(PDF_BACKEND, "docling")
    try:
        w = make_window()
        actions = w.pdf_backend_actions
        assert actions.actions["builtin"].isChecked() and pdf_convert.pdf_backend() == "builtin"
        assert actions.note == ("PDF backend: docling is not installed: pip install 'chunk-inspector[docling]'; "
                                "PDFs open with the built-in backend")
        actions.set_backend("docling")
        assert w.messages.last_error == "PDF backend: docling is not installed: pip install 'chunk-inspector[docling]'"
        assert actions.actions["builtin"].isChecked() and pdf_convert.pdf_backend() == "builtin"
    finally:
        pdf_convert.set_pdf_backend("builtin")
