"""The selected chunk exactly as it would be embedded: the context prefix, set apart, then the span.

Text past the point where the embedder stops reading is shown struck through and greyed, so the
loss is visible in the very text the model gets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from inspector.qt.controllers.state import InspectorState
from inspector.qt.theme import FLAG_ORDER, Theme

if TYPE_CHECKING:
    from inspector.core.api import Chunk, Document


class DetailPane(QWidget):
    """Header with the chunk's numbers, then the embedded text."""

    def __init__(self, state: InspectorState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.header = QLabel("Select a chunk in the text or the table.")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setContentsMargins(6, 4, 6, 4)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.text.document().setUndoRedoEnabled(False)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 10.0))
        self.text.setFont(font)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.header)
        lay.addWidget(self.text, 1)
        state.selectionChanged.connect(lambda _cid: self.refresh())
        state.chunksChanged.connect(lambda _r: self.refresh())
        state.withPrefixChanged.connect(lambda _on: self.refresh())

    def changeEvent(self, e) -> None:
        from PySide6.QtCore import QEvent

        super().changeEvent(e)
        if e.type() == QEvent.Type.PaletteChange:
            self.refresh()  # the prefix tint and the struck-out tail follow the palette

    def shown_text(self) -> str:
        """The plain text in the pane (tests compare it with `Chunk.embedded_text`)."""
        return self.text.toPlainText()

    def refresh(self) -> None:
        c = self.state.selected_chunk()
        doc = self.state.document
        if c is None or doc is None:
            self.header.setText("Select a chunk in the text or the table.")
            self.text.setPlainText("")
            return
        self._show(c, doc)

    def _show(self, c: Chunk, doc: Document) -> None:
        theme = Theme.for_palette(self.palette())
        with_prefix = self.state.with_prefix
        facts = [f"<b>Chunk {c.id}</b>" + (f" ({c.role})" if c.role != "chunk" else ""),
                 f"{c.token_count} tokens", f"{c.end - c.start:,} characters",
                 f"offsets {c.start:,}–{c.end:,}"]
        from inspector.qt.panels.chunk_table import page_label

        pages = page_label(c)  # converted PDFs: the source page(s)
        if pages:
            facts.append(("pages " if "–" in pages else "page ") + pages)
        if c.embed_tokens is not None:
            pieces = f"{c.embed_tokens} word pieces"
            if c.embed_dropped:
                color = theme.flag("truncated_by_embedder").name()
                pieces = f"<span style='color:{color}'>{pieces}, {c.embed_dropped} dropped</span>"
            facts.append(pieces)
        flags = [theme.flag_label(f) for f in FLAG_ORDER if f in c.flags]
        if flags:
            facts.append("<span style='color:{}'>{}</span>".format(
                theme.flag(next(f for f in FLAG_ORDER if f in c.flags)).name(), ", ".join(flags)))
        self.header.setText(" · ".join(facts))

        self.text.setPlainText("")
        cursor = QTextCursor(self.text.document())
        plain = QTextCharFormat()
        prefix_fmt = QTextCharFormat()
        prefix_fmt.setFontItalic(True)
        muted = QColor(theme.text)
        muted.setAlphaF(0.7)
        prefix_fmt.setForeground(muted)
        prefix_bg = QColor(theme.fill(1))
        prefix_fmt.setBackground(prefix_bg)
        prefix, body, cut = c.embedded_parts(doc, with_prefix=with_prefix)  # what was sent
        view = c.meta.get("embed_view", "raw") if c.meta else "raw"
        if view != "raw":
            facts.append(f"embedding view: {view}")
            self.header.setText(" · ".join(facts))
        if prefix:
            cursor.insertText(prefix, prefix_fmt)
            cursor.insertText("\n\n", plain)
        if cut is None:
            cursor.insertText(body, plain)
        else:
            cursor.insertText(body[:cut], plain)
            lost = QTextCharFormat()
            lost.setFontStrikeOut(True)
            lost.setForeground(muted)
            lost.setBackground(QColor(theme.tail))
            lost.setToolTip("The embedder stops reading before this text")
            cursor.insertText(body[cut:], lost)
        self.text.moveCursor(QTextCursor.MoveOperation.Start)
