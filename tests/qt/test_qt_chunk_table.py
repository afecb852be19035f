"""The chunk table model: Qt's model tester, filtering, fast sorting, and selection shared with the text."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from PySide6.QtCore import QItemSelectionModel, Qt

from inspector.core.chunking.annotate import annotate
from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_document
from inspector.qt.panels.chunk_table import (
    CHUNK_ID_ROLE,
    COL_FLAGS,
    COL_ID,
    COL_PATH,
    COL_PIECES,
    COL_TOKENS,
    ChunkFilterProxy,
    ChunkTableModel,
)

HANDBOOK = Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md"


@pytest.fixture(scope="module")
def chunks():
    doc = load_document(HANDBOOK)
    # Fitting to the embedder off: these tests need chunks the embedder reads only in part.
    return annotate(doc, chunk_document(doc, "markdown", {"size": 200, "hard_cap": 400, "fit_embedder": False}))


def test_model_passes_qt_model_tester(qtmodeltester, chunks):
    model = ChunkTableModel()
    model.set_chunks(chunks)
    qtmodeltester.check(model, force_py=True)
    # The tester stays connected and checks every later change: a sort, a reset, an empty model.
    model.sort(COL_TOKENS, Qt.SortOrder.DescendingOrder)
    model.set_chunks(chunks[:10])
    model.sort(COL_PATH, Qt.SortOrder.AscendingOrder)
    model.set_chunks(())
    assert model.rowCount() == 0


def test_proxy_passes_qt_model_tester(qtmodeltester, chunks):
    model = ChunkTableModel()
    model.set_chunks(chunks)
    proxy = ChunkFilterProxy()
    proxy.setSourceModel(model)
    proxy.set_only_flagged(True)
    qtmodeltester.check(proxy, force_py=True)


def test_cells_show_the_chunk(chunks):
    model = ChunkTableModel()
    model.set_chunks(chunks)
    c = next(c for c in chunks if c.embed_dropped)
    row = model.row_of(c.id)
    assert model.index(row, COL_ID).data() == str(c.id)
    assert model.index(row, COL_TOKENS).data() == c.token_count
    assert model.index(row, COL_PIECES).data() == f"{c.embed_tokens}/256"
    assert model.index(row, COL_PATH).data() == " › ".join(c.heading_path)
    assert "truncated" in model.index(row, COL_FLAGS).data()


def test_only_flagged_and_flag_filters(chunks):
    model = ChunkTableModel()
    model.set_chunks(chunks)
    proxy = ChunkFilterProxy()
    proxy.setSourceModel(model)
    assert proxy.rowCount() == len(chunks)
    proxy.set_only_flagged(True)
    assert proxy.rowCount() == sum(bool(c.flags) for c in chunks) < len(chunks)
    proxy.set_only_flagged(False)
    proxy.set_flag("split_table")
    shown = [proxy.index(r, 0).data(CHUNK_ID_ROLE) for r in range(proxy.rowCount())]
    assert shown == [c.id for c in chunks if "split_table" in c.flags] != []
    proxy.set_flag("")
    proxy.set_text("parental leave")
    assert 0 < proxy.rowCount() == sum("parental leave" in " › ".join(c.heading_path).lower() for c in chunks)


def test_sorting_is_by_value_and_keeps_the_selection(chunks):
    model = ChunkTableModel()
    model.set_chunks(chunks)
    proxy = ChunkFilterProxy()
    proxy.setSourceModel(model)
    sel = QItemSelectionModel(proxy)
    target = chunks[7]
    sel.select(proxy.index(model.row_of(target.id), 0),
               QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
    proxy.sort(COL_TOKENS, Qt.SortOrder.DescendingOrder)
    tokens = [proxy.index(r, COL_TOKENS).data() for r in range(proxy.rowCount())]
    assert tokens == sorted((c.token_count for c in chunks), reverse=True)
    rows = sel.selectedRows()
    assert len(rows) == 1 and rows[0].data(CHUNK_ID_ROLE) == target.id
    proxy.sort(COL_ID, Qt.SortOrder.AscendingOrder)
    assert [proxy.index(r, 0).data(CHUNK_ID_ROLE) for r in range(proxy.rowCount())] == [c.id for c in chunks]


def test_twenty_thousand_rows_reset_and_sort_quickly():
    many = tuple(Chunk(id=i, start=i * 10, end=i * 10 + 9, token_count=(i * 7919) % 500, flags=frozenset(
        {"no_heading"} if i % 3 else ())) for i in range(20_000))
    model = ChunkTableModel()
    proxy = ChunkFilterProxy()
    proxy.setSourceModel(model)
    t = time.perf_counter()
    model.set_chunks(many)
    proxy.sort(COL_TOKENS, Qt.SortOrder.AscendingOrder)
    proxy.set_only_flagged(True)
    elapsed = time.perf_counter() - t
    assert proxy.rowCount() == sum(1 for i in range(20_000) if i % 3)
    assert elapsed < 1.5, f"{elapsed:.2f} s"


def test_table_and_text_share_the_selection(qtbot, make_window, open_doc):
    w = make_window()
    r = open_doc(w)
    table = w.table
    assert table.model.rowCount() == len(r.chunks)
    row = 40
    table.view.selectRow(row)
    cid = table.proxy.index(row, 0).data(CHUNK_ID_ROLE)
    assert w.state.selection == cid
    c = r.chunk(cid)
    top, _bottom = w.view.y_range(c.start, c.end)
    assert 0 <= top < w.view.viewport().height()  # the text scrolled to the chunk
    w.state.select(r.index.ids[3])
    rows = table.view.selectionModel().selectedRows()
    assert [x.data(CHUNK_ID_ROLE) for x in rows] == [r.index.ids[3]]
    # "Only flagged" from the toolbar filters the table.
    w.only_flagged_action.trigger()
    assert table.proxy.rowCount() == sum(bool(c.flags) for c in r.chunks)
    assert table.only_flagged.isChecked()


def test_the_window_table_takes_the_ids_the_worker_made(qtbot, make_window, open_doc):
    """Chunk ids come with the result (made on the worker): the table makes no Python pass over
    tens of thousands of chunks on the GUI thread; the gutter reads the lane count likewise."""
    w = make_window()
    r = open_doc(w)
    assert r.ids is not None and r.ids.tolist() == [c.id for c in r.chunks]
    assert w.table.model._id_of_index is r.ids
    assert r.index.lane_count == max(r.index.lanes.values()) + 1
