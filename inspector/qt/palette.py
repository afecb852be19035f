"""The application's palette: light, dark, or following the desktop (View ▸ Theme).

Kept apart from `app` (which imports the window) so that the window's actions can switch the
palette without an import cycle. PySide6 is imported inside the functions: importing this module
costs nothing before the window is built.
"""

from __future__ import annotations

import os


def dark_palette():
    """A Fusion palette for dark mode (used when the platform reports dark but gives no palette)."""
    from PySide6.QtGui import QColor, QPalette

    p = QPalette()
    role, group = QPalette.ColorRole, QPalette.ColorGroup
    colors = {
        role.Window: "#2b2d30", role.WindowText: "#dfe1e5", role.Base: "#1e1f22", role.AlternateBase: "#26282b",
        role.ToolTipBase: "#3c3f41", role.ToolTipText: "#dfe1e5", role.Text: "#dfe1e5", role.Button: "#34363a",
        role.ButtonText: "#dfe1e5", role.BrightText: "#ff6b6b", role.Highlight: "#2f65ca",
        role.HighlightedText: "#ffffff", role.Link: "#6aa0ff", role.PlaceholderText: "#8a8d93",
        role.Mid: "#3c3f41", role.Dark: "#1a1b1d", role.Light: "#4a4d52", role.Shadow: "#101112",
    }
    for r, c in colors.items():
        p.setColor(r, QColor(c))
    for r in (role.Text, role.WindowText, role.ButtonText):
        p.setColor(group.Disabled, r, QColor("#7d8087"))
    return p


_CHOICE = {"theme": "system"}
"""The user's View ▸ Theme choice for this process: "system", "light" or "dark"."""


def theme_choice() -> str:
    return _CHOICE["theme"]


def set_theme(app, choice: str) -> str:
    """Apply the user's theme choice ("system" follows the desktop from now on, "light" and "dark"
    stay whatever the desktop does); returns the scheme applied. Unknown choices mean "system"."""
    choice = choice if choice in ("system", "light", "dark") else "system"
    _CHOICE["theme"] = choice
    return apply_palette(app, None if choice == "system" else choice)


def apply_palette(app, scheme: str | None = None) -> str:
    """Follow the system's light/dark setting (or force `scheme` = "light"/"dark"); returns which."""
    from PySide6.QtCore import Qt

    if scheme is None and _CHOICE["theme"] in ("light", "dark"):
        scheme = _CHOICE["theme"]  # the user chose one in View ▸ Theme
    if scheme is None:
        forced = os.environ.get("CHUNK_INSPECTOR_THEME", "").lower()
        scheme = forced if forced in ("light", "dark") else None
    if scheme is None:
        scheme = "dark" if app.styleHints().colorScheme() == Qt.ColorScheme.Dark else "light"
    if scheme == "dark":
        app.setPalette(dark_palette())
    else:
        app.setPalette(app.style().standardPalette())
    return scheme
