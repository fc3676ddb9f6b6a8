"""Optuna's distributions (``optuna.distributions``), and how each becomes a hyperlab one.

A distribution asked for by ``trial.suggest_*`` reaches the driver as an NNI spec, chosen so
that its values are exactly the ones Optuna's would take:

| Optuna | hyperlab (NNI spec) |
| --- | --- |
| ``FloatDistribution(low, high)`` | ``uniform(low, high)`` |
| ``FloatDistribution(low, high, log=True)`` | ``loguniform(low, high)`` |
| ``FloatDistribution(low, high, step=q)``, ``low = k * q`` | ``quniform(low, high, q)`` |
| ``IntDistribution(low, high)`` | ``randint(low, high + 1)`` (NNI's upper bound is excluded) |
| ``IntDistribution(low, high, step=q)``, ``low`` a multiple of ``q`` | ``quniform(low, high, q)`` |
| ``IntDistribution(low, high, log=True)`` | ``qloguniform(low, high, 1)`` |
| ``CategoricalDistribution(choices)`` | ``choice(choices)`` |
| a stepped range with ``low`` off its step, or ``low == high`` | ``choice`` of its values |

``high`` is first lowered to the last value the step reaches, as Optuna does. Integer values
come back as ``int``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BaseDistribution",
    "CategoricalChoiceType",
    "CategoricalDistribution",
    "FloatDistribution",
    "IntDistribution",
    "from_spec",
    "to_spec",
]

CategoricalChoiceType = None | bool | int | float | str

ENUMERATED_AT_MOST = 10_000
"""The most values a stepped range that hyperlab's ``quniform`` cannot express may have: it
becomes a ``choice`` of them."""


class BaseDistribution:
    """What every distribution is (``optuna.distributions.BaseDistribution``)."""

    def single(self) -> bool:
        """Whether it has one value only."""
        raise NotImplementedError

    def cast(self, value: Any) -> Any:
        """``value`` as this distribution's type (``int`` for an ``IntDistribution``)."""
        return value


@dataclass(frozen=True)
class FloatDistribution(BaseDistribution):
    """Floats in ``[low, high]``, log-scaled or on a grid of ``step``."""

    low: float
    high: float
    log: bool = False
    step: float | None = None

    def __post_init__(self) -> None:
        if self.log and self.step is not None:
            raise ValueError("The parameter `step` is not supported when `log` is true.")
        if self.low > self.high:
            raise ValueError(
                f"`low <= high` must hold, but got (low, high)=({self.low}, {self.high})."
            )
        if self.log and self.low <= 0.0:
            raise ValueError(f"`low > 0` must hold for `log=True`, but got low={self.low}.")
        if self.step is not None and self.step <= 0:
            raise ValueError(f"`step > 0` must hold, but got step={self.step}.")
        if self.step is not None:
            object.__setattr__(self, "high", _last(self.low, self.high, self.step))

    def single(self) -> bool:
        return self.low == self.high

    def cast(self, value: Any) -> float:
        return float(value)


@dataclass(frozen=True)
class IntDistribution(BaseDistribution):
    """Integers in ``[low, high]`` (both included), log-scaled or every ``step``."""

    low: int
    high: int
    log: bool = False
    step: int = 1

    def __post_init__(self) -> None:
        if self.log and self.step != 1:
            raise ValueError(
                "Samplers and other components in Optuna only accept step is 1 when `log` "
                f"argument is True, but got step={self.step}."
            )
        if self.low > self.high:
            raise ValueError(
                f"`low <= high` must hold, but got (low, high)=({self.low}, {self.high})."
            )
        if self.log and self.low < 1:
            raise ValueError(f"`low >= 1` must hold for `log=True`, but got low={self.low}.")
        if self.step <= 0:
            raise ValueError(f"`step > 0` must hold, but got step={self.step}.")
        object.__setattr__(self, "high", _last(self.low, self.high, self.step))

    def single(self) -> bool:
        return self.low == self.high

    def cast(self, value: Any) -> int:
        return round(float(value))


@dataclass(frozen=True)
class CategoricalDistribution(BaseDistribution):
    """One of ``choices`` (None, bools, ints, floats or strings)."""

    choices: tuple[CategoricalChoiceType, ...]

    def __init__(self, choices: Sequence[CategoricalChoiceType]) -> None:
        if len(choices) == 0:
            raise ValueError("The `choices` must contain one or more elements.")
        for choice in choices:
            if choice is not None and not isinstance(choice, (bool, int, float, str)):
                raise ValueError(
                    f"Choices for a categorical distribution should be a tuple of None, bool, "
                    f"int, float and str for persistent storage but contains {choice!r} which "
                    f"is of type {type(choice).__name__}."
                )
        object.__setattr__(self, "choices", tuple(choices))

    def single(self) -> bool:
        return len(self.choices) == 1

    def cast(self, value: Any) -> Any:
        return value


def _last(low: float, high: float, step: float) -> float:
    """The highest ``low + k * step`` not above ``high`` (Optuna's adjusted ``high``)."""
    k = math.floor((high - low) / step + 1e-9)
    value = low + k * step
    return int(value) if isinstance(low, int) and isinstance(step, int) else value


def _aligned(low: float, step: float) -> bool:
    ratio = low / step
    return abs(ratio - round(ratio)) < 1e-9


def _values(low: float, high: float, step: float) -> list[Any]:
    count = round((high - low) / step) + 1
    if count > ENUMERATED_AT_MOST:
        raise NotImplementedError(
            f"a stepped range from {low} to {high} by {step} whose low is not a multiple of "
            f"its step has {count} values, more than hyperlab enumerates "
            f"({ENUMERATED_AT_MOST}); use a low that is a multiple of the step"
        )
    if isinstance(low, int) and isinstance(step, int):
        return [low + k * step for k in range(count)]
    return [round(low + k * step, 12) for k in range(count)]


def to_spec(distribution: BaseDistribution) -> dict[str, Any]:
    """The NNI spec whose values are exactly ``distribution``'s (see the module's table)."""
    if isinstance(distribution, CategoricalDistribution):
        return {"_type": "choice", "_value": list(distribution.choices)}
    if isinstance(distribution, FloatDistribution):
        low, high, step = float(distribution.low), float(distribution.high), distribution.step
        if low == high:
            return {"_type": "choice", "_value": [low]}
        if distribution.log:
            return {"_type": "loguniform", "_value": [low, high]}
        if step is None:
            return {"_type": "uniform", "_value": [low, high]}
        if _aligned(low, step):
            return {"_type": "quniform", "_value": [low, high, float(step)]}
        return {"_type": "choice", "_value": _values(low, high, float(step))}
    if isinstance(distribution, IntDistribution):
        ilow, ihigh, istep = int(distribution.low), int(distribution.high), int(distribution.step)
        if ilow == ihigh:
            return {"_type": "choice", "_value": [ilow]}
        if distribution.log:
            return {"_type": "qloguniform", "_value": [ilow, ihigh, 1]}
        if istep == 1:
            return {"_type": "randint", "_value": [ilow, ihigh + 1]}
        if ilow % istep == 0:
            return {"_type": "quniform", "_value": [ilow, ihigh, istep]}
        return {"_type": "choice", "_value": _values(ilow, ihigh, istep)}
    raise NotImplementedError(
        f"{type(distribution).__name__}: hyperlab maps FloatDistribution, IntDistribution and "
        "CategoricalDistribution only"
    )


def from_spec(spec: dict[str, Any]) -> BaseDistribution:
    """The Optuna distribution a spec of ``to_spec`` (or any NNI range or choice) stands for."""
    kind, values = spec["_type"], list(spec["_value"])
    if kind == "uniform":
        return FloatDistribution(values[0], values[1])
    if kind == "loguniform":
        return FloatDistribution(values[0], values[1], log=True)
    if kind == "randint":
        return IntDistribution(int(values[0]), int(values[1]) - 1)
    if kind == "qloguniform":
        low, high, q = values
        if all(isinstance(v, int) for v in values) and q == 1:
            return IntDistribution(low, high, log=True)
    if kind == "quniform":
        low, high, q = values
        if all(isinstance(v, int) for v in values):
            return IntDistribution(low, high, step=q)
        return FloatDistribution(float(low), float(high), step=float(q))
    if kind == "choice" and all(
        v is None or isinstance(v, (bool, int, float, str)) for v in values
    ):
        return CategoricalDistribution(values)
    raise NotImplementedError(f"the hyperlab parameter {spec} has no Optuna distribution")
