"""Constraints written as text (``"latency_ms <= 50"``): parsed by a regular expression, never
``eval``'d, into a ``Constraint`` that turns a trial's metrics into Optuna's constraint value
(``<= 0`` when met)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["Constraint", "parse_constraint"]

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NAME = r"[A-Za-z_][\w./-]*"
_OPERATOR = r"<=|>=|<|>|≤|≥"
_FORMS = (
    re.compile(rf"^\s*(?P<name>{_NAME})\s*(?P<op>{_OPERATOR})\s*(?P<bound>{_NUMBER})\s*$"),
    re.compile(rf"^\s*(?P<bound>{_NUMBER})\s*(?P<op>{_OPERATOR})\s*(?P<name>{_NAME})\s*$"),
)
_FLIP = {"<=": ">=", ">=": "<=", "<": ">", ">": "<", "≤": "≥", "≥": "≤"}


@dataclass(frozen=True)
class Constraint:
    """``metric <= bound`` (``upper``) or ``metric >= bound``: a limit on one reported metric.

    Attributes:
        text: As the user wrote it.
        metric: The metric it limits.
        bound: The limit.
        upper: True for an upper limit (``<=``, ``<``), False for a lower one.
    """

    text: str
    metric: str
    bound: float
    upper: bool

    def value(self, metrics: dict[str, Any]) -> float:
        """How far ``metrics`` are past the limit: ``<= 0`` when met (Optuna's convention).

        Raises:
            ValueError: the metric is missing or not a finite number.
        """
        if self.metric not in metrics:
            raise ValueError(
                f"constraint {self.text!r}: metric {self.metric!r} is missing from the trial's "
                f"result {sorted(metrics)}"
            )
        value = metrics[self.metric]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not ok or not math.isfinite(value):
            raise ValueError(
                f"constraint {self.text!r}: metric {self.metric}={value!r} is not a finite number"
            )
        return float(value) - self.bound if self.upper else self.bound - float(value)


def parse_constraint(text: Any) -> Constraint:
    """``text`` (``"latency_ms <= 50"``, ``"accuracy >= 0.9"``, ``"50 >= latency_ms"``) as a
    ``Constraint``.

    Raises:
        ValueError: it is no string, or not one metric name compared with one number.
    """
    if not isinstance(text, str):
        raise ValueError(f"constraints: expected strings such as 'latency_ms <= 50', got {text!r}")
    for form in _FORMS:
        match = form.match(text)
        if match is None:
            continue
        op = match["op"] if form is _FORMS[0] else _FLIP[match["op"]]
        bound = float(match["bound"])
        if not math.isfinite(bound):
            break
        return Constraint(text, match["name"], bound, upper=op in ("<=", "<", "≤"))
    raise ValueError(
        f"constraints: {text!r} does not parse; expected a metric name compared with a number, "
        "such as 'latency_ms <= 50' or 'accuracy >= 0.9' (operators <=, >=, <, >)"
    )
