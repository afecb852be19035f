"""Settings ▸ Embedding View (issue 29): what the embedding model and BM25 read of each chunk.

- Raw (the default): the span as written, Markdown link targets and table padding included;
- Clean: link targets and reference definitions dropped (link text kept), table padding and
  delimiter rows collapsed, a split table's header row repeated (`inspector.core.text.embed_view`).

Chunks stay exact spans of the document (where `fit_embedder` is on, its budget counts the
view's text, so a chunk whose link targets alone passed the limit is no longer split). The choice
is stored (`settings_schema.EMBED_VIEW`) and applied at start-up; a change re-chunks the shown
document with the view (the detail pane then shows the text sent, its word pieces and
truncation those of that text), and every figure that depended on the embedded text is computed
again: retrieval and the gold panel, the hit-rate trace, a pinned baseline's comparison (whose
configuration names its own view) and the sweep (run with the view chosen when it ran).
"""

from __future__ import annotations

from typing import Any

from inspector.core import api
from inspector.core.viewmodel.settings_schema import EMBED_VIEW
from inspector.qt.actions.make_action import choice_menu, settings_menu

LABELS = {"raw": "&Raw: the text as written", "clean": "&Clean: link text without targets, tables unpadded"}
TIPS = {"raw": "The model and BM25 read each chunk's prefix and span exactly as written.",
        "clean": "The model and BM25 read the span without Markdown link targets, reference definitions "
                 "and table padding, with a split table's header row repeated; the spans do not change."}


class EmbedViewActions:
    """The embedding view menu of one window."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.settings = window.settings
        self.menu, self.group, self.actions = choice_menu(window, "Embedding &View", api.EMBED_VIEWS, LABELS,
                                                          self.set_view, tips=TIPS)
        settings_menu(window).addMenu(self.menu)
        saved = str(self.settings.get(EMBED_VIEW) or "raw")
        if not api.is_embed_view(saved):
            saved = "raw"
        self.actions[saved].setChecked(True)
        window.state.set_embed_view(saved)

    def set_view(self, name: str) -> None:
        """Store the choice and re-chunk with it (every figure follows the new chunks)."""
        if not api.is_embed_view(name):
            return
        self.settings.set(EMBED_VIEW, name)
        self.actions[name].setChecked(True)
        if name != self.window.state.embed_view:
            self.window.state.set_embed_view(name)
            self.window.messages.info(f"Embedding view: {name}; the figures are computed again for it")


def install_embed_view(window: Any) -> EmbedViewActions:
    return EmbedViewActions(window)
