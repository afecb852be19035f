"""Find in the document (Ctrl+F): a bar under the text, Enter for next, Shift+Enter for previous."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut, QTextDocument
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QToolButton,
    QWidget,
)

from inspector.qt.theme import NOT_FOUND_FIELD


class FindBar(QWidget):
    """Searches a QPlainTextEdit; wraps around at the ends."""

    closed = Signal()

    def __init__(self, editor: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.field = QLineEdit()
        self.field.setPlaceholderText("Find in document")
        self.field.setClearButtonEnabled(True)
        self.case = QCheckBox("Match case")
        self.prev_button = QToolButton()
        self.prev_button.setText("▲")
        self.prev_button.setToolTip("Previous match (Shift+Enter)")
        self.next_button = QToolButton()
        self.next_button.setText("▼")
        self.next_button.setToolTip("Next match (Enter)")
        self.status = QLabel()
        self.status.setEnabled(False)
        close = QToolButton()
        close.setText("✕")
        close.setToolTip("Close (Esc)")
        close.setAutoRaise(True)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(6, 3, 6, 3)
        lay.addWidget(QLabel("Find:"))
        lay.addWidget(self.field, 1)
        lay.addWidget(self.prev_button)
        lay.addWidget(self.next_button)
        lay.addWidget(self.case)
        lay.addWidget(self.status)
        lay.addWidget(close)
        self.field.returnPressed.connect(self.find_next)
        self.field.textEdited.connect(lambda _t: self.find_next(from_start_of_selection=True))
        self.next_button.clicked.connect(self.find_next)
        self.prev_button.clicked.connect(self.find_previous)
        close.clicked.connect(self.close_bar)
        QShortcut(QKeySequence(Qt.Key.Key_Escape), self, self.close_bar)
        QShortcut(QKeySequence("Shift+Return"), self.field, self.find_previous)

    def open_bar(self) -> None:
        self.show()
        selected = self.editor.textCursor().selectedText()
        if selected and "\u2029" not in selected:
            self.field.setText(selected)
        self.field.setFocus()
        self.field.selectAll()

    def close_bar(self) -> None:
        self.hide()
        self.editor.setFocus()
        self.closed.emit()

    def _flags(self, backward: bool = False) -> QTextDocument.FindFlag:
        flags = QTextDocument.FindFlag(0)
        if self.case.isChecked():
            flags |= QTextDocument.FindFlag.FindCaseSensitively
        if backward:
            flags |= QTextDocument.FindFlag.FindBackward
        return flags

    def find_next(self, *_args, from_start_of_selection: bool = False) -> bool:
        return self._find(backward=False, restart=from_start_of_selection)

    def find_previous(self) -> bool:
        return self._find(backward=True)

    def _find(self, *, backward: bool, restart: bool = False) -> bool:
        needle = self.field.text()
        if not needle:
            self.status.setText("")
            return False
        doc = self.editor.document()
        cursor = self.editor.textCursor()
        if restart:
            cursor.setPosition(cursor.selectionStart())
        found = doc.find(needle, cursor, self._flags(backward))
        if found.isNull():  # wrap around
            start = self.editor.textCursor()
            start.movePosition(start.MoveOperation.End if backward else start.MoveOperation.Start)
            found = doc.find(needle, start, self._flags(backward))
        if found.isNull():
            self.status.setText("not found")
            self.field.setStyleSheet(f"background: {NOT_FOUND_FIELD};")
            return False
        self.status.setText("")
        self.field.setStyleSheet("")
        self.editor.setTextCursor(found)
        self.editor.centerCursor()
        return True
