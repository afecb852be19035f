"""Application entry point for the window (placeholder until the inspector window lands)."""

from __future__ import annotations

import sys
from typing import Sequence


def run_app(argv: Sequence[str]) -> int:
    from PySide6.QtWidgets import QApplication, QLabel

    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    label = QLabel("Chunk Inspector")
    label.resize(640, 400)
    label.show()
    return app.exec()
