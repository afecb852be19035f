"""A gold set without an LLM, in the window: the quick question bar (select, type, Enter; Ctrl+Z),
the coverage view, and drafted questions reviewed with A / E / R.

BM25 and the HashEmbedder keep these fast; every write goes to copies in tmp_path.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from inspector.core.evaluation.coverage import coverage
from inspector.core.evaluation.drafts import MEASUREMENT
from inspector.core.evaluation.gold import load_gold, normalize
from inspector.qt.panels.drafts_panel import ACCEPTED, PENDING, REJECTED

ROOT = Path(__file__).resolve().parents[2]
HANDBOOK = ROOT / "sample_docs" / "handbook.md"
GOLD = ROOT / "sample_docs" / "handbook.gold.jsonl"


@pytest.fixture
def copies(tmp_path):
    doc, gold = tmp_path / "handbook.md", tmp_path / "handbook.gold.jsonl"
    shutil.copy(HANDBOOK, doc)
    shutil.copy(GOLD, gold)
    return doc, gold


@pytest.fixture
def window(hash_window, open_doc, wait_result, copies):
    def make(doc=None):
        w = hash_window(start=False, synchronous_retrieval=True)
        w.retrieval.set_retriever("bm25")
        open_doc(w, doc or copies[0])
        wait_result(w, gold=bool(doc is None))
        return w
    return make


def _plain(html: str) -> str:
    return re.sub(r"<[^>]+>", "", html)


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _type_and_enter(qtbot, bar, text):
    qtbot.keyClicks(bar.field, text)
    qtbot.keyClick(bar.field, Qt.Key.Key_Return)


def test_quick_question_select_type_enter_undo(qtbot, window, copies):
    w = window()
    gold = copies[1]
    before = _lines(gold)
    tools = w.gold_tools
    bar = tools.bar
    assert not bar.isVisible()
    qtbot.keyClick(w, Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)  # Edit ▸ Quick Question
    assert bar.isVisible()
    assert bar.counter.text() == "64 questions"
    text = w.state.document.text
    a = text.index("25 days")
    bar.select_span(a - 1, a + len("25 days"))  # the space before it is trimmed off
    assert bar.answer_span == (a, a + 7) and bar.answer == "25 days"
    _type_and_enter(qtbot, bar, "How many days of paternity leave in France?")
    lines = _lines(gold)
    assert lines[:-1] == before and len(lines) == len(before) + 1
    assert json.loads(lines[-1]) == {"question": "How many days of paternity leave in France?", "answer": "25 days",
                                     "source": "handbook.md", "references": [{"start": a, "end": a + 7}]}
    # Cleared for the next one; the counter moved; the gold set was reloaded with the question.
    assert bar.field.text() == "" and bar.answer_span is None and not w.view.textCursor().hasSelection()
    assert bar.counter.text() == "65 questions · 1 new"
    assert len(w.retrieval.gold.questions) == 65
    # Enter without a new answer saves nothing.
    _type_and_enter(qtbot, bar, "A question with no answer?")
    assert _lines(gold) == lines and "select the answer" in w.messages.last_error
    bar.field.clear()
    b = text.index("16 weeks")
    bar.select_span(b, b + len("16 weeks"))
    _type_and_enter(qtbot, bar, "Maternity leave in France?")
    assert len(_lines(gold)) == len(before) + 2
    assert bar.counter.text() == "66 questions · 2 new"
    # Ctrl+Z in the bar takes the last one out again (one atomic rewrite), then the first.
    qtbot.keyClick(bar.field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert _lines(gold) == lines
    assert bar.counter.text() == "65 questions · 1 new"
    bar.undo()
    assert _lines(gold) == before and len(w.retrieval.gold.questions) == 64
    assert not bar.undo() and not bar.undo_button.isEnabled()
    qtbot.keyClick(bar.field, Qt.Key.Key_Escape)
    assert not bar.isVisible()


def test_quick_question_keeps_the_gold_files_mode(qtbot, window, copies):
    """A shared 0644 gold file stayed 0644 through a question and its undo (it became 0600: the
    atomic writer published its private temporary file's mode). The umask is for new files only."""
    gold = copies[1]
    gold.chmod(0o644)
    old = os.umask(0o077)
    try:
        w = window()
        bar = w.gold_tools.bar
        bar.open_bar()
        text = w.state.document.text
        a = text.index("25 days")
        bar.select_span(a, a + len("25 days"))
        _type_and_enter(qtbot, bar, "How many days of paternity leave in France?")
        assert "How many days of paternity leave in France?" in gold.read_text(encoding="utf-8")
        assert stat.S_IMODE(gold.stat().st_mode) == 0o644
        bar.undo()
        assert "paternity leave in France" not in gold.read_text(encoding="utf-8")
        assert stat.S_IMODE(gold.stat().st_mode) == 0o644
    finally:
        os.umask(old)


def test_undo_puts_back_a_line_the_bar_updated(qtbot, window, copies):
    w = window()
    gold = copies[1]
    before = gold.read_text(encoding="utf-8")
    bar = w.gold_tools.bar
    bar.open_bar()
    q0 = load_gold(gold, [w.state.document]).questions[0]
    text = w.state.document.text
    a = text.index("Elterngeld")
    bar.select_span(a, a + len("Elterngeld"))
    _type_and_enter(qtbot, bar, q0.question)  # the same question again: its line is updated
    after = gold.read_text(encoding="utf-8")
    assert after != before and after.count("\n") == before.count("\n")
    assert "Elterngeld" in after.splitlines()[q0.line - 1]
    assert bar.counter.text() == "64 questions"  # updated, not added
    bar.undo()
    assert gold.read_text(encoding="utf-8") == before


def test_selecting_with_the_mouse_returns_to_the_question_field(qtbot, window):
    w = window()
    bar = w.gold_tools.bar
    bar.open_bar()
    w.view.setFocus()
    text = w.state.document.text
    a = text.index("Elterngeld")
    bar.select_span(a, a + 10)
    assert bar.answer == "Elterngeld"  # followed live while the bar is open
    vp = w.view.viewport()
    rect = w.view.cursorRect()
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=rect.center())
    assert bar.field.hasFocus() or w.focusWidget() is bar.field


def test_coverage_counts_follow_the_gold_set_and_a_click_jumps(qtbot, window, copies):
    w = window()
    tools = w.gold_tools
    tools.coverage_action.trigger()
    assert tools.coverage_dock.isVisible()
    panel = tools.coverage
    expected = coverage(w.state.document, w.retrieval.gold.questions)
    rows = panel.items()
    assert [r.text(0) for r in rows] == [s.title for s in expected.sections]
    assert f"{len(expected.uncovered)} of" in _plain(panel.summary.text())
    # "What we do" has no question: highlighted; a quick question about it takes it off the list.
    row = next(r for r in rows if r.text(0) == "What we do")
    assert row.text(1) == "0" and row.background(1).color() == row.background(0).color()
    assert row.font(1).bold()
    text = w.state.document.text
    a = text.index("around 420 people")
    w.gold_tools.bar.open_bar()
    w.gold_tools.bar.select_span(a, a + len("around 420 people"))
    _type_and_enter(qtbot, w.gold_tools.bar, "How many people work at Kestrelbrook?")
    row = next(r for r in panel.items() if r.text(0) == "What we do")
    assert row.text(1) == "1" and not row.font(1).bold()
    assert f"{len(expected.uncovered) - 1} of" in _plain(panel.summary.text())
    # Only the uncovered ones; a click scrolls the text to the section.
    panel.only_uncovered.setChecked(True)
    assert all(r.text(1) == "0" for r in panel.items())
    target = panel.items()[-1]
    section = target.data(0, Qt.ItemDataRole.UserRole + 1)
    w.view.verticalScrollBar().setValue(0)
    panel.tree.itemClicked.emit(target, 0)
    top, _bottom = w.view.y_range(section.start, section.start + 1)
    assert 0 <= top < w.view.viewport().height()


def test_drafts_are_a_separate_list_reviewed_with_keys(qtbot, window, copies):
    w = window()
    gold = copies[1]
    before = _lines(gold)
    tools = w.gold_tools
    qtbot.keyClick(w, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    panel = tools.drafts
    assert tools.drafts_dock.isVisible()
    qtbot.waitUntil(lambda: len(panel.items) > 0, timeout=10_000)
    # Labelled as drafts, with the measurement; nothing written, nothing scored.
    assert "DRAFTS" in panel.banner.text() and "not a gold set" in panel.banner.text()
    assert panel.measurement.text() == MEASUREMENT and "ρ" in MEASUREMENT
    assert _lines(gold) == before and len(w.retrieval.gold.questions) == 64
    assert len(panel.items) <= panel.count.value()
    # The current draft's answer is marked in the text.
    panel.tree.setFocus()
    qtbot.waitUntil(lambda: panel.tree.hasFocus(), timeout=3000)
    first = panel.current()
    assert first is not None and w.view.answer_spans == (first.draft.answer_span,)

    def key(k):
        qtbot.keyClick(panel.tree, k)

    key(Qt.Key.Key_A)  # accept: one line appended with the draft's answer and reference
    assert first.status == ACCEPTED
    lines = _lines(gold)
    assert len(lines) == len(before) + 1
    rec = json.loads(lines[-1])
    assert rec == {"question": first.question, "answer": first.draft.answer, "source": "handbook.md",
                   "references": [{"start": first.draft.reference[0], "end": first.draft.reference[1]}]}
    second = panel.current()
    assert second is not first and second.status == PENDING
    key(Qt.Key.Key_R)  # reject: nothing written
    assert second.status == REJECTED and _lines(gold) == lines
    third = panel.current()
    key(Qt.Key.Key_E)  # edit: the editor takes the question; Enter accepts the edited one
    assert panel.editor.isVisible()
    panel.editor.clear()
    qtbot.keyClicks(panel.editor, "An edited question?")
    qtbot.keyClick(panel.editor, Qt.Key.Key_Return)
    assert third.status == ACCEPTED and not panel.editor.isVisible()
    assert json.loads(_lines(gold)[-1])["question"] == "An edited question?"
    assert len(_lines(gold)) == len(before) + 2
    # Accepting an accepted draft again writes nothing; K goes back, J forward.
    key(Qt.Key.Key_K)
    key(Qt.Key.Key_K)
    assert panel.current() is second
    key(Qt.Key.Key_K)
    assert panel.current() is first
    key(Qt.Key.Key_A)
    assert len(_lines(gold)) == len(before) + 2
    assert panel.status.text().startswith(f"{len(panel.items)} drafts · 2 accepted · 1 rejected")
    # Accepted drafts are in the gold set, each once.
    questions = [normalize(q.question) for q in w.retrieval.gold.questions]
    assert questions.count(normalize(first.question)) == 1 and questions.count("an edited question?") == 1


def test_drafts_already_in_the_gold_set_show_as_accepted(qtbot, window, copies):
    w = window()
    panel = w.gold_tools.drafts
    panel.draft(count=10)
    qtbot.waitUntil(lambda: len(panel.items) > 0, timeout=10_000)
    panel.set_current(0)
    panel.accept_current()
    questions = [it.question for it in panel.items]
    # Drafting again (a fresh list) finds the accepted one in the gold set.
    panel.draft(count=10)
    qtbot.waitUntil(lambda: panel.items and all(it.status != REJECTED for it in panel.items), timeout=10_000)
    again = {it.question: it.status for it in panel.items}
    assert [it.question for it in panel.items] == questions  # deterministic
    assert again[questions[0]] == ACCEPTED
    assert sum(1 for s in again.values() if s == ACCEPTED) == 1


def test_without_a_gold_file_the_first_question_creates_one_beside_the_document(qtbot, hash_window, open_doc,
                                                                                 wait_result, tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nThe deadline is 14 March and the budget is €2,000.\n", encoding="utf-8")
    w = hash_window(start=False, synchronous_retrieval=True)
    w.retrieval.set_retriever("bm25")
    open_doc(w, doc)
    assert w.retrieval.gold is None
    bar = w.gold_tools.bar
    bar.open_bar()
    assert bar.counter.text() == "0 questions"
    a = doc.read_text(encoding="utf-8").index("€2,000")
    bar.select_span(a, a + len("€2,000"))
    _type_and_enter(qtbot, bar, "What is the budget?")
    made = tmp_path / "notes.gold.jsonl"
    assert json.loads(made.read_text(encoding="utf-8")) == {
        "question": "What is the budget?", "answer": "€2,000", "source": "notes.md",
        "references": [{"start": a, "end": a + 6}]}
    assert Path(w.retrieval.gold.path) == made and bar.counter.text() == "1 question · 1 new"
    bar.undo()
    assert made.read_text(encoding="utf-8") == "" and bar.counter.text() == "0 questions"


def test_docks_stay_tabbed_through_a_relayout(qtbot, window):
    """The window's layout (wide or compact, View ▸ Reset Layout) moves the docks it knows; the
    coverage and drafts docks go with the statistics and the gold set instead of staying behind."""
    w = window()
    tools = w.gold_tools
    tools.show_coverage()
    tools.open_drafts()
    for width in (1500, 1100, 1500):  # wide, compact, wide again
        w.resize(width, 850)
        w.dock_layout.apply()
        qtbot.wait(10)
        assert tools.drafts_dock in w.tabifiedDockWidgets(w.gold_dock)
        assert tools.coverage_dock in w.tabifiedDockWidgets(w.stats_dock)
        assert not tools.drafts_dock.isHidden() and not tools.coverage_dock.isHidden()
    tools.coverage_dock.hide()
    w.dock_layout.apply()
    assert tools.coverage_dock.isHidden()  # a closed dock stays closed


def test_a_hidden_coverage_view_counts_nothing_and_a_long_list_is_capped(qtbot, window, copies, monkeypatch):
    """Hidden, the view only marks itself stale (its count parsed a 20 MB document for 12 s on the
    GUI thread at every open); shown, it counts; over MAX_ROWS sections it lists the first ones and
    says how many more there are."""
    from inspector.qt.panels import coverage as coverage_module

    w = window()
    panel = w.gold_tools.coverage
    assert not w.gold_tools.coverage_dock.isVisible()
    assert panel.stale and panel.result is None and not panel.items()
    monkeypatch.setattr(coverage_module, "MAX_ROWS", 5)
    w.gold_tools.coverage_action.trigger()
    qtbot.waitUntil(lambda: not panel.stale, timeout=10_000)
    expected = coverage(w.state.document, w.retrieval.gold.questions)
    assert len(panel.items()) == 5 and panel.left_out == len(expected.sections) - 5
    assert f"{len(expected.sections) - 5:,} more not shown" in _plain(panel.summary.text())


def test_taking_a_quick_question_back_does_not_say_the_gold_set_was_replaced(qtbot, window, copies):
    """Issue 26: after Ctrl+Z in the bar the status bar said "Replaced the gold set … (65
    questions): Edit ▸ Undo brings it back". The bar's writes are steps of Edit ▸ Undo with the
    file's bytes, and a gold set reloaded from the file the step wrote was not replaced."""
    w = window()
    gold = copies[1]
    before = gold.read_text(encoding="utf-8")
    bar = w.gold_tools.bar
    bar.open_bar()
    text = w.state.document.text
    a = text.index("25 days")
    bar.select_span(a, a + len("25 days"))
    _type_and_enter(qtbot, bar, "How many days of paternity leave in France?")
    w.history.history.flush()  # the step closes when the event loop turns
    assert "Replaced" not in w.message.text()
    added = gold.read_text(encoding="utf-8")
    qtbot.keyClick(bar.field, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    w.history.history.flush()
    assert gold.read_text(encoding="utf-8") == before
    assert w.message.text() == "Removed “How many days of paternity leave in France?” again"
    # Edit ▸ Undo takes the removal back, file and gold set together.
    assert w.history.history.undo_label().startswith("Remove question")
    w.history.undo()
    assert gold.read_text(encoding="utf-8") == added and len(w.retrieval.gold.questions) == 65


def test_taking_back_the_only_quick_question_does_not_say_replaced(qtbot, hash_window, open_doc, tmp_path):
    doc = tmp_path / "notes.md"
    doc.write_text("# Notes\n\nThe deadline is 14 March and the budget is €2,000.\n", encoding="utf-8")
    w = hash_window(start=False, synchronous_retrieval=True)
    w.retrieval.set_retriever("bm25")
    open_doc(w, doc)
    bar = w.gold_tools.bar
    bar.open_bar()
    a = doc.read_text(encoding="utf-8").index("€2,000")
    bar.select_span(a, a + len("€2,000"))
    _type_and_enter(qtbot, bar, "What is the budget?")
    w.history.history.flush()
    bar.undo()
    w.history.history.flush()
    assert w.retrieval.gold is None
    assert w.message.text() == "Removed “What is the budget?” again"
