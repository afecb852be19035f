"""State and controller: debounced re-chunking, immediate strategy switches, selection that follows."""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector.core.documents.document import load_document
from inspector.qt.controllers.chunk_jobs import ChunkRunner
from inspector.qt.controllers.chunking import ChunkingController
from inspector.qt.controllers.state import InspectorState

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"


@pytest.fixture
def setup(qtbot):
    state = InspectorState()
    runner = ChunkRunner()
    controller = ChunkingController(state, runner, debounce_ms=80)
    requests = []
    controller.requested.connect(requests.append)
    yield state, runner, controller, requests
    controller.shutdown()


def _complete(state, runner):
    return state.result is not None and state.result.complete and state.result.request_id == runner.latest_id


def test_a_burst_of_slider_moves_becomes_one_request(qtbot, setup):
    state, runner, controller, requests = setup
    state.set_strategy("fixed_chars")
    state.set_documents([load_document(HANDBOOK)])
    qtbot.waitUntil(lambda: _complete(state, runner), timeout=10_000)
    n = len(requests)
    for size in range(300, 400, 10):  # ten moves within the debounce interval
        state.set_params({"size": size})
    assert state.busy and controller.pending  # the busy indicator shows while the timer waits
    assert len(requests) == n
    with qtbot.waitSignal(controller.requested, timeout=5000):
        pass
    qtbot.waitUntil(lambda: _complete(state, runner), timeout=10_000)
    assert len(requests) == n + 1
    assert state.result.request.params["size"] == 390
    assert not state.busy


def test_strategy_switch_runs_at_once(qtbot, setup):
    state, runner, controller, requests = setup
    state.set_documents([load_document(HANDBOOK)])
    n = len(requests)
    state.set_strategy("sentences")
    assert len(requests) == n + 1 and not controller.pending
    qtbot.waitUntil(lambda: _complete(state, runner), timeout=10_000)
    assert state.result.request.strategy == "sentences"


def test_selection_follows_the_text_across_parameter_changes(qtbot, setup):
    state, runner, controller, requests = setup
    state.set_strategy("fixed_chars")
    doc = load_document(HANDBOOK)
    state.set_documents([doc])
    qtbot.waitUntil(lambda: _complete(state, runner), timeout=10_000)
    target = doc.text.find("14 months")
    state.select(state.result.index.ids_at(target)[0])
    old = state.selected_chunk()
    state.set_params({"size": 800})
    qtbot.waitUntil(lambda: _complete(state, runner) and state.result.request.params["size"] == 800, timeout=10_000)
    new = state.selected_chunk()
    assert new is not None and new.start <= (old.start + old.end) // 2 < new.end


def test_params_are_remembered_per_strategy(qtbot, setup):
    state, *_ = setup
    state.set_strategy("fixed_chars")
    state.set_params({"size": 777})
    state.set_strategy("markdown")
    assert state.params["size"] != 777
    state.set_strategy("fixed_chars")
    assert state.params["size"] == 777
    assert state.all_params() == {"fixed_chars": {"size": 777, "overlap": 0}}


def test_restore_params_ignores_what_no_longer_fits(setup):
    state, *_ = setup
    state.restore_params({"fixed_chars": {"size": 300, "gone": 1}, "nope": {"size": 1},
                          "fixed_tokens": {"size": 10, "overlap": 50}})
    assert state.params_for("fixed_chars")["size"] == 300
    assert state.params_for("fixed_tokens") == state.params_for("fixed_tokens") | {"overlap": 0}


def test_no_document_means_no_work(qtbot, setup):
    state, runner, controller, requests = setup
    state.set_params({"size": 300})
    assert controller.submit_now() == 0 and not controller.pending and not state.busy
