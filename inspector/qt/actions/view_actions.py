"""How the window looks: View ▸ Theme (System, Light, Dark), View ▸ Reset Layout, Help ▸ Legend.

The theme choice is remembered (`settings_schema.THEME`) and applied at start-up; "System" follows
the desktop's light or dark setting as it changes, the other two stay put. Every colour the views
draw comes from the palette (`theme.Theme.for_palette`), so switching repaints them in place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import QApplication, QMenu, QWidget

from inspector.core.viewmodel import settings_schema as keys
from inspector.qt.actions.make_action import make_action
from inspector.qt.settings import Settings

if TYPE_CHECKING:
    from inspector.qt.panels.legend import Legend

THEME_LABELS = {"system": "&System", "light": "&Light", "dark": "&Dark"}


class ViewActions(QObject):
    """The theme menu, the layout reset and the legend window."""

    def __init__(self, settings: Settings, *, reset_layout: Callable[[], None], parent: QWidget) -> None:
        super().__init__(parent)
        self.settings = settings
        self._parent = parent
        self.legend: Legend | None = None
        self.theme_group = QActionGroup(self)
        self.theme_group.setExclusive(True)
        self.theme_actions: dict[str, QAction] = {}
        for name in keys.THEMES:
            a = make_action(parent, THEME_LABELS[name], lambda _on=False, n=name: self.set_theme(n),
                            tip={"system": "Follow the desktop's light or dark setting",
                                 "light": "Light colours, whatever the desktop uses",
                                 "dark": "Dark colours, whatever the desktop uses"}[name], checkable=True)
            self.theme_group.addAction(a)
            self.theme_actions[name] = a
        self.reset_layout_action = make_action(parent, "&Reset Layout", reset_layout, None,
                                               "Put the panels back where they go for this window size")
        self.legend_action = make_action(parent, "&Legend…", self.show_legend, "F1",
                                         "What the colours, hatches, marks and badges on the text mean")

    @property
    def theme(self) -> str:
        return next((n for n, a in self.theme_actions.items() if a.isChecked()), "system")

    def add_to(self, view_menu: QMenu) -> QMenu:
        """Theme submenu and Reset Layout at the end of the View menu."""
        menu = view_menu.addMenu("&Theme")
        for a in self.theme_actions.values():
            menu.addAction(a)
        view_menu.addAction(self.reset_layout_action)
        return menu

    def restore(self) -> None:
        """The remembered theme, applied (only a forced one changes the palette: "system" is what
        the application set up already)."""
        name = self.settings.get(keys.THEME)
        name = name if name in keys.THEMES else "system"
        self.theme_actions[name].setChecked(True)
        if name != "system":
            self._apply(name)

    def set_theme(self, name: str) -> None:
        """Switch the theme now and remember it."""
        if name not in keys.THEMES:
            raise ValueError(f"unknown theme {name!r} (known: {', '.join(keys.THEMES)})")
        self.theme_actions[name].setChecked(True)
        self.settings.set(keys.THEME, name)
        self._apply(name)

    def _apply(self, name: str) -> None:
        from inspector.qt.palette import set_theme

        app = QApplication.instance()
        if app is not None:
            set_theme(app, name)

    def show_legend(self) -> QWidget:
        from inspector.qt.panels.legend import Legend

        if self.legend is None:
            self.legend = Legend(self._parent)
        self.legend.show()
        self.legend.raise_()
        return self.legend
