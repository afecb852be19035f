"""Strategy controls are generated from the declared parameters and never reach an invalid state."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QCheckBox, QComboBox

from inspector.core.chunking.params import Param, Strategy
from inspector.core.chunking.registry import register_strategy, strategies, unregister
from inspector.qt.controllers.state import InspectorState
from inspector.qt.panels.strategy_panel import NumberControl, StrategyPanel


@pytest.fixture
def panel(qtbot):
    state = InspectorState()
    p = StrategyPanel(state)
    qtbot.addWidget(p)
    return p


@pytest.mark.parametrize("name", sorted(strategies()))
def test_controls_follow_the_declarations(panel, name):
    panel.set_strategy(name)
    strat = strategies()[name]
    assert panel.state.strategy == name
    assert list(panel.controls) == [p.name for p in strat.params]
    for p in strat.params:
        ctl = panel.control(p.name)
        if p.kind in ("int", "float"):
            assert isinstance(ctl, NumberControl)
            assert ctl.unit.text() == p.unit
            assert ctl.spin.minimum() == p.minimum and ctl.spin.maximum() <= p.maximum
        elif p.kind == "bool":
            assert isinstance(ctl, QCheckBox)
        else:
            assert isinstance(ctl, QComboBox)
    assert panel.values() == strat.validate(panel.values())


def test_bool_and_choice_parameters_get_their_controls(qtbot):
    def func(doc, params):
        return ()

    strat = Strategy("demo_kinds", func, (
        Param("size", "tokens", 100, 10, 1000, 10),
        Param("ratio", "fraction", 0.5, 0.0, 1.0, 0.05),
        Param("keep", "", True),
        Param("mode", "", "fast", choices=("fast", "exact")),
    ), "demo")
    register_strategy(strat)
    try:
        state = InspectorState()
        p = StrategyPanel(state)
        qtbot.addWidget(p)
        p.set_strategy("demo_kinds")
        assert isinstance(p.control("keep"), QCheckBox) and isinstance(p.control("mode"), QComboBox)
        assert p.control("ratio").is_float and p.control("ratio").spin.decimals() == 2
        p.control("keep").setChecked(False)
        p.control("mode").setCurrentText("exact")
        p.set_value("ratio", 0.35)
        assert state.params == {"size": 100, "ratio": 0.35, "keep": False, "mode": "exact"}
    finally:
        unregister("demo_kinds")


def test_slider_and_spin_box_stay_in_step(panel):
    panel.set_strategy("fixed_chars")
    ctl: NumberControl = panel.control("size")
    ctl.slider.setValue(ctl.slider.maximum() // 3)  # as a drag would
    assert ctl.spin.value() == ctl.value_at(ctl.slider.value())
    assert ctl.value() % 10 == 0  # slider values land on the step
    assert panel.state.params["size"] == ctl.value()
    ctl.spin.setValue(777)  # typed values stay exact
    assert panel.state.params["size"] == 777
    assert abs(ctl.value_at(ctl.slider.value()) - 777) <= 30


def test_wide_ranges_give_small_values_most_of_the_travel(panel):
    panel.set_strategy("fixed_tokens")
    ctl: NumberControl = panel.control("size")
    assert ctl.value_at(ctl.slider.maximum() // 2) < (ctl.param.maximum - ctl.param.minimum) / 3
    positions = range(0, ctl.slider.maximum() + 1, 7)
    values = [ctl.value_at(pos) for pos in positions]
    assert values == sorted(values)
    # The slider spans the declared practical range (16..4096 tokens, a log scale); the spin box
    # still spans the whole valid range (this line pinned the slider to 1..8192 before).
    assert ctl.value_at(0) == ctl.param.practical[0] and ctl.value_at(ctl.slider.maximum()) == ctl.param.practical[1]
    assert ctl.spin.minimum() == ctl.param.minimum and ctl.spin.maximum() == ctl.param.maximum


def test_overlap_is_kept_below_size(panel):
    panel.set_strategy("fixed_chars")
    panel.set_value("size", 300)
    panel.set_value("overlap", 5000)
    assert panel.values()["overlap"] < 300
    panel.set_value("overlap", 200)
    panel.set_value("size", 150)  # shrinking size drags overlap down with it
    v = panel.values()
    assert v["overlap"] < v["size"] == 150
    assert panel.state.params == strategies()["fixed_chars"].validate(v)
    assert panel.problem.isHidden()


def test_markdown_hard_cap_is_pushed_up_by_size(panel):
    panel.set_strategy("markdown")
    panel.set_value("hard_cap", 600)
    panel.set_value("size", 900)
    v = panel.values()
    assert v["size"] == 900 and v["hard_cap"] >= 900
    panel.set_value("hard_cap", 500)  # lowering the cap below size pulls size down
    v = panel.values()
    assert v["size"] <= v["hard_cap"] == 500


@pytest.mark.parametrize("name", sorted(strategies()))
def test_every_extreme_setting_is_valid(panel, name):
    panel.set_strategy(name)
    strat = strategies()[name]
    for p in strat.params:
        if p.kind not in ("int", "float"):
            continue
        for v in (p.maximum, p.minimum, (p.minimum + p.maximum) / 2):
            panel.set_value(p.name, v)
            strat.validate(panel.values())  # raises if the controls let an invalid state through
            assert panel.problem.isHidden(), panel.problem.text()


def test_defaults_button_and_prefix_toggle(panel):
    panel.set_strategy("sentences")
    panel.set_value("size", 1000)
    panel.reset.click()
    assert panel.values() == strategies()["sentences"].defaults() == panel.state.params
    panel.prefix.setChecked(False)
    assert panel.state.with_prefix is False
    panel.state.set_with_prefix(True)
    assert panel.prefix.isChecked()


def test_prefix_follows_each_strategys_default_until_the_user_chooses(panel):
    defaults = {n: getattr(s, "prefix_default", True) for n, s in strategies().items()}
    for name, default in defaults.items():
        panel.set_strategy(name)
        assert panel.prefix.isChecked() is default is panel.state.with_prefix
    panel.set_strategy("markdown")
    panel.prefix.setChecked(not defaults["markdown"])
    panel.set_strategy("fixed_chars")
    assert panel.prefix.isChecked() is defaults["fixed_chars"]
    panel.set_strategy("markdown")
    assert panel.prefix.isChecked() is (not defaults["markdown"])  # the choice stuck to markdown


def test_params_set_elsewhere_update_the_controls(panel):
    panel.set_strategy("fixed_tokens")
    panel.state.set_params({"size": 64, "overlap": 16})
    assert panel.values() == {"size": 64, "overlap": 16}


@pytest.fixture
def odd_names(qtbot):
    """A strategy whose names say nothing: only its declarations can tell the panel what to keep."""

    def func(doc, params):
        return ()

    strat = Strategy("demo_declared", func, (
        Param("window", "tokens", 200, 10, 2000, 10, role="size"),
        Param("shared", "tokens", 0, 0, 1000, 10, role="overlap", less_than="window"),
        Param("ceiling", "tokens", 400, 10, 4000, 10, at_least="window"),
    ), "demo")
    register_strategy(strat)
    state = InspectorState()
    p = StrategyPanel(state)
    qtbot.addWidget(p)
    p.set_strategy("demo_declared")
    yield p
    unregister("demo_declared")


def test_a_less_than_declaration_keeps_the_slider_below(odd_names):
    p = odd_names
    p.set_value("shared", 5000)
    assert p.values()["shared"] < p.values()["window"] == 200
    assert p.control("shared").maximum == 199  # the slider's range ends below the window
    p.set_value("shared", 150)
    p.set_value("window", 100)  # shrinking the window drags the shared part down
    v = p.values()
    assert v["shared"] < v["window"] == 100
    assert p.state.params == v and p.problem.isHidden()


def test_an_at_least_declaration_pushes_both_ways(odd_names):
    p = odd_names
    p.set_value("window", 900)  # past the ceiling: the ceiling follows
    assert p.values()["window"] == 900 and p.values()["ceiling"] == 900
    p.set_value("shared", 500)
    p.set_value("ceiling", 300)  # lowering the ceiling pulls the window down, and the shared part with it
    v = p.values()
    assert v["ceiling"] == 300 and v["window"] == 300 and v["shared"] < 300
    assert p.state.params == v and p.problem.isHidden()


def test_shrinking_the_parent_keeps_child_and_its_overlap_valid(panel):
    panel.set_strategy("parent_child")
    panel.set_value("child_size", 512)
    panel.set_value("child_overlap", 400)
    panel.set_value("parent_size", 64)  # child_size must drop below 64, child_overlap below that
    v = panel.values()
    assert v["child_overlap"] < v["child_size"] < v["parent_size"] == 64
    assert panel.state.params == strategies()["parent_child"].validate(v)
    assert panel.problem.isHidden(), panel.problem.text()
