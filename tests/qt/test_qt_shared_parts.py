"""The window's shared parts, one of each: the elided label, the table models' plumbing, the
figures' formatting, the colours that say something. Each had copies that could drift apart
(issue 27); these tests hold the users to the one part and the part to what the copies did.
"""

from __future__ import annotations

from inspector.qt.panels.elided_label import ElidedLabel


def test_the_audit_key_hint_is_the_shared_elided_label(qtbot, make_window):
    from inspector.qt.panels.audit_panel import KEYS_HINT, KEYS_TIP

    w = make_window()
    keys = w.reader.keys
    assert isinstance(keys, ElidedLabel) and keys.elide
    keys.resize(keys.fontMetrics().horizontalAdvance(KEYS_HINT) // 2, keys.height())
    shown = keys.shown_text()
    assert shown != KEYS_HINT and shown.endswith("…")  # elided to its width, the text kept whole
    assert keys.text() == KEYS_HINT
    assert keys.toolTip() == KEYS_TIP  # the tooltip spells the keys out already: not repeated


def test_an_elided_label_shows_its_whole_text_in_the_tooltip(qtbot):
    label = ElidedLabel("a sentence far too long for the width it is given here")
    qtbot.addWidget(label)
    label.set_elide(True)
    label.setToolTip("what it is")
    label.show()
    qtbot.waitExposed(label)
    label.resize(60, label.sizeHint().height())
    assert label.toolTip() == "a sentence far too long for the width it is given here\nwhat it is"
    label.resize(2000, label.sizeHint().height())
    assert label.toolTip() == "what it is"


def test_every_table_is_a_table_model_with_its_header(qtmodeltester, qapp):
    """The four tables share the model plumbing: counts, header titles and tips, "every cell
    changed", and pass Qt's model tester with rows in them."""
    from PySide6.QtCore import Qt

    from inspector.core.documents.document import from_text
    from inspector.core.evaluation.audit import AuditSummary, QuestionSummary
    from inspector.qt.panels import audit_summary, chunk_table, corpus_panel, gold_model
    from inspector.qt.panels.table_model import TableModel

    doc = from_text("A short text.\n\nAnother paragraph.", name="a.md")
    corpus = corpus_panel.CorpusModel()
    corpus.set_rows([corpus_panel.CorpusRow("a.md", doc, chars=33, chunks=2),
                     corpus_panel.CorpusRow("bad.pdf", None, problems=("bad.pdf: unreadable",))])
    summary = audit_summary.SummaryModel()
    summary.set_summary(AuditSummary((QuestionSummary("Who?", (), ()),)))
    # The corpus last: the tester checks every later change against the model it checked last.
    models = ((summary, audit_summary.COLUMNS, audit_summary._TIPS),
              (gold_model.GoldTableModel(), gold_model.COLUMNS, gold_model._TIPS),
              (chunk_table.ChunkTableModel(), chunk_table.COLUMNS, chunk_table._HEADER_TIPS),
              (corpus, corpus_panel.COLUMNS, ()))
    for model, columns, tips in models:
        assert isinstance(model, TableModel)
        qtmodeltester.check(model, force_py=True)
        assert model.columnCount() == len(columns)
        assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(len(columns))] == list(columns)
        assert model.headerData(len(columns), Qt.Orientation.Horizontal) is None  # past the last column
        tip = model.headerData(0, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
        assert tip == (tips[0] if tips else None)
    with _recording_changes(corpus) as changed:
        corpus.all_changed()
    assert changed == [(0, 0, 1, len(corpus_panel.COLUMNS) - 1)]


class _recording_changes:  # noqa: N801  (used as a context manager, named as one)
    """Records the dataChanged ranges a model emits inside the block."""

    def __init__(self, model) -> None:
        self.model, self.ranges = model, []

    def _on(self, a, b, *_roles) -> None:
        self.ranges.append((a.row(), a.column(), b.row(), b.column()))

    def __enter__(self):
        self.model.dataChanged.connect(self._on)
        return self.ranges

    def __exit__(self, *exc) -> None:
        self.model.dataChanged.disconnect(self._on)


def test_colours_that_say_something_come_from_the_theme():
    """No colour is written out in the window's modules but the theme's (and the dark palette's):
    a status colour changed there changes everywhere, and dark/light pairs stay together."""
    import re
    from pathlib import Path

    import inspector.qt

    literal = re.compile(r"""["']#[0-9a-fA-F]{3,8}["']|#[0-9a-fA-F]{6}\b|QColor\(\s*\d|rgba?\(\s*\d""")
    root = Path(inspector.qt.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name in ("theme.py", "palette.py"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if literal.search(line):
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert not found, "colours outside inspector/qt/theme.py:\n" + "\n".join(found)


def test_the_theme_keeps_each_colour_pair_apart_by_palette(qapp):
    from inspector.qt.palette import dark_palette
    from inspector.qt.theme import Theme

    light, dark = Theme.for_palette(qapp.style().standardPalette()), Theme.for_palette(dark_palette())
    assert not light.dark and dark.dark
    for name in ("badge_ink", "best_position", "accepted_draft", "uncovered", "notice", "notice_text"):
        assert getattr(light, name) != getattr(dark, name), name
    # Ink on a badge contrasts with the badge (a strong colour: deep on light, bright on dark).
    assert light.badge_ink.lightnessF() > light.bar(0).lightnessF()
    assert dark.badge_ink.lightnessF() < dark.bar(0).lightnessF()


def test_the_big_window_classes_are_built_in_steps():
    """GoldPanel, MainWindow, AuditPanel, QuestionBar and SweepDialog had constructors of 104 to 236
    lines; each is now a short list of `_build_*` steps (one widget group each) and a `_connect`.
    A constructor that grows past a screen again is a group that wants a step of its own."""
    import ast
    import inspect
    import textwrap

    from inspector.qt.dialogs.sweep_dialog import SweepDialog
    from inspector.qt.main_window import MainWindow
    from inspector.qt.panels.audit_panel import AuditPanel
    from inspector.qt.panels.gold_panel import GoldPanel
    from inspector.qt.panels.question_bar import QuestionBar

    for cls in (GoldPanel, MainWindow, AuditPanel, QuestionBar, SweepDialog):
        init = ast.parse(textwrap.dedent(inspect.getsource(cls.__init__))).body[0]
        lines = init.end_lineno - init.lineno + 1
        steps = {n.func.attr for n in ast.walk(init) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr.startswith("_build")}
        assert lines <= 50, f"{cls.__name__}.__init__ has {lines} lines"
        assert len(steps) >= 2, f"{cls.__name__}.__init__ builds in {sorted(steps)}"
