"""Where the embedding model runs, in the window: Settings ▸ Embedding Device, and a status bar
button that names the device once the model is loaded ("MiniLM on cpu, float32").

The choice (auto, cpu, cuda, mps) is stored in QSettings (`settings_schema.MODEL_DEVICE`). It is
applied before the model first loads, and when changed, the model loads again on the new device
while BM25 answers (`RetrievalController.set_model`). A device that is not there makes the load
fail with the core's one-line reason, shown like any model failure; auto always works.

Only the bundled model has a device: a window given another embedder (tests) shows its name and
leaves the menu disabled.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QToolButton

from inspector.core.api import DEVICE_CHOICES, DeviceError, parse_device
from inspector.core.viewmodel.settings_schema import MODEL_DEVICE
from inspector.qt.actions.make_action import choice_menu, settings_menu

LABELS = {"auto": "&Automatic (CUDA, then MPS, then CPU)", "cpu": "&CPU", "cuda": "CU&DA (NVIDIA GPU)",
          "mps": "&MPS (Apple GPU)"}


TIP = "The embedding model (Settings ▸ Embedding Model…) and where it runs (click to change)"


class DeviceActions:
    """The device menu and the status bar's model button of one window."""

    def __init__(self, window: Any) -> None:  # the MainWindow (not imported, even for mypy: an import cycle)
        self.window = window
        self.retrieval = window.retrieval
        self.settings = window.settings
        self.menu, self.group, self.actions = choice_menu(window, "Embedding &Device", DEVICE_CHOICES, LABELS,
                                                          self.set_device)
        self.button = QToolButton()
        self.button.setAutoRaise(True)
        self.button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.button.setMenu(self.menu)
        self.button.setToolTip(TIP)
        window.statusBar().addPermanentWidget(self.button)
        self._add_menu()
        self.device = self._saved()
        self._check(self.device)
        self.bundled = self.retrieval.model is None or _is_minilm(self.retrieval.model)
        self.menu.setEnabled(self.bundled)
        if self.bundled and self.retrieval.model is None:
            self._configure(self.device)  # before the model first loads: start_model picks it up
        self.retrieval.modelStateChanged.connect(lambda _s: self.update_label())
        self.update_label()

    # -- the choice ----------------------------------------------------------------------------
    def _saved(self) -> str:
        raw = self.settings.get(MODEL_DEVICE)
        try:
            return parse_device(raw)
        except DeviceError:
            return "auto"

    def _check(self, device: str) -> None:
        a = self.actions.get(device.split(":", 1)[0])
        if a is not None:
            a.setChecked(True)

    def _configure(self, device: str) -> Any:
        from inspector.core.api import configure_default_embedder

        return configure_default_embedder(device=device)

    def set_device(self, device: str) -> None:
        """Store the choice and, if it changes where the model runs, load the model there."""
        device = parse_device(device)
        self.settings.set(MODEL_DEVICE, device)
        self._check(device)
        if device == self.device or not self.bundled:
            self.device = device
            return
        self.device = device
        chooser = getattr(self.window, "embedder_actions", None)
        if chooser is not None and chooser.spec.kind != "minilm":  # the user's model, loaded there
            chooser.apply(chooser.spec, device=device)
            return
        emb = self._configure(device)
        if self.retrieval.model is not None and self.retrieval.model is not emb:
            self.retrieval.set_model(emb)  # loads it on a worker thread; BM25 answers meanwhile
        self.update_label()

    # -- what is shown -------------------------------------------------------------------------
    def update_label(self) -> None:
        r = self.retrieval
        emb = r.embedder if r.embedder is not None else r.model
        chooser = getattr(self.window, "embedder_actions", None)  # Settings ▸ Embedding Model…
        chosen = chooser.status_text() if chooser is not None else None
        self.button.setToolTip(emb.describe() + "\n" + TIP if r.embedder is not None and hasattr(emb, "describe")
                               else TIP)
        if chosen:
            text = chosen  # a model loading, or an endpoint (its device is the server's)
        elif r.embedder is not None and hasattr(emb, "describe"):
            text = emb.describe()  # "MiniLM on cpu, float32"
        elif emb is not None and not _is_minilm(emb):
            text = f"{getattr(emb, 'model_id', 'embedder')} (test embedder)"
        else:
            text = f"MiniLM: {self.device}"
        self.button.setText(text)

    def _add_menu(self) -> None:
        """The device menu goes first in the Settings menu (before Help)."""
        self.settings_menu = settings_menu(self.window)
        self.settings_menu.addMenu(self.menu)


def _is_minilm(embedder: Any) -> bool:
    from inspector.core.api import MiniLMEmbedder

    return isinstance(embedder, MiniLMEmbedder)


__all__ = ["DeviceActions", "LABELS"]
