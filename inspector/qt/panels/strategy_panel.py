"""Strategy selector and parameter controls generated from each strategy's declared `Param`s.

int/float -> slider + spin box + unit, bool -> check box, choice -> combo box. Nothing here knows a
particular strategy: the controls come from the declarations, and the declared cross-parameter
rules (`Param.less_than`, `Param.at_least`) are kept by adjusting the dependent control, so the
user can never reach a state the strategy rejects by moving one slider:

- `less_than` ("overlap below size"): the declaring control's range ends just below the other's
  value, and shrinking the other drags it down ("limit");
- `at_least` ("hard cap at least size"): the two push each other, moving either past the other
  carries the other along ("push").

Anything still invalid is shown under the controls and not sent on.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from inspector.core.chunking.params import Param, Strategy
from inspector.qt.controllers.state import InspectorState

SLIDER_STEPS = 1000
LINEAR_UP_TO = 300


def pretty(name: str) -> str:
    return name.replace("_", " ").capitalize()


class NumberControl(QWidget):
    """Slider + spin box + unit label for an int or float parameter.

    Wide ranges (more than 300 steps) use a quadratic slider so small values, where most choices
    are made, get most of the travel; the spin box always takes exact values."""

    valueChanged = Signal(object)

    def __init__(self, param: Param, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.param = param
        self.is_float = param.kind == "float"
        self._min = param.minimum
        self._max = param.maximum
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.spin = QDoubleSpinBox() if self.is_float else QSpinBox()
        if self.is_float:
            decimals = max(0, -math.floor(math.log10(param.step))) if param.step > 0 else 2
            self.spin.setDecimals(min(6, decimals))
        self.spin.setKeyboardTracking(False)
        self.spin.setSingleStep(param.step)
        self.spin.setAccelerated(True)
        self.spin.setAlignment(Qt.AlignmentFlag.AlignRight)
        self.spin.setMinimumWidth(72)
        self.unit = QLabel(param.unit)
        self.unit.setMinimumWidth(64)
        self.unit.setEnabled(False)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.slider, 1)
        lay.addWidget(self.spin)
        lay.addWidget(self.unit)
        self.setToolTip(param.help)
        self._apply_range()
        self.set_value(param.default, emit=False)
        self.slider.valueChanged.connect(self._from_slider)
        self.spin.valueChanged.connect(self._from_spin)

    # -- mapping -----------------------------------------------------------------------------
    def _steps(self) -> int:
        return max(1, round((self._max - self._min) / self.param.step))

    def _linear(self) -> bool:
        return self._steps() <= LINEAR_UP_TO

    def _apply_range(self) -> None:
        self.slider.blockSignals(True)
        self.spin.blockSignals(True)
        self.slider.setRange(0, self._steps() if self._linear() else SLIDER_STEPS)
        self.slider.setPageStep(max(1, self.slider.maximum() // 20))
        self.spin.setRange(self._min, self._max)
        self.slider.blockSignals(False)
        self.spin.blockSignals(False)

    def _clamp(self, v: float) -> int | float:
        v = min(max(v, self._min), self._max)
        return round(v, 6) if self.is_float else int(round(v))

    def _snap(self, v: float) -> int | float:
        """Round to a multiple of the step (500, not 501, for a range starting at 1)."""
        step = self.param.step
        if step > 0:
            v = round(v / step) * step
        return self._clamp(v)

    def value_at(self, pos: int) -> int | float:
        """The value a slider position stands for (a multiple of the step, within range)."""
        if pos <= 0:
            return self._clamp(self._min)
        if pos >= self.slider.maximum():
            return self._clamp(self._max)
        if self._linear():
            return self._snap(self._min + pos * self.param.step)
        t = pos / SLIDER_STEPS
        return self._snap(self._min + (self._max - self._min) * t * t)

    def position_of(self, value: float) -> int:
        if self._linear():
            return int(round((value - self._min) / self.param.step))
        span = self._max - self._min
        t = math.sqrt(max(0.0, (value - self._min) / span)) if span > 0 else 0.0
        return int(round(t * SLIDER_STEPS))

    # -- values ------------------------------------------------------------------------------
    def value(self) -> int | float:
        v = self.spin.value()
        return round(v, 6) if self.is_float else int(v)

    def set_value(self, v: Any, *, emit: bool = True) -> None:
        """Set an exact value (clamped to the range, not snapped to the step)."""
        v = self._clamp(float(v))
        changed = v != self.value()
        self.spin.blockSignals(True)
        self.slider.blockSignals(True)
        self.spin.setValue(v)
        self.slider.setValue(self.position_of(v))
        self.spin.blockSignals(False)
        self.slider.blockSignals(False)
        if emit and changed:
            self.valueChanged.emit(self.value())

    def set_maximum(self, maximum: float) -> None:
        """Narrow (or restore) the range from above; a value past it is clamped (and emitted)."""
        maximum = min(max(maximum, self.param.minimum), self.param.maximum)
        if maximum == self._max:
            return
        old = self.value()
        self._max = maximum
        self._apply_range()
        self.set_value(min(old, maximum), emit=False)
        if self.value() != old:
            self.valueChanged.emit(self.value())

    @property
    def maximum(self) -> float:
        return self._max

    def _from_slider(self, pos: int) -> None:
        v = self.value_at(pos)
        if v != self.value():
            self.spin.blockSignals(True)
            self.spin.setValue(v)
            self.spin.blockSignals(False)
            self.valueChanged.emit(self.value())

    def _from_spin(self, _v: float) -> None:
        self.slider.blockSignals(True)
        self.slider.setValue(self.position_of(self.value()))
        self.slider.blockSignals(False)
        self.valueChanged.emit(self.value())


class BoolControl(QCheckBox):
    valueChanged = Signal(object)

    def __init__(self, param: Param, parent: QWidget | None = None) -> None:
        super().__init__(param.unit if param.unit not in ("", "bool", "flag") else "", parent)
        self.param = param
        self.setToolTip(param.help)
        self.setChecked(bool(param.default))
        self.toggled.connect(lambda on: self.valueChanged.emit(bool(on)))

    def value(self) -> bool:
        return self.isChecked()

    def set_value(self, v: Any, *, emit: bool = True) -> None:
        self.blockSignals(not emit)
        self.setChecked(bool(v))
        self.blockSignals(False)


class ChoiceControl(QComboBox):
    valueChanged = Signal(object)

    def __init__(self, param: Param, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.param = param
        self.setToolTip(param.help)
        self.addItems(list(param.choices) or [str(param.default)])
        self.setCurrentText(str(param.default))
        self.currentTextChanged.connect(lambda t: self.valueChanged.emit(t))

    def value(self) -> str:
        return self.currentText()

    def set_value(self, v: Any, *, emit: bool = True) -> None:
        self.blockSignals(not emit)
        self.setCurrentText(str(v))
        self.blockSignals(False)


def make_control(param: Param) -> QWidget:
    kind = param.kind
    if kind == "bool":
        return BoolControl(param)
    if kind == "choice":
        return ChoiceControl(param)
    return NumberControl(param)


class StrategyPanel(QWidget):
    """Strategy combo, its description, generated parameter controls and the prefix toggle."""

    def __init__(self, state: InspectorState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        from inspector.core.chunking.registry import strategies

        self.state = state
        self._strategies: dict[str, Strategy] = strategies()
        self.controls: dict[str, QWidget] = {}
        self._building = False

        self.combo = QComboBox()
        self._fill_combo()
        self.description = QLabel()
        self.description.setWordWrap(True)
        self.description.setEnabled(False)
        self.form = QFormLayout()
        self.form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #d04040;")
        self.problem.hide()
        self.prefix = QCheckBox("Embed with context prefix (title > headings)")
        self.prefix.setToolTip("Word pieces and the detail pane count the prefix that a retrieval pipeline "
                               "puts before each chunk's text")
        self.prefix.setChecked(state.with_prefix)
        self.reset = QPushButton("Defaults")
        self.reset.setToolTip("Reset this strategy's parameters to their defaults")

        top = QHBoxLayout()
        top.addWidget(QLabel("Strategy"))
        top.addWidget(self.combo, 1)
        top.addWidget(self.reset)
        lay = QVBoxLayout(self)
        lay.addLayout(top)
        lay.addWidget(self.description)
        lay.addLayout(self.form)
        lay.addWidget(self.problem)
        lay.addWidget(self.prefix)
        lay.addStretch(1)

        self.combo.currentTextChanged.connect(self._on_combo)
        self.prefix.toggled.connect(state.set_with_prefix)
        self.reset.clicked.connect(self.reset_defaults)
        state.strategyChanged.connect(self._on_strategy)
        state.paramsChanged.connect(self._on_params)
        state.withPrefixChanged.connect(self._on_prefix)
        self.rebuild()

    # -- public API (also what tests drive) ---------------------------------------------------
    @property
    def strategy(self) -> Strategy:
        return self._strategies[self.combo.currentText()]

    def set_strategy(self, name: str) -> None:
        self.combo.setCurrentText(name)

    def control(self, name: str) -> QWidget:
        return self.controls[name]

    def set_value(self, name: str, value: Any) -> None:
        """Set a parameter through its control, exactly as the user would."""
        self.controls[name].set_value(value)

    def values(self) -> dict[str, Any]:
        return {name: ctl.value() for name, ctl in self.controls.items()}

    def rebuild(self) -> None:
        """Rebuild the controls for the state's strategy and parameters."""
        self._on_strategy(self.state.strategy)

    def refresh_strategies(self) -> None:
        """Re-read the strategy registry (strategies registered or re-registered at run time: a
        strategy file, imported chunks, plug-ins) and rebuild the selector and the controls."""
        from inspector.core.chunking.registry import strategies

        self._strategies = strategies()
        self._building = True
        try:
            self._fill_combo()
        finally:
            self._building = False
        self.rebuild()

    def _fill_combo(self) -> None:
        self.combo.blockSignals(True)
        try:
            self.combo.clear()
            for name, s in self._strategies.items():
                self.combo.addItem(name)
                self.combo.setItemData(self.combo.count() - 1, s.description, Qt.ItemDataRole.ToolTipRole)
        finally:
            self.combo.blockSignals(False)

    def reset_defaults(self) -> None:
        self._load_values(self.strategy.defaults())
        self._send()

    # -- building ----------------------------------------------------------------------------
    def _on_combo(self, name: str) -> None:
        if not self._building and name in self._strategies:
            self.state.set_strategy(name)

    def _on_strategy(self, name: str) -> None:
        from inspector.core.chunking.registry import strategies

        if self._strategies.get(name) is not strategies().get(name):
            self.refresh_strategies()  # registered (or replaced) since the selector was filled
            return
        self._building = True
        try:
            self.combo.setCurrentText(name)
            strat = self._strategies.get(name)
            self.description.setText(strat.description if strat else "")
            self._on_prefix(self.state.with_prefix)
            while self.form.rowCount():
                self.form.removeRow(0)
            self.controls = {}
            if strat is None:
                return
            for p in strat.params:
                ctl = make_control(p)
                ctl.valueChanged.connect(lambda _v, n=p.name: self._on_control(n))
                label = QLabel(pretty(p.name))
                label.setToolTip(p.help)
                self.form.addRow(label, ctl)
                self.controls[p.name] = ctl
            self._load_values(self.state.params_for(name))
        finally:
            self._building = False
        self._validate()

    def _load_values(self, params: dict[str, Any]) -> None:
        self._building = True
        try:
            # Greater parameters first so the lesser ones' limits are in place when they are set.
            for name, ctl in self.controls.items():
                if isinstance(ctl, NumberControl):
                    ctl.set_maximum(ctl.param.maximum)
            for name, ctl in self.controls.items():
                if name in params:
                    ctl.set_value(params[name], emit=False)
            self._apply_constraints(None)
        finally:
            self._building = False

    def _on_params(self, params: dict) -> None:
        if self.values() != {k: params.get(k) for k in self.controls}:
            self._load_values(params)
            self._validate()

    def _on_prefix(self, on: bool) -> None:
        if self.prefix.isChecked() != on:
            self.prefix.setChecked(on)

    # -- constraints -------------------------------------------------------------------------
    def _pairs(self):
        """(lesser, greater, strict, mode) for the strategy's declared constraints: mode "limit"
        for `less_than`, "push" for `at_least` (see the module docstring)."""
        numbers = {n for n, c in self.controls.items() if isinstance(c, NumberControl)}
        for c in self.strategy.constraints():
            if c.lesser in numbers and c.greater in numbers:  # declarations guarantee equal units
                yield c.lesser, c.greater, c.strict, "limit" if c.strict else "push"

    def _apply_constraints(self, changed: str | None) -> None:
        pairs = list(self._pairs())
        # Keeping one rule can break another already kept (a smaller parent_size clamps child_size
        # below child_overlap): repeat until nothing moves; chains are short, so this ends quickly.
        for _ in range(len(pairs) + 1):
            before = self.values()
            for lesser, greater, strict, mode in pairs:
                self._keep(lesser, greater, strict, mode, changed)
            if self.values() == before:
                break

    def _keep(self, lesser: str, greater: str, strict: bool, mode: str, changed: str | None) -> None:
        lo: NumberControl = self.controls[lesser]  # type: ignore[assignment]
        hi: NumberControl = self.controls[greater]  # type: ignore[assignment]
        # Strictly less means one unit less, not one slider step: overlap 9 with size 10 is
        # valid (and a pathological case users test), though the overlap slider steps by 10.
        gap = (lo.param.step if lo.is_float else 1) if strict else 0
        if mode == "limit":
            lo.set_maximum(max(lo.param.minimum, hi.value() - (gap if strict else 0)))
            if strict and lo.value() >= hi.value():
                lo.set_value(max(lo.param.minimum, hi.value() - 1), emit=False)
        elif lo.value() > hi.value() - (1 if strict else 0):
            if changed == greater:
                lo.set_value(hi.value() - (1 if strict else 0), emit=False)
            else:
                hi.set_value(lo.value() + (1 if strict else 0), emit=False)

    def _on_control(self, name: str) -> None:
        if self._building:
            return
        self._building = True
        try:
            self._apply_constraints(name)
        finally:
            self._building = False
        self._send()

    def _validate(self) -> dict[str, Any] | None:
        try:
            params = self.strategy.validate(self.values())
        except ValueError as exc:
            self.problem.setText(str(exc))
            self.problem.show()
            return None
        self.problem.hide()
        return params

    def _send(self) -> None:
        if self._validate() is not None:
            self.state.set_params(self.values())
