"""The one way the window's menu and toolbar actions are made."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QWidget


def make_action(owner: QWidget, text: str, slot: Callable[..., object],
                shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None, tip: str = "",
                checkable: bool = False) -> QAction:
    """An action owned by `owner` and added to it, so its shortcut works even while no menu or
    toolbar showing it is visible; `tip` is both its status tip and its tooltip."""
    a = QAction(text, owner)
    if shortcut is not None:
        a.setShortcut(QKeySequence(shortcut))
    if tip:
        a.setStatusTip(tip)
        a.setToolTip(tip)
    a.setCheckable(checkable)
    a.triggered.connect(slot)
    owner.addAction(a)
    return a
