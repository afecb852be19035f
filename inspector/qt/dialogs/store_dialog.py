"""File ▸ Open Vector Store…: which store, where, which collection, and which metadata key names
each record's source document.

The collections found at the location are listed as soon as it is named (on a worker thread: a
Qdrant server is a network call; Chroma's and Qdrant's local folders are read from their own files
without opening the store, `api.list_collections`); a collection may also be typed. Recent stores
(spec and source key) are offered at the top. The dialog only builds the spec; reading the store
is `StoreActions.open_store`'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.qt import theme
from inspector.qt.runner import JobRunner

#: (kind, what the chooser says, the location's placeholder)
KINDS = (
    ("chroma", "Chroma folder", "the folder given to Chroma(persist_directory=...)"),
    ("lancedb", "LanceDB folder", "the folder given to lancedb.connect(...)"),
    ("qdrant", "Qdrant folder or URL", "a QdrantClient(path=...) folder, or http://host:6333"),
)
LIST_DELAY_MS = 300
"""Typing in the location waits this long before the collections are listed again."""


def recent_label(spec: str, source_key: str = "") -> str:
    return spec + (f"   (source: {source_key})" if source_key else "")


class StoreDialog(QDialog):
    """The store's kind, location, collection and source key; `spec()` once accepted."""

    listed = Signal(object)
    """The collections found (a tuple of names), or an error line (str)."""

    def __init__(self, parent: QWidget | None = None, *, recent: Sequence[tuple[str, str]] = (),
                 embedder_note: str = "", synchronous: bool = False) -> None:
        super().__init__(parent)
        self.setWindowTitle("Open Vector Store")
        self.setObjectName("store_dialog")
        self._recent = list(recent)
        self._runner = JobRunner(self, synchronous=synchronous, name="store-list")
        self._runner.stageReady.connect(lambda _rid, names: self._on_listed(names))
        self._runner.errored.connect(lambda _rid, msg: self._on_listed(msg))
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0 if synchronous else LIST_DELAY_MS)
        self._timer.timeout.connect(self.list_collections)
        lay = QVBoxLayout(self)
        lay.addLayout(self._build_form())
        self.note = QLabel(embedder_note)
        self.note.setWordWrap(True)
        self.note.setVisible(bool(embedder_note))
        lay.addWidget(self.note)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Open | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self._connect()
        self._update_open()
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("x") * 80)

    def _build_form(self) -> QFormLayout:
        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.recent = QComboBox()
        self.recent.addItem("—", None)
        for spec, key in self._recent:
            self.recent.addItem(recent_label(spec, key), (spec, key))
        self.recent.setToolTip("Stores opened before")
        self.recent_label = QLabel("Recent")
        form.addRow(self.recent_label, self.recent)
        self.recent.setVisible(bool(self._recent))
        self.recent_label.setVisible(bool(self._recent))
        self.kind = QComboBox()
        for kind, label, _hint in KINDS:
            self.kind.addItem(label, kind)
        form.addRow("Store", self.kind)
        self.location = QLineEdit()
        self.browse = QPushButton("Browse…")
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.location, 1)
        row.addWidget(self.browse)
        form.addRow("Location", row)
        self.collection = QComboBox()
        self.collection.setEditable(True)
        self.collection.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.collection.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.collection.setMinimumContentsLength(20)
        edit = self.collection.lineEdit()  # an editable combo box always has one
        if edit is not None:
            edit.setPlaceholderText("the collection (LanceDB: the table)")
        form.addRow("Collection", self.collection)
        self.found = QLabel()
        self.found.setWordWrap(True)
        self.found.setTextFormat(Qt.TextFormat.PlainText)
        form.addRow("", self.found)
        self.source_key = QLineEdit()
        self.source_key.setPlaceholderText("optional: source, file_path, file_name or filename are tried")
        self.source_key.setToolTip("The metadata key that names each record's source document (a dotted key "
                                   "reaches into nested metadata: doc.path)")
        form.addRow("Source key", self.source_key)
        self._set_placeholder()
        return form

    def _connect(self) -> None:
        self.recent.activated.connect(self._on_recent)
        self.kind.currentIndexChanged.connect(lambda _i: self._set_placeholder())
        self.kind.currentIndexChanged.connect(lambda _i: self._timer.start())
        self.location.textChanged.connect(lambda _t: self._timer.start())
        self.browse.clicked.connect(self._browse)
        self.collection.currentTextChanged.connect(lambda _t: self._update_open())
        self.location.textChanged.connect(lambda _t: self._update_open())

    # -- what it says --------------------------------------------------------------------------
    def kind_name(self) -> str:
        return str(self.kind.currentData())

    def spec(self) -> str:
        """"chroma:/path/to/chroma_db:langchain" (what `--store` takes)."""
        return f"{self.kind_name()}:{self.location.text().strip()}:{self.collection.currentText().strip()}"

    def source_key_text(self) -> str:
        return self.source_key.text().strip()

    def set_values(self, kind: str, location: str, collection: str = "", source_key: str = "") -> None:
        """Fill the fields (a recent store, tests)."""
        i = self.kind.findData(kind)
        if i >= 0:
            self.kind.setCurrentIndex(i)
        self.location.setText(location)
        self.collection.setEditText(collection)
        self.source_key.setText(source_key)
        self._timer.start()

    # -- listing -------------------------------------------------------------------------------
    def list_collections(self) -> int:
        """List the collections at the location on the worker (returns the request id; 0: nothing to list)."""
        self._timer.stop()
        kind, location = self.kind_name(), self.location.text().strip()
        if not location:
            self.found.setText("")
            self._runner.cancel()
            return 0
        self.found.setStyleSheet("")
        self.found.setText("looking for collections…")

        def job(cancelled: Callable[[], bool], progress: Any) -> Iterator[tuple[str, ...]]:
            from inspector.core.api import list_collections

            yield list_collections(kind, location)

        return self._runner.submit(job)

    def _on_listed(self, names: tuple[str, ...] | str) -> None:
        self.listed.emit(names)
        if isinstance(names, str):
            self.found.setStyleSheet(f"color: {theme.BAD};")
            self.found.setText(names)
            return
        typed = self.collection.currentText()
        self.collection.blockSignals(True)
        self.collection.clear()
        self.collection.addItems(list(names))
        self.collection.blockSignals(False)
        what = "table" if self.kind_name() == "lancedb" else "collection"
        if not names:
            self.found.setStyleSheet(f"color: {theme.WARNING};")
            self.found.setText(f"no {what}s there")
        else:
            self.found.setStyleSheet("")
            self.found.setText(f"{len(names)} {what}{'s' if len(names) != 1 else ''} found")
        self.collection.setEditText(typed if typed in names or not names else names[0])
        self._update_open()

    # -- reactions -----------------------------------------------------------------------------
    def _set_placeholder(self) -> None:
        hint = next(h for k, _l, h in KINDS if k == self.kind_name())
        self.location.setPlaceholderText(hint)

    def _on_recent(self, i: int) -> None:
        data = self.recent.itemData(i)
        if not data:
            return
        from inspector.core.api import InputError, parse_store_spec

        spec, key = data
        try:
            parsed = parse_store_spec(spec)
        except InputError:
            return
        self.set_values(parsed.kind, parsed.location, parsed.collection, key)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "The store's folder", self.location.text())
        if folder:
            self.location.setText(folder)

    def _update_open(self) -> None:
        ok = bool(self.location.text().strip() and self.collection.currentText().strip())
        self.buttons.button(QDialogButtonBox.StandardButton.Open).setEnabled(ok)

    def done(self, r: int) -> None:
        self._timer.stop()
        self._runner.shutdown(5_000)
        super().done(r)


__all__ = ["StoreDialog", "KINDS", "recent_label"]
