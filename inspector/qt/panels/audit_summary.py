"""The audit's live summary: a row per audited question (judged precision@k, first relevant rank,
unjudged chunks, the ranking as letters), the figures over all of them, and the two ways out:
export the summary (Markdown or CSV, written by the core) and turn the marks into gold questions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core import api
from inspector.core.api import pct
from inspector.qt.panels.table_model import TableModel, bold_font, row_table

if TYPE_CHECKING:
    from inspector.core.api import AuditSummary, QuestionSummary

COLUMNS = ("Question", "Judged P@k", "First relevant", "Unjudged", "Ranking")
_TIPS = ("An audited question (select it to read its chunks)",
         "Mean gain of the judged chunks among the top k: relevant = 1, partly = 0.5, not = 0 "
         "(unjudged chunks left out)",
         "Rank of the first chunk judged relevant (≤: an unjudged chunk above it could come first)",
         "Chunks among the top k nobody judged yet (new text after a settings change)",
         "Verdicts best rank first: R relevant, P partly, N not relevant, ? unjudged")


def overall_text(summary: AuditSummary) -> str:
    """One line of figures over every audited question."""
    if not summary.questions:
        return "Nothing judged yet: mark a chunk (1/2/3) and the figures appear here."
    mean = summary.mean_first_relevant
    n_prec = sum(1 for s in summary.questions if s.precision is not None)
    return (f"<b>Judged precision@k {pct(summary.precision, 0, '%')}</b> (mean of {n_prec} question(s); relevant = 1, "
            f"partly = 0.5) · {summary.with_relevant}/{len(summary.questions)} with a relevant chunk"
            + (f" (first at rank {mean:.1f} on average)" if mean is not None else "")
            + f" · {summary.unjudged} unjudged")


class SummaryModel(TableModel):
    """The summary's questions, replaced in one step."""

    columns = COLUMNS
    header_tips = _TIPS

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: tuple[QuestionSummary, ...] = ()
        self.current = ""

    def set_summary(self, summary: AuditSummary, current: str = "") -> None:
        self.beginResetModel()
        self.rows = summary.questions
        self.current = current
        self.endResetModel()

    def row_count(self) -> int:
        return len(self.rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_row(index):
            return None
        s = self.rows[index.row()]
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return (s.question, pct(s.precision, 0, '%'), api.first_relevant_text(s), str(s.unjudged), s.letters())[col]
        if role == Qt.ItemDataRole.ToolTipRole:
            return s.question if col == 0 else _TIPS[col]
        if role == Qt.ItemDataRole.FontRole and s.question == self.current:
            return bold_font()
        if role == Qt.ItemDataRole.TextAlignmentRole and col in (1, 2, 3):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class SummaryBox(QWidget):
    """The table, the overall line and the two buttons."""

    questionChosen = Signal(str)
    exportRequested = Signal()
    goldRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = SummaryModel(self)
        self.view = row_table(self.model)
        self.view.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        h = self.view.horizontalHeader()
        h.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for c in range(1, len(COLUMNS)):
            h.setSectionResizeMode(c, QHeaderView.ResizeMode.ResizeToContents)
        self.overall = QLabel()
        self.overall.setWordWrap(True)
        self.overall.setTextFormat(Qt.TextFormat.RichText)
        self.export_button = QPushButton("Export Summary…")
        self.export_button.setToolTip("Write the summary as Markdown (.md) or CSV (.csv)")
        self.gold_button = QPushButton("Add Marked as Gold Questions")
        self.gold_button.setToolTip("Each audited question with a chunk judged relevant goes into the gold set, its "
                                    "relevant spans as references (a question already there is updated, not repeated)")
        # The overall line keeps a row of its own: beside the buttons it wrapped over the table's
        # rows in a narrow window (1024x700). Two rows of the table at least stay in view.
        self.view.setMinimumHeight(self.view.horizontalHeader().sizeHint().height()
                                   + 2 * self.view.verticalHeader().defaultSectionSize() + 4)
        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addStretch(1)
        buttons.addWidget(self.export_button)
        buttons.addWidget(self.gold_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(6, 2, 6, 4)
        lay.setSpacing(3)
        lay.addWidget(self.view, 1)
        lay.addWidget(self.overall)
        lay.addLayout(buttons)
        self.view.clicked.connect(self._on_click)

    def set_summary(self, summary: AuditSummary, current: str = "") -> None:
        self.model.set_summary(summary, current)
        text = overall_text(summary)
        if summary.not_ranked:
            text += f" · {len(summary.not_ranked)} audited question(s) not ranked under these settings"
        self.overall.setText(text)
        self.export_button.setEnabled(bool(summary.questions))

    def _on_click(self, index: QModelIndex) -> None:
        if index.isValid() and 0 <= index.row() < len(self.model.rows):
            self.questionChosen.emit(self.model.rows[index.row()].question)


__all__ = ["SummaryBox", "SummaryModel", "overall_text"]
