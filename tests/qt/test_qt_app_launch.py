"""Launching: `python -m inspector FILE` shows the window and paints chunks; palettes; screenshots."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from PySide6.QtGui import QImage

from inspector.qt.app import apply_palette, create_app
from inspector.qt.theme import Theme

ROOT = Path(__file__).resolve().parents[2]


def _launch(args, tmp_path, timeout=60):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "CHUNK_INSPECTOR_SMOKE": "1",
           "CHUNK_INSPECTOR_SETTINGS": str(tmp_path / "settings.ini"), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_launch_opens_the_given_file(tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nOne paragraph. Another sentence here.\n\n## More\n\nText.\n", encoding="utf-8")
    proc = _launch([str(doc)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    visible = next(line for line in lines if line.startswith("visible "))
    chunks = next(line for line in lines if line.startswith("chunks "))
    # No wall-time bound here (shared machines; benchmarks/startup.py reports the figure): the
    # window is reported visible, with a time, before its first chunks.
    assert float(visible.split()[1]) > 0 and lines.index(visible) < lines.index(chunks)
    assert chunks.split()[3] == "markdown" and int(chunks.split()[2]) >= 1
    assert (tmp_path / "settings.ini").exists()  # its own settings file, not the user's


def test_launch_without_arguments_opens_the_handbook(tmp_path):
    proc = _launch([], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "chunks " in proc.stdout and "error" not in proc.stdout


def test_launch_reports_a_bad_file(tmp_path):
    proc = _launch([str(tmp_path / "missing.md")], tmp_path, timeout=90)
    assert "no such file" in proc.stdout


def test_palettes(qapp):
    app = create_app()
    try:
        assert apply_palette(app, "dark") == "dark"
        dark = Theme.for_palette(app.palette())
        assert dark.dark
        assert apply_palette(app, "light") == "light"
        light = Theme.for_palette(app.palette())
        assert not light.dark
        # Text stays readable on chunk tints in both palettes (WCAG-style luminance contrast >= 4.5).
        for theme in (dark, light):
            for fill in theme.fills:
                assert _contrast(fill, theme.text) >= 4.5
    finally:
        apply_palette(app, "light")


def _luminance(c) -> float:
    def ch(v):
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * ch(c.redF()) + 0.7152 * ch(c.greenF()) + 0.0722 * ch(c.blueF())


def _contrast(a, b) -> float:
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_screenshots_render(qapp, tmp_path):
    from inspector.qt.screenshots import SIZE, render

    # Without the model (as test_laptop_and_small_screenshots_render): what is checked here, the
    # shots and their size, does not depend on it, and with it the trace embedded the handbook at
    # every size with MiniLM (220 s of the suite). The model in the window is tested with
    # `start_model` in test_qt_question_bar, the dense trace in test_qt_slider_trace.
    paths = render(tmp_path, model=False)
    assert [p.name for p in paths] == ["window.png", "window-overlap.png"]
    for p in paths:
        img = QImage(str(p))
        assert (img.width(), img.height()) == SIZE


def test_the_first_paint_imports_no_heavy_package_and_no_command(tmp_path):
    """Issue 31: by the time the window is visible its process has imported none of the packages
    the first paint does not need (the map's pyqtgraph, the model's torch, the chunkers' parsers and
    tokenizers, BM25) nor the command line's command modules."""
    listing = tmp_path / "modules.txt"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "CHUNK_INSPECTOR_SMOKE": "1",
           "CHUNK_INSPECTOR_SETTINGS": str(tmp_path / "settings.ini"), "PYTHONPATH": str(ROOT),
           "CHUNK_INSPECTOR_MODULES": str(listing)}
    proc = subprocess.run([sys.executable, "-m", "inspector"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=90)
    assert proc.returncode == 0, proc.stderr
    modules = set(listing.read_text(encoding="utf-8").split("\n"))
    assert "inspector.qt.main_window" in modules  # the listing is the window's
    tops = {m.split(".")[0] for m in modules}
    assert not tops & {"numpy", "pyqtgraph", "torch", "sentence_transformers", "transformers", "scipy", "markdown_it",
                       "tiktoken", "tokenizers", "bm25s"}
    assert not {m for m in modules if m.startswith("inspector.cli.") and m != "inspector.cli.main"}
    # Nor the helper process's jobs and processes (it starts once the first chunks are painted),
    # the export menu's writers (imported when an export runs), nor the workbench's evaluating
    # and retrieving parts (the window makes its workbench when a document first needs it).
    assert not modules & {"inspector.core.chunking.helper_jobs", "inspector.core.chunking.records",
                          "inspector.core.runtime.offload", "multiprocessing",
                          "inspector.core.workbench.evaluator", "inspector.core.workbench.index_store",
                          "inspector.core.workbench.staging", "inspector.core.evaluation.compare",
                          "inspector.core.evaluation.reranked", "inspector.core.evaluation.sweep",
                          "inspector.core.retrieval.index"}
    # Nor what hidden panels need only when shown or used: the drafting rules (the Drafts panel's
    # measurement line) and the audit module (the Reader's judgements, made at the first document).
    assert not modules & {"inspector.core.evaluation.drafts", "inspector.core.evaluation.audit"}
    # Nor the chunkers (the strategy panel reads the built-ins' declarations, `chunking.builtins`;
    # the worker imports a chunker when it first runs), the plug-ins' entry points (scanned after
    # the first chunks) or ctypes' library search (the heap's glibc is loaded by its soname).
    chunkers = {f"inspector.core.chunking.{m}" for m in ("fixed_chars", "fixed_tokens", "markdown", "paragraph",
                                                         "recursive", "parent_child", "sentences", "semantic",
                                                         "common", "fit")}
    assert "inspector.core.chunking.registry" in modules
    assert not modules & (chunkers | {"importlib.metadata", "ctypes.util"})


def test_the_command_table_names_each_module_s_commands():
    import importlib

    from inspector.cli.main import COMMAND_MODULES

    for name, commands in COMMAND_MODULES.items():
        assert commands == importlib.import_module(f"inspector.cli.{name}").COMMANDS


def test_the_helper_process_starts_once_the_first_chunks_are_painted(qtbot, make_window, open_doc, monkeypatch):
    """Issue 31: the helper's spawn and imports (a core and about a second) no longer run beside
    the window's first paint; it starts when the first complete chunks have arrived."""
    from PySide6.QtWidgets import QApplication

    from inspector.core.api import offload
    from inspector.qt import app as app_module

    helper = offload.Offload()
    monkeypatch.setattr(offload, "_DEFAULT", helper)  # `start_helper` enables the default helper
    monkeypatch.setattr(app_module, "HELPER_SETTLE_MS", 0)
    w = make_window()
    app_module.start_helper_after_first_chunks(QApplication.instance(), w)
    try:
        qtbot.wait(50)  # events run, no chunks yet: no helper
        assert not helper.enabled
        assert w.open_paths([str(ROOT / "sample_docs" / "handbook.md")])
        assert not helper.enabled  # opened (the handbook is small), not yet chunked
        open_doc(w)
        qtbot.waitUntil(lambda: helper.enabled, timeout=10_000)
        qtbot.waitUntil(lambda: helper.ready, timeout=90_000)  # spawned and warmed, off the GUI thread
        assert helper.pids()
    finally:
        w.close()  # its chunking stops first: a job still on its way would start the helper again
        helper.shutdown()


def test_the_helper_process_starts_at_once_for_a_large_document(qtbot, make_window, monkeypatch):
    """A document large enough for the helper's jobs starts it when it is opened: its re-chunking
    should not wait for the helper's start."""
    from PySide6.QtWidgets import QApplication

    from inspector.core.api import offload
    from inspector.qt import app as app_module

    helper = offload.Offload(min_chars=10_000)  # the handbook (95 KB) counts as large
    monkeypatch.setattr(offload, "_DEFAULT", helper)
    w = make_window()
    app_module.start_helper_after_first_chunks(QApplication.instance(), w)
    try:
        assert w.open_paths([str(ROOT / "sample_docs" / "handbook.md")])
        assert helper.enabled  # before its chunks
        qtbot.waitUntil(lambda: helper.ready, timeout=90_000)
    finally:
        w.close()  # its chunking stops first: a job still on its way would start the helper again
        helper.shutdown()


def test_pyside_s_module_check_reads_each_source_once_and_keeps_none():
    """Issue 31: PySide6 asks of every module imported after it whether its source holds "PySide6"
    (its `__feature__` switches), by `inspect.getsource`, which put every line of ~620 modules into
    linecache (~0.12 s of CPU at the launch). The window's check answers the same from the file's
    bytes for every module this process has loaded, and leaves linecache as it was."""
    import linecache

    from shibokensupport import feature

    import inspector.qt
    import inspector.qt.main_window  # noqa: F401  (the window's modules, whatever ran before)

    assert inspector.qt.SOURCES_READ_ONCE
    check = feature._mod_uses_pyside
    assert getattr(check, "reads_bytes", False)
    pyside_s_own = check.replaced  # PySide6's own check, called last: it fills linecache

    modules = [m for m in list(sys.modules.values())
               if str(getattr(m, "__file__", "")).endswith(".py") and os.path.isfile(m.__file__)]
    assert len(modules) > 300
    cached = set(linecache.cache)
    answers = [check(m) for m in modules]
    assert set(linecache.cache) == cached  # the bytes were read and dropped
    assert answers == [pyside_s_own(m) for m in modules]
    assert sum(answers) >= 20  # the window's own modules say yes ...
    assert not all(answers)  # ... the standard library's no
    assert check(sys.modules["inspector.qt.main_window"]) and not check(sys.modules["json"])
