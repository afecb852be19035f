"""View ▸ PDF Page (issue 30): the page of the PDF the current chunk came from, beside its text,
so a user sees what the extraction did to a heading or a table. The chunk's words on the page are
highlighted (one box per line, found by lining up its words with the page's, `api.text_boxes`).

The dock follows the selected chunk (its first page; ◀ ▶ walk the pages, the chunk's own pages
named in the caption). Pages are rendered by pypdfium2 (`api.render_pdf_page`) on a background
runner, latest request wins, and only while the dock is shown; the image is drawn at the dock's
width (re-rendered after a resize settles). A document that is not a PDF, or a PDF that cannot
be rendered, says so in the caption.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QImage, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QLabel, QScrollArea, QToolButton, QVBoxLayout, QWidget

from inspector.qt.document.page_marks import page_of, page_starts
from inspector.qt.runner import JobRunner
from inspector.qt.theme import PDF_CHUNK_FILL, PDF_CHUNK_OUTLINE

if TYPE_CHECKING:
    from inspector.core.api import PageImage

#: A line of the chunk on the page: (x0, top, x1, bottom), fractions of its width and height.
Box = tuple[float, float, float, float]


class PdfPagePanel(QWidget):
    """One rendered PDF page and a caption naming it and the current chunk's pages."""

    def __init__(self, state: Any, parent: QWidget | None = None, *, synchronous: bool = False) -> None:
        super().__init__(parent)
        self.state = state
        self.runner = JobRunner(self, synchronous=synchronous, name="pdf page")
        self.runner.stageReady.connect(self._on_image)
        self.runner.errored.connect(self._on_error)
        self.path = ""
        """The shown document's file when it is a PDF, else ''."""
        self.starts: tuple[int, ...] = ()
        self.pages = 0
        self.page = 0
        """The page asked for (1-based; 0: none)."""
        self.chunk_pages: tuple[int, int] | None = None
        self.rendered: tuple[str, int, int] | None = None
        """(path, page, width in pixels) of the image shown."""
        self._wanted: tuple[str, int, int, str] | None = None
        self.marks: list[tuple[float, float, float, float]] = []
        """Where the current chunk's text lies on the shown page: one box per line, as fractions
        of the page (x0, top, x1, bottom); drawn over the page."""
        self.marked_text = ""
        """The chunk's text on the shown page that `marks` locate."""
        self._page_image: QImage | None = None

        self.caption = QLabel("")
        self.caption.setWordWrap(True)
        self.caption.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.prev_button = QToolButton()
        self.prev_button.setText("◀")
        self.prev_button.setToolTip("Previous page")
        self.prev_button.clicked.connect(lambda: self.show_page(self.page - 1))
        self.next_button = QToolButton()
        self.next_button.setText("▶")
        self.next_button.setToolTip("Next page")
        self.next_button.clicked.connect(lambda: self.show_page(self.page + 1))
        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 2)
        top.addWidget(self.caption, 1)
        top.addWidget(self.prev_button)
        top.addWidget(self.next_button)
        self.image = QLabel()
        self.image.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidget(self.image)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(top)
        layout.addWidget(self.scroll_area, 1)
        self.setMinimumWidth(220)

        self._resize_timer = QTimer(self)
        self._resize_timer.setSingleShot(True)
        self._resize_timer.setInterval(150)
        self._resize_timer.timeout.connect(self._render)

        state.documentChanged.connect(self.set_document)
        state.selectionChanged.connect(lambda _cid: self.follow_chunk())
        self.set_document(state.document)

    # -- what to show ----------------------------------------------------------------------------
    def set_document(self, doc: Any) -> None:
        path = str(getattr(doc, "path", "") or "")
        self.starts = page_starts(doc) if doc is not None else ()
        self.path = path if path.lower().endswith(".pdf") and self.starts else ""
        meta = getattr(doc, "meta", None) or {}
        self.pages = int(meta.get("pages") or len(self.starts)) if self.path else 0
        self.chunk_pages = None
        self.page = 1 if self.path else 0
        self.rendered = None
        self.marks, self.marked_text, self._page_image = [], "", None
        self.image.clear()
        self._update_caption()
        self._render()

    def follow_chunk(self) -> None:
        """Show the first page of the selected chunk (nothing changes when none is selected)."""
        chunk = self.state.selected_chunk()
        if chunk is None or not self.path:
            self.chunk_pages = None
            self._update_caption()
            self._render()  # drops the marks
            return
        first = page_of(self.starts, chunk.start)
        last = page_of(self.starts, max(chunk.start, chunk.end - 1))
        self.chunk_pages = (first, last)
        self.show_page(first)

    def show_page(self, page: int) -> None:
        if not self.path:
            return
        self.page = min(max(page, 1), max(self.pages, 1))
        self._update_caption()
        self._render()

    def _update_caption(self) -> None:
        if not self.path:
            doc = self.state.document
            self.caption.setText("No PDF open: the page view shows the PDF a chunk came from."
                                 if doc is None or not str(doc.name).lower().endswith(".pdf")
                                 else f"{doc.name} has no page map (opened before it was a PDF?)")
            self.prev_button.setEnabled(False)
            self.next_button.setEnabled(False)
            return
        text = f"Page {self.page} of {self.pages}"
        if self.chunk_pages is not None:
            a, b = self.chunk_pages
            cid = self.state.selection
            text += f" · chunk {cid} on page {a}" if a == b else f" · chunk {cid} on pages {a}–{b}"
        self.caption.setText(text)
        self.prev_button.setEnabled(self.page > 1)
        self.next_button.setEnabled(self.page < self.pages)

    # -- rendering -------------------------------------------------------------------------------
    def _target_width(self) -> int:
        ratio = self.devicePixelRatioF() or 1.0
        # Room for a vertical scroll bar, so a page taller than the dock never scrolls sideways.
        area = self.scroll_area
        room = area.width() - 2 * area.frameWidth() - area.verticalScrollBar().sizeHint().width()
        return max(int((room - 4) * ratio), 200)

    def chunk_text_on_page(self) -> str:
        """The selected chunk's text that lies on the shown page ('' when none does)."""
        chunk = self.state.selected_chunk()
        doc = self.state.document
        if chunk is None or doc is None or not self.path or not self.starts or self.page < 1:
            return ""
        lo = self.starts[self.page - 1] if self.page - 1 < len(self.starts) else len(doc.text)
        hi = self.starts[self.page] if self.page < len(self.starts) else len(doc.text)
        return doc.text[max(chunk.start, lo):min(chunk.end, hi)]

    def _render(self) -> None:
        if not self.path or not self.isVisible():
            return  # rendered when shown (showEvent)
        wanted = (self.path, self.page, self._target_width(), self.chunk_text_on_page())
        if wanted == self._wanted or (self.rendered == wanted[:3] and self.marked_text == wanted[3]):
            return
        self._wanted = wanted
        path, page, width, text = wanted
        need_image = self.rendered != wanted[:3] or self._page_image is None

        def job(cancelled, progress):
            from inspector.core.api import render_pdf_page, text_boxes

            im = render_pdf_page(path, page, width) if need_image else None
            yield wanted, im, text_boxes(path, page, text) if text.strip() else []

        self.runner.submit(job)

    def _on_image(self, _rid: int, stage: object) -> None:
        # What `_render`'s job yields: what was asked for, the image (None: the one shown), the boxes.
        wanted, im, boxes = cast("tuple[tuple[str, int, int, str], PageImage | None, list[Box]]", stage)
        self._wanted = None
        if wanted[0] != self.path:
            return
        if im is not None:
            self._page_image = QImage(im.pixels, im.width, im.height, im.stride, QImage.Format.Format_RGB32).copy()
        if self._page_image is None:
            return
        self.marks, self.marked_text = list(boxes), wanted[3]
        pixmap = QPixmap.fromImage(self._marked(self._page_image, self.marks))
        pixmap.setDevicePixelRatio(self.devicePixelRatioF() or 1.0)
        self.image.setPixmap(pixmap)
        self.rendered = wanted[:3]
        if self.marks:
            top = self.marks[0][1] * self._page_image.height() / (self.devicePixelRatioF() or 1.0)
            bar = self.scroll_area.verticalScrollBar()
            # The chunk's first line near the top, once the new image is laid out.
            QTimer.singleShot(0, self, lambda: bar.setValue(max(int(top) - 24, 0)))
        if wanted[1] != self.page or abs(wanted[2] - self._target_width()) > 2 \
                or wanted[3] != self.chunk_text_on_page():
            self._render()  # the user moved on while it rendered

    @staticmethod
    def _marked(page: QImage, boxes: list[tuple[float, float, float, float]]) -> QImage:
        """The page with a translucent highlight over each line of the chunk's words."""
        if not boxes:
            return page
        out = page.copy()
        w, h = out.width(), out.height()
        pad = max(w / 300, 1.5)
        painter = QPainter(out)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(PDF_CHUNK_OUTLINE, max(w / 500, 1.0)))
        painter.setBrush(PDF_CHUNK_FILL)
        for x0, top, x1, bottom in boxes:
            painter.drawRect(QRectF(x0 * w - pad, top * h - pad, (x1 - x0) * w + 2 * pad, (bottom - top) * h + 2 * pad))
        painter.end()
        return out

    def _on_error(self, _rid: int, message: str) -> None:
        self._wanted = None
        self.image.clear()
        self.caption.setText(f"Cannot show page {self.page}: {message}")

    def showEvent(self, e) -> None:
        super().showEvent(e)
        self._render()

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        if self.rendered is not None:
            self._resize_timer.start()

    def shutdown(self, timeout_ms: int = 30_000) -> None:
        self._resize_timer.stop()
        self.runner.shutdown(timeout_ms)


def install_pdf_page(window: Any) -> PdfPagePanel:
    """View ▸ PDF Page: the panel in a dock on the right, hidden until asked for (it renders only
    while shown), its toggle in the View menu and in View ▸ Panels."""
    panel = PdfPagePanel(window.state, window,
                         synchronous=bool(getattr(window.retrieval.runner, "synchronous", False)))
    dock = window.add_panel(panel, "PDF Page", Qt.DockWidgetArea.RightDockWidgetArea)
    detail = getattr(window, "detail_dock", None)
    layout = getattr(window, "dock_layout", None)
    if detail is not None and layout is not None:
        # A tab beside the embedded text, whatever the arrangement: the page gets the column's height.
        layout.tab_with(detail, dock)
    dock.hide()
    action = dock.toggleViewAction()
    action.setText("&PDF Page")
    action.setShortcut("Ctrl+Shift+P")
    action.setToolTip("The page of the PDF the current chunk came from, as the PDF draws it")

    def reveal() -> None:
        """Show the dock as the front tab beside the embedded text (unless the user has arranged
        the docks: then where they put it). A hidden tab comes back on its own when shown."""
        dock.show()
        if (detail is not None and layout is not None and getattr(layout, "auto", True) and not dock.isFloating()
                and detail not in window.tabifiedDockWidgets(dock)):
            window.tabifyDockWidget(detail, dock)
        dock.raise_()

    panel.reveal = reveal  # type: ignore[attr-defined]
    action.triggered.connect(lambda checked: reveal() if checked else None)
    menu = getattr(window, "view_menu", None)
    if menu is not None:
        menu.addAction(action)
    window.pdf_page_dock = dock
    return panel
