"""What the window's tables share: the flat table model's plumbing and the row-table view.

Each table (chunks, gold questions, documents, the audit summary) is a `QAbstractTableModel` over
an immutable tuple of core results, reset in one step (STYLE.md lesson 11). What differs is the
rows and what a cell shows (`data`); the row and column counts, the header with its tooltips,
"is this index one of my rows" and "every cell changed" were written once per table and are
written here once. `row_table` makes the view they are shown in: whole rows selected one at a
time, one line a row, no row numbers.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QAbstractItemModel, QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QTableView, QWidget


class TableModel(QAbstractTableModel):
    """A flat table with fixed columns: subclasses say how many rows (`row_count`) and what a
    cell shows (`data`); the columns are `columns`, their header tooltips `header_tips`."""

    columns: tuple[str, ...] = ()
    """Header titles, one per column."""
    header_tips: tuple[str, ...] = ()
    """A tooltip per column title (none where empty)."""

    def row_count(self) -> int:
        raise NotImplementedError

    def is_row(self, index: QModelIndex | QPersistentModelIndex) -> bool:
        """Whether `index` is a valid index on one of the rows (what `data` answers for)."""
        return index.isValid() and 0 <= index.row() < self.row_count()

    def all_changed(self) -> None:
        """Every cell may show something else (the rows are the same)."""
        n = self.row_count()
        if n:
            self.dataChanged.emit(self.index(0, 0), self.index(n - 1, len(self.columns) - 1))

    def row_changed(self, row: int) -> None:
        self.dataChanged.emit(self.index(row, 0), self.index(row, len(self.columns) - 1))

    # -- Qt model API ------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self.row_count()

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(self.columns):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.columns[section]
            if role == Qt.ItemDataRole.ToolTipRole and section < len(self.header_tips):
                return self.header_tips[section]
        return None


def bold_font() -> QFont:
    """The application font, bold (a row or cell that stands out)."""
    font = QFont()
    font.setBold(True)
    return font


def row_table(model: QAbstractItemModel, parent: QWidget | None = None) -> QTableView:
    """A read-only table view over `model`: one row selected at a time, whole, one line high
    (text does not wrap), no row numbers."""
    view = QTableView(parent)
    view.setModel(model)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setWordWrap(False)
    view.verticalHeader().hide()
    view.verticalHeader().setDefaultSectionSize(view.fontMetrics().height() + 6)
    return view


__all__ = ["TableModel", "bold_font", "row_table"]
