"""Settings ▸ Reranker…: the user's cross-encoder or `/rerank` endpoint in the window.

The choice (spec and depth) is remembered in the settings and made again at start. With a
reranker set, every question's hits are reranked after the retriever's answer is shown
(`controllers.rerank_jobs`), the Reader saying each hit's rank before and after ("#1 · was 7"),
and the gold panel offers "Score with reranker" (`panels.rerank_box`). A status bar label names
the reranker. A spec that cannot be used (no such folder, not a cross-encoder, a bad URL) is one
line in the status bar and a popup; the previous reranker stays.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel

from inspector.core.viewmodel.settings_schema import Setting
from inspector.qt.actions.make_action import make_action, settings_menu

RERANKER = Setting("rerank/spec", str, "", "Settings ▸ Reranker: st-ce:PATH, http:URL, or '' for none.")
RERANK_DEPTH = Setting("rerank/depth", int, 50, "Hits of the retriever the reranker reads (the top N).")


def reranker_name(spec: str) -> str:
    """"tiny-cross-encoder" for st-ce:/models/tiny-cross-encoder, the URL for http:URL."""
    kind, _, rest = spec.partition(":")
    if kind == "st-ce":
        return rest.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] or rest
    return rest


class RerankActions:
    """Settings ▸ Reranker…, the remembered choice and the status bar's label."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.retrieval = window.retrieval
        self.settings = window.settings
        self.messages = window.messages
        self.spec = ""
        self.dialog: Any = None
        self.action = make_action(window, "&Reranker…", self.open_dialog, None,
                                  "Rerank the retriever's top hits with a cross-encoder or a /rerank endpoint")
        menu = settings_menu(window)
        menu.addSeparator()
        menu.addAction(self.action)
        self.label = QLabel()
        self.label.setToolTip("The reranker that orders the question's hits (Settings ▸ Reranker…)")
        window.statusBar().addPermanentWidget(self.label)
        self.label.hide()
        spec, depth = self.settings.get(RERANKER), self.settings.get(RERANK_DEPTH)
        if spec:
            self.apply(spec, depth, remember=False)

    # -- the choice ------------------------------------------------------------------------------
    def apply(self, spec: str, depth: int = 50, *, remember: bool = True) -> bool:
        """Use the reranker `spec` names ("" for none), reading the top `depth`; False (and the
        reason in the status bar) when it cannot be made."""
        spec = spec.strip()
        reranker = None
        if spec:
            from inspector.core.api import InputError, parse_reranker_spec

            try:
                reranker = parse_reranker_spec(spec)
            except InputError as exc:
                self.messages.error(f"reranker: {exc.one_line()}", popup=remember, tag="rerank")
                return False
        self.spec = spec
        if remember:
            self.settings.set(RERANKER, spec)
            self.settings.set(RERANK_DEPTH, int(depth))
        self.retrieval.set_reranker(reranker, depth)
        self.label.setText(f"reranker: {reranker_name(spec)}, top {depth}" if spec else "")
        self.label.setVisible(bool(spec))
        return True

    def open_dialog(self) -> Any:
        from inspector.qt.dialogs.reranker_dialog import RerankerDialog

        dialog = RerankerDialog(self.window, spec=self.spec, depth=self.retrieval.rerank_depth)
        dialog.accepted.connect(lambda: self.apply(dialog.spec(), dialog.depth_value()))
        self.dialog = dialog
        dialog.open()
        return dialog


def install_reranker(window: Any) -> RerankActions:
    """Settings ▸ Reranker… and the gold panel's "Score with reranker" box in `window`."""
    from inspector.qt.panels.rerank_box import RerankBox

    window.rerank_box = RerankBox(window.retrieval, window.gold_panel)  # before a remembered reranker is set
    return RerankActions(window)


__all__ = ["RerankActions", "RERANKER", "RERANK_DEPTH", "install_reranker", "reranker_name"]
