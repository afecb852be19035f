"""The audit panel: a question's ranked chunks as compact cards, judged from the keyboard, with a
live summary. It is the Reader dock (`panels.reader.Reader`), and the audit mode (`audit_mode`)
gives it the window's full height.

Keys (while the panel has focus; a click on a card gives it focus):

    1 / R  relevant      2 / P  partly      3 / N  not relevant      0 / Backspace  unjudged
    J / ↓  next card     K / ↑  previous    ] / Shift+J  next question    [ / Shift+K  previous
    Enter / G  show the chunk in the text   E  expand every card

After a judgement the next card becomes current ("advance"). The current card is outlined and shown
whole; the others are clamped to a few lines so that several fit on a screen. Judgements go to the
`AuditSession` (the audit file beside the judged document), keyed by question and span: they survive a
question switch, a settings change (chunks of new settings inherit them by `replay`) and a restart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core import api
from inspector.core.api import pct
from inspector.qt.controllers.audit_session import AuditSession
from inspector.qt.controllers.retrieval import RetrievalController
from inspector.qt.controllers.state import InspectorState
from inspector.qt.document.hits import format_score
from inspector.qt.panels.audit_card import AuditCard, CardFacts
from inspector.qt.panels.audit_summary import SummaryBox
from inspector.qt.panels.elided_label import ElidedLabel
from inspector.qt.panels.question_bar import mode_text
from inspector.qt.theme import Theme

if TYPE_CHECKING:
    from inspector.core.api import RetrievalResult

#: Lines a card that is not the current one shows (the dock / the audit mode).
COMPACT_LINES = 4
ROOMY_LINES = 5

KEYS_HINT = "Keys: 1 2 3 judge · 0 clear · J K card · ] [ question · Enter show · E expand"
KEYS_TIP = ("1 or R: relevant · 2 or P: partly relevant · 3 or N: not relevant · 0 or Backspace: unjudged\n"
            "J or ↓: next card · K or ↑: previous card · Home/End: first/last card\n"
            "] or Shift+J: next question · [ or Shift+K: previous question (the gold set's, then audited and "
            "asked ones)\nEnter or G: show the chunk in the text · E: expand every card")


class CardList(QWidget):
    """The cards' container; it holds the keyboard focus for the panel."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(6, 4, 6, 4)
        self.layout_.setSpacing(6)
        self.layout_.addStretch(1)


class AuditPanel(QWidget):
    """Cards, keyboard judging, question navigation and the summary."""

    chunkActivated = Signal(object)
    """A card was clicked or Enter pressed: the Chunk (the window shows it in the text)."""
    currentChanged = Signal(object)
    """Another card became current: its Chunk (the audit mode follows it in the text)."""
    goldRequested = Signal(object)
    """A GoldProposal from the marks (the window adds it to the gold file)."""
    exportRequested = Signal(object)
    """The AuditSummary to export (the window asks for a file)."""

    def __init__(self, controller: RetrievalController, state: InspectorState, session: AuditSession | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.state = state
        self.session = session if session is not None else AuditSession(state, controller, self)
        self.result: RetrievalResult | None = None
        self.cards: list[AuditCard] = []
        """The cards shown, in rank order."""
        self.current = -1
        """Index of the current card (-1: none)."""
        self.roomy = False
        self.expand_all = False
        self.advance = True
        self._pool: list[AuditCard] = []
        self._dirty = False
        self._kept: tuple[str, tuple[str, int, int]] | None = None
        """(question, span of the current card) while the cards wait for the question's next result
        (another document of the corpus shown, new chunks): that card is current again after."""

        nav = self._build_navigation()
        self._build_cards()
        bottom = self._build_bottom()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        lay.addLayout(nav)
        lay.addWidget(self.header)
        lay.addWidget(self.splitter, 1)
        lay.addWidget(self.hint)
        lay.addLayout(bottom)

        self._keys()
        self._connect()
        self._fill_questions()
        self._update_hint()
        QTimer.singleShot(300, self, self.warm_up)  # bound to the panel: dropped if it is deleted first

    def _build_navigation(self) -> QHBoxLayout:
        """◀ the question ▶ and where it stands among the questions, over the question's header."""
        self.prev_q = QToolButton()
        self.prev_q.setText("◀")
        self.prev_q.setToolTip("Previous question ([ or Shift+K)")
        self.next_q = QToolButton()
        self.next_q.setText("▶")
        self.next_q.setToolTip("Next question (] or Shift+J): the gold set's, then audited and asked ones")
        self.q_combo = QComboBox()
        self.q_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.q_combo.setMinimumContentsLength(12)
        self.q_combo.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.q_combo.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.q_combo.setToolTip("Questions to audit: the gold set's, then audited and asked ones")
        self.q_pos = QLabel()
        nav = QHBoxLayout()
        nav.setContentsMargins(6, 4, 6, 0)
        nav.setSpacing(4)
        nav.addWidget(self.prev_q)
        nav.addWidget(self.q_combo, 1)
        nav.addWidget(self.next_q)
        nav.addWidget(self.q_pos)
        self.header = QLabel("Ask a question to read what the retriever returns.")
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setContentsMargins(6, 2, 6, 2)
        self.header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        return nav

    def _build_cards(self) -> None:
        """The cards in a scroll area (the panel's focus goes to their list), over the summary."""
        self.list = CardList()
        self.scroll_area = QScrollArea()
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll_area.setWidget(self.list)
        self.scroll_area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setFocusProxy(self.list)
        self.scroll_area.viewport().installEventFilter(self)
        self.summary_box = SummaryBox()
        self.summary_box.hide()
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self.scroll_area)
        self.splitter.addWidget(self.summary_box)
        self.splitter.setChildrenCollapsible(False)
        # Height the window gains goes to the cards (what is read), not the summary's empty rows.
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 0)

    def _build_bottom(self) -> QHBoxLayout:
        """The hint over the bottom row: the keys, Advance, Summary and Save to Gold Set."""
        self.keys = ElidedLabel(KEYS_HINT, whole_in_tip=False)
        self.keys.set_elide(True)
        # As tall as the row it shares with the buttons (the text centred in it), not one line's height.
        self.keys.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.keys.setToolTip(KEYS_TIP)
        self.keys.setEnabled(False)
        self.hint = QLabel()
        self.hint.setWordWrap(True)
        self.hint.setEnabled(False)
        self.hint.setContentsMargins(6, 0, 6, 0)
        self.hint.hide()
        self.advance_box = QCheckBox("Advance")
        self.advance_box.setChecked(True)
        self.advance_box.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.advance_box.setToolTip("After a judgement, move to the next card")
        self.summary_button = QToolButton()
        self.summary_button.setText("Summary")
        self.summary_button.setCheckable(True)
        self.summary_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.summary_button.setToolTip("Show the audit's figures: judged precision@k, first relevant rank, unjudged")
        self.save_button = QPushButton("Save to Gold Set…")
        self.save_button.setToolTip("Append the question to the gold set: the answer is the text selected in a "
                                    "card, else the spans of the chunks judged relevant")
        self.save_button.setEnabled(False)
        self.save_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        bottom = QHBoxLayout()
        bottom.setContentsMargins(6, 2, 6, 6)
        bottom.addWidget(self.keys, 1)
        bottom.addWidget(self.advance_box)
        bottom.addWidget(self.summary_button)
        bottom.addWidget(self.save_button)
        return bottom

    def _connect(self) -> None:
        controller = self.controller
        self.prev_q.clicked.connect(lambda: self.step_question(-1))
        self.next_q.clicked.connect(lambda: self.step_question(1))
        self.q_combo.activated.connect(self._on_combo)
        self.advance_box.toggled.connect(lambda on: setattr(self, "advance", on))
        self.summary_button.toggled.connect(self._show_summary)
        self.summary_box.questionChosen.connect(self.ask)
        self.summary_box.export_button.clicked.connect(lambda: self.exportRequested.emit(self.session.summary()))
        self.summary_box.gold_button.clicked.connect(self.request_gold)
        controller.resultReady.connect(self.show_result)
        controller.cleared.connect(lambda: self.show_result(None))
        controller.questionChanged.connect(self._on_question)
        controller.goldChanged.connect(lambda _g: self._fill_questions())
        self.session.changed.connect(self._on_audit)

    # -- keys ------------------------------------------------------------------------------------
    def _keys(self) -> None:
        def bind(keys: tuple[str, ...], slot) -> None:
            for k in keys:
                sc = QShortcut(QKeySequence(k), self, slot)
                sc.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)

        bind(("1", "R"), lambda: self.judge_current(api.RELEVANT))
        bind(("2", "P"), lambda: self.judge_current(api.PARTLY))
        bind(("3", "N"), lambda: self.judge_current(api.NOT))
        bind(("0", "Backspace", "Delete"), lambda: self.judge_current(None))
        bind(("J", "Down"), lambda: self.move_by(1))
        bind(("K", "Up"), lambda: self.move_by(-1))
        bind(("Home",), lambda: self.set_current(0))
        bind(("End",), lambda: self.set_current(len(self.cards) - 1))
        bind(("]", "Shift+J"), lambda: self.step_question(1))
        bind(("[", "Shift+K"), lambda: self.step_question(-1))
        bind(("Return", "Enter", "G"), self.activate_current)
        bind(("E",), lambda: self.set_expand_all(not self.expand_all))

    # -- layout modes ----------------------------------------------------------------------------
    def set_roomy(self, on: bool) -> None:
        """The audit mode's layout: the summary shown, more lines per card."""
        self.roomy = on
        self.summary_button.setChecked(on)
        self._show_summary(on)
        self._apply_clamp()

    def _show_summary(self, on: bool) -> None:
        was = self.summary_box.isVisible()
        self.summary_box.setVisible(on)
        if on:
            self._update_summary()
            if not was:
                self._size_summary()

    def _size_summary(self) -> None:
        """Give the summary the rows it has (at least two, at most a third of the height): the
        cards are what is read (with the question bar a toolbar row, three rows left the cards
        too little height at 1400x900)."""
        total = sum(self.splitter.sizes()) or self.splitter.height()
        row = self.summary_box.view.verticalHeader().defaultSectionSize()
        rows = max(2, min(8, self.summary_box.model.rowCount()))
        box = self.summary_box
        overall = box.overall.heightForWidth(max(1, box.width() - 12))
        want = box.view.horizontalHeader().sizeHint().height() + rows * row + \
            max(overall, box.overall.sizeHint().height()) + box.export_button.sizeHint().height() + 16
        want = min(want, max(120, total // 3))
        self.splitter.setSizes([max(0, total - want), want])

    def set_expand_all(self, on: bool) -> None:
        self.expand_all = on
        self._apply_clamp()
        self._reveal_current()

    def _apply_clamp(self) -> None:
        lines = ROOMY_LINES if self.roomy else COMPACT_LINES
        for i, card in enumerate(self.cards):
            card.set_max_lines(None if self.expand_all or i == self.current else lines)

    # -- content ---------------------------------------------------------------------------------
    def _on_question(self, question: str) -> None:
        self._fill_questions()
        if not question:
            self.show_result(None)

    def _on_audit(self) -> None:
        r = self.result
        if r is not None and self.cards and r.request.question:
            for card in self.cards:
                card.set_verdict(self.session.verdict(r.request.question, card.hit))
                card.update()
        self._fill_questions()
        self._update_header()
        self._update_hint()
        if self.summary_box.isVisible():
            self._update_summary()

    def show_result(self, result: RetrievalResult | None) -> None:
        previous = self.result
        self.result = result
        if result is None or not result.request.question or result.document is not self.state.document:
            if previous is not None and previous.request.question and 0 <= self.current < len(self.cards):
                hit = self.cards[self.current].hit.chunk
                self._kept = (previous.request.question, (hit.doc_id, hit.start, hit.end))
            self._set_cards(0)
            self.current = -1
            self.header.setText("Ask a question to read what the retriever returns.")
            self._update_hint()
            if self.summary_box.isVisible():
                self._update_summary()
            return
        if not self.isVisible():
            self._dirty = True  # filled in when the panel is shown (it may sit behind a tab)
            return
        self._dirty = False
        kept, self._kept = self._kept, None
        asked = previous.request.question if previous is not None and previous.request.question else None
        if asked is None and kept is not None:
            asked = kept[0]  # the same question back after a moment without cards
        same_question = asked == result.request.question
        req = result.request
        theme = Theme.for_palette(self.palette())
        q = req.question
        gold = self.session.gold_question(q)
        answers = gold.answers if gold is not None else ()
        annotated = self.state.result
        self._set_cards(len(result.hits))
        for card, h in zip(self.cards, result.hits, strict=True):
            c = h.chunk
            doc = next((d for d in (req.documents or (req.document,)) if d.doc_id == c.doc_id), req.document)
            text, body_at, refs = card_text(c, doc, req.with_prefix, gold)
            marks = api.highlights(text, q, answers, refs, span_start=c.start, body_at=body_at)
            full = annotated.chunk(c.id) if annotated is not None and annotated.document is doc \
                and c.doc_id == doc.doc_id else None
            if full is not None and (full.start, full.end) != (c.start, c.end):
                full = None
            size = f"{c.token_count:,} tok"
            if full is not None and full.embed_tokens is not None:
                size += f" · {full.embed_tokens:,} wp"
            extra = []
            if h.matched is not c:
                extra.append(f"matched child {h.matched.id}")
            if full is not None and full.embed_dropped:
                extra.append(f"{full.embed_dropped} wp past the model's limit")
            place = (f"{c.doc_id} · chunk {c.id}" + (f" ({c.role})" if c.role != "chunk" else "") + " · "
                     + (" › ".join(c.heading_path) or "(no heading)"))
            facts = CardFacts(h.rank, format_score(h.score), place, size, " · ".join(extra),
                              getattr(h, "rank_before", None))
            card.set_content(h, text, max(body_at - 2, 0), facts, theme, self.session.verdict(q, h), marks)
        again = next((i for i, h in enumerate(result.hits) if (h.chunk.doc_id, h.chunk.start, h.chunk.end) == kept[1]),
                     None) if same_question and kept is not None else None
        if again is not None:
            self.current = again
        elif not same_question or not 0 <= self.current < len(self.cards):
            self.current = 0 if self.cards else -1
        for i, card in enumerate(self.cards):
            card.set_current(i == self.current)
        self._apply_clamp()
        if not same_question:
            self.scroll_area.verticalScrollBar().setValue(0)
            if self.cards:
                self.currentChanged.emit(self.cards[self.current].hit.chunk)
        elif again is not None:
            self._reveal_current()
        self._update_header()
        self._update_hint()
        if self.summary_box.isVisible():
            self._update_summary()

    def _update_header(self) -> None:
        r = self.result
        if r is None or not r.request.question:
            return
        label, _tip = mode_text(r, self.controller)
        if r.retriever.lower() not in label.lower():
            label = f"{r.retriever} · {label}"
        if not self.cards:
            # Said, not left to the previous question's "Top 5" (a filter that keeps no chunk).
            self.header.setText(f"<b>No chunk returned</b>{_why_none(r)} · {label}")
            self.header.setToolTip(r.request.question)
            return
        judged = sum(1 for c in self.cards if c.verdict.judged)
        s = self.session.summary()
        mine = next((x for x in s.questions if x.question == api.question_text(r.request.question)), None)
        figures = f" · judged {judged}/{len(self.cards)}"
        if mine is not None and mine.precision is not None:
            figures += f" · judged P@{mine.k} {pct(mine.precision, 0, '%')}"
        self.header.setText(f"<b>Top {len(r.hits)}</b> · {label}{figures}")
        self.header.setToolTip(r.request.question)

    def _update_summary(self) -> None:
        r = self.result
        current = api.question_text(r.request.question) if r is not None and r.request.question else ""
        self.summary_box.set_summary(self.session.summary(), current)

    def _set_cards(self, n: int) -> None:
        """Exactly n cards shown, from a pool of reused ones (hidden ones wait for a larger k)."""
        while len(self._pool) < n:
            self._new_card()
        for i, card in enumerate(self._pool):
            if (i < n) != card.isVisibleTo(self.list):
                card.setVisible(i < n)
        self.cards = self._pool[:n]

    def _new_card(self) -> AuditCard:
        card = AuditCard()
        card.clicked.connect(lambda c=card: self._on_card_clicked(c))
        card.judged.connect(lambda j, c=card: self._on_card_judged(c, j))
        card.hide()
        self.list.layout_.insertWidget(self.list.layout_.count() - 1, card)
        card.ensurePolished()
        self._pool.append(card)
        return card

    def warm_up(self, n: int = 5) -> None:
        """Make the first cards ahead of the first question, one per event-loop turn, so that
        question does not pay for widget creation on the GUI thread all at once."""
        if len(self._pool) < n:
            self._new_card()
            QTimer.singleShot(0, self, lambda: self.warm_up(n))

    def showEvent(self, e) -> None:
        super().showEvent(e)
        if self._dirty:
            self.show_result(self.result)

    # -- the current card ------------------------------------------------------------------------
    def set_current(self, i: int) -> None:
        if not self.cards:
            self.current = -1
            return
        i = max(0, min(len(self.cards) - 1, i))
        if i != self.current:
            self.current = i
            for j, card in enumerate(self.cards):
                card.set_current(j == i)
            self._apply_clamp()
            self.currentChanged.emit(self.cards[i].hit.chunk)
        self._reveal_current()

    def move_by(self, step: int) -> None:
        self.set_current(self.current + step if self.current >= 0 else 0)

    def _reveal_current(self) -> None:
        if not 0 <= self.current < len(self.cards):
            return
        card = self.cards[self.current]

        def reveal() -> None:
            bar = self.scroll_area.verticalScrollBar()
            top = card.y() - 6
            bottom = card.y() + card.height() + 6
            view = self.scroll_area.viewport().height()
            if top < bar.value() or bottom - top > view:
                bar.setValue(top)
            elif bottom > bar.value() + view:
                bar.setValue(bottom - view)

        # The clamp changed the cards' heights: lay them out now (the card's own layout first, then
        # the list's), and once more after the posted layout requests have run.
        for c in self.cards:
            lay = c.layout()
            if lay is not None:
                lay.activate()
        self.list.layout_.activate()
        reveal()
        QTimer.singleShot(0, self, reveal)
        QTimer.singleShot(30, self, reveal)

    def judge_current(self, judgement: str | None) -> None:
        if not 0 <= self.current < len(self.cards):
            return
        self._judge(self.cards[self.current], judgement)
        if judgement is not None and self.advance and self.current < len(self.cards) - 1:
            self.set_current(self.current + 1)

    def judge(self, rank: int, judgement: str | None) -> None:
        """Judge the card of a rank (tests, scripts)."""
        for c in self.cards:
            if c.hit.rank == rank:
                self._judge(c, judgement)

    def _judge(self, card: AuditCard, judgement: str | None) -> None:
        r = self.result
        if r is None or not r.request.question or card.hit is None:
            return
        self.session.judge(r.request.question, card.hit, judgement)

    def _on_card_judged(self, card: AuditCard, judgement: str | None) -> None:
        if card in self.cards:
            self.set_current(self.cards.index(card))
        self._judge(card, judgement)
        self.list.setFocus()

    def _on_card_clicked(self, card: AuditCard) -> None:
        if card in self.cards:
            self.set_current(self.cards.index(card))
            self.list.setFocus()
            self.chunkActivated.emit(card.hit.chunk)

    def current_chunk(self) -> Any:
        """The current card's chunk (None: no card)."""
        return self.cards[self.current].hit.chunk if 0 <= self.current < len(self.cards) else None

    def activate_current(self) -> None:
        if 0 <= self.current < len(self.cards):
            self.chunkActivated.emit(self.cards[self.current].hit.chunk)

    # -- questions -------------------------------------------------------------------------------
    def _fill_questions(self) -> None:
        qs = self.session.questions()
        now = api.question_text(self.controller.question)
        if now and now not in qs:
            qs.append(now)
        self.q_combo.blockSignals(True)
        if [self.q_combo.itemText(i) for i in range(self.q_combo.count())] != qs:
            self.q_combo.clear()
            self.q_combo.addItems(qs)
        i = qs.index(now) if now in qs else -1
        self.q_combo.setCurrentIndex(i)
        self.q_combo.blockSignals(False)
        self.q_pos.setText(f"{i + 1}/{len(qs)}" if i >= 0 else (f"{len(qs)}" if qs else ""))
        self.prev_q.setEnabled(bool(qs))
        self.next_q.setEnabled(bool(qs))

    def step_question(self, step: int) -> None:
        qs = self.session.questions()
        if not qs:
            return
        now = api.question_text(self.controller.question)
        i = qs.index(now) + step if now in qs else (0 if step > 0 else len(qs) - 1)
        self.ask(qs[i % len(qs)])

    def ask(self, question: str) -> None:
        if api.question_text(question) != api.question_text(self.controller.question):
            self.controller.ask(question)

    def _on_combo(self, i: int) -> None:
        if i >= 0:
            self.ask(self.q_combo.itemText(i))
            self.list.setFocus()

    # -- gold ------------------------------------------------------------------------------------
    def say(self, text: str) -> None:
        """A line above the keys (cleared by the next result)."""
        self.hint.setText(text)
        self.hint.setVisible(bool(text))

    def request_gold(self) -> None:
        prop = self.session.gold_proposal()
        if not prop.questions:
            self.say("No chunk is judged relevant yet: there is nothing to add to the gold set.")
            return
        self.goldRequested.emit(prop)

    def eventFilter(self, obj, e) -> bool:  # noqa: N802
        # The cards' view changed height (the header wrapped, the summary was resized): keep the
        # current card in view.
        if obj is self.scroll_area.viewport() and e.type() == QEvent.Type.Resize:
            self._reveal_current()
        return False

    def _update_hint(self) -> None:
        r = self.result
        has_question = r is not None and bool(r.request.question) and bool(self.cards)
        self.save_button.setEnabled(has_question)
        problem = self.session.problem
        self.save_button.setToolTip("Append the question to the gold set: the answer is the text selected in a "
                                    "card, else the spans of the chunks judged relevant"
                                    + (" (judged relevant: saving keeps their spans as the reference)"
                                       if any(c.verdict.judgement == api.RELEVANT for c in self.cards) else ""))
        self.hint.setText(problem)
        self.hint.setVisible(bool(problem))

    # -- reading back ----------------------------------------------------------------------------
    def texts(self) -> list[str]:
        """The cards' texts in rank order, as shown."""
        return [c.shown_text() for c in self.cards]

    def rank_texts(self) -> list[str]:
        """Each card's rank as its header says it: "#1", or "#1 · was 7" after reranking."""
        return [c.facts.rank_text for c in self.cards if c.facts is not None]

    def judgements(self) -> dict[int, str | None]:
        """The verdict of each rank (judged or inherited; None: unjudged)."""
        return {c.hit.rank: c.verdict.judgement for c in self.cards}

    def selected_text(self) -> str:
        return next((t for t in (c.selected_text() for c in self.cards) if t.strip()), "")


def _why_none(r: RetrievalResult) -> str:
    """Why a question has no hits, as far as the request says (rich text, after "No chunk returned")."""
    from html import escape

    req = r.request
    where = []
    if req.heading_prefix:
        where.append(f" under a heading matching “{escape(' > '.join(req.heading_prefix))}”")
    if req.filter_docs:
        where.append(f" in {escape(', '.join(req.filter_docs))}")
    if where:
        return "".join(where)
    return ": BM25 returns only chunks that share a word with the question" if r.retriever == "bm25" else ""


__all__ = ["AuditPanel", "CardList", "KEYS_HINT", "KEYS_TIP", "COMPACT_LINES", "ROOMY_LINES"]



def card_text(c: Any, doc: Any, with_prefix: bool, gold: Any) -> tuple[str, int, tuple]:
    """(text, where its body starts, reference spans to mark) of a card: `c.embedded_text`, what was
    sent. Under an embedding view (issue 29) the body no longer lines up with the document's
    offsets: the reference spans are laid onto it (`view_spans`) and handed on as if the body
    started at `c.start`, as `highlights` reads them."""
    text = c.embedded_text(doc, with_prefix=with_prefix)
    prefix = c.embedded_parts(doc, with_prefix=with_prefix)[0]
    refs = gold.references if gold is not None and (gold.source in (None, c.doc_id)) else ()
    if c.meta and c.meta.get("embed_view", "raw") != "raw":
        from inspector.core.api import view_spans

        refs = tuple((c.start + a, c.start + b) for a, b in view_spans(
            doc.text, c.start, c.end, refs, prefix, c.meta["embed_view"], c.meta.get("table_header", "")))
    return text, len(prefix) + 2 if prefix else 0, refs
