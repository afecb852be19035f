"""The Reader: a question's top-k chunks in rank order, exactly as the model would receive them.

Each card shows what a pipeline would put in the prompt for one rank: the context prefix (when the
strategy embeds one) and the chunk's text (the parent's, for parent_child), i.e.
`chunk.embedded_text(doc, with_prefix=...)`. Each can be marked relevant or not; a question with a
relevant chunk (or with answer text selected in a card) can be saved to the gold set.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QFontDatabase
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QPushButton, QScrollArea, QSizePolicy, QToolButton,
                               QVBoxLayout, QWidget)

from inspector.core.gold import GoldQuestion
from inspector.qt.document_view import format_score, hit_color
from inspector.qt.question_bar import mode_text
from inspector.qt.retrieval_controller import RetrievalController
from inspector.qt.retrieval_worker import RetrievalResult
from inspector.qt.state import InspectorState
from inspector.qt.theme import Theme


class ReaderCard(QFrame):
    """One retrieved chunk: rank, score, relevance buttons, then prefix and text."""

    relevanceChanged = Signal(object)
    """True (relevant), False (not relevant) or None (unmarked)."""

    def __init__(self, hit: Any, text_prefix: str, body: str, facts: str, theme: Theme,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hit = hit
        self.setObjectName("readerCard")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        accent = hit_color(theme)
        self.setStyleSheet(f"#readerCard {{ border: 1px solid {theme.muted.name(QColor.NameFormat.HexArgb)};"
                           f" border-left: 4px solid {accent.name()}; border-radius: 4px; }}")
        fg = "#ffffff" if not theme.dark else "#1b1b1b"
        self.badge = QLabel(f"#{hit.rank}")
        self.badge.setStyleSheet(f"background: {accent.name()}; color: {fg}; border-radius: 8px;"
                                 " padding: 1px 7px; font-weight: 700;")
        self.facts = QLabel(facts)
        self.facts.setTextFormat(Qt.TextFormat.PlainText)
        self.facts.setStyleSheet(f"color: {theme.muted.name(QColor.NameFormat.HexArgb)};")
        self.relevant = QToolButton(text="✓ Relevant")
        self.relevant.setCheckable(True)
        self.relevant.setToolTip("This chunk answers the question")
        self.irrelevant = QToolButton(text="✗ Not relevant")
        self.irrelevant.setCheckable(True)
        self.irrelevant.setToolTip("This chunk does not answer the question")
        for b in (self.relevant, self.irrelevant):
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            b.setAutoRaise(True)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.badge)
        top.addWidget(self.facts, 1)
        top.addWidget(self.relevant)
        top.addWidget(self.irrelevant)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 9.5))
        self.prefix = QLabel(text_prefix)
        self.prefix.setTextFormat(Qt.TextFormat.PlainText)
        self.prefix.setWordWrap(True)
        self.prefix.setFont(font)
        prefix_bg = theme.fill(1).name()
        self.prefix.setStyleSheet(f"font-style: italic; background: {prefix_bg}; padding: 2px 4px;")
        self.prefix.setVisible(bool(text_prefix))
        self.prefix.setToolTip("Context prefix embedded before the chunk's text")
        self.body = QLabel(body)
        self.body.setTextFormat(Qt.TextFormat.PlainText)
        self.body.setWordWrap(True)
        self.body.setFont(font)
        self.body.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.prefix.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        for label in (self.prefix, self.body):
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                          | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(8, 6, 8, 8)
        lay.setSpacing(4)
        lay.addLayout(top)
        lay.addWidget(self.prefix)
        lay.addWidget(self.body)
        self.relevant.toggled.connect(lambda on: self._toggled(self.relevant, on))
        self.irrelevant.toggled.connect(lambda on: self._toggled(self.irrelevant, on))

    def shown_text(self) -> str:
        """What the card shows, read back from its labels: prefix, a blank line, the text."""
        if self.prefix.isVisibleTo(self) and self.prefix.text():
            return f"{self.prefix.text()}\n\n{self.body.text()}"
        return self.body.text()

    def relevance(self) -> bool | None:
        if self.relevant.isChecked():
            return True
        if self.irrelevant.isChecked():
            return False
        return None

    def set_relevance(self, value: bool | None) -> None:
        self.relevant.setChecked(value is True)
        self.irrelevant.setChecked(value is False)

    def selected_text(self) -> str:
        return self.body.selectedText() or self.prefix.selectedText()

    def _toggled(self, button: QToolButton, on: bool) -> None:
        other = self.irrelevant if button is self.relevant else self.relevant
        if on and other.isChecked():
            other.blockSignals(True)
            other.setChecked(False)
            other.blockSignals(False)
        self.relevanceChanged.emit(self.relevance())


class Reader(QWidget):
    """The question's hits, best first, as the model receives them."""

    saveRequested = Signal(object)
    """A GoldQuestion built from the marks (the window appends it to the gold file)."""

    def __init__(self, controller: RetrievalController, state: InspectorState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.state = state
        self.result: RetrievalResult | None = None
        self.cards: list[ReaderCard] = []
        self._marks: dict[tuple, bool] = {}
        """Relevance by (question, chunk key, start, end): kept while the same chunk comes back."""
        self.header = QLabel("Ask a question to read what the retriever returns.")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setContentsMargins(6, 4, 6, 4)
        self.list = QWidget()
        self.list_layout = QVBoxLayout(self.list)
        self.list_layout.setContentsMargins(6, 4, 6, 4)
        self.list_layout.setSpacing(8)
        self.list_layout.addStretch(1)
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(self.list)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setEnabled(False)
        self.save_button = QPushButton("Save to Gold Set…")
        self.save_button.setToolTip("Append the question to the gold set: the answer is the text selected in a "
                                    "card, else the span of the chunks marked relevant")
        self.save_button.setEnabled(False)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(6, 2, 6, 6)
        bottom.addWidget(self.hint, 1)
        bottom.addWidget(self.save_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addWidget(self.header)
        lay.addWidget(self.scroll, 1)
        lay.addLayout(bottom)
        self.save_button.clicked.connect(self._save)
        controller.resultReady.connect(self.show_result)
        controller.cleared.connect(lambda: self.show_result(None))
        controller.questionChanged.connect(lambda _q: self._marks.clear())
        self._update_save()

    # -- content ---------------------------------------------------------------------------------
    def show_result(self, result: RetrievalResult | None) -> None:
        self.result = result
        for card in self.cards:
            card.setParent(None)
            card.deleteLater()
        self.cards = []
        if result is None or not result.request.question or result.document is not self.state.document:
            self.header.setText("Ask a question to read what the retriever returns.")
            self._update_save()
            return
        req = result.request
        doc = result.document
        theme = Theme.for_palette(self.palette())
        label, _tip = mode_text(result, self.controller)
        q = req.question.replace("&", "&amp;").replace("<", "&lt;")
        self.header.setText(f"<b>Top {len(result.hits)}</b> for “{q}” · {result.retriever} · {label}")
        annotated = self.state.result
        for h in result.hits:
            c = h.chunk
            prefix = c.prefix if req.with_prefix and c.prefix else ""
            body = doc.text[c.start:c.end]
            facts = [f"chunk {c.id}" + (f" ({c.role})" if c.role != "chunk" else ""),
                     f"score {format_score(h.score)}", f"{c.token_count} tokens"]
            if h.matched is not c:
                facts.append(f"matched child {h.matched.id}")
            full = annotated.chunk(c.id) if annotated is not None and annotated.document is doc else None
            if full is not None and (full.start, full.end) == (c.start, c.end) and full.embed_dropped:
                facts.append(f"{full.embed_dropped} word pieces past the model's limit")
            card = ReaderCard(h, prefix, body, " · ".join(facts), theme)
            card.set_relevance(self._marks.get(self._mark_key(h)))
            card.relevanceChanged.connect(lambda value, hit=h: self._on_mark(hit, value))
            self.list_layout.insertWidget(self.list_layout.count() - 1, card)
            card.show()
            self.cards.append(card)
        self._update_save()

    def texts(self) -> list[str]:
        """The cards' texts in rank order, as shown."""
        return [c.shown_text() for c in self.cards]

    def relevance(self) -> dict[int, bool | None]:
        return {c.hit.rank: c.relevance() for c in self.cards}

    def set_relevance(self, rank: int, value: bool | None) -> None:
        for c in self.cards:
            if c.hit.rank == rank:
                c.set_relevance(value)

    def selected_text(self) -> str:
        return next((t for t in (c.selected_text() for c in self.cards) if t.strip()), "")

    # -- gold ------------------------------------------------------------------------------------
    def gold_question(self) -> GoldQuestion | None:
        """The question with the answer marked: selected card text, else the relevant chunks' spans."""
        r = self.result
        if r is None or not r.request.question:
            return None
        doc = r.document
        selected = " ".join(self.selected_text().split())
        if selected:
            return GoldQuestion(r.request.question, answers=(selected,), source=doc.doc_id)
        spans = sorted({(c.hit.chunk.start, c.hit.chunk.end) for c in self.cards if c.relevance() is True})
        if not spans:
            return None
        return GoldQuestion(r.request.question, source=doc.doc_id, references=tuple(spans))

    def _mark_key(self, hit: Any) -> tuple:
        q = self.result.request.question if self.result is not None else ""
        return (q, hit.chunk.key, hit.chunk.start, hit.chunk.end)

    def _on_mark(self, hit: Any, value: bool | None) -> None:
        key = self._mark_key(hit)
        if value is None:
            self._marks.pop(key, None)
        else:
            self._marks[key] = value
        self._update_save()

    def _update_save(self) -> None:
        has_question = self.result is not None and bool(self.result.request.question)
        relevant = any(c.relevance() is True for c in self.cards)
        self.save_button.setEnabled(has_question)
        if not has_question:
            self.hint.setText("")
        elif relevant:
            self.hint.setText("Saving keeps the relevant chunks' spans as the reference.")
        else:
            self.hint.setText("Mark a relevant chunk, or select the answer in a card, to save the question.")

    def _save(self) -> None:
        q = self.gold_question()
        if q is None:
            self.hint.setText("Mark a relevant chunk, or select the answer text in a card, first.")
            return
        self.saveRequested.emit(q)
