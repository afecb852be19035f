"""Colours come from the theme (issue 27): no hard-coded colour in the window outside its theme modules.

`inspector/qt/theme.py` holds the window's colours and `inspector/qt/palette.py` the application's
dark palette; any other module that writes a hex colour, a `QColor(r, g, b)` or a named
`Qt.GlobalColor` (transparent aside: it is the absence of a colour) fails here with file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import inspector.qt

QT_DIR = Path(inspector.qt.__file__).parent
THEME_MODULES = {"theme.py", "palette.py"}
COLOUR = re.compile(r"""["']#[0-9a-fA-F]{3,8}\b|QColor\(\s*\d|Qt\.GlobalColor\.(?!transparent\b)\w+|\brgba?\(\s*\d""")


def hard_coded_colours(text: str) -> list[tuple[int, str]]:
    return [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1) if COLOUR.search(line)]


def test_the_pattern_catches_each_kind_of_colour_literal():
    for line in ('c = QColor("#a1b2c3")', "c = '#fff'", "c = QColor(200, 30, 30)",
                 "p.fill(Qt.GlobalColor.red)", 'css = "color: rgb(10, 20, 30)"'):
        assert hard_coded_colours(line), line
    for line in ("img.fill(Qt.GlobalColor.transparent)", "c = theme.warning", "# see issue #123456"):
        assert not hard_coded_colours(line), line


def test_no_colour_literal_outside_the_theme():
    found = [f"{path.relative_to(QT_DIR)}:{n}: {line}"
             for path in sorted(QT_DIR.rglob("*.py")) if path.name not in THEME_MODULES
             for n, line in hard_coded_colours(path.read_text(encoding="utf-8"))]
    assert not found, "colours belong in inspector/qt/theme.py:\n" + "\n".join(found)
