"""Beyond one file: the document list of a corpus, the corpus on the state, PDF pages in the view."""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from inspector.core.chunking.registry import chunk_document
from inspector.core.documents.document import load_document
from inspector.qt.panels.chunk_table import COL_PAGE
from inspector.qt.panels.corpus_panel import (
    COL_CHUNKS,
    COL_NAME,
    COL_PROBLEMS,
    load_corpus,
)

ROOT = Path(__file__).resolve().parents[2]
BAD = ROOT / "tests" / "data" / "bad"


from tests.pdf_fixture import PDF_PAGES, make_pdf  # noqa: E402


def _corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nFirst document. It has two sentences.\n\n## More\n\nAnother part.\n",
                                 encoding="utf-8")
    (folder / "b.txt").write_text("Second document, plain text.\n\nAnother paragraph here.\n" * 30,
                                  encoding="utf-8")
    (folder / "broken.md").write_bytes((BAD / "nul_bytes.md").read_bytes())
    return folder


def _count(doc, w) -> int:
    return sum(1 for c in chunk_document(doc, w.state.strategy, w.state.params) if c.role != "parent")


def test_folder_lists_documents_and_problems_and_selecting_switches(qtbot, make_window, wait_complete, tmp_path):
    folder = _corpus(tmp_path)
    w = make_window()
    assert not w.corpus_dock.isVisible()
    with qtbot.waitSignal(w.state.documentsChanged) as corpus:
        assert w.open_paths([str(folder)])
    docs = corpus.args[0]
    assert [d.doc_id for d in docs] == ["a.md", "b.txt"] and w.state.documents == docs  # the corpus
    wait_complete(w)
    panel = w.corpus_panel
    model = panel.model
    assert w.corpus_dock.isVisible()
    assert [model.index(i, COL_NAME).data() for i in range(model.rowCount())] == ["a.md", "b.txt", "broken.md"]
    assert panel.documents() == list(docs)
    [bad] = panel.problem_rows()
    assert bad.problems == (f"{folder / 'broken.md'}: binary file (contains NUL bytes), not text",)
    assert model.index(2, COL_PROBLEMS).data() == "binary file (contains NUL bytes), not text"
    assert panel.summary.text() == "2 documents · 1 could not be opened"
    # Chunk counts: the shown document's from its result, the other's from the background.
    qtbot.waitUntil(lambda: all(r.chunks is not None for r in model.rows if r.document is not None),
                    timeout=20_000)
    for i, doc in enumerate(docs):
        assert model.rows[i].chunks == _count(doc, w)
        assert model.index(i, COL_CHUNKS).data() == f"{_count(doc, w):,}"
    # Selecting a row shows that document.
    assert w.state.document is docs[0]
    panel.view.selectRow(1)
    r = wait_complete(w)
    assert w.state.document is docs[1] and r.document is docs[1]
    assert w.view.toPlainText() == docs[1].text and w.doc_combo.currentIndex() == 1
    # A problem row cannot be selected: the document stays.
    panel.view.selectRow(2)
    assert w.state.document is docs[1]
    # The toolbar combo and the list stay in step.
    w.doc_combo.setCurrentIndex(0)
    wait_complete(w)
    assert [ix.row() for ix in panel.view.selectionModel().selectedRows()] == [0]


def test_counts_follow_the_strategy(qtbot, make_window, wait_complete, tmp_path):
    w = make_window()
    assert w.open_paths([str(_corpus(tmp_path))])
    wait_complete(w)
    rows = w.corpus_panel.model.rows
    qtbot.waitUntil(lambda: rows[1].chunks is not None, timeout=20_000)
    w.strategy_panel.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 40)
    wait_complete(w)
    rows = w.corpus_panel.model.rows
    qtbot.waitUntil(lambda: all(r.chunks is not None for r in w.corpus_panel.model.rows if r.document),
                    timeout=20_000)
    for r in w.corpus_panel.model.rows[:2]:
        assert r.chunks == _count(r.document, w)


def test_one_document_hides_the_list(qtbot, make_window, open_doc, tmp_path):
    w = make_window()
    assert w.open_paths([str(_corpus(tmp_path))])
    assert w.corpus_dock.isVisible()
    open_doc(w)
    assert not w.corpus_dock.isVisible() and len(w.state.documents) == 1 and w.state.load_problems == ()


def test_load_corpus_never_raises(tmp_path):
    good = tmp_path / "good.md"
    good.write_text("# Good\n\ntext\n", encoding="utf-8")
    loaded = load_corpus([str(tmp_path / "missing.md"), str(good), str(BAD / "image.png")])
    assert [d.doc_id for d in loaded.documents] == ["good.md"]
    assert loaded.problems == (f"{tmp_path / 'missing.md'}: no such file",
                               f"{BAD / 'image.png'}: binary file (a PNG image), not text")
    assert loaded.opened == (str(good),)


def _pdf(tmp_path: Path, pages: list[list[str]], name: str = "policy.pdf") -> Path:
    path = tmp_path / name
    path.write_bytes(make_pdf(pages))
    return path


def _line_top(view, cp: int) -> float:
    cursor = QTextCursor(view.document())
    cursor.setPosition(view.umap.to_utf16(cp))
    return view.cursorRect(cursor).top()


def test_pdf_page_breaks_are_painted_where_the_pages_start(qtbot, make_window, wait_complete, tmp_path):
    w = make_window()
    w.strategy_panel.set_strategy("sentences")
    w.strategy_panel.set_value("size", 8)  # about a sentence each: chunks on every page
    path = _pdf(tmp_path, PDF_PAGES)
    assert w.open_paths([str(path)])
    r = wait_complete(w)
    doc = r.document
    starts = doc.meta["page_starts"]
    assert starts == load_document(path).meta["page_starts"] and len(starts) == 3
    w.view.viewport().repaint()
    marks = w.view.page_marks.last
    assert [(m.page, m.offset) for m in marks] == [(1, starts[0]), (2, starts[1]), (3, starts[2])]
    for m in marks:
        assert abs(m.y - _line_top(w.view, m.offset)) <= 1.0
    # Each chunk's page in the table and the detail pane.
    table = w.table
    assert not table.view.isColumnHidden(COL_PAGE)
    for c in r.chunks:
        row = table.model.row_of(c.id)
        page = table.model.index(row, COL_PAGE).data()
        assert c.meta["page"] >= 1 and page == (f"{c.meta['page']}" if c.meta["page_end"] == c.meta["page"]
                                                 else f"{c.meta['page']}–{c.meta['page_end']}")
    on_two = next(c for c in r.chunks if c.meta["page"] == 2)
    w.state.select(on_two.id)
    assert "page 2" in w.detail.header.text()


def test_pdf_page_marks_are_painted_for_the_visible_range_only(qtbot, make_window, wait_complete, tmp_path):
    pages = [[f"Page {p} line {k} of the long policy." for k in range(10)] for p in range(1, 41)]
    w = make_window()
    w.strategy_panel.set_strategy("sentences")
    assert w.open_paths([str(_pdf(tmp_path, pages, "long.pdf"))])
    r = wait_complete(w)
    starts = r.document.meta["page_starts"]
    assert len(starts) == 40
    sb = w.view.verticalScrollBar()
    seen: set[int] = set()
    for fraction in (0.0, 0.5, 1.0):
        sb.setValue(int(sb.maximum() * fraction))
        w.view.viewport().repaint()
        marks = w.view.page_marks.last
        # On screen: the line holding the page's start shows in the viewport (asked of Qt's own
        # cursor geometry, not of the painter's visible range).
        height = w.view.viewport().height()
        on_screen = [k + 1 for k, s in enumerate(starts) if 0 <= _line_top(w.view, s) < height]
        assert [m.page for m in marks] == on_screen and 0 < len(on_screen) < 10
        for m in marks:
            assert 0 <= m.y <= w.view.viewport().height()
        seen.update(on_screen)
    assert {1, 40} <= seen


def test_no_page_column_or_marks_without_pages(qtbot, make_window, open_doc):
    w = make_window()
    open_doc(w)
    w.view.viewport().repaint()
    assert w.table.view.isColumnHidden(COL_PAGE) and w.view.page_marks.last == ()
    assert "page" not in w.detail.header.text().lower() or w.state.selection == -1


def test_imported_chunks_are_counted_and_reported_for_every_document(qtbot, make_window, wait_complete, tmp_path):
    """The background counts run the imported strategy on the documents not shown, and what could
    not be placed on each is listed beside it."""
    import json

    from inspector.core.chunking.external import remove_external
    from inspector.qt.actions.plugin_actions import IMPORTED

    folder = _corpus(tmp_path)
    w = make_window()
    assert w.open_paths([str(folder)])
    wait_complete(w)
    a = w.state.documents[0]
    jsonl = tmp_path / "a_chunks.jsonl"
    jsonl.write_text("".join(json.dumps({"text": t}) + "\n" for t in ("# Alpha", "First document.", "Another part.")),
                     encoding="utf-8")
    try:
        assert w.plugins.import_chunks(jsonl)
        assert wait_complete(w).request.strategy == IMPORTED
        rows = w.corpus_panel.model.rows
        qtbot.waitUntil(lambda: all(r.chunks is not None for r in w.corpus_panel.model.rows if r.document),
                        timeout=20_000)
        rows = w.corpus_panel.model.rows
        assert rows[0].document is a and rows[0].chunks == 3 and rows[0].problems == ()
        assert rows[1].chunks == 0 and len(rows[1].problems) == 3
        assert all("b.txt: line" in p and "not aligned" in p for p in rows[1].problems)
    finally:
        remove_external(IMPORTED)


def test_retrieval_and_gold_cover_every_document_of_the_corpus(qtbot, hash_window, wait_complete, wait_result,
                                                               tmp_path):
    folder = tmp_path / "two"
    folder.mkdir()
    (folder / "a.md").write_text("# Refunds\n\nRefunds are issued within 14 days of the request.\n\n"
                                 "## Receipts\n\nReceipts are required for every refund.\n", encoding="utf-8")
    (folder / "b.md").write_text("# Wildlife\n\nZebras migrate across the savanna every spring.\n\n"
                                 "## Lions\n\nLions hunt at night in small prides.\n", encoding="utf-8")
    w = hash_window(start=False)
    w.retrieval.set_retriever("bm25")
    assert w.open_paths([str(folder)])
    wait_complete(w)
    assert w.state.document.doc_id == "a.md" and len(w.state.documents) == 2
    question = "When do zebras migrate across the savanna?"
    w.question_bar.ask(question)
    r = wait_result(w, question=question)
    assert r.hits[0].chunk.doc_id == "b.md"  # the best hit is in the document not shown
    qtbot.waitUntil(lambda: bool(w.reader.cards), timeout=5000)
    top = w.reader.cards[0]
    assert top.facts.place.startswith("b.md") and "Zebras migrate" in top.shown_text()
    assert {c.hit.chunk.doc_id for c in w.reader.cards} == {"a.md", "b.md"}  # both documents listed
    shown = {h.chunk.id for h in r.hits if h.chunk.doc_id == "a.md"}
    assert {m.chunk_id for m in w.view.hits} == shown  # only the shown document's hits are outlined
    # The document filter of the question bar changes the hits: only a.md is searched.
    assert w.question_bar.doc_filter.isVisibleTo(w) and w.question_bar.doc_filter.count() == 3
    w.question_bar.set_filters(doc_id="a.md")
    r = wait_result(w, question=question)
    assert r.request.filter_docs == ("a.md",) and r.hits
    assert {h.chunk.doc_id for h in r.hits} == {"a.md"}
    w.question_bar.set_filters(doc_id=None)
    r = wait_result(w, question=question)
    assert r.hits[0].chunk.doc_id == "b.md"
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps(q) for q in (
        {"question": "Do zebras migrate in spring?", "answer": "every spring", "source": "b.md"},
        {"question": "How fast are refunds issued?", "answer": "within 14 days", "source": "a.md"},
    )) + "\n", encoding="utf-8")
    assert w.gold_panel.open_gold(gold), w.message.text()
    assert [q.source for q in w.gold_panel.model.questions] == ["b.md", "a.md"]  # not hidden
    r = wait_result(w, gold=True)
    assert [q.question.source for q in r.report.questions] == ["b.md", "a.md"]
    assert all(q.hit for q in r.report.questions)
    assert r.report.questions[0].retrieved[0].startswith("b.md#")


ZEBRAS = "Do zebras migrate in spring?"
REFUNDS = "How fast are refunds issued?"


def _two_topics(tmp_path: Path) -> tuple[Path, Path]:
    """Two documents on unrelated topics and a gold set with a question about each."""
    folder = tmp_path / "two"
    folder.mkdir()
    (folder / "a.md").write_text("# Refunds\n\nRefunds are issued within 14 days of the request.\n\n"
                                 "## Receipts\n\nReceipts are required for every refund.\n", encoding="utf-8")
    (folder / "b.md").write_text("# Wildlife\n\nZebras migrate across the savanna every spring.\n\n"
                                 "## Lions\n\nLions hunt at night in small prides.\n", encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(json.dumps(q) for q in (
        {"question": ZEBRAS, "answer": "every spring", "source": "b.md"},
        {"question": REFUNDS, "answer": "within 14 days", "source": "a.md"},
    )) + "\n", encoding="utf-8")
    return folder, gold


def _click_change(qtbot, w, question: str) -> None:
    changes = w.gold_panel.changes
    item = next(changes.item(i) for i in range(changes.count()) if changes.item(i).text().strip() == question)
    changes.scrollToItem(item)
    qtbot.mouseClick(changes.viewport(), Qt.MouseButton.LeftButton, pos=changes.visualItemRect(item).center())


def test_a_fixed_question_shows_the_document_that_holds_its_answer(qtbot, hash_window, wait_complete, wait_result,
                                                                   tmp_path):
    folder, gold = _two_topics(tmp_path)
    w = hash_window(start=False, size=(1400, 900))
    w.retrieval.set_retriever("bm25")
    w.retrieval.set_k(1)
    assert w.open_paths([str(folder)])
    wait_complete(w)
    assert w.gold_panel.open_gold(gold), w.message.text()
    # A baseline that misses both (answers cut by 20-character windows), then markdown fixes both.
    w.state.set_strategy("fixed_chars")
    w.state.set_params({"size": 20, "overlap": 0})
    r = wait_result(w, gold=True)
    assert r.request.strategy == "fixed_chars" and not any(q.hit for q in r.report.questions)
    assert w.retrieval.pin_baseline() is not None
    w.state.set_strategy("markdown")
    wait_result(w, gold=True)
    assert set(w.gold_panel.fixed_questions()) == {ZEBRAS, REFUNDS}
    assert w.state.document.doc_id == "a.md"
    # The answer about zebras is in b.md: a click shows b.md, its answer marked and in view.
    _click_change(qtbot, w, ZEBRAS)
    r = wait_result(w, question=ZEBRAS, gold=True)
    b = w.state.document
    assert b.doc_id == "b.md" and w.view.document_ is b and w.doc_combo.currentData() == "b.md"
    assert [b.text[s:e] for s, e in w.view.answer_spans] == ["every spring"]
    top, _bottom = w.view.y_range(*w.view.answer_spans[0])
    assert 0 <= top < w.view.viewport().height()
    assert [m.chunk_id for m in w.view.hits] == [h.chunk.id for h in r.hits if h.chunk.doc_id == "b.md"] != []
    # The baseline and its fixed/broke list stay over the switch (the same corpus, the same report).
    assert w.retrieval.baseline is not None and set(w.gold_panel.fixed_questions()) == {ZEBRAS, REFUNDS}
    assert w.gold_panel.changes.isVisible()
    # The other one goes back to a.md; selecting a question in the table does the same.
    _click_change(qtbot, w, REFUNDS)
    wait_result(w, question=REFUNDS, gold=True)
    a = w.state.document
    assert a.doc_id == "a.md" and [a.text[s:e] for s, e in w.view.answer_spans] == ["within 14 days"]
    w.gold_panel.select_question(next(q for q in w.retrieval.gold.questions if q.question == ZEBRAS))
    wait_result(w, question=ZEBRAS, gold=True)
    assert w.state.document.doc_id == "b.md" and w.view.answer_spans
    # Opening other documents still drops the baseline.
    assert w.open_paths([str(folder / "a.md")])
    assert w.retrieval.baseline is None


def test_a_folder_opened_with_the_helper_is_chunked_in_the_corpus_pool(qtbot, make_window, wait_complete,
                                                                      tmp_path, monkeypatch):
    """Issue 31: with the window's helper running, the other documents of a folder opened off the
    GUI thread are chunked in the corpus pool's processes, counted as here, into the retrieval's
    chunk store; a file that could not be opened is still listed with its name."""
    from inspector.core.chunking import helper_jobs
    from inspector.core.runtime import offload
    from inspector.core.workbench import chunk_store
    from inspector.qt.actions import file_actions

    h = offload.Offload(enabled=True, warm_up=helper_jobs.warm_up)
    monkeypatch.setattr(offload, "_DEFAULT", h)
    monkeypatch.setattr(chunk_store, "PARALLEL_FROM_CHARS", 0)  # these small files are worth the pool
    monkeypatch.setattr(file_actions, "BACKGROUND_LOAD_BYTES", 0)  # loaded on the loader's thread
    monkeypatch.setattr(offload, "cores", lambda: 2)
    folder = _corpus(tmp_path)
    for n in range(3):
        (folder / f"c{n}.md").write_text(f"# Part {n}\n\n" + "A sentence about leave and pay. " * (40 + n),
                                         encoding="utf-8")
    pool = offload.corpus_pool(helper_jobs.corpus_warm_up)
    calls = pool.calls
    w = make_window()
    try:
        request = w.files.open_user_paths([str(folder)])
        assert isinstance(request, int) and not isinstance(request, bool)  # a background request
        qtbot.waitUntil(lambda: len(w.state.documents) == 5, timeout=20_000)
        wait_complete(w)
        model = w.corpus_panel.model
        qtbot.waitUntil(lambda: all(r.chunks is not None for r in model.rows if r.document is not None),
                        timeout=60_000)
        assert pool.calls == calls + 4  # every document but the one shown
        store = w.retrieval.workbench.chunk_store
        for r in model.rows:
            if r.document is not None:
                assert r.chunks == _count(r.document, w)
                if r.document is not w.state.document:
                    assert store.chunk(r.document, w.state.strategy, w.state.params) == \
                        chunk_document(r.document, w.state.strategy, w.state.params)
        [bad] = w.corpus_panel.problem_rows()
        assert bad.name == "broken.md"
    finally:
        h.shutdown()
        offload.shutdown_corpus_pool()


def test_a_pdf_s_structure_note_follows_its_opening_and_says_when_it_was_kept(make_window, wait_complete, tmp_path,
                                                                               monkeypatch):
    from inspector.core.runtime import keptfiles
    from inspector.qt.actions.pdf_actions import KEPT_NOTE

    monkeypatch.setenv(keptfiles.ENV_VAR, "1")  # the suite runs without kept files
    monkeypatch.setenv("CHUNK_INSPECTOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(keptfiles, "IN_BACKGROUND", False)
    path = _pdf(tmp_path, PDF_PAGES)
    w = make_window()
    assert w.open_paths([str(path)])
    doc = wait_complete(w).document
    note = doc.meta["structure_note"]
    # What was recovered, not "Opened policy.pdf" posted over it.
    assert w.messages.text == f"policy.pdf: {note}" and "conversion_kept" not in doc.meta
    assert w.open_paths([str(path)])
    again = wait_complete(w).document
    assert again.meta["conversion_kept"] and again.text == doc.text
    assert w.messages.text == f"policy.pdf ({KEPT_NOTE}): {note}"
    assert w.messages.label.toolTip()  # the whole note, where the status bar cuts it


def test_a_pdf_loading_in_the_background_says_how_far_it_is(qtbot, make_window, wait_complete, tmp_path):
    """Its pages counted in the status bar while it loads, over the "Loading …" line only; the
    opening's own message follows."""
    path = _pdf(tmp_path, PDF_PAGES)
    w = make_window()
    shown: list[str] = []
    w.messages.shown.connect(lambda _kind, text, _details: shown.append(text))
    rid = w.open_user_paths([str(path)])
    assert isinstance(rid, int) and rid is not True  # a PDF loads in the background
    qtbot.waitUntil(lambda: w.state.document is not None and w.state.document.name == "policy.pdf", timeout=10_000)
    wait_complete(w)
    counted = [t for t in shown if t.startswith("Reading the pages of policy.pdf:")]
    assert shown[0] == "Loading policy.pdf …"
    assert counted[-1] == "Reading the pages of policy.pdf: 3 of 3 …" and len(counted) >= 2
    assert shown.index(counted[-1]) < len(shown) - 1  # then what was opened, not the count
    assert not w.messages.text.startswith("Reading the pages")
