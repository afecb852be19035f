"""File ▸ Open Vector Store…: real Chroma, LanceDB and Qdrant collections filled by a LangChain-style
pipeline in a tmp folder, listed in the dialog, read off the GUI thread, their chunks drawn on the
open document as the strategy "store:SPEC", the gold set scored on the store's own vectors;
unplaced records, a store of another model's size and a missing client said in the status bar."""

from __future__ import annotations

import shutil
import sys

import numpy as np
import pytest

from inspector.core.chunking.external import remove_external
from inspector.core.embedding.embedder import HashEmbedder
from tests.qt.conftest import HANDBOOK
from tests.support.stores import WRITERS, Records, langchain_records

pytest.importorskip("chromadb")
pytest.importorskip("lancedb")
pytest.importorskip("qdrant_client")


@pytest.fixture
def handbook(tmp_path):
    """A copy of the handbook (and its gold set) the store's records name as their source."""
    folder = tmp_path / "docs"
    folder.mkdir()
    path = folder / "handbook.md"
    shutil.copy(HANDBOOK, path)
    shutil.copy(HANDBOOK.with_name("handbook.gold.jsonl"), folder / "handbook.gold.jsonl")
    return path


@pytest.fixture
def registered():
    """Store strategies registered by a test are removed after it (the registry is process-wide)."""
    names: list[str] = []
    yield names
    for name in names:
        remove_external(name)


def _open(qtbot, w, spec, registered, source_key=""):
    with qtbot.waitSignal(w.stores.opened, timeout=30_000) as blocker:
        w.stores.open_store(spec, source_key)
    source = blocker.args[0]
    registered.append(source.strategy)
    return source


@pytest.mark.parametrize("kind", ["chroma", "lancedb", "qdrant"])
def test_the_dialog_lists_the_collections_and_builds_the_spec(qtbot, hash_window, handbook, kind, tmp_path):
    recs = langchain_records(handbook, HashEmbedder())
    spec = WRITERS[kind](tmp_path / kind, recs, "handbook_docs")
    w = hash_window(start=False)
    dialog = w.stores.make_dialog()
    qtbot.addWidget(dialog)
    with qtbot.waitSignal(dialog.listed, timeout=10_000) as blocker:
        dialog.set_values(kind, str(tmp_path / kind))
    assert blocker.args[0] == ("handbook_docs",)
    assert dialog.collection.currentText() == "handbook_docs"
    assert dialog.spec() == spec
    # A folder that is no such store is one line in the dialog, not a failure later.
    with qtbot.waitSignal(dialog.listed, timeout=10_000) as blocker:
        dialog.set_values(kind, str(tmp_path))
    assert isinstance(blocker.args[0], str) and str(tmp_path) in blocker.args[0]
    assert dialog.found.text() == blocker.args[0]
    dialog.reject()


def test_a_chroma_store_is_drawn_and_scored_on_its_own_vectors(qtbot, dense_window, handbook, open_doc,
                                                               wait_result, registered, tmp_path):
    emb = HashEmbedder()
    recs = langchain_records(handbook, emb)
    spec = WRITERS["chroma"](tmp_path / "chroma_db", recs)
    w = dense_window()
    open_doc(w, handbook)
    assert w.retrieval.gold is not None
    source = _open(qtbot, w, spec, registered)
    assert source.placement.placed == len(recs.ids) and not source.placement.unplaced
    assert w.state.strategy == source.strategy == f"store:{spec}"
    assert w.strategy_panel.combo.currentText() == "store: langchain"
    res = wait_result(w, gold=True)
    # The store's records are the chunks drawn: their spans hold their texts.
    chunks = w.state.result.chunks
    assert sorted(handbook.read_text(encoding="utf-8")[c.start:c.end] for c in chunks) == sorted(recs.texts)
    # Scored on the store's vectors (rows normalized), not on vectors the app computed.
    rows = [source.placement.row_of(c) for c in res.index.entries]
    stored = recs.vectors[rows] / np.linalg.norm(recs.vectors[rows], axis=1)[:, None]
    assert np.allclose(res.index.vectors, stored)
    assert res.mode == "exact" and len(res.report.questions) == len(w.retrieval.gold_questions) > 0
    # And it says so where the figures are: "store vectors", not "exact" with a tip saying the
    # model embedded every chunk.
    assert w.gold_panel.mode.text().endswith("· store vectors")
    assert w.gold_panel.mode.toolTip().startswith("Your store's own vectors, as your pipeline embedded")
    assert w.question_bar.mode.text() == "store vectors"
    from inspector.core.evaluation.report import retrieval_line  # the exports' "Retrieval:" line

    assert retrieval_line(res.config, res.mode) == "dense, the store's own vectors"
    n = len(recs.ids)
    assert f"placed {n} of {n} records on 1 document" in w.messages.text
    # Remembered: the recent-stores menu offers it.
    assert [a.text() for a in w.stores.recent_menu.actions()] == [spec]


def test_unplaced_records_are_counted_with_their_reasons(qtbot, hash_window, handbook, open_doc, registered,
                                                         tmp_path):
    emb = HashEmbedder()
    recs = langchain_records(handbook, emb)
    extra = ["A paragraph that is in no document at all.", "From another file."]
    lost = ["00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"]  # Qdrant ids are UUIDs
    recs = Records(recs.ids + lost, recs.texts + extra,
                   recs.metadatas + [{"source": str(handbook)}, {"source": "/elsewhere/notes.md"}],
                   np.vstack([recs.vectors, emb.encode(extra)]).astype(np.float32))
    spec = WRITERS["qdrant"](tmp_path / "qdrant", recs)
    w = hash_window()
    w.retrieval.set_retriever("bm25")  # chosen by the user (dense is the default since issue 29)
    open_doc(w, handbook)
    source = _open(qtbot, w, spec, registered)
    assert source.placement.counts() == {"text not found": 1, "source not opened": 1}
    assert w.retrieval.retriever == "dense"  # BM25 would never read the store's vectors
    assert "dense retrieval on its own vectors" in w.messages.text
    assert w.messages.kind == "warning"
    assert "not placed: " in w.messages.text and "1 text not found" in w.messages.text \
        and "1 source not opened" in w.messages.text
    # Details… lists each record with its reason.
    assert f"{lost[0]} · text not found" in w.messages.details
    assert f"{lost[1]} · source not opened" in w.messages.details
    assert w.messages.details_button.isVisibleTo(w)


def test_a_store_of_another_size_is_a_clear_error(qtbot, hash_window, handbook, open_doc, registered, tmp_path):
    recs = langchain_records(handbook, HashEmbedder(dim=32))
    spec = WRITERS["lancedb"](tmp_path / "lance", recs)
    w = hash_window()  # the window's model gives 256 dimensions
    open_doc(w, handbook)
    qtbot.waitUntil(lambda: w.retrieval.embedder is not None)
    _open(qtbot, w, spec, registered)
    assert "32 dimensions" in w.messages.last_error and "256" in w.messages.last_error
    assert w.messages.box is not None and w.messages.box.isVisible()


def test_a_missing_client_names_the_extra(qtbot, hash_window, handbook, open_doc, tmp_path, monkeypatch):
    recs = langchain_records(handbook, HashEmbedder())
    spec = WRITERS["lancedb"](tmp_path / "lance", recs)
    w = hash_window()
    open_doc(w, handbook)
    monkeypatch.setitem(sys.modules, "lancedb", None)  # as if the package were not installed
    with qtbot.waitSignal(w.stores.failed, timeout=10_000) as blocker:
        w.stores.open_store(spec)
    assert "pip install 'chunk-inspector[stores]'" in blocker.args[0]
    assert w.messages.last_error == blocker.args[0]
    assert w.state.strategy != f"store:{spec}"


def test_compared_figures_name_the_store_s_vectors(qapp):
    """The gold panel's "Compare with model" names the first figures "store vectors" when they are a
    store's (`ModelFigures.first_model["stored_in"]`), the model's name otherwise."""
    from inspector.qt.panels.model_compare_box import model_name

    assert model_name({"spec": "minilm", "stored_in": "Chroma collection 'langchain'"}) == "store vectors"
    assert model_name({"spec": "minilm"}) == "MiniLM"
