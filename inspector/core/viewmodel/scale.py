"""Slider scales: which value each notch of a parameter's slider stands for.

A size slider that maps 1..8192 tokens linearly onto ~180 pixels moves ~45 tokens a pixel: a
60-pixel drag jumps from 448 to 2928, and 256 cannot be hit. Here a slider is a row of notches,
each a round value people pick, spread evenly in ratio rather than in difference:

- "log2" (sizes in tokens): powers of two and the three quarter-steps between them
  (64 80 96 112 128 160 192 224 256 320 ...), those that are multiples of the step;
- "log10" (sizes in characters): 1 1.2 1.5 2 2.5 3 4 5 6 8 times a power of ten
  (100 120 150 200 250 300 400 500 ...), multiples of the step;
- "linear": every multiple of the step.

The notches span the parameter's declared practical range (`Param.practical`), narrowed by the
constraint the panel keeps (overlap below size) and by `Param.practical_share` (an overlap slider
ends at half the size); both ends are always notches, so the slider reaches them. Values between
notches are still valid: the spin box takes them, the slider then rests on the nearest notch and
one arrow press moves to the next notch in that direction (`SliderScale.step`).

Pure and Qt-free, so the mapping is property-tested; the strategy panel and the trace along the
size slider read the same `SliderScale`.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from inspector.core.chunking.params import Param

#: Up to this many steps, an undeclared scale is linear (one notch a step), as sliders were.
LINEAR_UP_TO = 300

#: Mantissas per scale: log2 values are m * 2**e / 4 (four notches an octave), log10 values
#: m * 10**e (ten a decade, about three an octave).
MANTISSAS = {"log2": (4.0, 5.0, 6.0, 7.0), "log10": (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0)}

#: Notches a PageUp/PageDown moves: about one doubling on the log scales.
PAGE = {"log2": 4, "log10": 3}

Number = int | float


@dataclass(frozen=True, slots=True)
class SliderScale:
    """The notches of one slider: notch `i` stands for `values[i]`."""

    values: tuple[Number, ...]
    """Ascending and distinct; at least one."""
    page: int
    """Notches a PageUp/PageDown moves."""
    kind: str
    """"linear", "log2" or "log10"."""

    @property
    def last(self) -> int:
        """The highest notch (the slider's maximum)."""
        return len(self.values) - 1

    def value_at(self, pos: int) -> Number:
        """The value notch `pos` stands for (positions past either end give that end)."""
        return self.values[min(max(int(pos), 0), self.last)]

    def position_of(self, value: float) -> int:
        """The notch nearest to `value` (the lower one on a tie); the ends for values past them."""
        vs = self.values
        i = bisect_left(vs, value)
        if i <= 0:
            return 0
        if i > self.last:
            return self.last
        return i if vs[i] - value < value - vs[i - 1] else i - 1

    def fraction_of(self, value: float) -> float:
        """Where `value` sits in notches, between notches for values off them (interpolated in
        ratio on the log scales), clamped to the ends: what a drawing aligned with the slider
        needs."""
        vs = self.values
        if value <= vs[0]:
            return 0.0
        if value >= vs[-1]:
            return float(self.last)
        i = bisect_right(vs, value) - 1
        a, b = vs[i], vs[i + 1]
        t = math.log(value / a) / math.log(b / a) if self.kind != "linear" and a > 0 else (value - a) / (b - a)
        return i + t

    def step(self, value: float, notches: int) -> int:
        """The notch `notches` away from `value` (negative: down). From a value between notches
        the first step lands on the next notch in that direction, so "one arrow press" never
        skips a notch or stays put."""
        if notches == 0:
            return self.position_of(value)
        if notches > 0:
            first = bisect_right(self.values, value)  # the first notch above value
            pos = first + notches - 1
        else:
            first = bisect_left(self.values, value) - 1  # the first notch below value
            pos = first + notches + 1
        return min(max(pos, 0), self.last)

    def neighbours(self, value: float, radius: int) -> tuple[Number, ...]:
        """Up to `radius` notch values on each side of `value`, nearest first (above before below
        at equal distance); `value` itself is not among them."""
        above = [self.values[p] for p in range(bisect_right(self.values, value),
                                                min(bisect_right(self.values, value) + radius, self.last + 1))]
        start = bisect_left(self.values, value) - 1
        below = [self.values[p] for p in range(start, max(start - radius, -1), -1)]
        out: list[Number] = []
        for i in range(radius):
            if i < len(above):
                out.append(above[i])
            if i < len(below):
                out.append(below[i])
        return tuple(out)


def _is_power_of_two(n: float) -> bool:
    return n >= 2 and float(n).is_integer() and (int(n) & (int(n) - 1)) == 0


def scale_kind(param: Param, lo: float, hi: float) -> str:
    """The declared scale, or for an undeclared one: linear up to `LINEAR_UP_TO` steps, else
    log2 for power-of-two steps (token sizes), else log10."""
    if param.scale:
        return param.scale
    step = float(param.step) if param.step and param.step > 0 else 0.0
    if step and (hi - lo) / step <= LINEAR_UP_TO:
        return "linear"
    return "log2" if _is_power_of_two(step) else "log10"


def slider_range(param: Param, maximum: float | None = None,
                 reference: float | None = None) -> tuple[Number, Number]:
    """(low, high) the slider spans: the practical range, within the valid range as narrowed to
    `maximum` by a constraint, and ending at `practical_share` of `reference` (the value of the
    parameter this one stays below) when declared. A practical range the constraint leaves
    empty falls back to the valid minimum."""
    top = param.maximum if maximum is None else min(maximum, param.maximum)
    lo, hi = param.practical if param.practical is not None else (param.minimum, param.maximum)
    lo = max(lo, param.minimum)
    hi = min(hi, top)
    if param.practical_share > 0 and reference is not None:
        cap = param.practical_share * reference
        if param.step and param.step > 0:
            cap = math.floor(cap / param.step + 1e-9) * param.step
        hi = min(hi, cap)
    if hi < lo:
        lo = param.minimum
        hi = max(hi, lo)
    return _typed(param, lo), _typed(param, hi)


def slider_scale(param: Param, maximum: float | None = None, reference: float | None = None) -> SliderScale:
    """The notches of `param`'s slider (see the module docstring)."""
    lo, hi = slider_range(param, maximum, reference)
    kind = scale_kind(param, lo, hi)
    values = ladder(kind, lo, hi, param.step, integer=param.kind == "int")
    page = PAGE.get(kind) or max(1, (len(values) - 1) // 20)
    return SliderScale(values, page, kind)


def ladder(kind: str, lo: Number, hi: Number, step: float, *, integer: bool = True) -> tuple[Number, ...]:
    """`lo`, the values of the scale strictly between that are multiples of `step` (whole numbers
    when `integer`), and `hi`."""
    if hi <= lo:
        return (lo,)
    step = float(step) if step and step > 0 else 0.0
    inner: list[float] = []
    if kind == "linear":
        if step:
            k = math.floor(lo / step) + 1
            while k * step < hi:
                inner.append(k * step)
                k += 1
    else:
        base = 2.0 if kind == "log2" else 10.0
        mantissas = MANTISSAS[kind]
        unit = 0.25 if kind == "log2" else 1.0
        smallest = max(float(lo), step, 1e-9)
        e = math.floor(math.log(smallest, base)) - 1
        while True:
            top = unit * mantissas[0] * base ** e
            if top >= hi:
                break
            for m in mantissas:
                v = unit * m * base ** e
                if lo < v < hi and _on_step(v, step, integer):
                    inner.append(v)
            e += 1
    typed = [_round(v, integer) for v in inner]
    out = [lo, *(v for v in typed if lo < v < hi), hi]
    return tuple(sorted(set(out)))


def _on_step(v: float, step: float, integer: bool) -> bool:
    if integer and abs(v - round(v)) > 1e-9:
        return False
    return not step or abs(v / step - round(v / step)) < 1e-9


def _round(v: float, integer: bool) -> Number:
    return int(round(v)) if integer else round(v, 6)


def _typed(param: Param, v: float) -> Number:
    return int(round(v)) if param.kind == "int" else round(float(v), 6)


__all__ = ["SliderScale", "slider_scale", "slider_range", "scale_kind", "ladder", "LINEAR_UP_TO"]
