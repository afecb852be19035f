"""The main window: the document in the centre, panels in docks, menus, toolbar and status bar.

The window builds the widgets, hands each the one `InspectorState`, and persists what the user
arranged. It holds no chunking logic: the controller re-chunks, the widgets repaint from signals.
More panels (the gold set, retrieval) plug in through `add_panel`, and can mark chunks on the
overview strip with `mark_chunks`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QIcon, QKeySequence
from PySide6.QtWidgets import (QComboBox, QDockWidget, QFileDialog, QHBoxLayout, QLabel, QMainWindow,
                               QMessageBox, QProgressBar, QVBoxLayout, QWidget)

from inspector.core import settings_schema as keys
from inspector.core.document import Document
from inspector.qt.chunk_table import ChunkTable
from inspector.qt.controller import DEBOUNCE_MS, ChunkingController
from inspector.qt.detail_pane import DetailPane
from inspector.qt.document_view import DocumentView
from inspector.qt.find_bar import FindBar
from inspector.qt.overview_strip import OverviewStrip
from inspector.qt.settings import Settings
from inspector.qt.state import InspectorState
from inspector.qt.stats_panel import StatsPanel
from inspector.qt.strategy_panel import StrategyPanel
from inspector.qt.worker import ChunkResult, ChunkRunner

RESOURCES = Path(__file__).resolve().parents[2] / "resources"
FILE_FILTER = "Documents (*.md *.markdown *.mdown *.mkd *.txt *.text);;All files (*)"


def sample_path() -> Path:
    """The bundled handbook that opens when no file is given."""
    return Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"


class MainWindow(QMainWindow):
    """Chunk Inspector's window."""

    documentOpened = Signal(object)
    """The Document now shown (after a successful open)."""

    def __init__(self, settings: QSettings, *, runner: ChunkRunner | None = None,
                 debounce_ms: int = DEBOUNCE_MS, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.settings = Settings(settings)
        self.state = InspectorState(self)
        self.runner = runner if runner is not None else ChunkRunner(self)
        if self.runner.parent() is None:
            self.runner.setParent(self)
        self._closing = False
        self.setWindowTitle("Chunk Inspector")
        icon = RESOURCES / "chunk-inspector.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)

        # Centre: text + overview strip, find bar below.
        self.view = DocumentView(self.state)
        self.strip = OverviewStrip()
        self.find_bar = FindBar(self.view)
        self.find_bar.hide()
        centre = QWidget()
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        row.addWidget(self.view, 1)
        row.addWidget(self.strip)
        col = QVBoxLayout(centre)
        col.setContentsMargins(0, 0, 0, 0)
        col.setSpacing(0)
        col.addLayout(row, 1)
        col.addWidget(self.find_bar)
        self.setCentralWidget(centre)

        # Panels.
        self.strategy_panel = StrategyPanel(self.state)
        self.stats_panel = StatsPanel(self.state)
        self.table = ChunkTable(self.state)
        self.detail = DetailPane(self.state)
        self.strategy_dock = self.add_panel(self.strategy_panel, "Strategy", Qt.DockWidgetArea.LeftDockWidgetArea)
        self.stats_dock = self.add_panel(self.stats_panel, "Statistics", Qt.DockWidgetArea.LeftDockWidgetArea)
        self.detail_dock = self.add_panel(self.detail, "Embedded text", Qt.DockWidgetArea.RightDockWidgetArea)
        self.table_dock = self.add_panel(self.table, "Chunks", Qt.DockWidgetArea.BottomDockWidgetArea)
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.BottomDockWidgetArea)

        # Created after the widgets, so that on a document change they have taken the new document
        # before any (synchronous) result for it arrives.
        self.controller = ChunkingController(self.state, self.runner, debounce_ms=debounce_ms, parent=self)

        self._build_actions()
        self._build_menus()
        self._build_toolbar()
        self._build_status_bar()

        self.strip.jumpRequested.connect(self.view.scroll_to_line_fraction)
        self.view.verticalScrollBar().valueChanged.connect(self._update_strip_view)
        self.view.verticalScrollBar().rangeChanged.connect(lambda *_a: self._update_strip_view())
        self.state.chunksChanged.connect(self._on_chunks)
        self.state.documentChanged.connect(self._on_document)
        self.state.documentsChanged.connect(self._on_documents)
        self.state.busyChanged.connect(self._on_busy)
        self.state.errorChanged.connect(self._on_error)
        self.table.onlyFlaggedChanged.connect(self._on_only_flagged)
        self.restore_settings()

    # -- panels ----------------------------------------------------------------------------------
    def add_panel(self, widget: QWidget, title: str,
                  area: Qt.DockWidgetArea = Qt.DockWidgetArea.RightDockWidgetArea) -> QDockWidget:
        """Dock a panel (the hook for more panels, e.g. the gold set); its toggle goes in View."""
        dock = QDockWidget(title, self)
        dock.setObjectName(f"dock_{title.lower().replace(' ', '_')}")
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable)
        self.addDockWidget(area, dock)
        menu = getattr(self, "panels_menu", None)
        if menu is not None:
            menu.addAction(dock.toggleViewAction())
        return dock

    def mark_chunks(self, name: str, chunk_ids: Iterable[int], color: QColor | None = None) -> None:
        """Mark chunks on the overview strip as a named layer (e.g. retrieved chunks)."""
        r = self.state.result
        if r is None:
            self.strip.set_marks(name, ())
            return
        fractions = []
        for cid in chunk_ids:
            k = r.index.rank(cid)
            if k >= 0:
                fractions.append(r.start_lines[k] / max(1, r.line_count))
        self.strip.set_marks(name, fractions, color)

    # -- actions, menus, toolbar, status bar -----------------------------------------------------
    def _action(self, text: str, slot, shortcut: QKeySequence | str | None = None, tip: str = "",
                checkable: bool = False) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        if tip:
            a.setStatusTip(tip)
            a.setToolTip(tip)
        a.setCheckable(checkable)
        a.triggered.connect(slot)
        self.addAction(a)
        return a

    def _build_actions(self) -> None:
        self.open_action = self._action("&Open…", self.open_dialog, QKeySequence.StandardKey.Open,
                                        "Open Markdown or text files")
        self.open_folder_action = self._action("Open &Folder…", self.open_folder_dialog, "Ctrl+Shift+O",
                                               "Open every document in a folder as a corpus")
        self.quit_action = self._action("&Quit", self.close, QKeySequence.StandardKey.Quit, "Quit Chunk Inspector")
        self.find_action = self._action("&Find…", self.find_bar.open_bar, QKeySequence.StandardKey.Find,
                                        "Find text in the document")
        self.next_action = self._action("&Next Chunk", lambda: self.view.select_relative(1), "Alt+Down",
                                        "Select the next chunk")
        self.prev_action = self._action("&Previous Chunk", lambda: self.view.select_relative(-1), "Alt+Up",
                                        "Select the previous chunk")
        self.only_flagged_action = self._action("Only &Flagged Chunks", self.table.set_only_flagged, "Ctrl+Shift+F",
                                                "Show only flagged chunks in the table", checkable=True)
        self.about_action = self._action("&About Chunk Inspector", self.about)

    def _build_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        file_menu.addAction(self.open_action)
        file_menu.addAction(self.open_folder_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        view_menu = mb.addMenu("&View")
        view_menu.addAction(self.find_action)
        view_menu.addSeparator()
        view_menu.addAction(self.next_action)
        view_menu.addAction(self.prev_action)
        view_menu.addAction(self.only_flagged_action)
        view_menu.addSeparator()
        self.panels_menu = view_menu.addMenu("&Panels")
        for dock in (self.strategy_dock, self.stats_dock, self.table_dock, self.detail_dock):
            self.panels_menu.addAction(dock.toggleViewAction())
        help_menu = mb.addMenu("&Help")
        help_menu.addAction(self.about_action)

    def _build_toolbar(self) -> None:
        tb = self.addToolBar("Main")
        tb.setObjectName("toolbar_main")
        tb.setMovable(False)
        tb.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        tb.setIconSize(tb.iconSize() * 0.75)
        style = self.style()
        px = style.StandardPixmap
        for action, icon in ((self.open_action, px.SP_DialogOpenButton), (self.open_folder_action, px.SP_DirOpenIcon),
                             (self.prev_action, px.SP_ArrowUp), (self.next_action, px.SP_ArrowDown),
                             (self.find_action, px.SP_FileDialogContentsView),
                             (self.only_flagged_action, px.SP_MessageBoxWarning)):
            action.setIcon(style.standardIcon(icon))
        tb.addAction(self.open_action)
        tb.addAction(self.open_folder_action)
        tb.addSeparator()
        tb.addAction(self.prev_action)
        tb.addAction(self.next_action)
        tb.addAction(self.find_action)
        tb.addAction(self.only_flagged_action)
        tb.addSeparator()
        self.doc_label = QLabel(" Document ")
        self.doc_combo = QComboBox()
        self.doc_combo.setMinimumContentsLength(24)
        self.doc_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.doc_combo.currentIndexChanged.connect(self._on_doc_combo)
        self._doc_label_action = tb.addWidget(self.doc_label)
        self._doc_combo_action = tb.addWidget(self.doc_combo)
        self._doc_label_action.setVisible(False)
        self._doc_combo_action.setVisible(False)

    def _build_status_bar(self) -> None:
        sb = self.statusBar()
        self.message = QLabel()
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        sb.addWidget(self.message, 1)
        self.busy = QProgressBar()
        self.busy.setRange(0, 0)
        self.busy.setFixedSize(90, 12)
        self.busy.setTextVisible(False)
        self.busy.setToolTip("Chunking…")
        self.busy.hide()
        self.info = QLabel()
        sb.addPermanentWidget(self.busy)
        sb.addPermanentWidget(self.info)

    # -- opening -------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open documents", self.settings.get(keys.LAST_DIR), FILE_FILTER)
        if paths:
            self.open_paths(paths)

    def open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open folder", self.settings.get(keys.LAST_DIR))
        if path:
            self.open_paths([path])

    def open_paths(self, paths: Sequence[str | os.PathLike[str]]) -> bool:
        """Load files and folders (a corpus); problems go to the status bar, never a modal box."""
        from inspector.core.document import load_paths
        from inspector.core.errors import InputError

        paths = [str(p) for p in paths]
        try:
            loaded = load_paths(paths)
        except InputError as exc:
            self.state.set_error(exc.one_line())
            return False
        except OSError as exc:
            self.state.set_error(str(exc))
            return False
        problems = [p.one_line() for p in loaded.problems]
        if not loaded.documents:
            self.state.set_error(problems[0] if problems else "nothing to open")
            return False
        self.state.set_error("")
        self.state.set_documents(loaded.documents)
        for p in paths:
            self.add_recent(p)
        self.settings.set(keys.LAST_DIR, str(Path(paths[0]).parent if Path(paths[0]).is_file() else Path(paths[0])))
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            self.show_error(f"skipped {problems[0]}{more}", details="\n".join(problems))
        else:
            self.show_message(f"Opened {loaded.documents[0].name}" if len(loaded.documents) == 1
                              else f"Opened {len(loaded.documents)} documents")
        self.documentOpened.emit(self.state.document)
        return True

    def add_recent(self, path: str) -> None:
        recent = keys.add_recent(self.settings.get(keys.RECENT_FILES), str(Path(path).resolve()))
        self.settings.set(keys.RECENT_FILES, recent)
        self._rebuild_recent()

    def recent_files(self) -> list[str]:
        return self.settings.get(keys.RECENT_FILES)

    def _rebuild_recent(self) -> None:
        self.recent_menu.clear()
        recent = self.recent_files()
        for i, path in enumerate(recent):
            a = self.recent_menu.addAction(f"&{i + 1}  {path}" if i < 9 else path)
            a.triggered.connect(lambda _checked=False, p=path: self.open_paths([p]))
        if recent:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear List", self._clear_recent)
        self.recent_menu.setEnabled(bool(recent))

    def _clear_recent(self) -> None:
        self.settings.set(keys.RECENT_FILES, [])
        self._rebuild_recent()

    # -- drag and drop ---------------------------------------------------------------------------
    def dragEnterEvent(self, e) -> None:
        if any(u.isLocalFile() for u in e.mimeData().urls()):
            e.acceptProposedAction()

    def dropEvent(self, e) -> None:
        paths = [u.toLocalFile() for u in e.mimeData().urls() if u.isLocalFile()]
        if paths:
            e.acceptProposedAction()
            self.open_paths(paths)

    # -- state reactions ------------------------------------------------------------------------
    def _on_documents(self, docs: tuple[Document, ...]) -> None:
        self.doc_combo.blockSignals(True)
        self.doc_combo.clear()
        for d in docs:
            self.doc_combo.addItem(d.doc_id, d.doc_id)
        self.doc_combo.blockSignals(False)
        many = len(docs) > 1
        self._doc_label_action.setVisible(many)
        self._doc_combo_action.setVisible(many)

    def _on_doc_combo(self, i: int) -> None:
        if 0 <= i < len(self.state.documents):
            self.state.set_document(self.state.documents[i])

    def _on_document(self, doc: Document | None) -> None:
        self.setWindowTitle(f"{doc.name} — Chunk Inspector" if doc is not None else "Chunk Inspector")
        if doc is not None and doc in self.state.documents:
            i = self.state.documents.index(doc)
            if self.doc_combo.currentIndex() != i:
                self.doc_combo.blockSignals(True)
                self.doc_combo.setCurrentIndex(i)
                self.doc_combo.blockSignals(False)
        self.strip.set_boundaries(())
        self._update_info()

    def _on_chunks(self, result: ChunkResult | None) -> None:
        if result is None:
            self.strip.set_boundaries(())
        else:
            n = max(1, result.line_count)
            self.strip.set_boundaries([line / n for line in result.start_lines], self.view.theme.muted)
        self._update_info()
        self._update_strip_view()

    def _update_info(self) -> None:
        doc = self.state.document
        r = self.state.result
        if doc is None:
            self.info.setText("")
            return
        parts = [doc.name, f"{len(doc.text):,} characters"]
        if r is not None:
            parts.append(f"{r.stats.count:,} chunks · {r.request.strategy}")
        self.info.setText("  ·  ".join(parts) + "  ")

    def _update_strip_view(self, *_args) -> None:
        self.strip.set_view(*self.view.visible_line_fractions())

    def _on_busy(self, busy: bool) -> None:
        self.busy.setVisible(busy)

    def _on_error(self, message: str) -> None:
        if message:
            self.show_error(message)
        else:
            self.show_message("")

    def _on_only_flagged(self, on: bool) -> None:
        if self.only_flagged_action.isChecked() != on:
            self.only_flagged_action.setChecked(on)

    def show_message(self, text: str) -> None:
        self.message.setStyleSheet("")
        self.message.setToolTip("")
        self.message.setText(text)

    def show_error(self, text: str, details: str = "") -> None:
        """A problem, in red in the status bar (hover for details)."""
        self.message.setStyleSheet("color: #d03a3a;")
        self.message.setText(text)
        self.message.setToolTip(details or text)

    def about(self) -> None:
        QMessageBox.about(self, "About Chunk Inspector",
                          "<b>Chunk Inspector</b><p>See how documents are chunked for retrieval-augmented "
                          "generation, and whether retrieval finds the right chunk.</p>"
                          "<p>Click text to select its chunk (click again to cycle through overlapping "
                          "chunks); Alt+Up/Down walks through chunks; Ctrl+F finds text.</p>")

    # -- settings --------------------------------------------------------------------------------
    def restore_settings(self) -> None:
        s = self.settings
        geometry = s.get(keys.GEOMETRY)
        if geometry:
            self.restoreGeometry(geometry)
        else:
            self.resize(1400, 900)
        state = s.get(keys.WINDOW_STATE)
        if not state or not self.restoreState(state):
            self.default_layout()
        self.state.restore_params(s.get(keys.PARAMS))
        strategy = s.get(keys.STRATEGY)
        try:
            self.state.set_strategy(strategy)
        except ValueError:
            pass
        self.strategy_panel.rebuild()
        self.state.restore_prefix_choices(s.get(keys.WITH_PREFIX))
        self.table.set_only_flagged(s.get(keys.ONLY_FLAGGED))
        self._rebuild_recent()

    def default_layout(self) -> None:
        """Side panels just wide enough for their controls; the text gets the rest."""
        h, v = Qt.Orientation.Horizontal, Qt.Orientation.Vertical
        self.resizeDocks([self.strategy_dock, self.detail_dock], [340, 380], h)
        self.resizeDocks([self.strategy_dock, self.stats_dock], [230, 520], v)
        self.resizeDocks([self.table_dock], [220], v)

    def save_settings(self) -> None:
        s = self.settings
        s.set(keys.GEOMETRY, bytes(self.saveGeometry().data()))
        s.set(keys.WINDOW_STATE, bytes(self.saveState().data()))
        s.set(keys.STRATEGY, self.state.strategy)
        s.set(keys.PARAMS, self.state.all_params())
        s.set(keys.WITH_PREFIX, self.state.prefix_choices())
        s.set(keys.ONLY_FLAGGED, self.table.proxy.only_flagged)
        s.sync()

    def closeEvent(self, e) -> None:
        if not self._closing:
            self._closing = True
            self.save_settings()
            # Hide first: waiting for a running stage (at most one uninterruptible core call)
            # should not look like a frozen window.
            self.hide()
            self.controller.shutdown()
        super().closeEvent(e)


def open_later(window: MainWindow, paths: Sequence[str]) -> None:
    """Open after the event loop has shown the window (keeps launch-to-visible short)."""
    QTimer.singleShot(0, lambda: window.open_paths(paths))
