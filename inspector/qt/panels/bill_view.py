"""The bill as a few lines of text, with the two prices to edit where the panel allows it.

Shown in the statistics panel (indexing cost and embedding time of the current chunks) and in the
gold panel (plus the context handed to the LLM per question, from the gold report). Every figure
says how it was made ("20,350 tokens at $0.02/M"); a missing price or measurement says so instead
of guessing.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDoubleSpinBox, QFormLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from inspector.core.api import Bill, bill_for, bill_parts, make_bill
from inspector.qt.controllers.bill import BillState


def _price_box(tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.0, 1000.0)
    box.setDecimals(3)
    box.setSingleStep(0.01)
    box.setSpecialValueText("not set")
    box.setSuffix(" $/M")
    box.setKeyboardTracking(False)
    box.setToolTip(tip)
    return box


class BillView(QWidget):
    """Indexing cost, context per question and embedding time for the counts it is given."""

    def __init__(self, bill: BillState, *, editable: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.bill_state = bill
        self.bill: Bill | None = None
        self._counts: tuple[int, int] | None = None
        self._report: Any = None
        self.index_label, self.context_label, self.time_label = QLabel(), QLabel(), QLabel()
        for label in (self.index_label, self.context_label, self.time_label):
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 2, 0, 2)
        lay.setSpacing(2)
        self.embed_price = self.llm_price = None
        if editable:
            self.embed_price = _price_box("What the embedding model costs per million tokens embedded "
                                          "(e.g. a hosted embedding API); 0: not set")
            self.llm_price = _price_box("The LLM's price per million input tokens: what each question's "
                                        "context costs; 0: not set")
            # One price a row: side by side the labels were cut in a narrow gold panel.
            form = QFormLayout()
            form.setContentsMargins(0, 0, 0, 0)
            form.setVerticalSpacing(2)
            form.addRow("Embedding price", self.embed_price)
            form.addRow("LLM input price", self.llm_price)
            lay.addLayout(form)
            self._show_prices()
            self.embed_price.valueChanged.connect(self._prices_edited)
            self.llm_price.valueChanged.connect(self._prices_edited)
        lay.addWidget(self.index_label)
        lay.addWidget(self.context_label)
        lay.addWidget(self.time_label)
        bill.changed.connect(self._on_changed)
        self._render()

    # -- inputs --------------------------------------------------------------------------------------
    def set_counts(self, chunks: int, embedded_tokens: int) -> None:
        """The current chunks' counts (no gold report: no context figure)."""
        self._counts, self._report = (chunks, embedded_tokens), None
        self._render()

    def set_report(self, report: Any) -> None:
        """A gold report: its index cost and its context tokens per question."""
        self._report = report
        self._render()

    def clear(self) -> None:
        self._counts, self._report = None, None
        self._render()

    def _prices_edited(self, _v: float) -> None:
        assert self.embed_price is not None and self.llm_price is not None
        self.bill_state.set_prices(self.embed_price.value() or None, self.llm_price.value() or None)

    def _show_prices(self) -> None:
        if self.embed_price is None or self.llm_price is None:
            return
        state = self.bill_state
        for box, value in ((self.embed_price, state.embed_price), (self.llm_price, state.llm_price)):
            box.blockSignals(True)
            box.setValue(value or 0.0)
            box.blockSignals(False)

    def _on_changed(self) -> None:
        self._show_prices()
        self._render()

    # -- output --------------------------------------------------------------------------------------
    def _render(self) -> None:
        rates = self.bill_state.rates()
        if self._report is not None:
            self.bill = bill_for(self._report, rates)
        elif self._counts is not None:
            self.bill = make_bill(self._counts[0], self._counts[1], rates)
        else:
            self.bill = None
        if self.bill is None:
            for label in (self.index_label, self.context_label, self.time_label):
                label.setText("")
            return
        parts = bill_parts(self.bill)
        self.index_label.setText("Index: " + parts["index"])
        self.context_label.setText(("Context: " + parts["context"]) if parts["context"] else "")
        self.context_label.setVisible(bool(parts["context"]))
        self.time_label.setText("Time: " + parts["time"])
        t = rates.throughput
        if t is not None:
            self.time_label.setToolTip(f"Measured while embedding {t.texts:,} chunks ({t.tokens:,} tokens in "
                                       f"{t.seconds:.1f} s) with {t.model_id}; the estimate assumes time "
                                       "grows with tokens")
        else:
            self.time_label.setToolTip("The speed is measured the next time the model embeds 16 or more chunks")


__all__ = ["BillView"]
