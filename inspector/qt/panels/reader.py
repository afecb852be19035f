"""The Reader: a question's top-k chunks in rank order, exactly as the model would receive them,
judged from the keyboard.

Each card shows what a pipeline would put in the prompt for one rank: the context prefix (when the
strategy embeds one) and the chunk's text (the parent's, for parent_child), i.e.
`chunk.embedded_text(doc, with_prefix=...)`. The cards, the keys and the judgements are the audit
panel's (`panels.audit_panel`): judgements are kept per question and span in the audit file beside
the document, so they survive a question switch, a settings change and a restart. What the Reader
adds is "Save to Gold Set…" for the question shown: the answer is text selected in a card, else
the spans judged relevant (merged where they overlap).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from inspector.core import api
from inspector.qt.controllers.audit_session import AuditSession
from inspector.qt.controllers.retrieval import RetrievalController
from inspector.qt.controllers.state import InspectorState
from inspector.qt.panels.audit_card import AuditCard, FitText
from inspector.qt.panels.audit_panel import AuditPanel

if TYPE_CHECKING:
    from inspector.core.api import GoldQuestion


class Reader(AuditPanel):
    """The question's hits, best first, as the model receives them; judged with 1/2/3."""

    saveRequested = Signal(object)
    """A GoldQuestion built from the marks (the window adds it to the gold file, without duplicates)."""

    def __init__(self, controller: RetrievalController, state: InspectorState, session: AuditSession | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(controller, state, session, parent)
        self.save_button.clicked.connect(self._save)

    def gold_question(self) -> GoldQuestion | None:
        """The question with the answer marked: selected card text, else the relevant chunks' spans."""
        r = self.result
        if r is None or not r.request.question:
            return None
        doc = r.document
        selected = " ".join(self.selected_text().split())
        if selected:
            card = next((c for c in self.cards if c.selected_text().strip()), None)
            source = card.hit.chunk.doc_id if card is not None and card.hit.chunk.doc_id else doc.doc_id
            return api.GoldQuestion(r.request.question, answers=(selected,), source=source)
        relevant = [c.hit.chunk for c in self.cards if c.verdict.judgement == api.RELEVANT]
        # Reference spans are offsets into one document: the first relevant chunk's.
        source = relevant[0].doc_id or doc.doc_id if relevant else doc.doc_id
        spans = api.union_ranges([(c.start, c.end) for c in relevant if (c.doc_id or doc.doc_id) == source])
        if not spans:
            return None
        return api.GoldQuestion(r.request.question, source=source, references=tuple(spans))

    def _save(self) -> None:
        q = self.gold_question()
        if q is None:
            self.say("Judge a chunk relevant (1), or select the answer text in a card, first.")
            return
        self.saveRequested.emit(q)


__all__ = ["Reader", "AuditCard", "FitText"]
