"""File ▸ Export ▸ Settings as Code…: the current strategy and parameters as a program for LangChain,
LlamaIndex, chonkie or this project's API, to read, copy or save.

The program text comes from `inspector.core.chunking.snippets.settings_code` (the same as
`chunk-inspector code`); a library with no faithful equivalent gets its one-line reason instead of
code, and Copy/Save are disabled.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.api import TARGETS, NoEquivalent, atomic_write_text, settings_code
from inspector.qt.theme import WARNING

TARGET_NAMES = {"langchain": "LangChain", "llamaindex": "LlamaIndex", "chonkie": "chonkie",
                "inspector": "Chunk Inspector (this project's API)"}


class CodeDialog(QDialog):
    """The settings as code for a chosen library."""

    def __init__(self, strategy: str, params: Mapping[str, Any], parent: QWidget | None = None, *,
                 report_done: Callable[[str], None] | None = None, start_dir: str = "") -> None:
        super().__init__(parent)
        self.setWindowTitle("Settings as Code")
        self.strategy = strategy
        self.params = dict(params)
        self.report_done = report_done
        self.start_dir = start_dir
        self.target = QComboBox()
        for t in TARGETS:
            self.target.addItem(TARGET_NAMES[t], t)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.code = QPlainTextEdit()
        self.code.setReadOnly(True)
        self.code.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.code.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.copy_button = QPushButton("Copy")
        self.save_button = QPushButton("Save…")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.addButton(self.copy_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.addButton(self.save_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(QLabel("Library:"))
        row.addWidget(self.target, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addWidget(self.note)
        lay.addWidget(self.code, 1)
        lay.addWidget(buttons)
        self.resize(860, 620)
        self.target.currentIndexChanged.connect(lambda _i: self.refresh())
        self.copy_button.clicked.connect(self.copy)
        self.save_button.clicked.connect(lambda: self.save_as())
        self.refresh()

    def set_target(self, target: str) -> None:
        self.target.setCurrentIndex(TARGETS.index(target))

    def refresh(self) -> None:
        target = self.target.currentData()
        try:
            text = settings_code(self.strategy, self.params, target)
            ok = True
            self.note.setText(f"Run it as <code>python chunks.py DOCUMENT</code>: it prints one JSON line per "
                              f"chunk of <b>{self.strategy}</b>.")
        except (NoEquivalent, ValueError) as exc:
            text = f"# {exc}\n"
            ok = False
            self.note.setText(f"<span style='color:{WARNING}'>{exc}</span>")
        self.code.setPlainText(text)
        self.copy_button.setEnabled(ok)
        self.save_button.setEnabled(ok)

    def text(self) -> str:
        return self.code.toPlainText() if self.copy_button.isEnabled() else ""

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text())
        if self.report_done is not None:
            self.report_done("Copied the settings as code")

    def save_as(self, path: str | os.PathLike[str] | None = None) -> bool:
        if not self.text():
            return False
        if path is None:
            start = os.path.join(self.start_dir, f"chunks_{self.strategy}_{self.target.currentData()}.py")
            path, _ = QFileDialog.getSaveFileName(self, "Save settings as code", start, "Python (*.py)")
            if not path:
                return False
        atomic_write_text(path, self.text())
        if self.report_done is not None:
            self.report_done(f"Saved the settings as code to {path}")
        return True
