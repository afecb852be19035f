"""Settings ▸ Embedding Model…: the user's embedding model in the window.

`minilm` (the bundled model, the default), `st:NAME_OR_PATH` (a sentence-transformers folder or a
name in the local Hugging Face cache) or `openai:MODEL` (an OpenAI-compatible endpoint: URL, the
NAME of the environment variable holding the key, optional tokenizer, limit and dimensions): the
specs of the command line's `--embedder`, built by `dialogs.embedder_dialog`.

Choosing one makes and loads it off the GUI thread (`controllers.model_jobs.check_model_job`).
Only a model that loaded replaces the current one: word pieces, truncation flags and fit_embedder
budgets then follow its tokenizer and limit (`api.use_embedder_pieces`, the chunks measured again),
and every figure is computed again with it (`RetrievalController.set_model`; vectors are cached per
model identity, so two models never share one). A wrong key, an unknown model, an unreachable
host or a missing folder is one line in the status bar and a popup, and the previous model stays.
The choice is remembered (`EMBEDDER`: the spec and its options, never a key) and made again at
the next start; the status bar's model button names it (`device_actions`).
"""

from __future__ import annotations

from typing import Any

from inspector.core.viewmodel.settings_schema import MODEL_DEVICE, Setting
from inspector.qt.actions.make_action import make_action, settings_menu
from inspector.qt.controllers.model_jobs import close_http
from inspector.qt.controllers.retrieval import MODEL_IDLE, MODEL_LOADING
from inspector.qt.runner import JobRunner

EMBEDDER = Setting("embedder/choice", dict, {"spec": "minilm"},
                   "Settings ▸ Embedding Model: {spec, url, key_env, tokenizer, max_tokens, dimensions, "
                   "trust_remote_code} as --embedder takes them; the key's variable NAME only, never a key.")


class EmbedderActions:
    """Settings ▸ Embedding Model…, the remembered choice, the check on a worker and the label."""

    def __init__(self, window: Any, *, synchronous: bool = False) -> None:
        from inspector.core.api import parse_embedder_spec

        self.window = window
        self.retrieval = window.retrieval
        self.settings = window.settings
        self.messages = window.messages
        self.spec = parse_embedder_spec("minilm")
        """The spec of the model in use (the bundled one until another has loaded)."""
        self.pending: Any = None
        """The spec being loaded and checked, None when none is."""
        self._remember = True
        self._startup = False
        self.dialog: Any = None
        self.boxes: list[Any] = []
        """Widgets with workers of their own, shut down with this (the gold panel's model box)."""
        self.runner = JobRunner(window, synchronous=synchronous, name="embedder-check")
        self.runner.stageReady.connect(lambda _rid, emb: self._on_ready(emb))
        self.runner.errored.connect(lambda _rid, msg: self._on_error(msg))
        self.action = make_action(window, "Embedding &Model…", self.open_dialog, None,
                                  "Embed with the bundled MiniLM, a sentence-transformers model or an "
                                  "OpenAI-compatible endpoint")
        menu = settings_menu(window)
        first = menu.actions()[0] if menu.actions() else None
        menu.insertAction(first, self.action) if first is not None else menu.addAction(self.action)
        self._restore()

    # -- the choice ------------------------------------------------------------------------------
    def _restore(self) -> None:
        """The remembered model, loaded instead of the bundled one (when the window was not given
        a model of its own)."""
        from inspector.core.api import EmbedderSpec, InputError

        try:
            spec = EmbedderSpec.from_dict(self.settings.get(EMBEDDER))
        except InputError as exc:
            self.messages.error(f"embedding model in the settings: {exc.one_line()}", tag="embedder")
            return
        if spec.kind == "minilm" or self.retrieval.model is not None:
            return
        # The bundled model is not loaded meanwhile: the window's start finds the model "loading"
        # (BM25 answers, the status bar says so) and this choice takes its place once checked.
        self._startup = True
        self.retrieval._set_model_state(MODEL_LOADING)
        self.apply(spec, remember=False)

    def device(self) -> str:
        actions = getattr(self.window, "device_actions", None)
        return str(getattr(actions, "device", None) or self.settings.get(MODEL_DEVICE) or "auto")

    def apply(self, spec: Any, *, remember: bool = True, device: str | None = None) -> int:
        """Load and check the model `spec` (an `EmbedderSpec`, or its dict or text) on the worker;
        it replaces the current model once it has loaded (request id)."""
        from inspector.core.api import EmbedderSpec, InputError
        from inspector.qt.controllers.model_jobs import check_model_job

        try:
            spec = spec if isinstance(spec, EmbedderSpec) else EmbedderSpec.from_dict(spec)
        except InputError as exc:
            self.messages.error(f"embedding model: {exc.one_line()}", popup=remember, tag="embedder")
            return 0
        self.pending = spec
        self._remember = remember
        self._show_label()
        self.messages.info(f"Loading the embedding model {spec.label()}…", tag="embedder")
        return self.runner.submit(check_model_job(spec, device or self.device()))

    def _on_ready(self, emb: Any) -> None:
        from inspector.core.api import InputError, set_semantic_embedder, use_embedder_pieces

        spec, self.pending = self.pending, None
        if spec is None:
            return
        try:
            use_embedder_pieces(emb)  # counts, truncation flags, fit_embedder budgets: its tokenizer
        except InputError as exc:
            self._on_error(exc.one_line(), spec)
            return
        set_semantic_embedder(emb)  # the semantic strategy's sentence vectors: this model's
        self.spec = spec
        self._startup = False
        if self._remember:
            self.settings.set(EMBEDDER, spec.to_dict())
        old = self.retrieval.model
        self.retrieval.set_model(emb)  # forgets the indexes; every figure computed again with it
        if old is not None and old is not emb:
            close_http(old)
        from inspector.core.api import strategies

        corpus = getattr(self.window, "corpus_panel", None)
        if corpus is not None:
            for name in strategies():
                corpus.forget_strategy(name)  # chunk counts per document: fit_embedder's follow the limit
        if self.window.state.document is not None:
            self.window.controller.submit_now()  # the chunks measured again with its word pieces
        self._show_label()
        self.messages.info(f"Embedding with {spec.short_name}", tag="embedder")

    def _on_error(self, message: str, spec: Any = None) -> None:
        spec = spec if spec is not None else self.pending
        self.pending = None
        name = spec.text if spec is not None else "?"
        keep = "the bundled MiniLM is used" if self._startup else f"{self.current_name()} stays"
        self.messages.error(f"embedding model {name}: {message} ({keep})", popup=self._remember,
                            tag="embedder")
        if self._startup:  # the remembered model failed: the bundled one after all
            self._startup = False
            self.retrieval._set_model_state(MODEL_IDLE)
            self.retrieval.start_model()
        self._show_label()

    def current_name(self) -> str:
        """Short name of the model in use (a model the window was given is named by its own spec)."""
        from inspector.core.api import InputError, embedder_info, parse_embedder_spec

        model = self.retrieval.model
        if model is None:
            return self.spec.short_name
        spec = getattr(model, "spec", None)
        if spec is None:
            text = embedder_info(model).get("spec")
            try:
                spec = parse_embedder_spec(str(text)) if text else None
            except InputError:
                spec = None
        return spec.short_name if spec is not None else str(getattr(model, "model_id", "model"))

    def status_text(self) -> str | None:
        """What the status bar's model button says instead of the device's description: the model
        being loaded, or an endpoint's model (its device is the server's); None otherwise."""
        if self.pending is not None:
            return f"loading {self.pending.short_name}…"
        if self.spec.kind == "openai" and self.retrieval.embedder is not None:
            return f"{self.spec.name} over HTTP"
        return None

    def _show_label(self) -> None:
        actions = getattr(self.window, "device_actions", None)
        if actions is not None:
            actions.update_label()

    def open_dialog(self) -> Any:
        from inspector.qt.dialogs.embedder_dialog import EmbedderDialog

        dialog = EmbedderDialog(self.window, choice=(self.pending or self.spec).to_dict())
        dialog.accepted.connect(lambda: self.apply(dialog.spec()))
        self.dialog = dialog
        dialog.open()
        return dialog

    def shutdown(self) -> None:
        self.runner.shutdown(5_000)
        for box in self.boxes:
            box.shutdown()
        if self.retrieval.model is not None:
            close_http(self.retrieval.model)


def install_embedder_choice(window: Any) -> EmbedderActions:
    """Settings ▸ Embedding Model… in `window` (the remembered model loaded instead of MiniLM), and
    the gold panel's "Compare with model…" box (`window.model_compare_box`)."""
    from inspector.qt.panels.model_compare_box import ModelCompareBox

    actions = EmbedderActions(window)
    window.model_compare_box = ModelCompareBox(window.retrieval, window.gold_panel, window.settings,
                                               device=actions.device)
    actions.boxes.append(window.model_compare_box)
    return actions


__all__ = ["EMBEDDER", "EmbedderActions", "install_embedder_choice"]
