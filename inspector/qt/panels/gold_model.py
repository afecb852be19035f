"""The gold set as a table: one row per question, with its outcome under the current chunks.

A `QAbstractTableModel` over immutable tuples (the questions, the current report's results, the
baseline's), reset in one step when the question list changes and updated in place (dataChanged)
when only the outcomes do, so the selection survives every re-chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import (
    QModelIndex,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QBrush, QColor

from inspector.qt import theme
from inspector.qt.panels.table_model import TableModel

if TYPE_CHECKING:
    from inspector.core.api import GoldQuestion

COLUMNS = ("#", "Question", "Answer", "Hit", "Rank", "Diagnosis", "Baseline")
COL_LINE, COL_QUESTION, COL_ANSWER, COL_HIT, COL_RANK, COL_DIAGNOSIS, COL_BASELINE = range(len(COLUMNS))
SORT_ROLE = Qt.ItemDataRole.UserRole
ROW_ROLE = Qt.ItemDataRole.UserRole + 1
"""The source row (the question's position in the gold set)."""
MISS_ROLE = Qt.ItemDataRole.UserRole + 2

HIT_COLOR = QColor(theme.GOOD)
MISS_COLOR = QColor(theme.BAD)

_TIPS = ("Line in the gold file", "The question sent to the retriever", "Expected answer (or reference span)",
         "Whether an answer lies in one of the top k chunks", "Rank of the first chunk holding the answer",
         "Why a miss missed", "Change against the pinned baseline")


def answer_text(q: GoldQuestion) -> str:
    if q.answers:
        return " / ".join(q.answers)
    if q.references:
        return ", ".join(f"span {a:,}–{b:,}" for a, b in q.references)
    return ""


class GoldTableModel(TableModel):
    """Rows are gold questions; outcome columns fill in once a report exists."""

    columns = COLUMNS
    header_tips = _TIPS

    appearanceChanged = Signal()
    """Only the colours changed (results went stale or fresh): views repaint, nothing re-sorts."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._questions: tuple[GoldQuestion, ...] = ()
        self._results: tuple[Any, ...] = ()
        """QuestionResult per question, or () before any report."""
        self._baseline: tuple[Any, ...] = ()
        self._stale = False

    # -- data ------------------------------------------------------------------------------------
    @property
    def questions(self) -> tuple[GoldQuestion, ...]:
        return self._questions

    @property
    def results(self) -> tuple[Any, ...]:
        return self._results

    @property
    def stale(self) -> bool:
        return self._stale

    def set_questions(self, questions: Sequence[GoldQuestion]) -> None:
        self.beginResetModel()
        self._questions = tuple(questions)
        self._results = ()
        self._baseline = ()
        self.endResetModel()

    def set_results(self, results: Sequence[Any] | None, baseline: Sequence[Any] | None = None) -> None:
        """Outcomes aligned with the questions (None or a wrong length clears them)."""
        results = tuple(results or ())
        baseline = tuple(baseline or ())
        n = len(self._questions)
        self._results = results if len(results) == n else ()
        self._baseline = baseline if len(baseline) == n and self._results else ()
        self.all_changed()

    def set_stale(self, stale: bool) -> None:
        if stale != self._stale:
            self._stale = stale
            # Only the colour changes, so no dataChanged: a sorting proxy takes any dataChanged as
            # a reason to filter and sort every row again (a Python call per row and comparison,
            # each waiting for the GIL while a worker chunks: 0.8 s of frozen window at every
            # slider move in the soak). Views repaint on `appearanceChanged` instead.
            self.appearanceChanged.emit()

    def result(self, row: int) -> Any:
        return self._results[row] if 0 <= row < len(self._results) else None

    # -- Qt model API ------------------------------------------------------------------------------
    def row_count(self) -> int:
        return len(self._questions)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not self.is_row(index):
            return None
        read = _READERS.get(int(role))
        if read is None:
            return None
        row = index.row()
        return read(self, row, index.column(), self._questions[row], self.result(row),
                    self._baseline[row] if self._baseline else None)

    # One reader per role: (row, column, question, its result or None, the baseline's or None).
    def _display(self, row: int, col: int, q: GoldQuestion, r: Any, b: Any) -> str | None:
        if col == COL_LINE:
            return str(q.line or row + 1)
        if col == COL_QUESTION:
            return q.question
        if col == COL_ANSWER:
            return answer_text(q)
        if r is None:
            return ""
        if col == COL_HIT:
            return "hit" if r.hit else "miss"
        if col == COL_RANK:
            return str(r.rank) if r.rank else "–"
        if col == COL_DIAGNOSIS:
            return r.diagnosis.message if r.diagnosis is not None else ""
        if col == COL_BASELINE:
            return _change(b, r)
        return None

    def _sort_key(self, row: int, col: int, q: GoldQuestion, r: Any, b: Any) -> int | str:
        if col == COL_LINE:
            return q.line or row + 1
        if col in (COL_QUESTION, COL_ANSWER):
            return (q.question if col == COL_QUESTION else answer_text(q)).lower()
        if r is None:
            return 0
        if col == COL_HIT:
            return int(r.hit)
        if col == COL_RANK:
            return r.rank or 10_000
        if col == COL_DIAGNOSIS:
            return r.diagnosis.kind if r.diagnosis is not None else ""
        if col == COL_BASELINE:
            return _change(b, r)
        return 0

    def _row(self, row: int, _col: int, _q: GoldQuestion, _r: Any, _b: Any) -> int:
        return row

    def _missed(self, _row: int, _col: int, _q: GoldQuestion, r: Any, _b: Any) -> bool:
        return r is not None and not r.hit

    def _foreground(self, _row: int, col: int, _q: GoldQuestion, r: Any, b: Any) -> QBrush | None:
        if r is None:
            return None
        if self._stale and col in (COL_HIT, COL_RANK, COL_DIAGNOSIS, COL_BASELINE):
            return QBrush(QColor(theme.QUIET))
        if col == COL_HIT:
            return QBrush(HIT_COLOR if r.hit else MISS_COLOR)
        if col == COL_BASELINE:
            change = _change(b, r)
            if change == "fixed":
                return QBrush(HIT_COLOR)
            if change == "broke":
                return QBrush(MISS_COLOR)
        return None

    def _alignment(self, _row: int, col: int, _q: GoldQuestion, _r: Any, _b: Any) -> int | None:
        if col in (COL_LINE, COL_RANK):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if col in (COL_HIT, COL_BASELINE):
            return int(Qt.AlignmentFlag.AlignCenter)
        return None

    def _tooltip(self, _row: int, col: int, q: GoldQuestion, r: Any, b: Any) -> str | None:
        if col == COL_QUESTION:
            answer = answer_text(q)
            return (q.question + (f"\nAnswer: {answer}" if answer else "")
                    + ("\n⚠ " + "\n⚠ ".join(q.warnings) if q.warnings else ""))
        if col == COL_ANSWER:
            return answer_text(q) or None
        if col == COL_DIAGNOSIS and r is not None and r.diagnosis is not None:
            return r.diagnosis.message
        if col == COL_HIT and r is not None:
            return "retrieved: " + (", ".join(k.rsplit("#", 1)[1] for k in r.retrieved) or "nothing")
        if col == COL_BASELINE and b is not None:
            return f"baseline: {'hit' if b.hit else 'miss'}" + (f" at rank {b.rank}" if b.rank else "")
        return None


#: `GoldTableModel.data`'s reader of each role it answers (any other role: None).
_READERS: dict[int, Callable[[GoldTableModel, int, int, GoldQuestion, Any, Any], Any]] = {
    int(Qt.ItemDataRole.DisplayRole): GoldTableModel._display,
    int(SORT_ROLE): GoldTableModel._sort_key,
    int(ROW_ROLE): GoldTableModel._row,
    int(MISS_ROLE): GoldTableModel._missed,
    int(Qt.ItemDataRole.ForegroundRole): GoldTableModel._foreground,
    int(Qt.ItemDataRole.TextAlignmentRole): GoldTableModel._alignment,
    int(Qt.ItemDataRole.ToolTipRole): GoldTableModel._tooltip,
}


def _change(before: Any, after: Any) -> str:
    if before is None or after is None:
        return ""
    if not before.hit and after.hit:
        return "fixed"
    if before.hit and not after.hit:
        return "broke"
    return "same"


class GoldFilterProxy(QSortFilterProxyModel):
    """Sorts on `SORT_ROLE`; optionally keeps misses only."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.misses_only = False
        self.setSortRole(SORT_ROLE)

    def set_misses_only(self, on: bool) -> None:
        self.misses_only = bool(on)
        self.invalidateFilter()

    def filterAcceptsRow(self, source_row: int, source_parent: QModelIndex | QPersistentModelIndex) -> bool:
        if not self.misses_only:
            return True
        model = self.sourceModel()
        return bool(model.data(model.index(source_row, 0, source_parent), MISS_ROLE))
