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
