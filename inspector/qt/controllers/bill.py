"""The window's bill: the prices the user set (persisted) and the embedder's measured speed.

One object shared by the statistics panel, the gold panel and the sweep dialog, so a price typed
in one place is charged everywhere. The figures themselves are the core's
(`inspector.core.evaluation.bill`); the speed is what `embed_texts` last measured for the loaded
model on this machine (`inspector.core.embedding.throughput`, persisted across sessions).
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.core.api import Rates
from inspector.core.viewmodel.settings_schema import Setting

BILL_PRICES = Setting("bill/prices", dict, {},
                      "Prices the bill charges, US dollars per million tokens: {'embed': x, 'llm': y} "
                      "(missing: not set).")


def _price(value: Any) -> float | None:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return None
    return v if v >= 0 else None


class BillState(QObject):
    """Prices and the measured embedding speed; `changed` when either may have changed."""

    changed = Signal()

    def __init__(self, settings: Any = None, retrieval: Any = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.retrieval = retrieval
        stored = settings.get(BILL_PRICES) if settings is not None else {}
        self.embed_price: float | None = _price(stored.get("embed"))
        """Embedding price, $ per million tokens (None: not set)."""
        self.llm_price: float | None = _price(stored.get("llm"))
        """The LLM's input price, $ per million tokens (None: not set)."""
        if retrieval is not None:
            # A stage that embedded chunks may have measured the speed anew.
            retrieval.resultReady.connect(lambda _r: self.changed.emit())
            retrieval.modelStateChanged.connect(lambda _s: self.changed.emit())

    def set_prices(self, embed: float | None, llm: float | None) -> None:
        """New prices (None or 0 from a cleared field: not set); persisted."""
        embed, llm = _price(embed), _price(llm)
        if (embed, llm) == (self.embed_price, self.llm_price):
            return
        self.embed_price, self.llm_price = embed, llm
        if self.settings is not None:
            self.settings.set(BILL_PRICES, {k: v for k, v in (("embed", embed), ("llm", llm)) if v is not None})
        self.changed.emit()

    @property
    def model_id(self) -> str | None:
        emb = getattr(self.retrieval, "embedder", None)
        return getattr(emb, "model_id", None)

    def rates(self) -> Rates:
        from inspector.core.api import measured_rate

        return Rates(self.embed_price, self.llm_price, measured_rate(self.model_id))


def install_bill(window: Any) -> BillState:
    """The bill in the statistics panel and the gold panel (the sweep dialog finds it on its parent)."""
    bill = BillState(window.settings, window.retrieval, window)
    window.stats_panel.set_bill(bill)
    window.gold_panel.set_bill(bill)
    return bill


__all__ = ["BillState", "BILL_PRICES", "install_bill"]
