"""What the reading commands show of several objectives and constraints: the objectives' names,
the Pareto front as a table (``show``), the count of infeasible trials, the front's size
(``ls``), and the order of ``trials --sort`` by any objective or metric."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hyperlab._terminal import printable
from hyperlab.errors import ConfigError
from hyperlab.trial import Mode, Trial

if TYPE_CHECKING:
    from hyperlab.config import ExperimentOptions

__all__ = [
    "FRONT_ROWS",
    "SORTS",
    "constraint_line",
    "front_table",
    "objective_columns",
    "objective_line",
    "objective_names",
    "sort_trials",
]

FRONT_ROWS = 30
"""The most trials of the front ``show`` lists (``hyperlab export`` has them all)."""
SORTS = ("number", "metric", "duration")
"""The orders of ``trials --sort`` besides a metric's name."""


def objective_names(options: ExperimentOptions) -> list[str]:
    """Each objective's metric name (``value`` for one left unnamed), in order."""
    return [name or "value" for name in options.metrics]


def objective_columns(options: ExperimentOptions) -> list[str] | None:
    """The trial table's column headings of several objectives (``loss (min)``); None for one
    objective (its table has a ``value`` column)."""
    if not options.multi_objective:
        return None
    return [f"{n} ({m})" for n, m in zip(objective_names(options), options.modes, strict=True)]


def objective_line(options: ExperimentOptions) -> str:
    """``loss (min), acc (max)``: each objective with its direction."""
    names = objective_names(options) if options.multi_objective else [options.first_metric]
    return ", ".join(f"{n or 'default'} ({m})" for n, m in zip(names, options.modes, strict=True))


def constraint_line(options: ExperimentOptions, trials: Sequence[Trial]) -> str | None:
    """The constraints and how many trials with a result violate them (``c <= 1: 3
    infeasible of 12 trials``); None without constraints."""
    checked = [t for t in trials if t.constraints is not None]
    if options.constraints is None and not checked:
        return None
    rules = "; ".join(options.constraints or ("a function of the trial",))
    infeasible = sum(not t.feasible for t in checked)
    return f"{rules}: {infeasible} infeasible of {len(checked)} trials"


def _number(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, (int, float)) else "-"


def front_table(front: Sequence[Trial], options: ExperimentOptions) -> Any:
    """The front as a table: trial, each objective by its metric name, feasibility and
    violation (with constraints), params; best first by the first objective, at most
    ``FRONT_ROWS`` rows."""
    from rich.table import Table

    from hyperlab.trial import flatten_params, readable

    names = objective_names(options)
    constrained = any(t.constraints is not None for t in front)
    shown = sorted(front, key=lambda t: options.first_mode.sign * (t.objectives or (0.0,))[0])
    title = f"Pareto front ({len(front)} trial{'' if len(front) == 1 else 's'}"
    title += f", the first {FRONT_ROWS} by {names[0]})" if len(front) > FRONT_ROWS else ")"
    columns = ["#", *(f"{n} ({m})" for n, m in zip(names, options.modes, strict=True))]
    table = Table(*columns, *(["feasible", "violation"] if constrained else []), "params")
    table.title = title
    for t in shown[:FRONT_ROWS]:
        values = [_number(v) for v in (t.objectives or ())]
        feasibility = ["yes" if t.feasible else "no", _number(t.violation)] if constrained else []
        params = ", ".join(f"{k}={v!r}" for k, v in readable(flatten_params(t.params)).items())
        table.add_row(*map(printable, [str(t.number), *values, *feasibility, params]))
    return table


def sort_trials(
    trials: Sequence[Trial], options: ExperimentOptions, sort: str, *, descending: bool
) -> list[Trial]:
    """The trials in the order ``trials --sort`` names: ``number``; ``metric`` (the first
    objective, best first); ``duration`` (longest first); or a metric's name, in its
    objective's direction (best first) or ascending for a metric that is no objective. A
    leading ``-`` or ``descending`` reverses it; trials without the metric come last.

    Raises:
        ConfigError: ``sort`` names no metric any trial has.
    """
    reverse = descending != sort.startswith("-")
    name = sort.removeprefix("-")
    if name == "number":
        return sorted(trials, key=lambda t: t.number, reverse=reverse)
    if name == "duration":
        return sorted(trials, key=lambda t: -(t.duration or 0.0), reverse=reverse)
    names = objective_names(options)
    if name == "metric":
        name = names[0]
    if name in names:
        index, mode = names.index(name), options.modes[names.index(name)]

        def key(t: Trial) -> float | None:
            values = t.objectives
            return values[index] if values is not None and len(values) > index else None
    elif any(name in t.metrics for t in trials) or not trials:
        mode = Mode.MIN

        def key(t: Trial) -> float | None:
            value = t.metrics.get(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                return None
            return float(value)
    else:
        known = sorted({m for t in trials for m in t.metrics} | set(names))
        raise ConfigError(
            f"--sort: expected {', '.join(SORTS)} or a metric's name (optionally with a "
            f"leading -), got {sort!r}; the trials' metrics are {', '.join(known) or 'none'}"
        )
    sign = -mode.sign if reverse else mode.sign
    keyed = [(key(t), t) for t in trials]
    present = [(v, t) for v, t in keyed if v is not None and not math.isnan(v)]
    missing = [t for v, t in keyed if v is None or math.isnan(v)]
    present.sort(key=lambda pair: (sign * pair[0], pair[1].number))
    return [t for _, t in present] + sorted(missing, key=lambda t: t.number)
