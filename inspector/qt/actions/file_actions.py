"""Getting documents into the window: File ▸ Open, Open Folder, Open Recent, drag-and-drop, the
command line's paths, and loading big inputs off the GUI thread.

Every way in ends in `FileActions.open_user_paths`. Small plain files open at once; big inputs
(over `BACKGROUND_LOAD_BYTES` in all, or PDF/DOCX/HTML, which need converting) load on a worker
thread so the window never freezes, the latest request winning. A file that cannot be opened is
reported with the line the CLI prints, and whatever was open stays open; so does a file with no
text at all (empty or only whitespace): opening it would throw away the document and its gold set
for nothing to look at. Before a successful open replaces anything `aboutToReplace` is emitted
(the window's Edit ▸ Undo keeps what was there); after it `opened` (the window then looks for
the document's gold set).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QMimeData, QObject, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu, QWidget

from inspector.core.viewmodel import settings_schema as keys
from inspector.qt.actions.make_action import make_action
from inspector.qt.controllers.state import InspectorState
from inspector.qt.messages import MessageCenter
from inspector.qt.panels.corpus_panel import document_warnings, load_corpus
from inspector.qt.panels.gold_panel import is_gold_path
from inspector.qt.runner import JobRunner
from inspector.qt.settings import Settings


def file_filter() -> str:
    """The Open dialog's filters, from the loaders' own suffix lists: every format the core opens
    by default (PDF, DOCX and HTML included), then one filter per kind."""
    from inspector.core.api import CONVERTED_SUFFIXES, MARKDOWN_SUFFIXES, TEXT_SUFFIXES

    def globs(suffixes) -> str:
        return " ".join(f"*{x}" for x in sorted(suffixes))

    kinds = (("Markdown", MARKDOWN_SUFFIXES), ("Plain text", TEXT_SUFFIXES), ("PDF", {".pdf"}),
             ("Word", {".docx"}), ("HTML", {".html", ".htm"} & CONVERTED_SUFFIXES))
    everything = MARKDOWN_SUFFIXES | TEXT_SUFFIXES | CONVERTED_SUFFIXES
    return ";;".join([f"Documents ({globs(everything)})", *(f"{name} ({globs(sfx)})" for name, sfx in kinds),
                      "All files (*)"])


FILE_FILTER = file_filter()
#: Inputs larger than this in all (or needing conversion, or whose encoding is guessed) load off
#: the GUI thread. Below it the bytes are read twice on the GUI thread, once to check whether
#: their encoding would be guessed (2-3 ms a megabyte), once to load them: 4 MB cost 8-11 ms more.
BACKGROUND_LOAD_BYTES = 1_000_000
#: The status line's tag while a background loading runs (its progress replaces only that line).
LOADING = "loading"
_CONVERTED = (".pdf", ".docx", ".html", ".htm")


def sample_path() -> Path:
    """The bundled handbook that opens when no file is given."""
    return Path(__file__).resolve().parents[3] / "sample_docs" / "handbook.md"


def needs_background_load(paths: Sequence[str]) -> bool:
    """True for PDF/DOCX/HTML, more than BACKGROUND_LOAD_BYTES of files (folders walked, with a
    cap on how much of the walk this quick check itself may take), or a file whose encoding would
    be guessed (`may_need_guessing`: a Latin-1 file of 2.7 MB took 220 ms to guess)."""
    total = 0
    seen = 0
    files: list[Path] = []
    for raw in paths:
        p = Path(raw)
        todo = [p] if not p.is_dir() else [q for q in p.rglob("*") if not any(part.startswith(".") for part in q.parts)]
        for q in todo:
            seen += 1
            if seen > 5000:
                return True
            if q.suffix.lower() in _CONVERTED:
                return True
            try:
                if q.is_file():
                    total += q.stat().st_size
                    files.append(q)
            except OSError:
                continue
            if total > BACKGROUND_LOAD_BYTES:
                return True
    from inspector.core.api import may_need_guessing

    for q in files:  # at most BACKGROUND_LOAD_BYTES in all, read again from the OS's cache to load
        try:
            if may_need_guessing(q.read_bytes()):
                return True
        except OSError:  # the load says what is wrong with it
            continue
    return False


def _blank(text: str) -> bool:
    """Empty or only whitespace (without copying a 20 MB text as `strip()` would)."""
    return not text or text.isspace()


def dropped_paths(mime: QMimeData) -> list[str]:
    """The local files and folders of a drag (empty when it carries none: the drop is refused)."""
    return [u.toLocalFile() for u in mime.urls() if u.isLocalFile()]


def split_dropped(paths: Sequence[str]) -> tuple[list[str], list[str]]:
    """(documents, gold files) among dropped paths: a gold set dropped with its document loads as
    the document's gold set, not as one more document."""
    gold = [p for p in paths if Path(p).is_file() and is_gold_path(p)]
    return [p for p in paths if p not in gold], gold


class PathOpener(Protocol):
    def open_user_paths(self, paths: Sequence[str | os.PathLike[str]]) -> bool | int: ...


def open_later(opener: PathOpener, paths: Sequence[str]) -> None:
    """Open after the event loop has shown the window (keeps launch-to-visible short)."""
    QTimer.singleShot(0, lambda: opener.open_user_paths(paths))


class FileActions(QObject):
    """The Open actions, the recent-files menu and the background loader."""

    opened = Signal(object)
    """The Document now shown (after a successful open)."""
    aboutToReplace = Signal(str)
    """An open is about to replace the documents (label: "Open handbook.md"); the window's undo
    history keeps what is there now."""

    def __init__(self, state: InspectorState, messages: MessageCenter, settings: Settings, parent: QWidget) -> None:
        """`parent` owns the actions (their shortcuts work window-wide) and the dialogs."""
        super().__init__(parent)
        self.state = state
        self.messages = messages
        self.settings = settings
        self._parent = parent
        self.open_action = make_action(parent, "&Open…", self.open_dialog, QKeySequence.StandardKey.Open,
                                       "Open Markdown or text files")
        self.open_folder_action = make_action(parent, "Open &Folder…", self.open_folder_dialog, "Ctrl+Shift+O",
                                              "Open every document in a folder as a corpus")
        self.recent_menu = QMenu("Open &Recent", parent)
        self.loader: JobRunner | None = None
        """JobRunner for inputs loaded off the GUI thread (created on first use)."""

    def add_to(self, menu: QMenu) -> None:
        menu.addAction(self.open_action)
        menu.addAction(self.open_folder_action)
        menu.addMenu(self.recent_menu)

    # -- opening -------------------------------------------------------------------------------
    def open_dialog(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self._parent, "Open documents", self.settings.get(keys.LAST_DIR),
                                                FILE_FILTER)
        if paths:
            self.open_user_paths(paths)

    def open_folder_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self._parent, "Open folder", self.settings.get(keys.LAST_DIR))
        if path:
            self.open_user_paths([path])

    def open_user_paths(self, paths: Sequence[str | os.PathLike[str]]) -> bool | int:
        """What the menus, drag-and-drop, recent files and the command line call. Small plain
        files open at once; big inputs (over BACKGROUND_LOAD_BYTES in all, or PDF/DOCX/HTML, which
        need converting) load on a worker thread so the window never freezes: the latest request
        wins, and the result is applied like `open_paths`. Returns open_paths' result, or the
        background request id."""
        names = [str(p) for p in paths]
        if not needs_background_load(names):
            return self.open_paths(names)
        if self.loader is None:
            loader = self.loader = JobRunner(self, name="loader")
            loader.stageReady.connect(lambda _rid, stage: self._finish_open(*stage))
            loader.errored.connect(lambda _rid, msg: self.messages.error(msg, loader.last_error_details, popup=True))
            loader.progressed.connect(self._on_load_progress)

        def job(cancelled, progress):
            from inspector.core.api import progress_scope

            with progress_scope(progress):  # a long PDF's pages, a folder's PDFs: how far
                loaded = load_corpus(names)
            if loaded.documents:
                # What the view needs of the document shown first, made here rather than on the
                # GUI thread (huge lines cut into blocks, the offset map, the wrap decision).
                from inspector.core.api import model_fit
                from inspector.core.viewmodel.display_text import display_text

                display_text(loaded.documents[0].text)
                model_fit(loaded.documents[0].text)  # the language note asks on the GUI thread
                for d in loaded.documents:
                    _ = d.sha256  # the key of every per-document cache: hashed here, remembered
            yield (names, loaded)

        self.messages.info(f"Loading {Path(names[0]).name}"
                           f"{' …' if len(names) == 1 else f' and {len(names) - 1} more …'}", tag=LOADING)
        return self.loader.submit(job)

    def _on_load_progress(self, _rid: int, done: int, total: int, label: str) -> None:
        """How far the background loading is, over its own "Loading …" line only (never over a
        message posted meanwhile)."""
        if label and total > 0 and self.messages.tag == LOADING:
            self.messages.info(f"{label}: {done} of {total} …", tag=LOADING)

    def open_paths(self, paths: Sequence[str | os.PathLike[str]]) -> bool:
        """Load files and folders (a corpus), on the calling thread. A file that cannot be opened
        is reported with the line the CLI prints, in the status bar and a non-modal box, and
        whatever was open (the document, its gold set) stays open. Among several paths the good
        ones open, and each bad file is listed once in the Documents panel."""
        names = [str(p) for p in paths]
        return self._finish_open(names, load_corpus(names))

    def _finish_open(self, paths: list[str], loaded) -> bool:
        problems = list(loaded.problems)
        if not loaded.documents:
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            details = "\n".join(problems + ([loaded.details] if loaded.details else []))
            first = problems[0] if problems else "nothing to open"
            self.state.set_error(first)  # listeners of the state hear it too (the launch smoke test)
            self.messages.error(first + more, details, popup=True)
            return False
        if all(_blank(d.text) for d in loaded.documents):
            # Nothing to chunk: refuse rather than replace the open document and its gold set.
            blank = [d.path or d.doc_id for d in loaded.documents]
            kept = f"; {self.state.document.name} stays open" if self.state.document is not None else ""
            if len(blank) == 1:
                first = f"{blank[0]}: no text to open (the file is empty or only whitespace){kept}"
            else:
                first = (f"{blank[0]} (+{len(blank) - 1} more): no text to open (the files are all empty "
                         f"or only whitespace){kept}")
            self.state.set_error(first)
            self.messages.error(first, "\n".join(blank + problems), popup=True)
            return False
        self.state.set_error("")
        self.aboutToReplace.emit(f"Open {loaded.documents[0].name}" if len(loaded.documents) == 1
                                 else f"Open {len(loaded.documents)} documents")
        # What was opened is said before the documents are set: what their listeners say of them
        # then (a PDF's structure note) follows it instead of being overwritten by it.
        self._say_opened(loaded, problems)
        self.state.set_documents(loaded.documents, problems=problems)
        for p in loaded.opened:
            self.add_recent(p)
        self.settings.set(keys.LAST_DIR, str(Path(paths[0]).parent if Path(paths[0]).is_file() else Path(paths[0])))
        self.opened.emit(self.state.document)
        return True

    def _say_opened(self, loaded, problems: list[str]) -> None:
        """The status line of an opening: the files skipped, else the documents' own warnings, else
        what was opened."""
        notes = [w for d in loaded.documents for w in document_warnings(d)]
        notes += [f"{d.doc_id}: no text to chunk (the file is empty or only whitespace)"
                  for d in loaded.documents if _blank(d.text)]
        details = "\n".join(problems + notes + ([loaded.details] if loaded.details else []))
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            self.messages.error(f"skipped {problems[0]}{more}", details)
        elif notes:
            more = f" (+{len(notes) - 1} more)" if len(notes) > 1 else ""
            self.messages.warning(f"{notes[0]}{more}", details)
        else:
            self.messages.info(f"Opened {loaded.documents[0].name}" if len(loaded.documents) == 1
                               else f"Opened {len(loaded.documents)} documents")

    def shutdown(self) -> None:
        """Stop the background loader (the window is closing)."""
        if self.loader is not None:
            self.loader.shutdown()

    # -- recent files ----------------------------------------------------------------------------
    def add_recent(self, path: str) -> None:
        recent = keys.add_recent(self.settings.get(keys.RECENT_FILES), str(Path(path).resolve()))
        self.settings.set(keys.RECENT_FILES, recent)
        self.rebuild_recent()

    def recent_files(self) -> list[str]:
        return self.settings.get(keys.RECENT_FILES)

    def rebuild_recent(self) -> None:
        self.recent_menu.clear()
        recent = self.recent_files()
        for i, path in enumerate(recent):
            a = self.recent_menu.addAction(f"&{i + 1}  {path}" if i < 9 else path)
            a.triggered.connect(lambda _checked=False, p=path: self.open_user_paths([p]))
        if recent:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear List", self._clear_recent)
        self.recent_menu.setEnabled(bool(recent))

    def _clear_recent(self) -> None:
        self.settings.set(keys.RECENT_FILES, [])
        self.rebuild_recent()
