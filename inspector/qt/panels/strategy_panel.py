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

Sliders are rows of round values on the scale each parameter declares (`Param.practical`,
`Param.scale`; `inspector.core.viewmodel.scale`): a size slider spans 16..4096 tokens on a log
scale, an overlap slider up to half the size, and the spin box beside still takes any valid
value. Holding a slider sets `InspectorState.dragging`, so the chunking controller re-chunks during
the drag (throttled) rather than after it. Under the size slider, once `attach_trace` is called,
the exact hit rate of the nearby positions is drawn (`inspector.qt.panels.trace`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractSlider,
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

from inspector.core.viewmodel.scale import SliderScale, slider_scale
from inspector.qt.controllers.state import InspectorState
from inspector.qt.controllers.trace import TraceController
from inspector.qt.panels.trace import TraceStrip
from inspector.qt.theme import INVALID_SETTING

if TYPE_CHECKING:
    from inspector.core.api import Param, Strategy


def pretty(name: str) -> str:
    return name.replace("_", " ").capitalize()


def strategy_label(name: str) -> str:
    """How the selector shows a strategy: its name, except a vector store's, whose name is its
    whole spec ("store:chroma:/home/ann/rag/chroma_db:langchain"): "store: langchain" (the
    spec is in the selector's tip and the description names the store)."""
    if not name.startswith("store:"):
        return name
    collection = name.rpartition(":")[2]
    return f"store: {collection}" if collection else name


#: QAbstractSlider actions that step from the current value (one notch, or a page of notches).
_STEPS = {
    QAbstractSlider.SliderAction.SliderSingleStepAdd: 1,
    QAbstractSlider.SliderAction.SliderSingleStepSub: -1,
    QAbstractSlider.SliderAction.SliderPageStepAdd: 0,  # page: filled in from the scale
    QAbstractSlider.SliderAction.SliderPageStepSub: 0,
}


class NumberControl(QWidget):
    """Slider + spin box + unit label for an int or float parameter.

    The slider is a row of notches, each a round value (`inspector.core.viewmodel.scale`): sizes on
    a log scale over the declared practical range (16..4096 tokens: 64 80 96 112 128 ...), so
    every common size has a notch one can hit and a drag moves in proportion. An arrow key moves
    one notch, PageUp/PageDown about a doubling. The spin box takes any valid value; the slider
    then rests on the nearest notch. `dragStarted`/`dragFinished` tell the panel when the user
    holds the slider (re-chunking is throttled during a drag rather than debounced)."""

    valueChanged = Signal(object)
    dragStarted = Signal()
    dragFinished = Signal()

    def __init__(self, param: Param, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.param = param
        self.is_float = param.kind == "float"
        self._min = param.minimum
        self._max = param.maximum
        self._reference: float | None = None
        self.scale: SliderScale = slider_scale(param)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.spin: QDoubleSpinBox | QSpinBox
        if self.is_float:
            self.spin = spin = QDoubleSpinBox()
            decimals = max(0, -math.floor(math.log10(param.step))) if param.step > 0 else 2
            spin.setDecimals(min(6, decimals))
            spin.setSingleStep(param.step)
        else:
            self.spin = QSpinBox()
            self.spin.setSingleStep(int(param.step))  # what Qt's int spin box would make of it
        self.spin.setKeyboardTracking(False)
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
        self.slider.actionTriggered.connect(self._on_action)
        self.slider.sliderPressed.connect(self.dragStarted)
        self.slider.sliderReleased.connect(self.dragFinished)
        self.spin.valueChanged.connect(self._from_spin)

    # -- mapping -----------------------------------------------------------------------------
    def _apply_range(self) -> None:
        self.scale = slider_scale(self.param, self._max, self._reference)
        self.slider.blockSignals(True)
        self.spin.blockSignals(True)
        self.slider.setRange(0, self.scale.last)
        self.slider.setSingleStep(1)
        self.slider.setPageStep(self.scale.page)
        if isinstance(self.spin, QSpinBox):  # PySide6 truncates a float for an int spin box
            self.spin.setRange(int(self._min), int(self._max))
        else:
            self.spin.setRange(self._min, self._max)
        self.slider.setValue(self.position_of(self.spin.value()))
        self.slider.blockSignals(False)
        self.spin.blockSignals(False)

    def _clamp(self, v: float) -> int | float:
        v = min(max(v, self._min), self._max)
        return round(v, 6) if self.is_float else int(round(v))

    def value_at(self, pos: int) -> int | float:
        """The value a slider position (notch) stands for."""
        return self._clamp(self.scale.value_at(pos))

    def position_of(self, value: float) -> int:
        """The notch nearest to `value`."""
        return self.scale.position_of(value)

    def _on_action(self, action: int) -> None:
        """Arrow and page keys step from the *value*, not from the notch the slider rests on: from
        300 (typed; the slider shows 320) one step up is 320, one step down 256."""
        kind = QAbstractSlider.SliderAction(action)
        notches = _STEPS.get(kind)
        if notches is None:
            return
        if notches == 0:
            add = kind == QAbstractSlider.SliderAction.SliderPageStepAdd
            notches = self.scale.page if add else -self.scale.page
        pos = self.scale.step(self.value(), notches)
        self.slider.setSliderPosition(pos)
        if pos == self.slider.value():  # 300 -> 320 while the slider already rests on 320's notch:
            self._from_slider(pos)      # the slider's value does not change, so say it here

    # -- values ------------------------------------------------------------------------------
    def _set_spin(self, v: float) -> None:
        if isinstance(self.spin, QSpinBox):  # PySide6 truncates a float for an int spin box
            self.spin.setValue(int(v))
        else:
            self.spin.setValue(v)

    def value(self) -> int | float:
        v = self.spin.value()
        return round(v, 6) if self.is_float else int(v)

    def set_value(self, v: Any, *, emit: bool = True) -> None:
        """Set an exact value (clamped to the range, not snapped to a notch)."""
        v = self._clamp(float(v))
        changed = v != self.value()
        self.spin.blockSignals(True)
        self.slider.blockSignals(True)
        self._set_spin(v)
        self.slider.setValue(self.position_of(v))
        self.spin.blockSignals(False)
        self.slider.blockSignals(False)
        if emit and changed:
            self.valueChanged.emit(self.value())

    def set_maximum(self, maximum: float, *, reference: float | None = None) -> None:
        """Narrow (or restore) the range from above; a value past it is clamped (and emitted).
        `reference`: the value of the parameter this one stays below, where the slider ends at
        its declared share (`Param.practical_share`); the spin box still reaches `maximum`."""
        maximum = min(max(maximum, self.param.minimum), self.param.maximum)
        if not self.param.practical_share:
            reference = None
        if maximum == self._max and reference == self._reference:
            return
        old = self.value()
        self._max = maximum
        self._reference = reference
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
            self._set_spin(v)
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


#: The control of one parameter (`make_control`).
Control = NumberControl | BoolControl | ChoiceControl


def make_control(param: Param) -> Control:
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
        from inspector.core.api import strategies

        self.state = state
        self._strategies: dict[str, Strategy] = strategies()
        self.controls: dict[str, Control] = {}
        self._building = False
        self._trace: TraceController | None = None
        self.trace_strip: TraceStrip | None = None
        """The hit-rate trace under the size slider (once `attach_trace` is called)."""

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
        self.problem.setStyleSheet(f"color: {INVALID_SETTING};")
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

        self.combo.currentIndexChanged.connect(lambda i: self._on_combo(str(self.combo.itemData(i) or "")))
        self.prefix.toggled.connect(state.set_with_prefix)
        self.reset.clicked.connect(self.reset_defaults)
        state.strategyChanged.connect(self._on_strategy)
        state.paramsChanged.connect(self._on_params)
        state.withPrefixChanged.connect(self._on_prefix)
        self.rebuild()

    # -- public API (also what tests drive) ---------------------------------------------------
    @property
    def strategy(self) -> Strategy:
        return self._strategies[str(self.combo.currentData())]

    def set_strategy(self, name: str) -> None:
        self.combo.setCurrentIndex(self.combo.findData(name))

    def control(self, name: str) -> Control:
        return self.controls[name]

    def set_value(self, name: str, value: Any) -> None:
        """Set a parameter through its control, exactly as the user would."""
        self.controls[name].set_value(value)

    def values(self) -> dict[str, Any]:
        return {name: ctl.value() for name, ctl in self.controls.items()}

    def rebuild(self) -> None:
        """Rebuild the controls for the state's strategy and parameters."""
        self._on_strategy(self.state.strategy)

    def attach_trace(self, trace: TraceController) -> None:
        """Draw `trace`'s exact hit rates under the size slider (of every strategy shown from now)."""
        self._trace = trace
        self.rebuild()

    def refresh_strategies(self, *, controls: bool = True) -> None:
        """Re-read the strategy registry (strategies registered or re-registered at run time: a
        strategy file, imported chunks, plug-ins) into the selector, and rebuild the controls.
        `controls=False` leaves the strategy shown and its controls as they are (a slider may be
        held): for strategies registered beside it (the plug-ins, after the first paint)."""
        from inspector.core.api import strategies

        self._strategies = strategies()
        self._building = True
        try:
            self._fill_combo()
            if not controls:
                self.combo.setCurrentIndex(self.combo.findData(self.state.strategy))
        finally:
            self._building = False
        if controls:
            self.rebuild()

    def _fill_combo(self) -> None:
        self.combo.blockSignals(True)
        try:
            self.combo.clear()
            for name, s in self._strategies.items():
                # A vector store's strategy is named by its whole spec: shown short, the spec in the tip.
                self.combo.addItem(strategy_label(name), name)
                tip = f"{s.description}\n{name}" if name != strategy_label(name) else s.description
                self.combo.setItemData(self.combo.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
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
        from inspector.core.api import strategies

        if self._strategies.get(name) is not strategies().get(name):
            self.refresh_strategies()  # registered (or replaced) since the selector was filled
            return
        self._building = True
        try:
            self.combo.setCurrentIndex(self.combo.findData(name))
            strat = self._strategies.get(name)
            self.description.setText(strat.description if strat else "")
            self._on_prefix(self.state.with_prefix)
            self.state.set_dragging(False)  # a rebuilt slider is not held
            while self.form.rowCount():
                self.form.removeRow(0)
            self.controls = {}
            self.trace_strip = None
            if strat is None:
                return
            size = strat.param_for_role("size")
            for p in strat.params:
                ctl = make_control(p)
                ctl.valueChanged.connect(lambda _v, n=p.name: self._on_control(n))
                if isinstance(ctl, NumberControl):
                    ctl.dragStarted.connect(lambda: self.state.set_dragging(True))
                    ctl.dragFinished.connect(lambda: self.state.set_dragging(False))
                label = QLabel(pretty(p.name))
                label.setToolTip(p.help)
                self.form.addRow(label, ctl)
                self.controls[p.name] = ctl
                if self._trace is not None and size is not None and p.name == size.name \
                        and isinstance(ctl, NumberControl):
                    self.trace_strip = TraceStrip(self._trace, ctl)
                    self.form.addRow(self.trace_strip)
            self._load_values(self.state.params_for(name))
        finally:
            self._building = False
        self._validate()

    def _load_values(self, params: dict[str, Any]) -> None:
        self._building = True
        try:
            # Greater parameters first so the lesser ones' limits are in place when they are set.
            for ctl in self.controls.values():
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
            lo.set_maximum(max(lo.param.minimum, hi.value() - (gap if strict else 0)), reference=hi.value())
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
