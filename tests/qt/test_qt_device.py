"""The window's device setting and status bar, exact figures while dragging when predicted fast,
and the ETA on the embedding progress (the HashEmbedder stands in for the model)."""

from __future__ import annotations

import pytest

from inspector.core.embedding.embedder import HashEmbedder
from inspector.core.embedding.throughput import Throughput
from inspector.core.viewmodel.settings_schema import MODEL_DEVICE

pytestmark = pytest.mark.usefixtures("keep_default_embedder")


class TimedHash(HashEmbedder):
    """The test embedder with a throughput record, as the real model keeps one."""

    def __init__(self, chars_per_second: float | None) -> None:
        super().__init__()
        self.throughput = Throughput()
        if chars_per_second:
            self.throughput.record(int(chars_per_second), 1.0)


def test_device_menu_stores_the_choice_and_configures_the_bundled_model(make_window, settings_store):
    from inspector.core.embedding.embedder import default_embedder
    from inspector.qt.settings import Settings

    Settings(settings_store).set(MODEL_DEVICE, "cpu")
    w = make_window()  # the bundled model, not started: nothing loads here
    da = w.device_actions
    assert da.device == "cpu" and da.actions["cpu"].isChecked() and da.menu.isEnabled()
    assert default_embedder().device_spec == "cpu"  # start_model would load it there
    assert da.button.text() == "MiniLM: cpu"
    assert any(a.text() == "&Settings" for a in w.menuBar().actions())
    da.set_device("auto")
    assert Settings(settings_store).get(MODEL_DEVICE) == "auto"
    assert default_embedder().device_spec == "auto" and da.actions["auto"].isChecked()


def test_a_test_embedder_has_no_device_menu(dense_window, qtbot):
    w = dense_window()
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    assert not w.device_actions.menu.isEnabled()
    assert "test embedder" in w.device_actions.button.text()


def test_exact_while_dragging_when_predicted_fast(qtbot, dense_window, open_doc, wait_result):
    w = dense_window(embedder=TimedHash(50_000_000), settle_ms=60_000)  # a fast "GPU"; no settling
    open_doc(w)
    w.gold_panel.open_gold(str(w.state.document.path).replace(".md", ".gold.jsonl"))
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    w.strategy_panel.set_value("size", 300)  # a drag step
    r = wait_result(w, mode="exact", gold=True)
    assert r.request.params["size"] == 300
    assert r.note.startswith("exact while dragging (predicted ") and r.note.endswith(" ms)")
    assert w.gold_panel.mode.text().endswith(r.note)


def test_slow_embedder_keeps_the_preview_while_dragging(qtbot, dense_window, open_doc, wait_result, monkeypatch):
    from inspector.qt.controllers.trace import TraceController

    # The hash embedder only claims to be slow: the slider's exact trace would really embed the
    # neighbouring sizes into the cache in the background (then the figure is exact because it is
    # cached, not because it was predicted fast). This test is about the prediction alone.
    monkeypatch.setattr(TraceController, "replan", lambda self: None)
    w = dense_window(embedder=TimedHash(2_000), settle_ms=60_000)  # a slow CPU: minutes
    open_doc(w)
    w.gold_panel.open_gold(str(w.state.document.path).replace(".md", ".gold.jsonl"))
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None, timeout=10_000)
    # 128, not 300: markdown now fits the embedder (256 word pieces), so sizes from ~256 up give
    # the same chunks as the default, whose exact vectors the window embedded first.
    w.strategy_panel.set_value("size", 128)
    r = wait_result(w, mode=None, gold=True)
    assert r.mode != "exact" and not r.note.startswith("exact while dragging")


def test_after_the_model_loads_exact_figures_come_before_the_preview_pieces(qtbot, dense_window, open_doc):
    """First exact figures sooner: the chunks are embedded first, the live-preview pieces after
    (both at once would share the cores)."""
    w = dense_window(start=False, settle_ms=60_000)
    open_doc(w)
    w.gold_panel.open_gold(str(w.state.document.path).replace(".md", ".gold.jsonl"))
    events = []
    w.retrieval.resultReady.connect(lambda r: events.append(r.mode))
    w.retrieval.pooledReady.connect(lambda _doc: events.append("pieces"))
    w.start_model()
    qtbot.waitUntil(lambda: "pieces" in events, timeout=20_000)
    assert "exact" in events and events.index("exact") < events.index("pieces"), events
    assert "pooled" not in events[:events.index("exact")]
