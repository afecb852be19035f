"""The audit in the window: keyboard judging, judgements that survive a question switch and a
restart (the audit file beside the document), no duplicate lines in the gold file, the baseline
kept after saving a question, replay after a re-chunk, marks -> gold questions, a click that shows
the chunk in the text, the audit mode's layout, the summary's export, an unreadable audit file left
alone. BM25 keeps these fast (no model).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

from inspector.core.evaluation.audit import (
    NOT,
    PARTLY,
    RELEVANT,
    audit_path,
    load_audit,
    replay,
    summary_markdown,
)
from inspector.core.evaluation.gold import load_gold
from inspector.qt.controllers.audit_session import config_label, hit_span

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"
GERMANY = "How long is parental allowance paid in Germany?"
FRANCE = "How long is statutory maternity leave in France?"
NEW = "Who approves a sabbatical?"  # not in the gold set


@pytest.fixture
def copies(tmp_path):
    """The handbook and its gold set copied to a folder of the test's own (the audit file is
    written beside the document)."""
    doc, gold = tmp_path / "handbook.md", tmp_path / "handbook.gold.jsonl"
    shutil.copy(HANDBOOK, doc)
    shutil.copy(GOLD, gold)
    return doc, gold


@pytest.fixture
def window(hash_window, open_doc, copies):
    def make(**kw):
        w = hash_window(start=False, **kw)
        w.retrieval.set_retriever("bm25")
        open_doc(w, copies[0])
        return w
    return make


def _ask(w, wait_result, question):
    w.retrieval.ask(question)
    return wait_result(w, question=question)


def _key(qtbot, w, key, modifier=Qt.KeyboardModifier.NoModifier):
    qtbot.keyClick(w.reader.list, key, modifier)


def test_keyboard_judging_in_audit_mode(qtbot, window, wait_result, copies):
    w = window()
    r = _ask(w, wait_result, GERMANY)
    w.audit_mode.set_active(True)
    w.activateWindow()
    w.reader.list.setFocus()
    qtbot.waitUntil(lambda: w.reader.list.hasFocus(), timeout=3000)
    assert w.reader.current == 0 and w.reader.cards[0].current
    _key(qtbot, w, Qt.Key.Key_1)  # relevant, then the next card is current
    assert w.reader.current == 1
    _key(qtbot, w, Qt.Key.Key_N)  # not relevant
    _key(qtbot, w, Qt.Key.Key_K)  # back to card 2
    assert w.reader.current == 1
    _key(qtbot, w, Qt.Key.Key_2)  # judged again: partly replaces not
    _key(qtbot, w, Qt.Key.Key_J)
    assert w.reader.current == 3
    _key(qtbot, w, Qt.Key.Key_3)  # rank 4 not relevant, rank 5 current
    _key(qtbot, w, Qt.Key.Key_Up)
    _key(qtbot, w, Qt.Key.Key_Backspace)  # rank 4 unjudged again; no advance
    assert w.reader.current == 3 and w.reader.judgements()[4] is None
    _key(qtbot, w, Qt.Key.Key_3)
    assert w.reader.judgements() == {1: RELEVANT, 2: PARTLY, 3: None, 4: NOT, 5: None}
    # Only the current card is shown whole; the header is never squeezed below its two rows.
    for i, card in enumerate(w.reader.cards):
        assert card.current == (i == w.reader.current)
        assert card.header.height() >= 2 * QFontMetrics(card.header.font()).height()
    assert w.reader.cards[w.reader.current].body.hidden_lines == 0
    # One mark per judged span in the file, none for the unjudged ones.
    audit = load_audit(copies[0].with_name("handbook.audit.jsonl"))
    got = {(m.start, m.end): m.judgement for m in audit.marks}
    judged = (RELEVANT, PARTLY, None, NOT, None)
    assert got == {(h.chunk.start, h.chunk.end): j for h, j in zip(r.hits, judged, strict=True) if j}
    run = audit.run_for(GERMANY, config_label(r))
    assert run is not None and run.ranking == tuple(hit_span(h) for h in r.hits)


def test_enter_in_audit_mode_hands_the_keys_to_the_cards(qtbot, window, wait_result):
    """Typed question, Enter, 1: the 1 judged the first card rather than going into the field."""
    w = window()
    w.audit_mode.set_active(True)
    w.activateWindow()
    field = w.question_bar.field
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(field.hasFocus, timeout=3000)
    qtbot.keyClicks(field, GERMANY)
    qtbot.keyClick(field, Qt.Key.Key_Return)
    r = wait_result(w, question=GERMANY)
    qtbot.waitUntil(lambda: [c.hit for c in w.reader.cards] == list(r.hits), timeout=5000)
    qtbot.waitUntil(w.reader.list.hasFocus, timeout=3000)
    for key in (Qt.Key.Key_1, Qt.Key.Key_J, Qt.Key.Key_3):  # where the keys go: the focused widget
        qtbot.keyClick(QApplication.focusWidget(), key)
    assert field.text() == GERMANY
    assert w.reader.judgements()[1] == RELEVANT and w.reader.judgements()[3] == NOT
    # A click back into the field types again.
    qtbot.mouseClick(field, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(field.hasFocus, timeout=3000)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_1)
    assert "1" in field.text() and w.reader.judgements()[4] is None


def test_next_question_walks_the_gold_set(qtbot, window, wait_result):
    w = window()
    _ask(w, wait_result, GERMANY)
    w.reader.list.setFocus()
    qs = w.reader.session.questions()
    assert qs[0] == GERMANY and FRANCE in qs
    _key(qtbot, w, Qt.Key.Key_BracketRight)
    wait_result(w, question=qs[1])
    assert w.question_bar.field.text() == qs[1]
    _key(qtbot, w, Qt.Key.Key_K, Qt.KeyboardModifier.ShiftModifier)
    wait_result(w, question=GERMANY)


def test_judgements_survive_a_question_switch_and_a_restart(qtbot, window, wait_result, settings_store, copies):
    w = window()
    r = _ask(w, wait_result, GERMANY)
    w.reader.judge(1, RELEVANT)
    w.reader.judge(2, NOT)
    _ask(w, wait_result, FRANCE)
    assert all(j is None for j in w.reader.judgements().values())  # France has none of its own
    _ask(w, wait_result, GERMANY)
    assert w.reader.judgements()[1] == RELEVANT and w.reader.judgements()[2] == NOT
    w.close()
    # A new window on the same document reads the audit file back.
    w2 = window()
    r2 = _ask(w2, wait_result, GERMANY)
    assert [hit_span(h) for h in r2.hits] == [hit_span(h) for h in r.hits]
    assert w2.reader.judgements()[1] == RELEVANT and w2.reader.judgements()[2] == NOT
    assert all(c.verdict.how == "judged" for c in w2.reader.cards[:2])


def test_saving_twice_writes_one_line_and_keeps_the_baseline(qtbot, window, wait_result, copies):
    w = window()
    wait_result(w, gold=True)
    lines_before = len(copies[1].read_text(encoding="utf-8").splitlines())
    w.retrieval.pin_baseline()
    assert w.retrieval.baseline is not None
    _ask(w, wait_result, NEW)
    w.reader.judge(1, RELEVANT)
    w.reader.judge(2, NOT)
    w.reader.save_button.click()
    wait_result(w, gold=True)
    w.reader.save_button.click()  # the same question again: no second line
    wait_result(w, gold=True)
    lines = copies[1].read_text(encoding="utf-8").splitlines()
    assert len(lines) == lines_before + 1
    assert sum(1 for x in lines if json.loads(x)["question"] == NEW) == 1
    # The baseline is kept, and compared on the questions it scored.
    assert w.retrieval.baseline is not None
    cmp = w.retrieval.comparison
    assert cmp is not None and cmp.left_out == 1
    assert len(cmp.after.questions) == len(w.retrieval.baseline.report.questions)
    items = [w.gold_panel.changes.item(i).text() for i in range(w.gold_panel.changes.count())]
    assert "1 new question(s) not in the baseline" in items[0]
    base_col = w.retrieval.baseline_results()
    assert base_col is not None and base_col[-1] is None and all(b is not None for b in base_col[:-1])


def test_replay_after_a_rechunk(qtbot, window, wait_result, copies):
    w = window()
    r = _ask(w, wait_result, GERMANY)
    for rank, j in zip(range(1, 6), (RELEVANT, NOT, PARTLY, NOT, NOT), strict=True):
        w.reader.judge(rank, j)
    marks = w.reader.session.audit.marks
    w.strategy_panel.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 300)
    r2 = wait_result(w, question=GERMANY)
    assert r2.request.strategy == "fixed_chars"
    qtbot.waitUntil(lambda: [c.hit for c in w.reader.cards] == list(r2.hits), timeout=5000)
    verdicts = [c.verdict for c in w.reader.cards]
    assert verdicts == [replay(marks, GERMANY, hit_span(h)) for h in r2.hits]
    # New chunks: none is judged on its own span; what they inherit follows the rule.
    assert all(v.how != "judged" for v in verdicts)
    old = {hit_span(h) for h in r.hits}
    for h, v in zip(r2.hits, verdicts, strict=True):
        d, a, b = hit_span(h)
        if v.judgement == RELEVANT:
            assert any(m.judgement == RELEVANT and a <= m.start and m.end <= b for m in marks)
        if v.judgement is None:
            assert hit_span(h) not in old
    # The file still holds the five judgements, and a run per configuration.
    audit = load_audit(copies[0].with_name("handbook.audit.jsonl"))
    assert len(audit.marks) == 5
    assert {config_label(r), config_label(r2)} <= {run.config for run in audit.runs}
    s = w.reader.session.summary()
    mine = next(x for x in s.questions if x.question == GERMANY)
    assert mine.unjudged == sum(1 for v in verdicts if v.judgement is None)


def test_marks_become_gold_questions_once(qtbot, window, wait_result, copies):
    w = window()
    wait_result(w, gold=True)
    n_before = len(copies[1].read_text(encoding="utf-8").splitlines())
    r = _ask(w, wait_result, NEW)
    w.reader.judge(1, RELEVANT)
    w.reader.judge(3, RELEVANT)
    w.reader.judge(2, PARTLY)
    _ask(w, wait_result, GERMANY)
    w.reader.judge(1, RELEVANT)
    w.audit_mode.set_active(True)
    w.reader.summary_box.gold_button.click()
    wait_result(w, gold=True)
    w.reader.summary_box.gold_button.click()  # twice: nothing new
    wait_result(w, gold=True)
    lines = [json.loads(x) for x in copies[1].read_text(encoding="utf-8").splitlines()]
    assert len(lines) == n_before + 1  # the new question added, the gold one updated in place
    new = next(x for x in lines if x["question"] == NEW)
    spans = sorted({(h.chunk.start, h.chunk.end) for h in (r.hits[0], r.hits[2])})
    assert [(x["start"], x["end"]) for x in new["references"]] == spans
    germany = next(x for x in lines if x["question"] == GERMANY)
    assert germany["answer"] == "14 months"  # the gold line keeps its answer
    gold = load_gold(copies[1], [w.state.document])
    assert sum(1 for q in gold.questions if q.question == NEW) == 1


def test_marks_to_gold_and_the_audit_file_keep_modes(qtbot, window, wait_result, copies):
    """Add Marked as Gold Questions keeps a 0664 gold file 0664 (it became 0600); the audit file
    written beside the document is made with the umask, as any new file."""
    doc, gold = copies
    gold.chmod(0o664)
    old = os.umask(0o022)
    try:
        w = window()
        wait_result(w, gold=True)
        _ask(w, wait_result, NEW)
        w.reader.judge(1, RELEVANT)
        w.audit_mode.set_active(True)
        w.reader.summary_box.gold_button.click()
        wait_result(w, gold=True)
        assert NEW in gold.read_text(encoding="utf-8")
        assert stat.S_IMODE(gold.stat().st_mode) == 0o664
        audit_file = audit_path(w.state.document)
        assert audit_file is not None
        qtbot.waitUntil(audit_file.exists)
        assert stat.S_IMODE(audit_file.stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_adding_marks_in_audit_mode_keeps_the_audit_layout(qtbot, window, wait_result, copies):
    """Issue 26: Add Marked as Gold Questions opened the Gold set dock over the audit layout. The
    Reader stays the only dock; the status bar says what went into the gold file."""
    from PySide6.QtWidgets import QDockWidget

    w = window(size=(1400, 900))
    wait_result(w, gold=True)
    _ask(w, wait_result, NEW)
    w.reader.judge(1, RELEVANT)
    _ask(w, wait_result, GERMANY)
    w.reader.judge(1, RELEVANT)
    w.audit_mode.set_active(True)
    qtbot.waitUntil(lambda: w.reader_dock.width() > w.width() // 2, timeout=3000)
    width = w.reader_dock.width()
    w.reader.summary_box.gold_button.click()
    wait_result(w, gold=True)
    qtbot.waitUntil(lambda: len(w.retrieval.gold.questions) == 65, timeout=5000)
    assert [d for d in w.findChildren(QDockWidget) if d.isVisible()] == [w.reader_dock]
    assert w.reader_dock.width() == width and w.audit_mode.active
    assert w.message.text() == "Added 1 question, updated 1 in handbook.gold.jsonl"
    details = w.messages.details
    assert f"added: {NEW}" in details and f"updated: {GERMANY}" in details and "leave Audit Mode" in details
    # Leaving the mode gives the user's layout back; the next gold set shows its dock again.
    w.audit_mode.set_active(False)
    assert not w.audit_mode.active
    w.retrieval.set_gold(None)
    w.gold_panel.open_gold(copies[1])
    assert w.gold_dock.isVisible()


def test_a_click_on_a_card_shows_the_chunk_in_the_text(qtbot, window, wait_result):
    w = window()
    r = _ask(w, wait_result, GERMANY)
    w.audit_mode.set_active(True)
    w.view.verticalScrollBar().setValue(0)
    card = w.reader.cards[2]
    qtbot.mouseClick(card.header, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    chunk = r.hits[2].chunk
    assert w.reader.current == 2
    assert w.state.selection == chunk.id and w.view.current_hit == 2
    top, _bottom = w.view.y_range(chunk.start, chunk.end)
    assert 0 <= top < w.view.viewport().height()


def test_audit_mode_takes_the_window_and_gives_it_back(qtbot, window, wait_result, settings_store):
    w = window(size=(1400, 900))
    _ask(w, wait_result, GERMANY)
    visible = {d.objectName() for d in (w.strategy_dock, w.stats_dock, w.table_dock) if d.isVisible()}
    w.audit_mode.action.trigger()
    assert w.audit_mode.active and w.reader_dock.isVisible() and not w.strategy_dock.isVisible()
    assert w.reader.summary_box.isVisible()
    qtbot.waitUntil(lambda: w.reader_dock.width() > w.width() // 2, timeout=3000)

    def shown() -> list:
        top, view = w.reader.scroll_area.verticalScrollBar().value(), w.reader.scroll_area.viewport().height()
        return [c for c in w.reader.cards if min(c.y() + c.height(), top + view) - max(c.y(), top) > 40]

    # Several cards at once at 1400x900, the first one whole. The cards fit their heights on a
    # deferred turn of the event loop (after the dock's resize), so wait for the layout to settle
    # rather than for a fixed time (a loaded machine took longer than 50 ms).
    try:
        qtbot.waitUntil(lambda: len(shown()) >= 3, timeout=3000)
    except qtbot.TimeoutError:
        raise AssertionError(f"{len(shown())} cards shown at 1400x900: "
                             f"{[(c.y(), c.height()) for c in w.reader.cards[:4]]}, "
                             f"viewport {w.reader.scroll_area.viewport().height()}") from None
    w.audit_mode.action.trigger()
    assert not w.audit_mode.active
    assert {d.objectName() for d in (w.strategy_dock, w.stats_dock, w.table_dock) if d.isVisible()} == visible
    # Closing in audit mode saves the user's layout, not the audit's.
    w.audit_mode.set_active(True)
    w.close()
    w2 = window()
    assert w2.strategy_dock.isVisible() and not w2.audit_mode.active


def test_summary_export(qtbot, window, wait_result, tmp_path):
    w = window()
    _ask(w, wait_result, GERMANY)
    w.reader.judge(1, RELEVANT)
    w.reader.judge(2, PARTLY)
    s = w.reader.session.summary()
    assert w.audit_mode.export(s, tmp_path / "out.md")
    assert (tmp_path / "out.md").read_text(encoding="utf-8") == summary_markdown(s)
    w.reader.set_roomy(True)
    assert w.reader.summary_box.model.rowCount() == 1
    assert "75%" in w.reader.summary_box.overall.text()  # (1 + 0.5) / 2 judged


def test_an_unreadable_audit_file_is_left_alone(qtbot, hash_window, open_doc, wait_result, copies):
    bad = copies[0].with_name("handbook.audit.jsonl")
    bad.write_text("{broken\n", encoding="utf-8")
    w = hash_window(start=False)
    w.retrieval.set_retriever("bm25")
    open_doc(w, copies[0])
    _ask(w, wait_result, GERMANY)
    w.reader.judge(1, RELEVANT)
    assert w.reader.judgements()[1] == RELEVANT  # kept in memory
    assert bad.read_text(encoding="utf-8") == "{broken\n"
    assert "left as it is" in w.reader.hint.text() and "handbook.audit.jsonl:1" in w.reader.hint.text()


def test_rechunking_while_cards_show_does_not_crash(qtbot, hash_window, open_doc, wait_result):
    """The Reader's cards refit their text height when resized; doing that inside the resize
    re-entered the scroll area's layout and segfaulted Qt in 5 runs of 6 of this very sequence
    (a question's cards shown, sizes dragged, strategies switched). The fit now runs after the
    event."""
    question = "How long is parental allowance paid in Germany?"
    w = hash_window()
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    open_doc(w)
    qtbot.waitUntil(lambda: w.retrieval.pooled_ready, timeout=20_000)
    for _ in range(4):
        w.question_bar.ask(question)
        wait_result(w, mode=None, question=question)
        qtbot.waitUntil(lambda: bool(w.reader.cards), timeout=5000)
        for size in (200, 160, 320, 128):
            w.strategy_panel.set_value("size", size)
            qtbot.wait(15)
        w.state.set_strategy("fixed_tokens")
        qtbot.wait(30)
        w.strategy_panel.set_value("size", 200)
        qtbot.wait(30)
        w.state.set_strategy("markdown")
        qtbot.wait(30)
    r = wait_result(w, mode=None, question=question)
    assert r.hits and w.reader.cards  # still alive, still answering


# -- a corpus: marks belong to the judged spans, whatever document is shown --------------------------

LEAVE = """# Leave policy

## Annual leave

Every employee earns twenty-five days of annual leave a year. Annual leave accrues monthly and
unused days carry over to the first quarter of the next year. Book leave in the HR portal at least
two weeks ahead so your team can plan cover.

## Sick leave

Tell your manager before ten in the morning on the first day of sickness. From the fourth day a
doctor's note is required. Sick leave is paid in full for six weeks and counts towards the pay
period in which it is taken.

## Parental leave

Parents may take up to twelve months of parental leave. The allowance is paid with the salary at
the end of each pay period, and the first two months are paid at the full rate.

## Leave and pay

Leave taken in a pay period is paid with that period's salary. Unpaid leave reduces the pay for
the pay period by one working day per day taken.
"""

TOCK = """# Tock time tracking

## Clocking in

Clock in with the Tock app when you start work and clock out when you stop. Breaks longer than
fifteen minutes are clocked out. Forgotten clock-ins can be corrected until the end of the week.

## Pay period

The pay period runs from the first to the last day of each calendar month. Timesheets close on
the last working day of the pay period at noon, and salaries are paid on the third working day
after the pay period ends.

## Overtime

Overtime must be approved by your manager in Tock before it is worked. Approved overtime is paid
at one and a half times the hourly rate in the next pay period, or taken as time off in lieu.

## Corrections

Corrections to a closed timesheet go through payroll and are settled in the following pay period.
"""

PAY = "When does the pay period end?"


@pytest.fixture
def corpus(tmp_path):
    """A folder of two documents whose chunks share the question's top k (the user's leave.md and
    tock.md)."""
    folder = tmp_path / "policies"
    folder.mkdir()
    (folder / "leave.md").write_text(LEAVE, encoding="utf-8")
    (folder / "tock.md").write_text(TOCK, encoding="utf-8")
    return folder


@pytest.fixture
def corpus_window(hash_window, wait_complete, corpus):
    def make(**kw):
        w = hash_window(start=False, **kw)
        w.retrieval.set_retriever("bm25")
        assert w.open_paths([str(corpus)])
        wait_complete(w)
        return w
    return make


def _cards_for(qtbot, w, result) -> None:
    qtbot.waitUntil(lambda: [c.hit for c in w.reader.cards] == list(result.hits), timeout=5000)


def _choose(qtbot, w, wait_result, doc_id: str):
    """Choose a document under Document (the toolbar's chooser) and wait for the question's hits."""
    w.doc_combo.setCurrentIndex(w.doc_combo.findData(doc_id))
    assert w.state.document.doc_id == doc_id
    r = wait_result(w, question=PAY)
    _cards_for(qtbot, w, r)
    return r


def test_marks_in_a_corpus_stay_whatever_document_is_shown(qtbot, corpus_window, wait_result, corpus,
                                                            hash_window, open_doc):
    w = corpus_window()
    assert w.state.document.doc_id == "leave.md"
    r = _ask(w, wait_result, PAY)
    _cards_for(qtbot, w, r)
    docs = [h.chunk.doc_id for h in r.hits]
    assert "tock.md" in docs[:4] and "leave.md" in docs[:4]  # four judged cards in both documents
    judged = {1: RELEVANT, 2: NOT, 3: PARTLY, 4: NOT}
    for rank, j in judged.items():
        w.reader.judge(rank, j)
    want = {**judged, **{h.rank: None for h in r.hits if h.rank not in judged}}
    assert w.reader.judgements() == want
    # tock.md under Document: the same question's cards keep their marks, and so does the summary.
    r2 = _choose(qtbot, w, wait_result, "tock.md")
    assert [hit_span(h) for h in r2.hits] == [hit_span(h) for h in r.hits]
    assert w.reader.judgements() == want
    mine = next(s for s in w.reader.session.summary().questions if s.question == PAY)
    assert mine.judged == 4 and mine.unjudged == len(r.hits) - 4
    # Judging while tock.md is shown adds to the same marks; back on leave.md every mark is there.
    w.reader.judge(5, RELEVANT)
    want[5] = RELEVANT
    _choose(qtbot, w, wait_result, "leave.md")
    assert w.reader.judgements() == want
    # Each mark lies in the audit file of the document it judges, whichever was shown.
    for name in ("leave", "tock"):
        audit = load_audit(corpus / f"{name}.audit.jsonl")
        assert {(m.doc_id, m.start, m.end): m.judgement for m in audit.marks} == {
            hit_span(h): want[h.rank] for h in r.hits if want[h.rank] and h.chunk.doc_id == f"{name}.md"}
    # A new window on the corpus finds them all again; tock.md opened alone finds its own.
    w.close()
    w2 = corpus_window()
    _ask(w2, wait_result, PAY)
    _cards_for(qtbot, w2, w2.retrieval.result)
    assert w2.reader.judgements() == want
    w3 = hash_window(start=False)
    w3.retrieval.set_retriever("bm25")
    open_doc(w3, corpus / "tock.md")
    tock = {hit_span(h): want[h.rank] for h in r.hits if h.chunk.doc_id == "tock.md" and want[h.rank]}
    assert {(m.doc_id, m.start, m.end): m.judgement for m in w3.reader.session.audit.marks} == tock


def test_a_card_in_another_document_shows_that_document_and_the_keys_follow(qtbot, corpus_window, wait_result):
    w = corpus_window(size=(1400, 900))
    r = _ask(w, wait_result, PAY)
    _cards_for(qtbot, w, r)
    docs = [h.chunk.doc_id for h in r.hits]
    assert docs[0] == "tock.md" and w.state.document.doc_id == "leave.md"
    w.audit_mode.set_active(True)
    w.activateWindow()
    # Audit mode follows the current card: the first is in tock.md, so tock.md is shown, at it.
    qtbot.waitUntil(lambda: w.state.document.doc_id == "tock.md" and w.view.current_hit >= 0, timeout=5000)
    _cards_for(qtbot, w, w.retrieval.result)

    def at_card(i: int) -> bool:
        """Card i is current, its document shown, its chunk selected and its hit navigated to."""
        chunk = r.hits[i].chunk  # the ranking is the corpus's, whichever document is shown
        hits = w.view.hits
        return (w.retrieval.result is not None and w.reader.current == i and w.state.document.doc_id == chunk.doc_id
                and 0 <= w.view.current_hit < len(hits)
                and (hits[w.view.current_hit].start, hits[w.view.current_hit].end) == (chunk.start, chunk.end)
                and w.state.selection == chunk.id)

    qtbot.waitUntil(lambda: at_card(0), timeout=5000)
    assert [m.chunk_id for m in w.view.hits] == [h.chunk.id for h in r.hits if h.chunk.doc_id == "tock.md"]
    # Judging from the keyboard walks the cards, and the text follows each into its document;
    # the current card stays where the keys put it (no jump back to the first card).
    w.reader.list.setFocus()
    qtbot.waitUntil(w.reader.list.hasFocus, timeout=3000)
    leave_at = docs.index("leave.md")
    for i in range(leave_at):
        qtbot.keyClick(w.reader.list, Qt.Key.Key_1)
        qtbot.waitUntil(lambda i=i: at_card(i + 1), timeout=5000)
    assert w.state.document.doc_id == "leave.md"
    assert w.reader.judgements() == {h.rank: RELEVANT if h.rank <= leave_at else None for h in r.hits}
    # A click on a card of the other document shows it there.
    back = next(i for i, d in enumerate(docs) if d == "tock.md" and i > leave_at) if "tock.md" in docs[leave_at:] \
        else 0
    qtbot.mouseClick(w.reader.cards[back].header, Qt.MouseButton.LeftButton, pos=QPoint(5, 5))
    qtbot.waitUntil(lambda: at_card(back), timeout=5000)
    chunk = r.hits[back].chunk
    top, _bottom = w.view.y_range(chunk.start, chunk.end)
    assert 0 <= top < w.view.viewport().height()


def test_cards_fit_the_reader_at_every_width_and_keep_their_counts_whole(qtbot, window, wait_result):
    """Issue 26: in the Reader beside the text at 1400x900 the cards' text ran past their right
    edge (a card's "… 8 more lines · the answer is further down (select the card to read it all)"
    on one line made every card wider than the list, which does not scroll sideways), and a long
    chunk's counts were elided ("1,536 tok · 1,9…"). At every width the Reader can take, the cards
    fit it and each header shows its counts whole."""
    from PySide6.QtWidgets import QApplication

    from inspector.qt.panels.reader import Reader

    w = window(size=(1400, 900))
    reader = Reader(w.retrieval, w.state)  # a second Reader on the window's state, free to take any width
    qtbot.addWidget(reader)
    reader.show()
    w.state.set_strategy("fixed_tokens")
    w.strategy_panel.set_value("size", 1024)  # past the model's 256 word pieces: a long extra note
    r = _ask(w, wait_result, GERMANY)
    qtbot.waitUntil(lambda: len(reader.cards) == len(r.hits) and all(c.facts for c in reader.cards), timeout=5000)
    assert any(c.facts.extra for c in reader.cards) and any(c.more.text() for c in reader.cards)
    widths = set()
    for width in range(200, 901, 13):
        reader.resize(width, 700)
        QApplication.processEvents()
        qtbot.waitUntil(lambda: not any(c.body._fit_due for c in reader.cards), timeout=3000)
        QApplication.processEvents()
        widths.add(reader.width())
        viewport = reader.scroll_area.viewport().width()
        assert reader.list.width() <= viewport, (reader.width(), reader.list.width(), viewport)
        for card in reader.cards:
            facts = card.facts
            _place, size = card.header.row2()
            assert size in (facts.size, f"{facts.size} · {facts.extra}"), (reader.width(), size)
            assert card.header.fontMetrics().horizontalAdvance(size) <= card.header.width()
            assert card.x() + card.width() <= viewport
    assert min(widths) < 400 and max(widths) >= 880


def test_audit_mode_keeps_its_layout_when_the_window_is_resized(qtbot, window, wait_result):
    """Issue 26: resizing the window lost the audit layout: the window's own arrangement came back
    (the Reader put into the left column of tabs below 1200 px) and the Reader kept its old width
    (350 of 1400 px). It keeps the window's full height and 60 % of its width at every size, and
    leaving gives back the arrangement for the window's size at that moment."""
    from PySide6.QtWidgets import QDockWidget

    from inspector.qt.panels.audit_mode import AUDIT_WIDTH

    w = window(size=(1400, 900))
    qtbot.waitUntil(lambda: w.dock_layout.compact is False, timeout=5000)
    _ask(w, wait_result, GERMANY)
    w.audit_mode.set_active(True)

    def audit_layout() -> bool:
        shown = [d for d in w.findChildren(QDockWidget) if d.isVisible()]
        return (shown == [w.reader_dock] and w.dockWidgetArea(w.reader_dock) == Qt.DockWidgetArea.RightDockWidgetArea
                and abs(w.reader_dock.width() - AUDIT_WIDTH * w.width()) <= 0.04 * w.width()
                and w.view.isVisible() and w.view.width() > 300)

    for size in ((1400, 900), (1024, 700), (1600, 1000), (1250, 800)):
        w.resize(*size)
        try:
            qtbot.waitUntil(audit_layout, timeout=3000)
        except qtbot.TimeoutError:
            raise AssertionError(f"at {size}: Reader {w.reader_dock.width()} px in "
                                 f"{w.dockWidgetArea(w.reader_dock)}, shown "
                                 f"{[d.windowTitle() for d in w.findChildren(QDockWidget) if d.isVisible()]}") from None
    # Entered wide, left narrow: the compact arrangement, still following the window's size.
    w.resize(1024, 700)
    qtbot.waitUntil(audit_layout, timeout=3000)
    w.audit_mode.set_active(False)
    qtbot.waitUntil(lambda: w.dock_layout.compact is True, timeout=3000)
    assert w.dock_layout.auto and w.strategy_dock.isVisible()
    assert w.reader_dock in w.tabifiedDockWidgets(w.strategy_dock)
    w.resize(1400, 900)
    qtbot.waitUntil(lambda: w.dock_layout.compact is False, timeout=3000)
    assert w.reader_dock not in w.tabifiedDockWidgets(w.strategy_dock)
