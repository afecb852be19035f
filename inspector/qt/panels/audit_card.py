"""A retrieved chunk as a compact card: a two-row header that never clips, the exact text the model
reads (prefix + span, `Chunk.embedded_text`) with the question's words and the gold answer
highlighted, and the three judgements.

The header is painted, not laid out from labels: each row is elided at the width it has (the
heading path in the middle, so both its ends stay readable) and its full text is the tooltip, so a
narrow dock shortens it instead of cutting it off. A card that is not the current one can be
clamped to a few lines (`set_max_lines`) so that several fit on a screen; the current one is shown
whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QFontMetrics,
    QPainter,
    QPen,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTextEdit,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.api import NOT, PARTLY, RELEVANT, Verdict
from inspector.core.viewmodel.offsets import Utf16Map
from inspector.qt.document.hits import answer_color, hit_color
from inspector.qt.theme import Theme

#: Judgement -> (button text, chip text, hue, lightness on light / dark palettes).
JUDGEMENT_STYLE = {
    RELEVANT: ("✓ Relevant", "relevant", 146, 0.36, 0.62),
    PARTLY: ("½ Partly", "partly", 40, 0.42, 0.62),
    NOT: ("✗ Not", "not relevant", 0, 0.46, 0.66),
}


def judgement_color(judgement: str | None, theme: Theme) -> QColor:
    if judgement is None:
        return QColor(theme.muted)
    _b, _c, hue, light, dark = JUDGEMENT_STYLE[judgement]
    return QColor.fromHslF(hue / 360, 0.7, dark if theme.dark else light)


#: Below this header width the judgement buttons show their symbols only.
NARROW_HEADER = 460


class FitText(QTextEdit):
    """Read-only, selectable text whose height follows its content at the current width, or at most
    `max_lines` lines of it.

    QLabel wraps long text by searching for a height-for-width, which took 20-30 ms per card of a
    few hundred words on the GUI thread; a QTextDocument lays the text out once per width."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setLineWrapMode(QTextEdit.LineWrapMode.WidgetWidth)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # the keys belong to the card list
        self.document().setDocumentMargin(0)
        self.document().setUndoRedoEnabled(False)
        self.viewport().setAutoFillBackground(False)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._fit_width = -1
        self.on_fit: Any = None
        """Called after the height changed with the width or the clamp (the card's "more" line)."""
        self.max_lines: int | None = None
        self.hidden_lines = 0
        """Lines cut off by `max_lines` at the current width."""
        self._fit_due = False

    def set_text(self, text: str) -> None:
        if text != self.toPlainText():
            self.setPlainText(text)
            self._fit_width = -1
            self._fit()

    def setPlainText(self, text: str) -> None:  # noqa: N802
        """The text as it is (blank lines included: it is what the model reads), blank lines drawn
        at half height so that they separate without taking a card's few lines."""
        super().setPlainText(text)
        cur = QTextCursor(self.document())
        cur.beginEditBlock()  # one layout pass for all the changes
        block = self.document().begin()
        while block.isValid():
            if not block.text().strip():
                fmt = block.blockFormat()
                fmt.setLineHeight(45, QTextBlockFormat.LineHeightTypes.ProportionalHeight.value)
                cur.setPosition(block.position())
                cur.setBlockFormat(fmt)
            block = block.next()
        cur.endEditBlock()

    def text(self) -> str:
        return self.toPlainText()

    def selectedText(self) -> str:  # noqa: N802  (QLabel's name: cards read either the same way)
        return self.textCursor().selectedText().replace("\u2029", "\n")

    def set_max_lines(self, n: int | None) -> None:
        if n != self.max_lines:
            self.max_lines = n
            self._fit_width = -1
            self._fit()

    def line_bottoms(self) -> list[float]:
        """Bottom (in document pixels) of every line of text, blank lines left out, top to bottom."""
        doc = self.document()
        layout_of_doc = doc.documentLayout()
        out: list[float] = []
        block = doc.begin()
        while block.isValid():
            if block.text().strip():
                top = layout_of_doc.blockBoundingRect(block).top()
                layout = block.layout()
                for i in range(layout.lineCount() if layout is not None else 0):
                    line = layout.lineAt(i)
                    out.append(top + line.y() + line.height())
            block = block.next()
        return out

    def refit(self) -> None:
        self._fit_width = -1
        self._fit()

    def _fit(self) -> None:
        width = self.viewport().width()
        if width <= 0 or width == self._fit_width:
            return
        self._fit_width = width
        doc = self.document()
        doc.setTextWidth(width)
        full = int(doc.size().height() + 0.999)
        height = full
        self.hidden_lines = 0
        if self.max_lines is not None:
            bottoms = self.line_bottoms()
            if len(bottoms) > self.max_lines + 1:  # hiding one line would save nothing
                # Cut after a whole line, never through one.
                height = min(full, int(bottoms[self.max_lines - 1] + 0.999))
                self.hidden_lines = len(bottoms) - self.max_lines
        self.setFixedHeight(height + 2 * self.frameWidth())
        self.verticalScrollBar().setValue(0)
        if self.on_fit is not None:
            self.on_fit()

    def last_visible(self) -> int:
        """UTF-16 position just past the last character in view (all of them when nothing is cut
        off). Read from the document's own line layout, as `_fit` cut it (after `max_lines` lines
        of text): hit-testing with cursorForPosition here, inside a resize, crashed Qt when the
        layout was being redone (a segfault in the suite, reproduced by re-chunking while cards
        showed)."""
        if not self.hidden_lines or self.max_lines is None:
            return len(self.toPlainText())
        seen = 0
        block = self.document().begin()
        while block.isValid():
            if block.text().strip():
                layout = block.layout()
                for i in range(layout.lineCount() if layout is not None else 0):
                    seen += 1
                    if seen == self.max_lines:
                        line = layout.lineAt(i)
                        return block.position() + line.textStart() + line.textLength()
            block = block.next()
        return len(self.toPlainText())

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        # Fit after the event, not inside it: changing this widget's fixed height (and the card's
        # "more" line) while the scroll area is laying its cards out re-entered the layout and
        # crashed Qt (a segfault in QLabel::sizeHint, reproduced by re-chunking while the Reader
        # showed cards). One deferred fit per burst of resizes.
        if not self._fit_due:
            self._fit_due = True
            QTimer.singleShot(0, self, self._deferred_fit)

    def _deferred_fit(self) -> None:
        self._fit_due = False
        self._fit()


@dataclass(frozen=True, slots=True)
class CardFacts:
    """What a card's header says."""

    rank: int
    score: str
    place: str
    """Document and heading path, e.g. "handbook.md › Leave › Germany"."""
    size: str
    """Tokens and word pieces, e.g. "212 tok · 251 wp"."""
    extra: str = ""
    """Anything else worth a glance (matched child, dropped word pieces)."""
    was: int | None = None
    """The retriever's rank before a reranker reordered the hits (None: not reranked)."""

    @property
    def rank_text(self) -> str:
        """"#1", or "#1 · was 7" after reranking."""
        return f"#{self.rank}" + (f" · was {self.was}" if self.was is not None else "")


class CardHeader(QWidget):
    """Two painted rows: rank, score and verdict (with the judgement buttons at the right), then the
    place and the size. Each row is elided to the width it has."""

    BADGE_W = 40

    def __init__(self, card: AuditCard) -> None:
        super().__init__(card)
        self.card = card
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.buttons = QHBoxLayout()
        self.buttons.setContentsMargins(0, 0, 0, 0)
        self.buttons.setSpacing(2)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addStretch(1)
        row.addLayout(self.buttons)
        lay.addLayout(row)
        lay.addStretch(1)

    def row_height(self) -> int:
        fm = QFontMetrics(self.font())
        return max(fm.height() + 6, self.card.relevant.sizeHint().height())

    def sizeHint(self):  # noqa: N802
        from PySide6.QtCore import QSize

        fm = QFontMetrics(self.font())
        return QSize(200, self.row_height() + fm.height() + 4)

    def minimumSizeHint(self):  # noqa: N802
        return self.sizeHint()

    def paintEvent(self, e) -> None:
        card = self.card
        facts, theme, verdict = card.facts, card.theme, card.verdict
        if facts is None or theme is None:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        fm = QFontMetrics(self.font())
        bold = QFont(self.font())
        bold.setBold(True)
        h1 = self.row_height()
        # Row 1: rank badge, score, verdict chip; the buttons sit at the right.
        accent = hit_color(theme)
        badge = QRectF(0, (h1 - fm.height() - 2) / 2, self.BADGE_W, fm.height() + 2)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(accent)
        p.drawRoundedRect(badge, badge.height() / 2, badge.height() / 2)
        p.setFont(bold)
        p.setPen(theme.badge_ink)
        p.drawText(badge, Qt.AlignmentFlag.AlignCenter, f"#{facts.rank}")
        x = badge.right() + 8
        room = self.width() - self.buttons.geometry().width() - 8
        if facts.was is not None:  # reranked: the retriever's rank beside the new one
            was = f"was {facts.was}"
            p.setPen(theme.muted if facts.was == facts.rank else accent)
            p.drawText(QRectF(x, 0, max(0, room - x), h1), Qt.AlignmentFlag.AlignVCenter, was)
            x += QFontMetrics(bold).horizontalAdvance(was) + 10
        p.setFont(self.font())
        p.setPen(theme.text)
        score = f"score {facts.score}"
        p.drawText(QRectF(x, 0, max(0, room - x), h1), Qt.AlignmentFlag.AlignVCenter, score)
        x += fm.horizontalAdvance(score) + 10
        chip = verdict_text(verdict)
        color = judgement_color(verdict.judgement, theme)
        cw = fm.horizontalAdvance(chip) + 12
        if x + cw <= room:
            r = QRectF(x, (h1 - fm.height() - 2) / 2, cw, fm.height() + 2)
            if verdict.how == "judged":
                p.setPen(Qt.PenStyle.NoPen)
                p.setBrush(color)
                p.drawRoundedRect(r, 4, 4)
                p.setPen(theme.badge_ink)
            else:  # inherited or unjudged: outlined, so a person's own judgement stands out
                p.setPen(QPen(color, 1.2, Qt.PenStyle.SolidLine if verdict.judged else Qt.PenStyle.DashLine))
                p.setBrush(Qt.BrushStyle.NoBrush)
                p.drawRoundedRect(r, 4, 4)
                p.setPen(color)
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, chip)
        # Row 2: place (elided in the middle) and size at the right.
        y = h1 + 1
        place, size = self.row2(fm)
        sw = fm.horizontalAdvance(size)
        p.setPen(theme.muted)
        p.drawText(QRectF(max(0, self.width() - sw), y, sw, fm.height()), Qt.AlignmentFlag.AlignVCenter, size)
        p.setPen(theme.heading)
        p.drawText(QRectF(0, y, max(0, self.width() - sw - 12), fm.height()), Qt.AlignmentFlag.AlignVCenter, place)
        p.end()

    def row2(self, fm: QFontMetrics | None = None) -> tuple[str, str]:
        """(place, size) as the second row shows them at the header's width. The counts are never
        elided: "1,536 tok · 1,9…" would be a wrong figure. The extra note goes whole when it does
        not fit beside a little of the place (the tooltip has it); the place gives way first."""
        facts = self.card.facts
        if facts is None:
            return "", ""
        fm = fm or QFontMetrics(self.font())
        size = facts.size
        if facts.extra and fm.horizontalAdvance(f"{size} · {facts.extra}") + 60 <= self.width():
            size = f"{size} · {facts.extra}"
        room = self.width() - fm.horizontalAdvance(size) - 12
        place = fm.elidedText(facts.place, Qt.TextElideMode.ElideMiddle, room) if room > 0 else ""
        return place, size

    def resizeEvent(self, e) -> None:
        super().resizeEvent(e)
        # A narrow dock: the buttons shrink to their symbols (their tooltips say the rest).
        narrow = self.width() < NARROW_HEADER
        for j, b in self.card.buttons.items():
            text = JUDGEMENT_STYLE[j][0].split()[0] if narrow else JUDGEMENT_STYLE[j][0]
            if b.text() != text:
                b.setText(text)

    def mousePressEvent(self, e) -> None:
        self.card.clicked.emit()
        super().mousePressEvent(e)


def verdict_text(verdict: Verdict) -> str:
    if verdict.judgement is None:
        return "unjudged"
    text = JUDGEMENT_STYLE[verdict.judgement][1]
    return text if verdict.how == "judged" else f"{text} (inherited)"


class AuditCard(QFrame):
    """One retrieved chunk, reused from one result to the next (`set_content`)."""

    clicked = Signal()
    """The card was clicked (not a drag that selects text): make it current, show it in the text."""
    judged = Signal(object)
    """RELEVANT, PARTLY, NOT or None, from the card's buttons."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hit: Any = None
        self.facts: CardFacts | None = None
        self.theme: Theme | None = None
        self.verdict = Verdict(None)
        self.current = False
        self.prefix_len = 0
        self.highlights: tuple[tuple[int, int, str], ...] = ()
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setPointSizeF(max(font.pointSizeF(), 9.5))
        self.buttons: dict[str, QToolButton] = {}
        for j in (RELEVANT, PARTLY, NOT):
            b = QToolButton()
            b.setText(JUDGEMENT_STYLE[j][0])
            b.setCheckable(True)
            b.setAutoRaise(True)
            b.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            b.setToolTip({RELEVANT: "This chunk answers the question (1 or R)",
                          PARTLY: "Part of the answer, or needed beside another chunk (2 or P)",
                          NOT: "This chunk does not help answer the question (3 or N)"}[j])
            b.clicked.connect(lambda on, j=j: self.judged.emit(j if on else None))
            self.buttons[j] = b
        self.relevant = self.buttons[RELEVANT]
        self.header = CardHeader(self)
        for j in (RELEVANT, PARTLY, NOT):
            self.header.buttons.addWidget(self.buttons[j])
        self.body = FitText()
        self.body.setFont(font)
        self.body.on_fit = self._update_more
        self._umap = Utf16Map("")
        self.body.viewport().installEventFilter(self)
        self.more = QLabel()
        self.more.setEnabled(False)
        # Wrapped: on one line, "… 8 more lines · the answer is further down (select the card to
        # read it all)" made the card wider than a narrow Reader, and every card's text ran past
        # its right edge (the list does not scroll sideways).
        self.more.setWordWrap(True)
        self.more.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(12, 5, 8, 6)
        lay.setSpacing(3)
        lay.addWidget(self.header)
        lay.addWidget(self.body)
        lay.addWidget(self.more)
        self._press: QPoint | None = None

    # -- content ---------------------------------------------------------------------------------
    def set_content(self, hit: Any, text: str, prefix_len: int, facts: CardFacts, theme: Theme,
                    verdict: Verdict, highlights: Sequence[tuple[int, int, str]]) -> None:
        """`text` is what the model reads (prefix, blank line, span); its first `prefix_len`
        characters are the prefix; `highlights` are (start, end, kind) code points into `text`."""
        self.hit = hit
        self.facts = facts
        self.theme = theme
        self.prefix_len = prefix_len
        self.header.setToolTip(f"{facts.rank_text} · score {facts.score} · {verdict_text(verdict)}"
                               + (f" ({verdict.reason})" if verdict.reason else "")
                               + f"\n{facts.place}\n{facts.size}" + (f" · {facts.extra}" if facts.extra else ""))
        highlights = tuple(highlights)
        if text != self.body.toPlainText() or highlights != self.highlights:
            self.body.setPlainText(text)
            self.highlights = highlights
            self._umap = Utf16Map(text)
            self._format(theme)
            self.body.refit()  # calls _update_more
        self.set_verdict(verdict)
        self.update()

    def _format(self, theme: Theme) -> None:
        umap = self._umap
        cur = QTextCursor(self.body.document())
        cur.beginEditBlock()  # one layout pass for all the formats
        if self.prefix_len:
            fmt = QTextCharFormat()
            fmt.setFontItalic(True)
            fmt.setForeground(theme.heading)
            fmt.setBackground(theme.fill(1))
            cur.setPosition(0)
            cur.setPosition(umap.to_utf16(self.prefix_len), QTextCursor.MoveMode.KeepAnchor)
            cur.mergeCharFormat(fmt)
        answer = QColor(answer_color(theme))
        answer.setAlphaF(0.45)
        for a, b, kind in self.highlights:
            fmt = QTextCharFormat()
            if kind == "answer":
                fmt.setBackground(answer)
            else:
                fmt.setFontWeight(QFont.Weight.Bold)
                fmt.setFontUnderline(True)
                fmt.setUnderlineColor(hit_color(theme))
            cur.setPosition(umap.to_utf16(a))
            cur.setPosition(umap.to_utf16(b), QTextCursor.MoveMode.KeepAnchor)
            cur.mergeCharFormat(fmt)
        cur.endEditBlock()

    def set_verdict(self, verdict: Verdict) -> None:
        self.verdict = verdict
        for j, b in self.buttons.items():
            on = verdict.how == "judged" and verdict.judgement == j
            if b.isChecked() != on:
                b.setChecked(on)
        self.header.update()

    def set_current(self, on: bool) -> None:
        if on != self.current:
            self.current = on
            self.update()

    def set_max_lines(self, n: int | None) -> None:
        self.body.set_max_lines(n)  # calls _update_more when the height changes

    def _update_more(self) -> None:
        hidden = self.body.hidden_lines
        if not hidden:
            self.more.hide()
            return
        answers = [a for a, _b, kind in self.highlights if kind == "answer"]
        below = bool(answers) and self._umap.to_utf16(max(answers)) >= self.body.last_visible()
        self.more.setText(f"… {hidden} more line{'s' if hidden != 1 else ''}"
                          + (" · the answer is further down" if below else "") + " (select the card to read it all)")
        self.more.show()

    # -- reading back (tests, the Reader's old API) -------------------------------------------------
    def shown_text(self) -> str:
        return self.body.toPlainText()

    def selected_text(self) -> str:
        return self.body.selectedText()

    def judgement(self) -> str | None:
        return self.verdict.judgement if self.verdict.how == "judged" else None

    # -- painting and clicks ---------------------------------------------------------------------
    def paintEvent(self, e) -> None:
        super().paintEvent(e)
        theme = self.theme
        if self.hit is None or theme is None:
            return
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        r = QRectF(self.rect()).adjusted(1, 1, -1, -1)
        if self.current:
            p.setPen(QPen(theme.selection, 2.5))
        else:
            p.setPen(QPen(theme.muted, 1.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRoundedRect(r, 5, 5)
        bar = judgement_color(self.verdict.judgement, theme) if self.verdict.judged else hit_color(theme)
        p.fillRect(QRectF(r.left() + 1, r.top() + 2, 5, r.height() - 4), bar)
        p.end()

    def mousePressEvent(self, e) -> None:
        self.clicked.emit()
        super().mousePressEvent(e)

    def eventFilter(self, obj: QObject, e: QEvent) -> bool:
        # A click on the text (not a drag that selects some) makes the card current.
        if e.type() == QEvent.Type.MouseButtonPress:
            self._press = e.position().toPoint()  # type: ignore[attr-defined]
        elif e.type() == QEvent.Type.MouseButtonRelease and self._press is not None:
            moved = (e.position().toPoint() - self._press).manhattanLength()  # type: ignore[attr-defined]
            self._press = None
            if moved < 4 and not self.body.textCursor().hasSelection():
                self.clicked.emit()
        return False


__all__ = ["AuditCard", "CardFacts", "FitText", "judgement_color", "verdict_text", "JUDGEMENT_STYLE"]
