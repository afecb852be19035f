"""The main window: the document in the centre, panels in docks, menus, toolbar and status bar.

The window is the composition root: it builds the widgets and the groups of actions, hands each
the one `InspectorState` (and the few other things it needs), connects them, and persists what
the user arranged. It holds no chunking logic: the controller re-chunks, the widgets repaint from
signals. More panels plug in through `add_panel`, and can mark chunks on the overview strip with
`mark_chunks`.

The actions live beside it, one group a module in `inspector.qt.actions`: opening files
(`file_actions`), the gold set's files (`gold_actions`), strategy files and plug-ins
(`plugin_actions`), exports (`export_actions`).

Asking and measuring: the question bar sits above the text, the Reader and the gold set panel are
docks, and `RetrievalController` (the retrieval half of the state) keeps their figures current on a
worker thread. The embedding model loads in the background once the window is up
(`start_model`); until then BM25 answers and the status bar says so.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QIcon, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from inspector.core import api
from inspector.core.viewmodel import settings_schema as keys
from inspector.qt import theme
from inspector.qt.actions.export_actions import ExportActions
from inspector.qt.actions.file_actions import FileActions, dropped_paths, split_dropped
from inspector.qt.actions.gold_actions import GoldActions
from inspector.qt.actions.history_actions import HistoryActions
from inspector.qt.actions.make_action import make_action
from inspector.qt.actions.plugin_actions import PluginActions
from inspector.qt.actions.view_actions import ViewActions
from inspector.qt.controllers.chunk_jobs import ChunkResult, ChunkRunner
from inspector.qt.controllers.chunking import DEBOUNCE_MS, ChunkingController
from inspector.qt.controllers.retrieval import (
    ASK_BUDGET,
    ASK_K,
    ASK_RETRIEVER,
    MODEL_FAILED,
    MODEL_LOADING,
    MODEL_READY,
    SETTLE_MS,
    RetrievalController,
)
from inspector.qt.controllers.state import InspectorState
from inspector.qt.controllers.trace import TraceController
from inspector.qt.dock_layout import DockLayout, scrollable
from inspector.qt.document.find_bar import FindBar
from inspector.qt.document.hits import answer_color, hit_color
from inspector.qt.document.overview_strip import OverviewStrip
from inspector.qt.document.stale_veil import StaleMarker
from inspector.qt.document.view import DocumentView
from inspector.qt.messages import MessageCenter
from inspector.qt.panels.audit_mode import AuditMode
from inspector.qt.panels.chunk_table import ChunkTable
from inspector.qt.panels.corpus_panel import CorpusPanel
from inspector.qt.panels.detail_pane import DetailPane
from inspector.qt.panels.gold_panel import GoldFiles, GoldPanel
from inspector.qt.panels.gold_tools import GoldTools
from inspector.qt.panels.question_bar import QuestionBar, hit_counts
from inspector.qt.panels.reader import Reader
from inspector.qt.panels.stats_panel import StatsPanel
from inspector.qt.panels.strategy_panel import StrategyPanel, strategy_label
from inspector.qt.settings import Settings

if TYPE_CHECKING:
    from inspector.core.api import Document
    from inspector.qt.dialogs.sweep_dialog import SweepDialog
    from inspector.qt.panels.rerank_box import RerankBox

RESOURCES = Path(__file__).resolve().parents[2] / "resources"

#: Plug-in strategies are registered after the first complete chunks, or this long after the
#: window is made when no chunks come (`MainWindow._register_plugins_later`).
PLUGINS_LATEST_MS = 1000


def readable_tabs(bar: QTabBar) -> None:
    """A dock group's tabs show their whole titles ("Embedded text", "PDF Page"), with scroll
    arrows when the column is too narrow for all of them, instead of Qt's default of cutting
    every title down to a few letters ("Stra...", "Re...") in a small window (issue 30)."""
    bar.setElideMode(Qt.TextElideMode.ElideNone)
    bar.setUsesScrollButtons(True)
    bar.setExpanding(False)


class MainWindow(QMainWindow):
    """Chunk Inspector's window."""

    documentOpened = Signal(object)
    """The Document now shown (after a successful open)."""
    rerank_box: RerankBox
    """The gold panel's "Score with reranker" box (set by `actions.rerank_actions`)."""

    def __init__(self, settings: QSettings, *, runner: ChunkRunner | None = None,
                 debounce_ms: int = DEBOUNCE_MS, embedder=None, embedding_cache=None,
                 settle_ms: int = SETTLE_MS, synchronous_retrieval: bool = False,
                 parent: QWidget | None = None) -> None:
        """`embedder` (default: the bundled model) is only loaded by `start_model`; tests inject a
        fast one. `embedding_cache` defaults to the user's cache once the bundled model is used.

        The order of the steps is the order things must hear the state's signals in: each part
        connects to them as it is built, and a later part relies on an earlier one having taken
        the new document (or chunks) first."""
        super().__init__(parent)
        self.settings = Settings(settings)
        self.state = InspectorState(self)
        self.runner = runner if runner is not None else ChunkRunner(self)
        if self.runner.parent() is None:
            self.runner.setParent(self)
        self._closing = False
        self._setup_window()
        self._build_text()
        # The retrieval state, before the chunking controller: on a document change it must have
        # taken the new document before a (synchronous) chunk result for it arrives.
        self.retrieval = RetrievalController(self.state, embedder=embedder, cache=embedding_cache,
                                             synchronous=synchronous_retrieval, settle_ms=settle_ms, parent=self)
        self.gold_files = GoldFiles(self.settings)
        self._build_centre()
        self._build_docks()
        self._build_controllers(debounce_ms, synchronous_retrieval)
        # The status bar first: the groups of actions report through its message line.
        self._build_status_bar()
        self._build_action_groups()
        self._build_housekeeping()
        # Edit ▸ Undo/Redo: what an open, a gold set, a question, an import or a pin replaced.
        self.history = HistoryActions(self.state, self.retrieval, self.messages, gold_files=self.gold_files,
                                      parent=self)
        self.history.connect_sources(self.files, self.gold, self.plugins)
        self._build_actions()
        self._build_menus()
        self._build_toolbar()
        self._build_modes()
        self._connect()
        self._install_views()
        if self.settings.get(keys.STRATEGY) in api.strategies():
            self._register_plugins_later()
        else:  # before restoring: the saved strategy may be a plug-in's
            self.plugins.load_installed()
        self.restore_settings()

    # -- building --------------------------------------------------------------------------------
    def _setup_window(self) -> None:
        self.setWindowTitle("Chunk Inspector")
        icon = RESOURCES / "chunk-inspector.svg"
        if icon.exists():
            self.setWindowIcon(QIcon(str(icon)))
        self.setAcceptDrops(True)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)

    def _build_text(self) -> None:
        """The document view, its overview strip and the find bar under them."""
        self.view = DocumentView(self.state)
        self.strip = OverviewStrip()
        self.find_bar = FindBar(self.view)
        self.find_bar.hide()

    def _build_centre(self) -> None:
        """Centre: text + overview strip, find bar below (the question bar is a toolbar row above,
        as wide as the window)."""
        self.question_bar = QuestionBar(self.retrieval, self.view)
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

    def _build_docks(self) -> None:
        """The panels in docks: strategy and statistics (and documents) left, the embedded text
        and the Reader right, the chunk table and the gold set below."""
        self.strategy_panel = StrategyPanel(self.state)
        self.stats_panel = StatsPanel(self.state)
        self.table = ChunkTable(self.state)
        self.detail = DetailPane(self.state)
        self.strategy_dock = self.add_panel(scrollable(self.strategy_panel), "Strategy",
                                            Qt.DockWidgetArea.LeftDockWidgetArea)
        self.stats_dock = self.add_panel(scrollable(self.stats_panel), "Statistics",
                                         Qt.DockWidgetArea.LeftDockWidgetArea)
        self.detail_dock = self.add_panel(self.detail, "Embedded text", Qt.DockWidgetArea.RightDockWidgetArea)
        self.table_dock = self.add_panel(self.table, "Chunks", Qt.DockWidgetArea.BottomDockWidgetArea)
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.reader = Reader(self.retrieval, self.state)
        self.gold_panel = GoldPanel(self.retrieval)
        self.reader_dock = self.add_panel(self.reader, "Reader", Qt.DockWidgetArea.RightDockWidgetArea)
        self.gold_dock = self.add_panel(self.gold_panel, "Gold set", Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.detail_dock, self.reader_dock)
        self.tabifyDockWidget(self.table_dock, self.gold_dock)
        self.detail_dock.raise_()
        self.table_dock.raise_()
        self.sweep_dialog: SweepDialog | None = None
        # The document list of a corpus (shown when more than one document, or a bad file, is open).
        self.corpus_panel = CorpusPanel(self.state)
        self.corpus_dock = self.add_panel(self.corpus_panel, "Documents", Qt.DockWidgetArea.LeftDockWidgetArea)
        self.tabifyDockWidget(self.stats_dock, self.corpus_dock)
        self.corpus_dock.hide()
        self.corpus_panel.wantsVisible.connect(self._show_corpus_dock)
        self.dock_layout = DockLayout(self)
        """Places the docks for the window's size (compact under 1200 px) and raises the gold tab."""

    def _build_controllers(self, debounce_ms: int, synchronous_retrieval: bool) -> None:
        """Created after the widgets, so that on a document change they have taken the new
        document before any (synchronous) result for it arrives."""
        self.controller = ChunkingController(self.state, self.runner, debounce_ms=debounce_ms, parent=self)
        # New chunks requested: embedding the current ones for exact figures is superseded at once.
        self.controller.requested.connect(self.retrieval.chunks_requested)
        # The exact hit-rate trace under the size slider (its own low-priority runner).
        self.trace = TraceController(self.state, self.retrieval, synchronous=synchronous_retrieval, parent=self)
        self.strategy_panel.attach_trace(self.trace)
        self.stale = StaleMarker(self.state, self.controller,
                                 (self.view, self.stats_panel, self.table, self.gold_panel.splitter), parent=self)
        """Veils the text, statistics, table and gold figures while they show superseded chunks."""

    def _build_action_groups(self) -> None:
        """Opening files, the gold set's files, strategy files and plug-ins."""
        self.files = FileActions(self.state, self.messages, self.settings, self)
        self.files.opened.connect(self.documentOpened)
        self.gold = GoldActions(self.state, self.retrieval, self.gold_panel, self.gold_files, self.messages,
                                self.settings, selected_text=self._selected_text, parent=self)
        self.files.opened.connect(lambda _doc: self.gold.load_for_document())
        self.plugins = PluginActions(self.state, self.messages, self.settings,
                                     strategies_registered=self._on_strategies_registered,
                                     show_strategy=self.show_strategy, parent=self)
        from inspector.qt.actions.store_actions import StoreActions

        # File ▸ Open Vector Store…: the user's own chunks and vectors as the strategy "store:SPEC".
        self.stores = StoreActions(self, self.messages, self.settings,
                                   strategies_registered=self._on_strategies_registered,
                                   show_strategy=self.show_strategy)

    def _build_housekeeping(self) -> None:
        from inspector.qt.heap_trim import HeapTrimmer

        self.heap_trimmer = HeapTrimmer(parent=self)
        """Gives freed memory back to the system every few seconds (issue 17's soak)."""
        from inspector.qt.idle_gc import IdleCollector

        self.idle_gc = IdleCollector(self._working, parent=self)
        """Full garbage collections wait until the user is idle (issue 17's heartbeat and soak)."""
        self.idle_gc.follow_focus()  # input in a dialog the user turns to counts too

    def _build_modes(self) -> None:
        self.audit_mode = AuditMode(self)  # Evaluate ▸ Audit Mode: the Reader at full height, keyboard judging
        self.gold_tools = GoldTools(self)  # Edit ▸ Quick Question, Draft Questions, Gold Coverage
        from inspector.qt.actions.device_actions import DeviceActions

        self.device_actions = DeviceActions(self)  # Settings ▸ Embedding Device; the device in the status bar

    def _connect(self) -> None:
        self.strip.jumpRequested.connect(self.view.scroll_to_line_fraction)
        self.view.verticalScrollBar().valueChanged.connect(self._update_strip_view)
        self.view.verticalScrollBar().rangeChanged.connect(lambda *_a: self._update_strip_view())
        self.state.chunksChanged.connect(self._on_chunks)
        self.state.documentChanged.connect(self._on_document)
        self.state.documentsChanged.connect(self._on_documents)
        self.state.busyChanged.connect(self._on_busy)
        self.state.errorChanged.connect(self._on_error)
        self.table.onlyFlaggedChanged.connect(self._on_only_flagged)
        self._connect_retrieval()

    def _install_views(self) -> None:
        """What plugs into the window once it stands: the baseline's lanes, the embedding map, the
        bill, the language note."""
        from inspector.qt.document.compare_lane import CompareLanes

        self.compare = CompareLanes(self.state, self.retrieval, self.view, self.strip, self.gold_panel, self)
        """The pinned baseline's chunks beside the current ones (gutter, strip, gold panel)."""
        from inspector.qt.panels.embedding_map import install_embedding_map

        self.embedding_map = install_embedding_map(self)  # View ▸ Embedding Map
        from inspector.qt.controllers.bill import install_bill
        from inspector.qt.panels.language_note import install_language_note

        self.bill = install_bill(self)  # money and time in the statistics and gold panels, the sweep
        self.language_note = install_language_note(self)  # the bundled English model vs the text's language
        from inspector.qt.actions.rerank_actions import install_reranker

        self.rerank_actions = install_reranker(self)  # Settings ▸ Reranker…, the gold panel's Score with reranker
        from inspector.qt.actions.embedder_actions import install_embedder_choice

        self.embedder_actions = install_embedder_choice(self)  # Settings ▸ Embedding Model…
        from inspector.qt.actions.pdf_actions import install_pdf_backend
        from inspector.qt.panels.pdf_page import install_pdf_page

        self.pdf_backend_actions = install_pdf_backend(self)  # Settings ▸ PDF Backend
        from inspector.qt.actions.embed_view_actions import install_embed_view

        self.embed_view_actions = install_embed_view(self)  # Settings ▸ Embedding View
        self.pdf_page = install_pdf_page(self)  # View ▸ PDF Page: the page the current chunk came from

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
    def _build_actions(self) -> None:
        self.open_action = self.files.open_action
        self.open_folder_action = self.files.open_folder_action
        self.load_gold_action = self.gold.load_gold_action
        self.add_question_action = self.gold.add_question_action
        self.quit_action = make_action(self, "&Quit", self.close, QKeySequence.StandardKey.Quit, "Quit Chunk Inspector")
        self.find_action = make_action(self, "&Find…", self.find_bar.open_bar, QKeySequence.StandardKey.Find,
                                       "Find text in the document")
        self.next_action = make_action(self, "&Next Chunk", lambda: self.view.select_relative(1), "Alt+Down",
                                       "Select the next chunk")
        self.prev_action = make_action(self, "&Previous Chunk", lambda: self.view.select_relative(-1), "Alt+Up",
                                       "Select the previous chunk")
        self.only_flagged_action = make_action(self, "Only &Flagged Chunks", self.table.set_only_flagged,
                                               "Ctrl+Shift+F", "Show only flagged chunks in the table",
                                               checkable=True)
        self.about_action = make_action(self, "&About Chunk Inspector", self.about)
        self.next_hit_action = make_action(self, "Next &Hit", self.question_bar.next_hit, "F3",
                                           "Scroll to the question's next retrieved chunk")
        self.prev_hit_action = make_action(self, "Previous H&it", self.question_bar.previous_hit, "Shift+F3",
                                           "Scroll to the question's previous retrieved chunk")
        self.ask_action = make_action(self, "As&k a Question", self._focus_question, "Ctrl+K",
                                      "Type a question and see which chunks come back")
        self.pin_action = make_action(self, "&Pin as Baseline", self.retrieval.pin_baseline, "Ctrl+B",
                                      "Keep the current report to compare later settings against")
        self.sweep_action = make_action(self, "&Sweep Size and Overlap…", self.open_sweep, "Ctrl+Shift+W",
                                        "Score a grid of chunk sizes and overlaps on the gold set")
        self.exports = ExportActions(self, self.show_error, self.show_message)
        self.view_actions = ViewActions(self.settings, reset_layout=self.dock_layout.reset, parent=self)
        self.legend_action = self.view_actions.legend_action
        self.view.context_actions = [self.add_question_action]

    def _build_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        self.files.add_to(file_menu)
        self.recent_menu = self.files.recent_menu
        file_menu.addSeparator()
        file_menu.addAction(self.load_gold_action)
        self.plugins.add_to(file_menu)
        self.stores.add_to(file_menu)
        self.export_menu = self.exports.add_to(file_menu)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = mb.addMenu("&Edit")
        self.history.add_to(edit_menu)
        edit_menu.addSeparator()
        edit_menu.addAction(self.add_question_action)
        view_menu = mb.addMenu("&View")
        self.view_menu = view_menu
        view_menu.addAction(self.find_action)
        view_menu.addSeparator()
        view_menu.addAction(self.next_action)
        view_menu.addAction(self.prev_action)
        view_menu.addAction(self.only_flagged_action)
        view_menu.addSeparator()
        view_menu.addAction(self.next_hit_action)
        view_menu.addAction(self.prev_hit_action)
        view_menu.addSeparator()
        self.panels_menu = view_menu.addMenu("&Panels")
        for dock in (self.strategy_dock, self.stats_dock, self.table_dock, self.detail_dock, self.reader_dock,
                     self.gold_dock, self.corpus_dock):
            self.panels_menu.addAction(dock.toggleViewAction())
        self.theme_menu = self.view_actions.add_to(view_menu)
        eval_menu = mb.addMenu("E&valuate")
        eval_menu.addAction(self.ask_action)
        eval_menu.addAction(self.pin_action)
        eval_menu.addAction(self.sweep_action)
        help_menu = mb.addMenu("&Help")
        help_menu.addAction(self.legend_action)
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
        self.main_toolbar = tb
        from inspector.qt.toolbar_fit import ToolbarFit

        # Narrow, the chunk buttons show their icons only so that no action (Audit Mode, added
        # later, has no icon) goes behind ».
        self.toolbar_fit = ToolbarFit(tb, (self.only_flagged_action, self.prev_action, self.next_action,
                                           self.find_action, self.open_folder_action, self.open_action))
        # The question bar: a row of its own under the main toolbar, as wide as the window.
        self.addToolBarBreak(Qt.ToolBarArea.TopToolBarArea)
        ask = self.addToolBar("Ask")
        ask.setObjectName("toolbar_ask")
        ask.setMovable(False)
        ask.setFloatable(False)
        ask.addWidget(self.question_bar)
        self.ask_toolbar = ask

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
        self.embed_progress = QProgressBar()
        self.embed_progress.setFixedSize(230, 14)
        self.embed_progress.setTextVisible(True)
        self.embed_progress.setToolTip("Chunks embedded by the model (a newer request cancels this one)")
        self.embed_progress.hide()
        self.model_label = QLabel()
        self.model_label.setToolTip("The embedding model loads in the background; BM25 answers until it is ready")
        sb.addPermanentWidget(self.embed_progress)
        sb.addPermanentWidget(self.model_label)
        sb.addPermanentWidget(self.busy)
        sb.addPermanentWidget(self.info)
        self.messages = MessageCenter(self.message, sb, self)

    # -- opening -------------------------------------------------------------------------------
    def open_user_paths(self, paths: Sequence[str | os.PathLike[str]]) -> bool | int:
        """Open files and folders as the user asked (big inputs load in the background; see
        `FileActions.open_user_paths`)."""
        return self.files.open_user_paths(paths)

    def open_paths(self, paths: Sequence[str | os.PathLike[str]]) -> bool:
        """Open files and folders on the calling thread (`FileActions.open_paths`)."""
        return self.files.open_paths(paths)

    def recent_files(self) -> list[str]:
        return self.files.recent_files()

    def dragEnterEvent(self, e) -> None:
        if dropped_paths(e.mimeData()):
            e.acceptProposedAction()

    def dropEvent(self, e) -> None:
        paths = dropped_paths(e.mimeData())
        if paths:
            e.acceptProposedAction()
            docs, gold = split_dropped(paths)
            if docs:
                self.files.open_user_paths(docs)
            if gold:
                self.gold_panel.open_gold(gold[0])

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
            import numpy as np  # not before the window shows (issue 31)

            n = max(1, result.line_count)
            self.strip.set_boundaries(np.asarray(result.start_lines, dtype=np.float64) / n, self.view.theme.muted)
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
            parts.append(f"{r.stats.count:,} chunks · {strategy_label(r.request.strategy)}")
        self.info.setText("  ·  ".join(parts) + "  ")

    def _update_strip_view(self, *_args) -> None:
        self.strip.set_view(*self.view.visible_line_fractions())

    def _on_busy(self, busy: bool) -> None:
        self.busy.setVisible(busy)

    def _on_error(self, message: str) -> None:
        if message:
            # A strategy that raised: its traceback behind Details…; a bad parameter: the line only.
            self.show_error(message, getattr(self.runner, "last_error_details", ""))
        else:
            self.show_message("")

    def _on_only_flagged(self, on: bool) -> None:
        if self.only_flagged_action.isChecked() != on:
            self.only_flagged_action.setChecked(on)

    def _reveal_gold(self) -> None:
        """A gold file loaded: show the Gold set dock. Not while audit mode holds the window (the
        dock layout's `held`): its layout is the Reader's alone, and Add Marked as Gold Questions
        opened the dock over it (issue 26); the status bar says what was added, and leaving the
        mode gives back the user's own layout."""
        if not self.dock_layout.held():
            self.gold_dock.show()

    def show_message(self, text: str) -> None:
        self.messages.info(text)

    def show_error(self, text: str, details: str = "") -> None:
        """A problem, in red in the status bar (hover, or Details…, for the details); also
        `messages.last_error`."""
        self.messages.error(text, details)

    def _show_corpus_dock(self, show: bool) -> None:
        self.corpus_dock.setVisible(show)
        if show:
            self.corpus_dock.raise_()

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
        else:
            self.dock_layout.auto = False  # the user's own arrangement
        self.view_actions.restore()
        self.state.restore_params(s.get(keys.PARAMS))
        strategy = s.get(keys.STRATEGY)
        with contextlib.suppress(ValueError):
            self.state.set_strategy(strategy)
        self.strategy_panel.rebuild()
        self.state.restore_prefix_choices(s.get(keys.WITH_PREFIX))
        self.table.set_only_flagged(s.get(keys.ONLY_FLAGGED))
        self.retrieval.k = max(1, min(50, s.get(ASK_K)))
        self.retrieval.budget = max(0, s.get(ASK_BUDGET)) or None
        retriever = s.get(ASK_RETRIEVER)
        self.retrieval.retriever = retriever if api.is_retriever(retriever) else api.DEFAULT_RETRIEVER
        self.retrieval.settingsChanged.emit()
        self.files.rebuild_recent()

    def default_layout(self) -> None:
        """The docks arranged and sized for the window's size (`DockLayout`: compact under
        1200 px, side columns and the bottom docks a share of the window); applied once the
        window is shown, and again when its size crosses 1200 px until the user arranges docks."""
        self.dock_layout.request()

    def save_settings(self) -> None:
        s = self.settings
        s.set(keys.GEOMETRY, bytes(self.saveGeometry().data()))
        s.set(keys.WINDOW_STATE, bytes(self.saveState().data()))
        s.set(keys.STRATEGY, self.state.strategy)
        s.set(keys.PARAMS, self.state.all_params())
        s.set(keys.WITH_PREFIX, self.state.prefix_choices())
        s.set(keys.ONLY_FLAGGED, self.table.proxy.only_flagged)
        s.set(ASK_K, self.retrieval.k)
        s.set(ASK_BUDGET, self.retrieval.budget or 0)
        s.set(ASK_RETRIEVER, self.retrieval.retriever)
        s.sync()

    def childEvent(self, e) -> None:
        super().childEvent(e)
        if e.type() == QEvent.Type.ChildPolished and isinstance(e.child(), QTabBar):
            readable_tabs(e.child())

    def showEvent(self, e) -> None:
        super().showEvent(e)
        handle = self.windowHandle()  # made by the first show
        if handle is not None:
            self.idle_gc.watch(handle)  # every mouse and key event of the window's widgets (once)
        QTimer.singleShot(0, self, self._hide_stray_tab_bars)

    def _working(self) -> bool:
        """A job runs in any runner, or a big document is still being laid out."""
        from inspector.qt.runner import LIVE_RUNNERS

        return self.view.loading or any(r.busy for r in list(LIVE_RUNNERS))

    def _hide_stray_tab_bars(self) -> None:
        """Qt 6.11 leaves a stale copy of a dock group's tab bar, visible, when a second group is
        tabified before the window is first laid out (two groups here: Embedded text/Reader and
        Chunks/Gold set). A live tab bar spans its group's dock horizontally; a stale one kept the
        geometry of a layout that no longer exists."""
        docks = [d for d in self.findChildren(QDockWidget) if d.isVisible() and not d.isFloating()]
        for bar in self.findChildren(QTabBar, options=Qt.FindChildOption.FindDirectChildrenOnly):
            if not bar.isVisible():
                continue
            titles = {bar.tabText(i) for i in range(bar.count())}
            g = bar.geometry()
            if not any(d.windowTitle() in titles and d.geometry().left() == g.left()
                       and d.geometry().width() == g.width() for d in docks):
                bar.hide()

    def closeEvent(self, e) -> None:
        if not self._closing:
            self._closing = True
            self.save_settings()
            # Hide first: waiting for a running stage (at most one uninterruptible core call)
            # should not look like a frozen window.
            self.hide()
            self.heap_trimmer.stop()
            self.idle_gc.stop()
            self.controller.shutdown()
            self.corpus_panel.shutdown()
            if self.sweep_dialog is not None:
                self.sweep_dialog.close()
                self.sweep_dialog.shutdown()
            self.trace.shutdown()
            self.embedding_map.shutdown()
            self.pdf_page.shutdown()
            self.retrieval.shutdown()
            self.stores.shutdown()
            self.rerank_box.shutdown()
            self.embedder_actions.shutdown()
            self.files.shutdown()
        super().closeEvent(e)

    # -- asking and measuring --------------------------------------------------------------------
    def _connect_retrieval(self) -> None:
        r = self.retrieval
        r.resultReady.connect(self._on_retrieval)
        r.cleared.connect(lambda: self.strip.set_marks("hits", ()))
        r.progressChanged.connect(self._on_embed_progress)
        r.modelStateChanged.connect(lambda _s: self._update_model_label())
        r.pooledProgress.connect(lambda _d, _t: self._update_model_label())
        r.pooledReady.connect(lambda _doc: self._update_model_label())
        r.errored.connect(self.show_error)
        self.question_bar.asked.connect(self._on_asked)
        self.reader.saveRequested.connect(lambda q: self.gold.append_question(q))
        self.gold_panel.questionSelected.connect(self._on_gold_question)
        self.gold_panel.goldLoaded.connect(self.gold.remember)
        self.gold_panel.goldLoaded.connect(lambda _path: self._reveal_gold())
        self.gold_panel.loadFailed.connect(self.show_error)
        # The question's hits per document of a corpus, and a jump to a document's best hit.
        r.resultReady.connect(lambda res: self.corpus_panel.set_hits(
            hit_counts(res) if res.request.question else None))
        r.questionChanged.connect(self._on_question)
        self.corpus_panel.hit_jump = self.question_bar.jump_to_best_hit
        self.corpus_panel.chunk_store = lambda: r.workbench.chunk_store  # counts chunk the corpus once for both
        self._pooled_progress = (0, 0)
        r.pooledProgress.connect(self._on_pooled_progress)
        self._update_model_label()

    def _on_question(self, question: str) -> None:
        if not question:  # no question: no document holds hits
            self.corpus_panel.set_hits(None)

    def start_model(self) -> None:
        """Load the embedding model in the background (call once the window is up)."""
        self.retrieval.start_model()

    def _focus_question(self) -> None:
        self.question_bar.field.setFocus()
        self.question_bar.field.selectAll()

    def _on_asked(self, question: str) -> None:
        self.view.set_answer_spans((), reveal=False)
        self.strip.set_marks("answer", ())
        if question:
            self.reader_dock.show()
            self.reader_dock.raise_()

    def _on_retrieval(self, result) -> None:
        doc = self.state.document
        if doc is None or not result.hits:
            self.strip.set_marks("hits", ())
            return
        from inspector.qt.controllers.chunk_jobs import _line_index

        lines = _line_index(doc)
        fractions = lines.fractions([h.chunk.start for h in result.hits if h.chunk.doc_id == doc.doc_id]).tolist()
        self.strip.set_marks("hits", fractions, hit_color(self.view.theme), 3.0, "Retrieved chunks")

    def _on_embed_progress(self, done: int, total: int, label: str) -> None:
        if total <= 0:
            self.embed_progress.hide()
            return
        self.embed_progress.setRange(0, total)
        self.embed_progress.setValue(done)
        self.embed_progress.setFormat(f"{label or 'Embedding'}: %v/%m")
        self.embed_progress.show()

    def _on_pooled_progress(self, done: int, total: int) -> None:
        self._pooled_progress = (done, total)
        self._update_model_label()

    def _update_model_label(self) -> None:
        r = self.retrieval
        done, total = getattr(self, "_pooled_progress", (0, 0))
        if r.model_state == MODEL_LOADING:
            text, color = "Loading embedding model… BM25 answers meanwhile", theme.WARNING
        elif r.model_state == MODEL_FAILED:
            text, color = "No embedding model: BM25 only", theme.BAD
        elif r.model_state == MODEL_READY:
            if total > 0:
                text, color = f"Model ready · preparing live preview {done * 100 // max(1, total)} %", ""
            else:
                text, color = "Model ready", theme.GOOD
        else:
            text, color = "", ""
        self.model_label.setText(text + ("  " if text else ""))
        self.model_label.setStyleSheet(f"color: {color};" if color else "")

    def _on_gold_question(self, q) -> None:
        doc = self.state.document
        if doc is None:
            return
        spans = api.answer_spans(doc, q)
        home = None if spans else self._answer_document(q)
        if home is not None:  # the answer lies in another document of the corpus: show it there
            self.state.set_document(home)
            doc = home
            spans = api.answer_spans(doc, q)
        if self.retrieval.question != q.question:
            self.question_bar.ask(q.question, reveal=not spans)  # the answer is what to look at
        self.view.set_answer_spans(spans, reveal=bool(spans))
        if spans and self.view.loading:  # a big text still going into the view: scroll once it is in
            self._reveal_when_loaded(doc, spans[0][0])
        from inspector.qt.controllers.chunk_jobs import _line_index

        self.strip.set_marks("answer", _line_index(doc).fractions([a for a, _b in spans]).tolist(),
                             answer_color(self.view.theme), 4.0, "Gold answer")

    def _answer_document(self, q) -> Document | None:
        """Another open document that holds a gold question's answer: its source, else (a question
        naming none) the first where the answer is found; None when there is none."""
        doc = self.state.document
        others = [d for d in self.state.documents if d is not doc]
        if q.source is not None:
            return next((d for d in others if d.doc_id == q.source), None)
        return next((d for d in others if api.answer_spans(d, q)), None)

    def _reveal_when_loaded(self, doc: Document, offset: int) -> None:
        def reveal(loaded: Document) -> None:
            self.view.loaded.disconnect(reveal)
            if loaded is doc and self.state.document is doc:
                self.view.scroll_to_offset(offset, context_lines=4)

        self.view.loaded.connect(reveal)

    # -- gold set, strategies --------------------------------------------------------------------
    def add_question(self, question: str | None = None, answer: str | None = None,
                     path: str | os.PathLike[str] | None = None) -> bool:
        """Edit ▸ Add to Gold Set… (`GoldActions.add_question`)."""
        return self.gold.add_question(question, answer, path)

    def _selected_text(self) -> str:
        """The text selected in the document, with its line breaks (a new question's answer)."""
        return self.view.selected_source_text()

    def _register_plugins_later(self) -> None:
        """Plug-in strategies and LangChain's splitters are registered once the first complete
        chunks are painted, or PLUGINS_LATEST_MS after the window is made when none come (no
        document, an error). Issue 31: the entry points' scan reads every installed package's
        metadata (60-90 ms on the GUI thread before the window showed). The selector gains them
        with the controls left alone (the user may be dragging a slider by then); a plug-in that
        replaces the strategy shown rebuilds them and re-runs it, as a file loaded again does."""
        done = False

        def register() -> None:
            nonlocal done
            if done or self._closing:
                return
            done = True
            self.state.chunksChanged.disconnect(on_chunks)
            before = api.strategies()
            self.plugins.load_installed(refresh=False)
            after = api.strategies()
            replaced = [name for name, strategy in before.items() if after.get(name) is not strategy]
            for name in replaced:  # counts made with a replaced strategy are stale
                self.corpus_panel.forget_strategy(name)
            if self.state.strategy in replaced:
                self.strategy_panel.refresh_strategies()
                self.show_strategy(self.state.strategy)
            elif replaced or list(after) != list(before):
                self.strategy_panel.refresh_strategies(controls=False)

        def on_chunks(result: ChunkResult | None) -> None:
            if result is not None and result.complete:
                QTimer.singleShot(0, self, register)  # after this turn's paint

        self.state.chunksChanged.connect(on_chunks)
        QTimer.singleShot(PLUGINS_LATEST_MS, self, register)

    def _on_strategies_registered(self, names: Sequence[str]) -> None:
        """Strategy files, imported chunks or plug-ins changed the registry: counts made with a
        re-registered strategy are stale, and the selector must show the new ones."""
        for name in names:
            self.corpus_panel.forget_strategy(name)
        self.strategy_panel.refresh_strategies()

    def show_strategy(self, name: str) -> None:
        """Show `name`'s chunks: switch to it, or re-run it when it is already selected (a file
        loaded again replaces the strategy under the same name)."""
        if self.state.strategy == name:
            self.controller.submit_now()
        else:
            self.state.set_strategy(name)

    def apply_config(self, config) -> None:
        """Put an EvalConfig's settings in the window (a sweep cell, a loaded configuration)."""
        self.state.set_strategy(config.strategy)
        self.state.set_params(dict(config.params))
        if config.with_prefix is not None:
            self.state.set_with_prefix(bool(config.with_prefix))
        self.retrieval.set_retriever(config.retriever)
        self.retrieval.set_k(config.k)

    def open_sweep(self) -> None:
        from inspector.qt.dialogs.sweep_dialog import SweepDialog

        if self.sweep_dialog is None:
            self.sweep_dialog = SweepDialog(self.state, self.retrieval, self)
            self.sweep_dialog.configChosen.connect(self.apply_config)
        else:
            self.sweep_dialog.reset_from_window()
        self.sweep_dialog.show()
        self.sweep_dialog.raise_()

