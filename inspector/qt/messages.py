"""What the window tells the user: one line in the status bar, details on demand, never a modal loop.

Every problem reaches the user as the same one line the CLI prints (`InputError.one_line()`), in
the status bar, coloured by kind. Longer details (a traceback, the list of skipped files, the
pieces an external splitter could not place) sit behind a "Details…" button. A failure the user
must notice (a file that could not be opened) also pops up a message box, shown non-modal with
`show()`: `exec()` would run a nested event loop that blocks the caller (and every test), and
even a window-modal `open()` would lock the window, which must stay usable with the previous
document still there.

The last error and the popup are readable (`last_error`, `box`), so tests check exactly what the
user sees without clicking anything.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QLabel, QMessageBox, QStatusBar, QToolButton, QWidget

from inspector.qt import theme

ERROR, WARNING, INFO = "error", "warning", "info"

_COLORS = {ERROR: theme.BAD, WARNING: theme.WARNING, INFO: ""}


class MessageCenter(QObject):
    """The status bar's message line, its Details… button and the (reused) popup."""

    shown = Signal(str, str, str)
    """(kind, text, details) of every message put in the status bar ("info" with "" clears)."""
    errorShown = Signal(str, str)
    """(text, details) of every error."""

    def __init__(self, label: QLabel, status_bar: QStatusBar, parent: QWidget) -> None:
        super().__init__(parent)
        self._parent = parent
        self.label = label
        # Messages quote file names and pieces of documents: shown as typed, never as rich text
        # (a preview holding `<img src=...>` must not become an image).
        label.setTextFormat(Qt.TextFormat.PlainText)
        self.details_button = QToolButton()
        self.details_button.setText("Details…")
        self.details_button.setAutoRaise(True)
        self.details_button.setToolTip("Show the full message")
        self.details_button.hide()
        self.details_button.clicked.connect(self.show_details)
        status_bar.addWidget(self.details_button)
        self.box: QMessageBox | None = None
        """The popup (created on first use and reused, so problems never stack up windows)."""
        self.kind = INFO
        self.text = ""
        self.details = ""
        self.tag = ""
        """Who posted the current message (lets an owner clear only its own message)."""
        self.last_error = ""
        """The last error shown (stays after the status bar moves on)."""
        self.last_details = ""

    # -- posting -------------------------------------------------------------------------------
    def error(self, text: str, details: str = "", *, popup: bool = False, tag: str = "") -> None:
        """A problem, in red; `popup` also shows it in a non-modal message box."""
        self.last_error, self.last_details = text, details
        self._show(ERROR, text, details, tag)
        self.errorShown.emit(text, details)
        if popup:
            self.popup(text, details)

    def warning(self, text: str, details: str = "", *, tag: str = "") -> None:
        """Something the user should know that did not fail (e.g. chunks that could not be placed)."""
        self._show(WARNING, text, details, tag)

    def info(self, text: str, details: str = "", *, tag: str = "") -> None:
        self._show(INFO, text, details, tag)

    def clear(self, tag: str | None = None) -> None:
        """Empty the status line (only if `tag` posted the current message, when given)."""
        if tag is None or tag == self.tag:
            self._show(INFO, "", "", "")

    def _show(self, kind: str, text: str, details: str, tag: str) -> None:
        self.kind, self.text, self.details, self.tag = kind, text, details, tag
        color = _COLORS.get(kind, "")
        self.label.setStyleSheet(f"color: {color};" if color else "")
        self.label.setText(text)
        self.label.setToolTip(_plain_tooltip(details or text) if kind != INFO or details else "")
        self.details_button.setVisible(bool(details) and details != text)
        self.shown.emit(kind, text, details)

    # -- popup ----------------------------------------------------------------------------------
    def popup(self, text: str, details: str = "", kind: str = ERROR) -> QMessageBox:
        """Show `text` (and `details`, folded) in the reused message box, without blocking."""
        box = self.box
        if box is None:
            box = self.box = QMessageBox(self._parent)
            box.setWindowTitle("Chunk Inspector")
            box.setTextFormat(Qt.TextFormat.PlainText)
            box.setStandardButtons(QMessageBox.StandardButton.Ok)
            box.setWindowModality(Qt.WindowModality.NonModal)
        box.setIcon(QMessageBox.Icon.Critical if kind == ERROR
                    else QMessageBox.Icon.Warning if kind == WARNING else QMessageBox.Icon.Information)
        box.setText(text)
        box.setDetailedText(details if details and details != text else "")
        box.show()
        box.raise_()
        return box

    def show_details(self) -> None:
        """The Details… button: the current message with its details in the popup."""
        if self.text or self.details:
            self.popup(self.text, self.details, self.kind)


def _plain_tooltip(text: str) -> str:
    """A tooltip that shows `text` literally (Qt renders tooltips that look like HTML as HTML)."""
    import html

    return "<p style='white-space:pre-wrap'>" + html.escape(text) + "</p>"
