"""Settings ▸ Reranker…: none, a sentence-transformers CrossEncoder (`st-ce:PATH`, a folder or a
model in the local Hugging Face cache) or a `/rerank` endpoint (`http:URL`, as TEI, vLLM and
infinity serve it), and how deep in the retriever's list it reads (default 50).

The dialog builds the spec the command line's `--reranker` takes; `RerankActions` makes the
reranker from it (checking the folder or name at once, loading the model on first use).
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

NONE, CROSS_ENCODER, HTTP = "none", "st-ce", "http"
MAX_DEPTH = 1000


class RerankerDialog(QDialog):
    """The reranker's kind, its folder/name or URL, and the depth; `spec()` once accepted."""

    def __init__(self, parent: QWidget | None = None, *, spec: str = "", depth: int = 50) -> None:
        super().__init__(parent)
        self.setWindowTitle("Reranker")
        self.setObjectName("reranker_dialog")
        lay = QVBoxLayout(self)
        intro = QLabel("A reranker reads the question with each of the retriever's top hits and orders them "
                       "again; the Reader then shows each hit's rank before and after, and the gold panel can "
                       "score the gold set with it. Reranking is slow on a CPU.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        grid = QGridLayout()
        self.group = QButtonGroup(self)
        self.none = QRadioButton("&None")
        self.cross = QRadioButton("&Cross-encoder")
        self.http = QRadioButton("&HTTP /rerank endpoint")
        for i, b in enumerate((self.none, self.cross, self.http)):
            self.group.addButton(b, i)
        self.path = QLineEdit()
        self.path.setPlaceholderText("a CrossEncoder folder, or a name in the Hugging Face cache")
        self.browse = QPushButton("Browse…")
        self.url = QLineEdit()
        self.url.setPlaceholderText("http://127.0.0.1:8080/rerank")
        grid.addWidget(self.none, 0, 0)
        grid.addWidget(self.cross, 1, 0)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(self.browse)
        grid.addLayout(row, 1, 1)
        grid.addWidget(self.http, 2, 0)
        grid.addWidget(self.url, 2, 1)
        grid.setColumnStretch(1, 1)
        lay.addLayout(grid)
        form = QFormLayout()
        self.depth_box = QSpinBox()
        self.depth_box.setRange(1, MAX_DEPTH)
        self.depth_box.setValue(depth)
        self.depth_box.setSuffix(" hits")
        self.depth_box.setToolTip("How many of the retriever's top hits the reranker reads before cutting to k")
        form.addRow("Rerank the top", self.depth_box)
        lay.addLayout(form)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.set_spec(spec)
        self.group.idToggled.connect(lambda _i, _on: self._update())
        self.path.textChanged.connect(lambda _t: self._update())
        self.url.textChanged.connect(lambda _t: self._update())
        self.browse.clicked.connect(self._browse)
        self._update()
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("x") * 72)

    def set_spec(self, spec: str) -> None:
        kind, _, rest = spec.partition(":")
        if kind == CROSS_ENCODER:
            self.cross.setChecked(True)
            self.path.setText(rest)
        elif kind in ("http", "https") and rest:
            self.http.setChecked(True)
            self.url.setText(rest if kind == "http" and not rest.startswith("//") else spec)
        else:
            self.none.setChecked(True)

    def kind(self) -> str:
        return (NONE, CROSS_ENCODER, HTTP)[max(0, self.group.checkedId())]

    def spec(self) -> str:
        """"" (none), "st-ce:PATH" or "http:URL"."""
        kind = self.kind()
        if kind == CROSS_ENCODER:
            return f"st-ce:{self.path.text().strip()}"
        if kind == HTTP:
            return f"http:{self.url.text().strip()}"
        return ""

    def depth_value(self) -> int:
        return int(self.depth_box.value())

    def _update(self) -> None:
        kind = self.kind()
        self.path.setEnabled(kind == CROSS_ENCODER)
        self.browse.setEnabled(kind == CROSS_ENCODER)
        self.url.setEnabled(kind == HTTP)
        self.depth_box.setEnabled(kind != NONE)
        ok = kind == NONE or (kind == CROSS_ENCODER and bool(self.path.text().strip())) \
            or (kind == HTTP and bool(self.url.text().strip()))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "The cross-encoder's folder", self.path.text())
        if folder:
            self.path.setText(folder)


__all__ = ["RerankerDialog", "NONE", "CROSS_ENCODER", "HTTP"]
