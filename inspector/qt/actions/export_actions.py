"""File ▸ Export: the current chunks as JSONL (the CLI's format), the evaluation report as Markdown
and CSV, the configuration as a JSON file `chunk-inspector eval --config` accepts, the view as one
standalone HTML page (`chunk-inspector html`), and the settings as code for another library
(`chunk-inspector code`).

Every file is written with `atomic_write_text`: a failed export leaves any old file as it was.
The text of each export is made by a plain function (no widgets), so tests and scripts can
produce exactly what the menu writes.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

# The core is reached through `api.name` when an export runs, not imported here: the report's
# modules (evaluation, retrieval, numpy) are not needed to show the window (issue 31).
from inspector.core import api

#: Exports of more chunks than this are written on a thread of their own: with a large overlap
#: the JSONL of a 40 KB page ran to tens of megabytes, and making it on the GUI thread froze the
#: window for 1.9 s in the soak (issue 17).
THREAD_FROM_CHUNKS = 2_000


class _Finished(QObject):
    """Carries a background export's outcome to the GUI thread: (message, error); one is empty."""

    finished = Signal(str, str)


def _searched(result: Any) -> int:
    """How many documents a retrieval result's figures cover (its index's; the request's corpus
    when the index does not say)."""
    docs = getattr(result.index, "docs", None)
    return max(1, len(docs) if docs else len(result.request.documents))


class ExportActions:
    """The Export menu's actions, bound to a main window (its state and retrieval controller)."""

    def __init__(self, window: Any, report_error: Callable[[str], None], report_done: Callable[[str], None]) -> None:
        self.window = window
        self.report_error = report_error
        self.report_done = report_done
        self._finished = _Finished()
        self._finished.finished.connect(self._on_finished)
        self.threads: list[threading.Thread] = []
        """Background exports (large chunk lists), the running ones and those just finished."""
        parent: QWidget = window
        self.chunks_action = QAction("&Chunks as JSONL…", parent)
        self.chunks_action.setStatusTip("The current chunks, one JSON object a line (the CLI's jsonl format)")
        self.chunks_action.triggered.connect(lambda: self.export_chunks())
        self.markdown_action = QAction("Evaluation Report as &Markdown…", parent)
        self.markdown_action.triggered.connect(lambda: self.export_report_markdown())
        self.csv_action = QAction("Evaluation Report as &CSV…", parent)
        self.csv_action.triggered.connect(lambda: self.export_report_csv())
        self.config_action = QAction("C&onfiguration as JSON…", parent)
        self.config_action.setStatusTip("Strategy, parameters, k, retriever and prefix, for "
                                        "`chunk-inspector eval --config FILE`")
        self.config_action.triggered.connect(lambda: self.export_config())
        self.html_action = QAction("&View as HTML…", parent)
        self.html_action.setStatusTip("The text with its chunks, the question's hits and the gold set's results as "
                                      "one HTML file anyone can open in a browser")
        self.html_action.triggered.connect(lambda: self.export_html())
        self.code_action = QAction("Settings as Co&de…", parent)
        self.code_action.setStatusTip("The current strategy and parameters as a program for LangChain, LlamaIndex, "
                                      "chonkie or this project's API")
        self.code_action.triggered.connect(lambda: self.show_code())
        self.code_dialog: Any = None
        self.actions = (self.chunks_action, self.markdown_action, self.csv_action, self.config_action,
                        self.html_action, self.code_action)

    def add_to(self, menu: QMenu) -> QMenu:
        sub = menu.addMenu("&Export")
        for a in self.actions:
            sub.addAction(a)
        sub.aboutToShow.connect(self.update_enabled)
        return sub

    def update_enabled(self) -> None:
        has_chunks = self.window.state.result is not None
        r = self.window.retrieval.result
        self.chunks_action.setEnabled(has_chunks)
        self.config_action.setEnabled(self.window.state.document is not None or has_chunks)
        self.markdown_action.setEnabled(r is not None and r.report is not None)
        self.csv_action.setEnabled(r is not None and r.report is not None)
        self.html_action.setEnabled(has_chunks)

    # -- what is exported ----------------------------------------------------------------------------
    def current_config(self) -> Any:
        """The window's configuration as the CLI takes it (exact embeddings: what a pipeline sees)."""
        from inspector.core.api import EvalConfig

        s = self.window.state
        c = self.window.retrieval
        return EvalConfig(s.strategy, dict(s.params), c.k, c.retriever, s.with_prefix, "exact",
                          embed_view=s.embed_view)

    def _stem(self) -> str:
        doc = self.window.state.document
        return Path(doc.name).stem if doc is not None else "chunks"

    def _ask(self, title: str, suggestion: str, filt: str) -> str:
        from inspector.core.viewmodel import settings_schema as keys

        start = os.path.join(self.window.settings.get(keys.LAST_DIR) or str(Path.home()), suggestion)
        path, _ = QFileDialog.getSaveFileName(self.window, title, start, filt)
        return path

    def _write(self, path: str | os.PathLike[str], text: str, what: str) -> bool:
        try:
            api.atomic_write_text(path, text)
        except OSError as exc:
            self.report_error(api.write_failure(path, exc, what))
            return False
        self.report_done(f"Exported {what} to {path}")
        return True

    # -- exports -------------------------------------------------------------------------------------
    def export_chunks(self, path: str | os.PathLike[str] | None = None) -> bool:
        s = self.window.state
        if s.document is None:
            self.report_error("no chunks to export: open a document first")
            return False
        if s.result is None:  # a new document or strategy: its chunks are on their way
            self.report_error("no chunks to export yet: they are still being computed; export again once "
                              "they are shown")
            return False
        path = path or self._ask("Export chunks", f"{self._stem()}.{s.strategy}.jsonl", "JSON Lines (*.jsonl)")
        if not path:
            return False
        doc, chunks = s.document, s.result.chunks
        if len(chunks) <= THREAD_FROM_CHUNKS:
            return self._write(path, api.chunks_jsonl(doc, chunks), "the chunks")
        # Large: streamed to the file on a thread; the status bar says so now and when it is done.
        self.report_done(f"Exporting {len(chunks):,} chunks to {path}…")

        def run() -> None:
            try:
                with api.atomic_writer(path) as fh:
                    for line in api.chunks_jsonl_lines(doc, chunks):
                        fh.write(line.encode("utf-8"))
            except OSError as exc:
                self._finished.finished.emit("", api.write_failure(path, exc, "the chunks"))
            else:
                self._finished.finished.emit(f"Exported the chunks to {path}", "")

        self.threads = [t for t in self.threads if t.is_alive()]
        t = threading.Thread(target=run, name="export-chunks")
        self.threads.append(t)
        t.start()
        return True

    def _on_finished(self, message: str, error: str) -> None:
        if error:
            self.report_error(error)
        else:
            self.report_done(message)

    def _report(self) -> Any:
        r = self.window.retrieval.result
        return r if r is not None and r.report is not None else None

    def export_report_markdown(self, path: str | os.PathLike[str] | None = None) -> bool:
        r = self._report()
        if r is None:
            self.report_error("no evaluation report yet: load a gold set first")
            return False
        path = path or self._ask("Export report", f"{self._stem()}.report.md", "Markdown (*.md)")
        if not path:
            return False
        gold = self.window.retrieval.gold
        # The figures are the corpus's when one is open: every document is named, as the CLI does.
        docs = r.request.documents or (r.document,)
        text = api.report_markdown(r.report, r.config, mode=r.mode, gold_path=gold.path if gold is not None else "",
                               document=", ".join(d.doc_id for d in docs))
        return self._write(path, text, "the report")

    def export_report_csv(self, path: str | os.PathLike[str] | None = None) -> bool:
        r = self._report()
        if r is None:
            self.report_error("no evaluation report yet: load a gold set first")
            return False
        path = path or self._ask("Export report", f"{self._stem()}.report.csv", "CSV (*.csv)")
        if not path:
            return False
        return self._write(path, api.report_csv(r.report), "the report")

    def export_config(self, path: str | os.PathLike[str] | None = None) -> bool:
        try:
            config = self.current_config()
        except ValueError as exc:
            self.report_error(f"the configuration cannot be exported: {exc}")
            return False
        path = path or self._ask("Export configuration", f"{self._stem()}.config.json", "JSON (*.json)")
        if not path:
            return False
        return self._write(path, config.to_json() + "\n", "the configuration")

    def view_html(self) -> str:
        """The page File ▸ Export ▸ View as HTML… writes: what the window shows now (the hits and the
        figures only when they belong to the chunks on screen). With a corpus open the figures are
        the corpus's while the page shows one document's text: the page says so in its title and
        under it, rather than exporting every document's text into one page (a corpus of hundreds
        of files would make a page no browser opens quickly, and the reader wanted this view)."""
        from inspector.core.viewmodel.html_export import view_html

        s = self.window.state
        doc, chunks = s.document, s.result
        r = self.window.retrieval.result
        if r is not None and (r.request.chunk_request_id != chunks.request_id or r.document is not doc):
            r = None  # figures of other chunks (a re-chunk is being scored): left out
        label = f"{s.strategy} " + " ".join(f"{k}={v}" for k, v in s.params.items())
        config = r.config if r is not None else None
        spec = getattr(getattr(r.index, "embedder", None), "spec", None) if r is not None else None
        if config is not None and spec is not None and spec.kind != "minilm":
            from dataclasses import replace

            config = replace(config, embedder=spec)  # the figures name the user's model ("dense @st:…")
        return view_html(doc, chunks.chunks, hits=r.hits if r is not None and r.request.question else (),
                         question=r.request.question if r is not None else "",
                         answers=self.window.view.answer_spans, report=r.report if r is not None else None,
                         config=config, settings=label,
                         mode=r.mode if r is not None else "",
                         corpus_size=_searched(r) if r is not None else 1)

    def export_html(self, path: str | os.PathLike[str] | None = None) -> bool:
        s = self.window.state
        if s.result is None or s.document is None:
            self.report_error("nothing to export: open a document first")
            return False
        path = path or self._ask("Export view as HTML", f"{self._stem()}.{s.strategy}.html", "HTML (*.html)")
        if not path:
            return False
        return self._write(path, self.view_html(), "the view")

    def show_code(self) -> Any:
        """Settings as Code…: a dialog with the program for the chosen library, to copy or save."""
        from inspector.core.viewmodel import settings_schema as keys
        from inspector.qt.dialogs.code_dialog import CodeDialog

        s = self.window.state
        if self.code_dialog is not None:
            self.code_dialog.close()
        self.code_dialog = CodeDialog(s.strategy, dict(s.params), self.window, report_done=self.report_done,
                                      start_dir=self.window.settings.get(keys.LAST_DIR) or str(Path.home()))
        self.code_dialog.show()
        return self.code_dialog

