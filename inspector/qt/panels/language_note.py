"""A status-bar note when the bundled English model is a poor fit for the document's language.

all-MiniLM-L6-v2 was trained on English; on a German handbook its neighbours are weaker, on a
Chinese one most characters are unknown word pieces. The note names the detected language (and the
share of unknown pieces when there are some) and suggests a multilingual model, so nobody tunes
chunk sizes against a model that cannot read the text. The judgement is the core's
(`inspector.core.text.model_fit`); it is shown only while the bundled model is the one in use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QLabel

from inspector.core import api
from inspector.qt.theme import WARNING

if TYPE_CHECKING:
    from inspector.core.api import Document, ModelFit


class LanguageNote(QLabel):
    """Hidden while the text is English (or the model is not the bundled one)."""

    def __init__(self, window: Any) -> None:  # the MainWindow (not imported, even for mypy: an import cycle)
        super().__init__()
        self.main = window
        """The main window (not `window`, which would hide QWidget.window())."""
        self.fit: ModelFit | None = None
        """The last `ModelFit` (None: no document)."""
        self._waiting: Document | None = None
        """The document whose fit is judged once its first chunks are painted."""
        self.setStyleSheet(f"color: {WARNING};")
        self.hide()
        window.state.documentChanged.connect(self._on_document)
        window.state.chunksChanged.connect(self._on_chunks)
        window.retrieval.modelStateChanged.connect(lambda _s: self.update_for(window.state.document))

    def _on_document(self, doc: Document | None) -> None:
        """A new document's fit waits for its chunks: judging it reads the model's tokenizer
        (about 0.1 s the first time, on the GUI thread), which the text and its first chunks
        need not wait for (issue 31). Until then the last document's note is taken down."""
        self._waiting = doc
        r = self.main.state.result
        if doc is None or (r is not None and r.complete and r.document is doc):
            self.update_for(doc)
        elif self.fit is not None:
            self.fit = None
            self._show("", "")

    def _on_chunks(self, result: Any) -> None:
        doc = self._waiting
        if doc is not None and result is not None and result.complete and result.document is doc:
            self._waiting = None
            QTimer.singleShot(0, lambda: self.update_for(doc) if self.main.state.document is doc else None)

    def bundled_model(self) -> bool:
        emb = getattr(self.main.retrieval, "_embedder", None) or getattr(self.main.retrieval, "embedder", None)
        return emb is None or getattr(emb, "model_id", api.MINILM_ID) == api.MINILM_ID

    def update_for(self, doc: Document | None) -> None:
        from inspector.core.api import model_fit

        self.fit = model_fit(doc.text) if doc is not None else None
        note = self.fit.note() if self.fit is not None and self.bundled_model() else ""
        if not note or self.fit is None:
            self._show("", "")
            return
        from inspector.core.api import MULTILINGUAL_MODEL

        lang = self.fit.language.name if self.fit.language.code != "und" else "Not English"
        self._show(f"⚠ {lang} text: the bundled model reads English; try {MULTILINGUAL_MODEL}  ", note)

    def _show(self, text: str, tip: str) -> None:
        """The note's text and tooltip; hidden when there is none."""
        self.setText(text)
        self.setToolTip(tip)
        self.setVisible(bool(text))


def install_language_note(window: Any) -> LanguageNote:  # the MainWindow (not imported: a cycle)
    note = LanguageNote(window)
    window.statusBar().addPermanentWidget(note)
    return note


__all__ = ["LanguageNote", "install_language_note"]
