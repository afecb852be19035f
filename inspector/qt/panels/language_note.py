"""A status-bar note when the bundled English model is a poor fit for the document's language.

all-MiniLM-L6-v2 was trained on English; on a German handbook its neighbours are weaker, on a
Chinese one most characters are unknown word pieces. The note names the detected language (and the
share of unknown pieces when there are some) and suggests a multilingual model, so nobody tunes
chunk sizes against a model that cannot read the text. The judgement is the core's
(`inspector.core.text.model_fit`); it is shown only while the bundled model is the one in use.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel

from inspector.core.api import MINILM_ID, Document, ModelFit
from inspector.qt.theme import WARNING


class LanguageNote(QLabel):
    """Hidden while the text is English (or the model is not the bundled one)."""

    def __init__(self, window: Any) -> None:  # the MainWindow (not imported, even for mypy: an import cycle)
        super().__init__()
        self.main = window
        """The main window (not `window`, which would hide QWidget.window())."""
        self.fit: ModelFit | None = None
        """The last `ModelFit` (None: no document)."""
        self.setStyleSheet(f"color: {WARNING};")
        self.hide()
        window.state.documentChanged.connect(self.update_for)
        window.retrieval.modelStateChanged.connect(lambda _s: self.update_for(window.state.document))

    def bundled_model(self) -> bool:
        emb = getattr(self.main.retrieval, "_embedder", None) or getattr(self.main.retrieval, "embedder", None)
        return emb is None or getattr(emb, "model_id", MINILM_ID) == MINILM_ID

    def update_for(self, doc: Document | None) -> None:
        from inspector.core.api import model_fit

        self.fit = model_fit(doc.text) if doc is not None else None
        note = self.fit.note() if self.fit is not None and self.bundled_model() else ""
        if not note or self.fit is None:
            self.hide()
            self.setText("")
            self.setToolTip("")
            return
        from inspector.core.api import MULTILINGUAL_MODEL

        lang = self.fit.language.name if self.fit.language.code != "und" else "Not English"
        self.setText(f"⚠ {lang} text: the bundled model reads English; try {MULTILINGUAL_MODEL}  ")
        self.setToolTip(note)
        self.show()


def install_language_note(window: Any) -> LanguageNote:  # the MainWindow (not imported: a cycle)
    note = LanguageNote(window)
    window.statusBar().addPermanentWidget(note)
    return note


__all__ = ["LanguageNote", "install_language_note"]
