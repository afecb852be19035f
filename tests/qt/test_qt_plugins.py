"""Bring-your-own strategies in the window: strategy files (confirmed before they run), imported
chunks, plug-ins at start-up, and alignment reports that are shown, never dropped."""

from __future__ import annotations

import json
import textwrap
from importlib.metadata import EntryPoint

import pytest
from PySide6.QtCore import Qt

from inspector.cli import main as cli_main
from inspector.core.chunking.external import remove_external
from inspector.core.chunking.registry import chunk_document, strategies
from inspector.qt.actions import plugin_actions
from inspector.qt.actions.plugin_actions import ALIGNMENT_TAG, IMPORTED

SPLITTERS = textwrap.dedent('''
    from pathlib import Path

    from inspector.core.chunking.params import Param
    from inspector.core.chunking.external import chunk_strategy

    Path(__file__).with_suffix(".ran").write_text("the file's code ran")

    def by_paragraph(text):
        return [p for p in text.split("\\n\\n") if p.strip()]

    @chunk_strategy("test_qt_words", params=(Param("n", "words", 40, 1, 500),))
    def words(text, n):
        ws = text.split()
        return [" ".join(ws[i:i + n]) for i in range(0, len(ws), n)]

    CHUNK_INSPECTOR_STRATEGIES = {"test_qt_paragraphs": by_paragraph}
''')


@pytest.fixture
def cleanup():
    names: list[str] = []
    yield names
    for name in names:
        remove_external(name)


def _combo_items(w) -> list[str]:
    combo = w.strategy_panel.combo
    return [combo.itemText(i) for i in range(combo.count())]


def test_strategy_file_not_confirmed_runs_nothing(qtbot, make_window, open_doc, tmp_path):
    path = tmp_path / "splitters.py"
    path.write_text(SPLITTERS, encoding="utf-8")
    w = make_window()
    open_doc(w)
    before = (w.state.strategy, w.state.result, _combo_items(w))
    asked: list[str] = []
    names = w.plugins.load_strategy_file(path, confirm=lambda text: asked.append(text) or False)
    assert names == []
    [warning] = asked
    assert "runs the Python code" in warning and str(path) in warning
    assert not path.with_suffix(".ran").exists()  # not a line of it was executed
    assert "test_qt_paragraphs" not in strategies()
    assert (w.state.strategy, w.state.result, _combo_items(w)) == before
    assert w.message.text() == "Strategy file not loaded: splitters.py"


def test_strategy_file_confirmed_adds_strategies_and_chunks_with_them(qtbot, make_window, open_doc, wait_complete,
                                                                     tmp_path, cleanup):
    path = tmp_path / "splitters.py"
    path.write_text(SPLITTERS, encoding="utf-8")
    w = make_window()
    open_doc(w)
    names = w.plugins.load_strategy_file(path, confirm=lambda text: True)
    cleanup.extend(names)
    assert sorted(names) == ["test_qt_paragraphs", "test_qt_words"]
    assert path.with_suffix(".ran").exists()
    assert set(names) <= set(_combo_items(w))
    assert w.state.strategy == names[0] and w.strategy_panel.combo.currentText() == names[0]
    assert "Loaded 2 strategies from splitters.py" in w.message.text()
    r = wait_complete(w)
    doc = r.document
    expected = chunk_document(doc, names[0], w.state.params)
    assert [(c.start, c.end) for c in r.chunks] == [(c.start, c.end) for c in expected] and expected
    # The decorated one has its declared parameter as a control, and chunks with it.
    w.strategy_panel.set_strategy("test_qt_words")
    w.strategy_panel.set_value("n", 25)
    r = wait_complete(w)
    assert r.request.strategy == "test_qt_words" and r.request.params == {"n": 25}
    words = [r.document.text[c.start:c.end].split() for c in r.chunks]
    assert all(len(ws) == 25 for ws in words[:-1])
    assert w.messages.tag != ALIGNMENT_TAG  # every piece placed: nothing to report


def test_broken_strategy_file_is_the_cli_line(qtbot, make_window, open_doc, tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text("def split(text):\n    return [text]\n\nCHUNK_INSPECTOR_STRATEGIES = {'x': split\n",
                    encoding="utf-8")
    capsys.readouterr()
    assert cli_main(["chunks", "--strategy-file", str(path), str(tmp_path / "any.md")]) == 2
    expected = capsys.readouterr().err.strip().removeprefix("error: ")
    assert expected.startswith(f"{path}:") and "syntax error" in expected
    w = make_window()
    open_doc(w)
    before = _combo_items(w)
    assert w.plugins.load_strategy_file(path, confirm=lambda text: True) == []
    assert w.message.text() == expected and w.messages.box.text() == expected
    assert _combo_items(w) == before


def test_a_splitter_that_raises_reports_its_cause(qtbot, make_window, open_doc, tmp_path, cleanup):
    path = tmp_path / "raising.py"
    path.write_text("def split(text):\n    raise KeyError('no such section')\n\n"
                    "CHUNK_INSPECTOR_STRATEGIES = {'test_qt_raising': split}\n", encoding="utf-8")
    w = make_window()
    open_doc(w)
    with qtbot.waitSignal(w.messages.errorShown, timeout=10_000):
        cleanup.extend(w.plugins.load_strategy_file(path, confirm=lambda text: True))
    assert w.message.text() == ("strategy 'test_qt_raising': the splitter raised KeyError: 'no such section'")
    assert "raise KeyError('no such section')" in w.messages.details  # the user's own line, in the traceback
    w.strategy_panel.set_strategy("markdown")
    qtbot.waitUntil(lambda: w.message.text() == "", timeout=10_000)


def _records(doc_text: str) -> list[dict]:
    leave = doc_text.index("## Parental leave") if "## Parental leave" in doc_text else 0
    return [
        {"page_content": doc_text[leave:leave + 120], "metadata": {"start_index": leave}},
        {"page_content": "A sentence that was never in the <img src=x> handbook.", "metadata": {}},
        {"page_content": doc_text[leave + 120:leave + 300], "metadata": {}},
    ]


def test_imported_chunks_with_one_unalignable_piece_are_reported(qtbot, make_window, open_doc, wait_complete,
                                                                  tmp_path, cleanup):
    w = make_window()
    open_doc(w)
    doc = w.state.document
    path = tmp_path / "chunks.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in _records(doc.text)), encoding="utf-8")
    cleanup.append(IMPORTED)
    assert w.plugins.import_chunks(path)
    assert IMPORTED in _combo_items(w) and w.state.strategy == IMPORTED
    r = wait_complete(w)
    assert r.request.strategy == IMPORTED and len(r.chunks) == 2
    assert [c.meta["import_line"] for c in r.chunks] == [1, 3]
    # The piece that could not be placed is in the status bar, with its line and text.
    text = w.message.text()
    assert w.messages.kind == "warning" and w.messages.tag == ALIGNMENT_TAG
    assert text.startswith("1 of 3 pieces not placed · imported: handbook.md: line 2 not aligned")
    assert "<img src=x>" in text and w.message.textFormat() == Qt.TextFormat.PlainText  # shown as typed
    assert "line 2 not aligned" in w.messages.details
    # ... and beside the document in the corpus list.
    [row] = [x for x in w.corpus_panel.model.rows if x.document is doc]
    assert row.chunks == 2 and any("line 2 not aligned" in p for p in row.problems)
    # A strategy with nothing to report clears the warning.
    w.strategy_panel.set_strategy("markdown")
    wait_complete(w)
    assert w.messages.tag != ALIGNMENT_TAG and "not aligned" not in w.message.text()


def test_importing_again_replaces_the_chunks(qtbot, make_window, open_doc, wait_complete, tmp_path, cleanup):
    w = make_window()
    open_doc(w)
    doc = w.state.document
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps({"text": doc.text[:200]}) + "\n", encoding="utf-8")
    second = tmp_path / "second.jsonl"
    second.write_text(json.dumps({"text": doc.text[:100]}) + "\n" + json.dumps({"text": doc.text[100:300]}) + "\n",
                      encoding="utf-8")
    cleanup.append(IMPORTED)
    assert w.plugins.import_chunks(first)
    assert len(wait_complete(w).chunks) == 1
    assert w.plugins.import_chunks(second)
    r = wait_complete(w)
    assert len(r.chunks) == 2 and [c.meta["import_line"] for c in r.chunks] == [1, 2]
    assert w.messages.tag != ALIGNMENT_TAG  # both pieces placed


def test_broken_chunk_file_names_its_line(qtbot, make_window, open_doc, tmp_path):
    w = make_window()
    open_doc(w)
    before = (w.state.strategy, _combo_items(w))
    path = tmp_path / "bad.jsonl"
    path.write_text('{"text": "fine"}\n{not json\n', encoding="utf-8")
    assert not w.plugins.import_chunks(path)
    assert w.message.text().startswith(f"{path}:2: ") and w.messages.box.isVisible()
    assert (w.state.strategy, _combo_items(w)) == before


def test_import_needs_a_document(qtbot, make_window, tmp_path):
    w = make_window()
    assert not w.plugins.import_chunks(tmp_path / "x.jsonl")
    assert "open a document first" in w.message.text()


def test_startup_registers_langchain_and_reports_broken_plugins(qtbot, make_window, monkeypatch):
    pytest.importorskip("langchain_text_splitters")
    broken = EntryPoint(name="test_qt_broken", value="no_such_module_anywhere:split",
                        group="chunk_inspector.strategies")
    import importlib.metadata as md

    real = md.entry_points
    monkeypatch.setattr(md, "entry_points", lambda **kw: (broken,) if kw.get("group") == broken.group else real(**kw))
    monkeypatch.setattr(plugin_actions, "_INSTALLED_PROBLEMS", None)
    w = make_window()
    # Not while the window is made (issue 31: the entry points' scan came before its first paint);
    # with no document to chunk, PLUGINS_LATEST_MS after.
    assert plugin_actions._INSTALLED_PROBLEMS is None
    qtbot.waitUntil(lambda: plugin_actions._INSTALLED_PROBLEMS is not None, timeout=5000)
    assert {"lc_recursive", "lc_markdown_header"} <= set(_combo_items(w))
    expected = ("entry point test_qt_broken = no_such_module_anywhere:split: "
                "ModuleNotFoundError: No module named 'no_such_module_anywhere'")
    assert w.message.text() == f"plug-in not loaded: {expected}" and w.messages.kind == "warning"
    assert w.state.documents == ()  # not fatal: the window is up and empty


def later_split(text: str) -> list[str]:
    """A plug-in's splitter (the entry point of the next test)."""
    return text.split("\n\n")


def test_plugins_are_registered_after_the_first_chunks_beside_the_controls(qtbot, make_window, open_doc,
                                                                            monkeypatch):
    """Issue 31: the plug-ins' scan waits for the first complete chunks, then adds them to the
    selector without rebuilding the controls shown (a slider may be held by then)."""
    import importlib.metadata as md

    from inspector.qt import main_window

    plugin = EntryPoint(name="test_qt_later", value="tests.qt.test_qt_plugins:later_split",
                        group="chunk_inspector.strategies")
    real = md.entry_points
    monkeypatch.setattr(md, "entry_points", lambda **kw: (plugin,) if kw.get("group") == plugin.group else real(**kw))
    monkeypatch.setattr(main_window, "PLUGINS_LATEST_MS", 60_000)  # only the chunks can trigger it
    monkeypatch.setattr(plugin_actions, "_INSTALLED_PROBLEMS", None)
    try:
        w = make_window()
        assert plugin_actions._INSTALLED_PROBLEMS is None
        open_doc(w)
        size = w.strategy_panel.control("size")
        qtbot.waitUntil(lambda: plugin_actions._INSTALLED_PROBLEMS is not None, timeout=5000)
        assert "test_qt_later" in _combo_items(w)
        assert w.strategy_panel.control("size") is size and w.strategy_panel.combo.currentData() == w.state.strategy
    finally:
        remove_external("test_qt_later")


def test_a_saved_plugin_strategy_is_restored(qtbot, make_window, settings_store, monkeypatch):
    """A strategy remembered from a plug-in is registered before the settings are restored (the
    plug-ins are not left for after the first paint then)."""
    pytest.importorskip("langchain_text_splitters")
    from inspector.core.viewmodel import settings_schema as keys
    from inspector.qt.settings import Settings

    remove_external("lc_recursive")  # as in a new process
    monkeypatch.setattr(plugin_actions, "_INSTALLED_PROBLEMS", None)
    Settings(settings_store).set(keys.STRATEGY, "lc_recursive")
    w = make_window()
    assert w.state.strategy == "lc_recursive"
    assert w.strategy_panel.combo.currentData() == "lc_recursive"


def test_a_plugin_registered_again_after_the_first_chunks_is_shown_anew(qtbot, make_window, open_doc,
                                                                        settings_store, monkeypatch):
    """The strategy shown was registered already (an earlier window of the process), so the
    plug-ins wait for the first chunks; registered again then, it is rebuilt and run again."""
    pytest.importorskip("langchain_text_splitters")
    from inspector.core.viewmodel import settings_schema as keys
    from inspector.qt import main_window
    from inspector.qt.settings import Settings

    monkeypatch.setattr(main_window, "PLUGINS_LATEST_MS", 60_000)
    plugin_actions.load_installed_strategies()  # lc_recursive registered before the window
    monkeypatch.setattr(plugin_actions, "_INSTALLED_PROBLEMS", None)
    Settings(settings_store).set(keys.STRATEGY, "lc_recursive")
    w = make_window()
    assert w.state.strategy == "lc_recursive" and plugin_actions._INSTALLED_PROBLEMS is None
    first = strategies()["lc_recursive"]
    complete: list[int] = []
    w.state.chunksChanged.connect(lambda r: complete.append(r.request_id) if r is not None and r.complete else None)
    open_doc(w)
    qtbot.waitUntil(lambda: plugin_actions._INSTALLED_PROBLEMS is not None, timeout=5000)
    assert strategies()["lc_recursive"] is not first  # registered again
    assert w.strategy_panel.strategy is strategies()["lc_recursive"]
    qtbot.waitUntil(lambda: len(set(complete)) >= 2, timeout=20_000)  # and run again
