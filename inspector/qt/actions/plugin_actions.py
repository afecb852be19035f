"""Bring-your-own strategies in the window: strategy files, imported chunks, plug-ins, and what
an external splitter could not place.

* File ▸ Load Strategy File… runs a user's Python file (`external.load_strategy_file`). Because
  that RUNS THE FILE'S CODE, a warning saying so must be confirmed first; nothing is read before.
* File ▸ Import Chunks… registers the chunks of a LangChain/LlamaIndex JSONL as the strategy
  `imported` (`imported.imported_strategy`) and shows them on the current document.
* At start-up, strategies of installed plug-ins (entry points) and LangChain's ready-made
  splitters are registered; a broken plug-in is a warning in the status bar, not a failure.
* After an external or imported strategy runs, its alignment report (pieces that could not be
  placed on the text) goes to the status bar with the full list behind Details…, never dropped.

The methods take a path and a `confirm` callable, so tests drive them without a modal dialog;
only the menu slots open dialogs. They need nothing of the window but what they are handed: the
state, the message line, the settings (the last folder), and two callbacks, one told which
strategies were (re)registered and one that shows a strategy's chunks.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QMessageBox, QWidget

from inspector.core.api import InputError
from inspector.core.viewmodel import settings_schema as keys
from inspector.qt.controllers.state import InspectorState
from inspector.qt.messages import MessageCenter
from inspector.qt.settings import Settings

#: The strategy name imported chunks are registered under (as the CLI's --import-chunks).
IMPORTED = "imported"
#: Status-bar tag of alignment warnings (cleared when a later result has nothing to report).
ALIGNMENT_TAG = "alignment"

_INSTALLED_PROBLEMS: tuple[str, ...] | None = None


def strategy_file_warning(path: str) -> str:
    return (f"Loading a strategy file runs the Python code in it, with your permissions:\n\n{path}\n\n"
            "Only load files you wrote yourself or trust. Run this file's code now?")


def load_installed_strategies() -> tuple[str, ...]:
    """Register plug-in (entry-point) strategies and LangChain's ready-made splitters, once per
    process; returns the problems (one line each) of plug-ins that could not be loaded."""
    global _INSTALLED_PROBLEMS
    if _INSTALLED_PROBLEMS is None:
        from inspector.core.api import external

        problems: list[str] = []
        try:
            problems += [p.one_line() for p in external.load_entry_point_strategies().problems]
        except Exception as exc:  # noqa: BLE001  (a broken environment must not stop the window)
            problems.append(f"plug-in strategies: {type(exc).__name__}: {exc}")
        try:
            external.register_langchain_strategies()
        except Exception as exc:  # noqa: BLE001
            problems.append(f"LangChain strategies: {type(exc).__name__}: {exc}")
        _INSTALLED_PROBLEMS = tuple(problems)
    return _INSTALLED_PROBLEMS


class PluginActions(QObject):
    """The menu actions and start-up registration; reports through the window's messages."""

    aboutToReplace = Signal(str)
    """Imported chunks are about to replace the strategy shown (the window's undo history keeps
    the strategy and parameters in use now)."""

    def __init__(self, state: InspectorState, messages: MessageCenter, settings: Settings, *,
                 strategies_registered: Callable[[Sequence[str]], None], show_strategy: Callable[[str], None],
                 parent: QWidget) -> None:
        """`strategies_registered(names)`: the registry changed (`names` were registered again,
        so figures made with them are stale; empty after start-up); the selector must re-read it.
        `show_strategy(name)`: show `name`'s chunks, re-running it if it is already selected.
        `parent`: owns the actions and the dialogs."""
        super().__init__(parent)
        self.state = state
        self.messages = messages
        self.settings = settings
        self._strategies_registered = strategies_registered
        self._show_strategy = show_strategy
        self._parent = parent
        self.load_file_action = QAction("Load &Strategy File…", parent)
        self.load_file_action.setStatusTip("Register the strategies a Python file declares (runs the file's code)")
        self.load_file_action.triggered.connect(self.load_strategy_file_dialog)
        self.import_action = QAction("&Import Chunks…", parent)
        self.import_action.setStatusTip("Show chunks made by another pipeline (LangChain/LlamaIndex JSONL) "
                                        "on this document, as the strategy 'imported'")
        self.import_action.triggered.connect(self.import_chunks_dialog)
        self.loaded_files: list[str] = []
        """Strategy files loaded in this session."""
        self.imported_from: str | None = None
        """The JSONL file behind the `imported` strategy."""
        self._reported: tuple[int, str] | None = None
        state.chunksChanged.connect(self._on_chunks)

    def add_to(self, menu: QMenu) -> None:
        menu.addAction(self.load_file_action)
        menu.addAction(self.import_action)

    # -- start-up ------------------------------------------------------------------------------
    def load_installed(self, *, refresh: bool = True) -> tuple[str, ...]:
        """Plug-ins and LangChain's splitters into the selector (`refresh=False`: the caller
        refreshes it); problems as a warning."""
        problems = load_installed_strategies()
        if refresh:
            self._strategies_registered(())
        if problems:
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            self.messages.warning(f"plug-in not loaded: {problems[0]}{more}", "\n".join(problems))
        return problems

    # -- strategy files ---------------------------------------------------------------------------
    def load_strategy_file(self, path: str | os.PathLike[str], confirm: Callable[[str], bool]) -> list[str]:
        """Run a strategy file after `confirm(warning)` says yes; returns the names registered
        (the first one is selected). `confirm` returning False loads nothing."""
        from inspector.core.api import load_strategy_file

        path = str(path)
        if not confirm(strategy_file_warning(path)):
            self.messages.info(f"Strategy file not loaded: {Path(path).name}")
            return []
        try:
            made = load_strategy_file(path)
        except InputError as exc:
            self.messages.error(exc.one_line(), popup=True)
            return []
        except Exception as exc:  # noqa: BLE001  (load_strategy_file wraps the file's errors; belt and braces)
            self.messages.error(InputError(f"{type(exc).__name__}: {exc}", path=path).one_line(), popup=True)
            return []
        names = [s.name for s in made]
        if path not in self.loaded_files:
            self.loaded_files.append(path)
        self._strategies_registered(names)  # loaded again: figures made with them are stale
        if names:
            self._show_strategy(names[0])
        self.messages.info(f"Loaded {len(names)} strateg{'y' if len(names) == 1 else 'ies'} from "
                        f"{Path(path).name}: {', '.join(names)}")
        return names

    def load_strategy_file_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self._parent, "Load strategy file", self.settings.get(keys.LAST_DIR),
                                              "Python files (*.py);;All files (*)")
        if path:
            self.load_strategy_file(path, confirm=self._confirm_dialog)

    def _confirm_dialog(self, text: str) -> bool:
        box = QMessageBox(QMessageBox.Icon.Warning, "Run this file's code?", text,
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, self._parent)
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.button(QMessageBox.StandardButton.Yes).setText("Run It")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box.exec() == QMessageBox.StandardButton.Yes

    # -- imported chunks -------------------------------------------------------------------------
    def import_chunks(self, path: str | os.PathLike[str]) -> bool:
        """Register `path`'s chunks as the strategy `imported` and show them on the current document."""
        from inspector.core.api import imported_strategy

        path = str(path)
        if self.state.document is None:
            self.messages.error("open a document first, then import the chunks made from it")
            return False
        self.aboutToReplace.emit(f"Import chunks from {Path(path).name}")
        try:
            imported_strategy(IMPORTED, path)
        except InputError as exc:
            self.messages.error(exc.one_line(), popup=True)
            return False
        except (OSError, ValueError) as exc:
            self.messages.error(InputError(str(exc), path=path).one_line(), popup=True)
            return False
        self.imported_from = path
        self._strategies_registered((IMPORTED,))
        self._reported = None
        self._show_strategy(IMPORTED)
        return True

    def import_chunks_dialog(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self._parent, "Import chunks", self.settings.get(keys.LAST_DIR),
                                              "JSON Lines (*.jsonl *.ndjson);;All files (*)")
        if path:
            self.import_chunks(path)

    # -- alignment reports -----------------------------------------------------------------------
    def _on_chunks(self, result) -> None:
        from inspector.core.api import is_external, last_alignment_report

        if result is None:
            return
        strategy = result.request.strategy
        if not is_external(strategy):
            self.messages.clear(tag=ALIGNMENT_TAG)
            return
        key = (result.request_id, strategy)
        if key == self._reported:
            return  # the word-piece stage of a request already reported
        self._reported = key
        report = last_alignment_report(strategy, result.document.doc_id)
        lines = report.lines() if report is not None else []
        if report is None or not lines:
            self.messages.clear(tag=ALIGNMENT_TAG)
            return
        n = len(report.unaligned)
        more = f" (+{len(lines) - 1} more)" if len(lines) > 1 else ""
        head = f"{n} of {report.pieces} pieces not placed · " if n else ""
        self.messages.warning(f"{head}{lines[0]}{more}", "\n".join(lines), tag=ALIGNMENT_TAG)
