"""The core never imports Qt: every module under inspector.core is imported in a fresh interpreter."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import inspector.core

ROOT = Path(__file__).resolve().parents[2]


def _core_modules() -> list[str]:
    names = ["inspector.core"]
    for info in pkgutil.walk_packages(inspector.core.__path__, "inspector.core."):
        names.append(info.name)
    return names


def test_core_modules_are_found():
    mods = _core_modules()
    assert "inspector.core.viewmodel.segments" in mods and "inspector.core.chunking.markdown" in mods


def test_importing_core_does_not_import_pyside6():
    mods = _core_modules()
    code = "import importlib, sys\n" + "".join(f"importlib.import_module({m!r})\n" for m in mods) + (
        "from inspector.core.chunking.registry import strategies\nstrategies()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'shiboken6', 'PyQt5', 'PyQt6'))\n"
        "assert not bad, bad\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr


def test_the_check_itself_catches_a_qt_import():
    # The subprocess check must be able to fail: importing PySide6 there trips it.
    code = ("import sys, PySide6.QtCore\nbad = [m for m in sys.modules if m.startswith('PySide6')]\n"
            "assert not bad, bad\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "PySide6" in proc.stderr
