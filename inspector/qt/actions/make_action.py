"""The one way the window's menu and toolbar actions are made: single actions, a submenu of
remembered exclusive choices, and the Settings menu they go in."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QWidget


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


def choice_menu(owner: QWidget, title: str, names: Iterable[str], labels: Mapping[str, str],
                on_choose: Callable[[str], object],
                tips: Mapping[str, str] | None = None) -> tuple[QMenu, QActionGroup, dict[str, QAction]]:
    """A submenu of exclusive, checkable choices, one per name in order: its action's text is
    `labels[name]`, its data the name, its tooltip `tips[name]`; choosing it calls `on_choose(name)`.
    Returns the menu, the exclusive group and the actions by name (the caller checks the stored one)."""
    menu = QMenu(title, owner)
    menu.setToolTipsVisible(tips is not None)
    group = QActionGroup(owner)
    group.setExclusive(True)
    actions: dict[str, QAction] = {}
    for name in names:
        a = QAction(labels[name], owner)
        a.setCheckable(True)
        a.setData(name)
        if tips is not None and name in tips:
            a.setToolTip(tips[name])
        a.triggered.connect(lambda _checked=False, n=name: on_choose(n))
        group.addAction(a)
        menu.addAction(a)
        actions[name] = a
    return menu, group, actions


def settings_menu(window: QMainWindow) -> QMenu:
    """The window's Settings menu: the one on its menu bar, else a new one inserted before Help
    (or at the end when there is no Help menu)."""
    mb = window.menuBar()
    for a in mb.actions():
        if a.text().replace("&", "") == "Settings" and a.menu() is not None:
            found = a.menu()
            if isinstance(found, QMenu):
                return found
    menu = QMenu("&Settings", window)
    help_action = next((a for a in mb.actions() if a.text().replace("&", "") == "Help"), None)
    if help_action is not None:
        mb.insertMenu(help_action, menu)
    else:
        mb.addMenu(menu)
    return menu
