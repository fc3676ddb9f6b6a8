"""Mean, standard deviation and count of a research's variables over repetitions, per config;
and their text table (``mean ± std (n)``) for the command line.

Pure functions over ``Run`` records: no store, no pandas.
"""

from __future__ import annotations

import json
import math
import numbers
import statistics
from collections.abc import Sequence
from dataclasses import astuple, dataclass
from typing import Any

from hyperlab._terminal import printable
from hyperlab.errors import ConfigError
from hyperlab.research._rows import Run, as_list, check_names, last_value

__all__ = ["Aggregate", "Stats", "aggregate_runs"]


@dataclass(frozen=True)
class Stats:
    """One variable of one config over its repetitions: ``std`` is the sample standard
    deviation (``ddof=1``), NaN for fewer than two values."""

    mean: float
    std: float
    count: int


_PARTS = ("mean", "std", "count")


@dataclass(frozen=True)
class Aggregate:
    """A variable x config table of ``Stats``.

    Attributes:
        by: The config keys the runs were grouped by.
        names: The variables, in the research's order.
        iteration: The iteration the values were taken at (``"last"``: each run's last value
            of each variable).
        groups: One per config (in trial-number order of first appearance): its values of
            ``by``, and the stats of each variable it has values of.
    """

    by: list[str]
    names: list[str]
    iteration: int | str
    groups: list[tuple[dict[str, Any], dict[str, Stats]]]

    def columns(self) -> list[str]:
        """``by``, then ``<name>_mean``, ``<name>_std``, ``<name>_count`` per variable."""
        stats = [f"{name}_{part}" for name in self.names for part in _PARTS]
        return [*self.by, *stats]

    def rows(self) -> list[dict[str, Any]]:
        """One row per config, with ``columns()`` (NaN and 0 where a config has no value)."""
        rows = []
        for config, found in self.groups:
            row = dict(config)
            for name in self.names:
                stats = found.get(name, Stats(math.nan, math.nan, 0))
                row.update(
                    {
                        f"{name}_{part}": value
                        for part, value in zip(_PARTS, astuple(stats), strict=True)
                    }
                )
            rows.append(row)
        return rows

    def text(self, digits: int = 4) -> str:
        """An aligned plain-text table: the config keys, then ``mean ± std (n)`` per variable
        (``-`` where a config has no value, no ``± std`` for one repetition); control
        characters in names and values are shown as escapes (``hyperlab._terminal``)."""
        header = [*self.by, *self.names]
        lines = [[printable(name) for name in header]]
        for config, found in self.groups:
            cells = [printable(_short(config[key], digits)) for key in self.by]
            cells += [_cell(found.get(name), digits) for name in self.names]
            lines.append(cells)
        widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
        return "\n".join(
            "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
            for line in lines
        )


def _short(value: Any, digits: int) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return value if isinstance(value, str) else json.dumps(value, default=str)


def _cell(stats: Stats | None, digits: int) -> str:
    if stats is None or stats.count == 0:
        return "-"
    mean = f"{stats.mean:.{digits}g}"
    spread = "" if math.isnan(stats.std) else f" ± {stats.std:.{digits}g}"
    return f"{mean}{spread} ({stats.count})"


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _value_at(run: Run, name: str, iteration: int | str) -> tuple[bool, Any]:
    """Whether the run saved ``name`` at ``iteration`` (or ever, for ``"last"``), and the
    value."""
    if iteration == "last":
        found = last_value(run, name)
        return (False, None) if found is None else (True, found[1])
    metrics = run.iterations.get(int(iteration), {})
    return (name in metrics, metrics.get(name))


def aggregate_runs(
    runs: Sequence[Run],
    *,
    keys: Sequence[str],
    variables: Sequence[str],
    name: str | Sequence[str] | None = None,
    iteration: int | str = "last",
    by: str | Sequence[str] | None = None,
) -> Aggregate:
    """The stats of ``name`` (default: every variable whose values are all numbers) per
    config, over the runs' values at ``iteration``.

    Raises:
        ConfigError: an unknown variable or config key, a bad iteration, or a variable named
            in ``name`` that has values other than numbers.
    """
    if iteration != "last" and not (
        isinstance(iteration, numbers.Integral)
        and not isinstance(iteration, bool)
        and iteration >= 0
    ):
        raise ConfigError(
            f"iteration: expected an iteration number >= 0 or 'last', got {iteration!r}"
        )
    groups_by = as_list(by) if by is not None else list(keys)
    for key in groups_by or ():
        if key not in keys:
            raise ConfigError(
                f"by: unknown key {key!r}; the research's config keys are {list(keys)}"
            )
    chosen = check_names(name, variables, "name")
    values = {v: [_value_at(run, v, iteration) for run in runs] for v in chosen or variables}
    names = []
    for variable, found in values.items():
        kept = [value for saved, value in found if saved and value is not None]
        bad = next((value for value in kept if not _is_number(value)), None)
        if bad is None and kept:
            names.append(variable)
        elif chosen is not None and bad is not None:
            raise ConfigError(
                f"name: variable {variable!r} is not numeric (it has the value {bad!r}); only "
                "numbers are aggregated"
            )
        elif chosen is not None:
            names.append(variable)  # named but not saved (yet): shown with no value
    groups: dict[str, tuple[dict[str, Any], dict[str, list[float]]]] = {}
    for index, run in enumerate(runs):
        config = {key: run.config[key] for key in groups_by or ()}
        group = json.dumps(list(config.values()), sort_keys=True, default=str)
        collected = groups.setdefault(group, (config, {}))[1]
        for variable in names:
            saved, value = values[variable][index]
            if saved and value is not None:
                collected.setdefault(variable, []).append(float(value))
    return Aggregate(
        by=list(groups_by or ()),
        names=names,
        iteration=iteration,
        groups=[(config, _stats(found)) for config, found in groups.values()],
    )


def _stats(found: dict[str, list[float]]) -> dict[str, Stats]:
    return {
        name: Stats(
            statistics.fmean(items),
            statistics.stdev(items) if len(items) > 1 else math.nan,
            len(items),
        )
        for name, items in found.items()
    }
