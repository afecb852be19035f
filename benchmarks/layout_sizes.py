"""How much room the window gives its text, question field and gold panel at common window sizes.

Opens the sample handbook (its gold set loads with it) offscreen at each size, pins the default
strategy as the baseline, switches to fixed_chars 500/0 so the fixed/broke list is filled, and
prints the size of each part that used to be clipped, and whether any part of it is hidden.
Answers with the deterministic HashEmbedder (the layout does not depend on the model).

    .venv/bin/python benchmarks/layout_sizes.py [WxH ...]     (default: 1024x700 1280x800 1400x900 1920x1200)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import ROOT  # noqa: E402,F401  (puts the project on sys.path)

SIZES = ((1024, 700), (1280, 800), (1400, 900), (1920, 1200))


def main(argv: list[str]) -> int:
    from PySide6.QtCore import QPoint

    from inspector.core.embedding.embedder import HashEmbedder
    from inspector.qt.actions.file_actions import sample_path
    from inspector.qt.app import apply_palette, create_app
    from inspector.qt.controllers.chunk_jobs import ChunkRunner
    from inspector.qt.main_window import MainWindow
    from inspector.qt.settings import ini_store

    app = create_app()
    apply_palette(app, "light")

    def settle(rounds: int = 10) -> None:
        for _ in range(rounds):
            app.processEvents()
            time.sleep(0.01)

    sizes = [tuple(int(v) for v in a.split("x")) for a in argv] or list(SIZES)
    print(f"{'window':>10}  {'layout':7}  {'text':>9}  {'question':>8}  {'gold panel':>10}  {'pin':>5}  "
          f"{'list':>7}  {'table':>9}  hidden")
    with tempfile.TemporaryDirectory() as tmp:
        for width, height in sizes:
            w = MainWindow(ini_store(f"{tmp}/{width}.ini"), runner=ChunkRunner(synchronous=True), debounce_ms=0,
                           synchronous_retrieval=True, embedder=HashEmbedder(), settle_ms=0)
            w.resize(width, height)
            w.show()
            settle()
            w.open_paths([str(sample_path())])
            w.start_model()
            settle(30)
            w.retrieval.pin_baseline()
            w.state.set_strategy("fixed_chars")
            w.controller.submit_now()
            settle(40)
            g = w.gold_panel
            parts = {"text": w.view, "question": w.question_bar.field, "gold": g, "pin": g.pin_button,
                     "clear": g.clear_button, "list": g.changes.viewport(), "table": g.view.viewport()}
            hidden = [name for name, p in parts.items()
                      if not p.isVisible() or p.visibleRegion().boundingRect() != p.rect()
                      or not w.rect().contains(p.mapTo(w, QPoint(0, 0)))]
            print(f"{width:>5}x{height:<4}  {'compact' if w.dock_layout.compact else 'wide':7}  "
                  f"{w.view.width():>4}x{w.view.height():<4}  {w.question_bar.field.width():>8}  "
                  f"{g.width():>5}x{g.height():<4}  {g.pin_button.width():>5}  "
                  f"{g.changes.viewport().width():>3}x{g.changes.viewport().height():<3}  "
                  f"{g.view.viewport().width():>4}x{g.view.viewport().height():<4}  {', '.join(hidden) or '-'}")
            w.close()
            settle()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
