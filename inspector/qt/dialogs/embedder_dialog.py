"""Settings ▸ Embedding Model…: the bundled all-MiniLM-L6-v2, any sentence-transformers model (a
folder, or a name in the local Hugging Face cache) or an OpenAI-compatible `/v1/embeddings`
endpoint (OpenAI, an Azure-style gateway, Ollama, vLLM, TEI, LM Studio).

The dialog builds what the command line's `--embedder` and its options take (`choice()`: the
`EmbedderSpec.to_dict` shape, checked by `parse_embedder_spec` before the dialog closes). The API
key is never typed here: the dialog asks for the NAME of the environment variable that holds it,
so the key never reaches the settings. `EmbedderActions` makes and checks the model off the GUI
thread.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from inspector.qt import theme

MINILM, ST, OPENAI = "minilm", "st", "openai"
KINDS = (MINILM, ST, OPENAI)
MAX_TOKENS = 1_000_000
INTRO = ("The model that embeds the chunks and the questions. Word-piece counts, the truncation flags "
         "and fit_embedder budgets follow its tokenizer and limit; vectors are cached per model, never mixed.")


def _spin(special: str, tip: str) -> QSpinBox:
    """0 shows `special` ("model's own"): the option is left out."""
    box = QSpinBox()
    box.setRange(0, MAX_TOKENS)
    box.setSpecialValueText(special)
    box.setToolTip(tip)
    return box


class EmbedderDialog(QDialog):
    """The model's kind and its options; `choice()` once accepted."""

    def __init__(self, parent: QWidget | None = None, *, choice: dict[str, Any] | None = None,
                 title: str = "Embedding Model", intro: str = INTRO) -> None:
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("embedder_dialog")
        lay = QVBoxLayout(self)
        intro_label = QLabel(intro)
        intro_label.setWordWrap(True)
        lay.addWidget(intro_label)
        self.group = QButtonGroup(self)
        self.minilm = QRadioButton("&Bundled all-MiniLM-L6-v2 (256 word pieces)")
        self.st = QRadioButton("&Sentence-transformers model")
        self.openai = QRadioButton("&OpenAI-compatible endpoint (/v1/embeddings)")
        for i, b in enumerate((self.minilm, self.st, self.openai)):
            self.group.addButton(b, i)
        lay.addWidget(self.minilm)
        lay.addWidget(self.st)
        self.st_box = QWidget()
        st_form = QFormLayout(self.st_box)
        st_form.setContentsMargins(24, 0, 0, 0)
        self.path = QLineEdit()
        self.path.setPlaceholderText("a model folder, or a name in the Hugging Face cache (BAAI/bge-small-en-v1.5)")
        self.browse = QPushButton("Browse…")
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(self.browse)
        st_form.addRow("Model", row)
        self.trust = QCheckBox("Trust remote code (the model runs code it ships)")
        self.trust.setToolTip("Only for models whose authors you trust: loading runs their Python code")
        st_form.addRow("", self.trust)
        lay.addWidget(self.st_box)
        lay.addWidget(self.openai)
        self.http_box = QWidget()
        form = QFormLayout(self.http_box)
        form.setContentsMargins(24, 0, 0, 0)
        self.model = QLineEdit()
        self.model.setPlaceholderText("text-embedding-3-small, nomic-embed-text, BAAI/bge-m3 …")
        self.url = QLineEdit()
        self.url.setPlaceholderText("https://api.openai.com/v1 (OpenAI's, when empty)")
        self.key_env = QLineEdit()
        self.key_env.setPlaceholderText("OPENAI_API_KEY")
        self.key_env.setToolTip("The NAME of the environment variable that holds the key: the key itself is "
                                "read when the endpoint is called and never stored")
        self.tokenizer = QLineEdit()
        self.tokenizer.setPlaceholderText("by the model's name (cl100k_base), or o200k_base, hf:FOLDER")
        form.addRow("Model", self.model)
        form.addRow("URL", self.url)
        form.addRow("Key variable", self.key_env)
        form.addRow("Tokenizer", self.tokenizer)
        self.dimensions = _spin("model's own", "Vector size asked of the endpoint (text-embedding-3 can shorten)")
        form.addRow("Dimensions", self.dimensions)
        lay.addWidget(self.http_box)
        limit = QFormLayout()
        self.max_tokens = _spin("model's own", "Tokens the model reads per text; the rest is cut off")
        limit.addRow("Max tokens", self.max_tokens)
        lay.addLayout(limit)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {theme.BAD};")
        self.error.hide()
        lay.addWidget(self.error)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)
        self.set_choice(choice or {"spec": MINILM})
        self.group.idToggled.connect(lambda _i, _on: self._update())
        for field in (self.path, self.model):
            field.textChanged.connect(lambda _t: self._update())
        self.browse.clicked.connect(self._browse)
        self._update()
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("x") * 80)

    # -- the choice ------------------------------------------------------------------------------
    def set_choice(self, choice: dict[str, Any]) -> None:
        kind, _, name = str(choice.get("spec", MINILM)).partition(":")
        if kind == ST:
            self.st.setChecked(True)
            self.path.setText(name)
        elif kind == OPENAI:
            self.openai.setChecked(True)
            self.model.setText(name)
        else:
            self.minilm.setChecked(True)
        self.url.setText(str(choice.get("url") or ""))
        self.key_env.setText(str(choice.get("key_env") or ""))
        self.tokenizer.setText(str(choice.get("tokenizer") or ""))
        self.max_tokens.setValue(int(choice.get("max_tokens") or 0))
        self.dimensions.setValue(int(choice.get("dimensions") or 0))
        self.trust.setChecked(bool(choice.get("trust_remote_code")))

    def kind(self) -> str:
        return KINDS[max(0, self.group.checkedId())]

    def choice(self) -> dict[str, Any]:
        """{"spec": ..., options}: what `EmbedderSpec.from_dict` reads (never a key)."""
        kind = self.kind()
        if kind == MINILM:
            return {"spec": MINILM}
        out: dict[str, Any] = {}
        if kind == ST:
            out["spec"] = f"st:{self.path.text().strip()}"
            if self.trust.isChecked():
                out["trust_remote_code"] = True
        else:
            out["spec"] = f"openai:{self.model.text().strip()}"
            for key, field in (("url", self.url), ("key_env", self.key_env), ("tokenizer", self.tokenizer)):
                text = field.text().strip()
                if text:
                    out[key] = text
            if self.dimensions.value():
                out["dimensions"] = int(self.dimensions.value())
        if self.max_tokens.value():
            out["max_tokens"] = int(self.max_tokens.value())
        return out

    def spec(self) -> Any:
        """The checked `EmbedderSpec` (InputError when an option is malformed)."""
        from inspector.core.api import EmbedderSpec

        return EmbedderSpec.from_dict(self.choice())

    def accept(self) -> None:
        """Closes only on a spec that parses; otherwise says why, in the dialog."""
        from inspector.core.api import InputError

        try:
            self.spec()
        except InputError as exc:
            self.error.setText(exc.one_line())
            self.error.show()
            return
        self.error.hide()
        super().accept()

    def _update(self) -> None:
        kind = self.kind()
        self.st_box.setEnabled(kind == ST)
        self.http_box.setEnabled(kind == OPENAI)
        self.max_tokens.setEnabled(kind != MINILM)
        ok = kind == MINILM or (kind == ST and bool(self.path.text().strip())) \
            or (kind == OPENAI and bool(self.model.text().strip()))
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(ok)
        self.error.hide()

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "The sentence-transformers model's folder", self.path.text())
        if folder:
            self.path.setText(folder)


__all__ = ["EmbedderDialog", "MINILM", "ST", "OPENAI"]
