"""A stored research's trials as runs (one config x repetition each), and the long-form rows
``ResearchResults`` selects from them: one per config x repetition x iteration x variable.

Pure functions over ``Trial`` records: no store, no pandas.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from hyperlab.errors import ConfigError
from hyperlab.trial import Trial, TrialStatus

__all__ = [
    "LONG_COLUMNS",
    "Rows",
    "Run",
    "Selection",
    "alias_of",
    "as_list",
    "check_names",
    "config_columns",
    "ended",
    "last_value",
    "runs_of",
    "select_rows",
]

LONG_COLUMNS = ("experiment_id", "trial", "repetition", "iteration", "name", "value")
"""The first columns of the long form; the config keys' columns, ``alias`` and ``status``
follow."""
_RESERVED = frozenset((*LONG_COLUMNS, "alias", "status"))


@dataclass(frozen=True)
class Run:
    """One config x repetition of a research: its trial, and the iterations of the trial's
    last attempt.

    Attributes:
        trial: The stored trial (its ``id`` is what BatchFlow calls the experiment id).
        config: The config's aliases by config key.
        repetition: Which repetition of the config (0, 1, ...).
        alias: The config as one string (see ``alias_of``).
        iterations: Iteration number to the variables saved in it, in iteration order; only
            the reports of the trial's last attempt, so no iteration counts twice.
    """

    trial: Trial
    config: dict[str, Any]
    repetition: int
    alias: str
    iterations: dict[int, dict[str, Any]]


class Rows(NamedTuple):
    """Selected rows and their columns in order (every row has every column)."""

    columns: list[str]
    rows: list[dict[str, Any]]


def alias_of(config: dict[str, Any]) -> str:
    """The config as one string, BatchFlow's way and as ``ConfigItem.key``: ``key_alias``
    items sorted by key and joined with ``-`` (``"lr_0.1-model_SGD"``)."""
    return "-".join(f"{key}_{alias}" for key, alias in sorted(config.items()))


def config_columns(keys: Sequence[str]) -> dict[str, str]:
    """The column of each config key: the key itself, or ``config.<key>`` for a key that is
    also the name of one of the fixed columns (``name``, ``status``...)."""
    return {key: f"config.{key}" if key in _RESERVED else key for key in keys}


def runs_of(trials: Iterable[Trial], keys: Sequence[str]) -> list[Run]:
    """The runs of a research's trials, in trial-number order."""
    runs = []
    for trial in trials:
        iterations: dict[int, dict[str, Any]] = {}
        for report in trial.reports:
            if report.attempt == trial.attempt:
                iterations.setdefault(report.step, {}).update(report.metrics)
        config = {key: trial.params.get(key) for key in keys}
        runs.append(
            Run(
                trial=trial,
                config=config,
                repetition=int(trial.params.get("repetition", 0)),
                alias=alias_of({k: v for k, v in trial.params.items() if k in config}),
                iterations=dict(sorted(iterations.items())),
            )
        )
    return runs


def ended(trial: Trial) -> bool:
    """True once a config x repetition ended on its own; an interrupted one (SYS_CANCELED)
    runs again."""
    return trial.status.is_finished() and trial.status is not TrialStatus.SYS_CANCELED


def last_value(run: Run, name: str) -> tuple[int, Any] | None:
    """The last iteration in which ``run`` saved ``name``, and the value; None if it never did."""
    for step in reversed(run.iterations):
        metrics = run.iterations[step]
        if name in metrics:
            return step, metrics[name]
    return None


def as_list(value: Any) -> list[Any] | None:
    """None as None, a list, tuple, set or range as a list, anything else as a list of one."""
    if value is None:
        return None
    if isinstance(value, (list, tuple, set, frozenset, range)):
        return list(value)
    return [value]


@dataclass(frozen=True)
class Selection:
    """Checked filters of ``ResearchResults.to_df``; None lets everything through.

    Build it with ``Selection.build``, which raises a ``ConfigError`` naming the filter for a
    bad one.
    """

    experiment_ids: frozenset[str] | None = None
    names: list[str] | None = None
    iterations: frozenset[int] | str | None = None
    config: dict[str, list[Any]] | None = None
    aliases: frozenset[str] | None = None
    statuses: frozenset[TrialStatus] | None = None

    @classmethod
    def build(
        cls,
        *,
        keys: Sequence[str],
        variables: Sequence[str],
        experiment_id: str | Sequence[str] | None = None,
        name: str | Sequence[str] | None = None,
        iterations: int | Sequence[int] | str | None = None,
        config: dict[str, Any] | None = None,
        alias: str | Sequence[str] | None = None,
        status: str | TrialStatus | Sequence[str | TrialStatus] | None = None,
    ) -> Selection:
        """Check the filters against the research's config ``keys`` and ``variables``."""
        ids = as_list(experiment_id)
        aliases = as_list(alias)
        return cls(
            experiment_ids=None if ids is None else frozenset(map(str, ids)),
            names=check_names(name, variables, "name"),
            iterations=_iterations(iterations),
            config=_config(config, keys),
            aliases=None if aliases is None else frozenset(map(str, aliases)),
            statuses=_statuses(status),
        )

    def accepts(self, run: Run) -> bool:
        """Whether the run passes the filters on trials (id, config, alias, status)."""
        if self.experiment_ids is not None and run.trial.id not in self.experiment_ids:
            return False
        if self.aliases is not None and run.alias not in self.aliases:
            return False
        if self.statuses is not None and run.trial.status not in self.statuses:
            return False
        return self.config is None or all(
            run.config[key] in wanted for key, wanted in self.config.items()
        )


def check_names(name: Any, variables: Sequence[str], field: str) -> list[str] | None:
    """``name`` as a list of variables, each checked to be one of ``variables``."""
    names = as_list(name)
    for item in names or ():
        if item not in variables:
            raise ConfigError(
                f"{field}: unknown variable {item!r}; the research saves {list(variables)}"
            )
    return names


def _iterations(value: Any) -> frozenset[int] | str | None:
    if value is None or value == "last":
        return value
    items = as_list(value) or []
    if isinstance(value, str) or not all(
        isinstance(i, numbers.Integral) and not isinstance(i, bool) and int(i) >= 0 for i in items
    ):
        raise ConfigError(
            f"iterations: expected an iteration number >= 0, a list of them or 'last', got "
            f"{value!r}"
        )
    return frozenset(int(i) for i in items)


def _config(value: Any, keys: Sequence[str]) -> dict[str, list[Any]] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ConfigError(
            f"config: expected a dict of config values like {{'lr': 0.1}}, got {value!r}"
        )
    for key in value:
        if key not in keys:
            raise ConfigError(
                f"config: unknown key {key!r}; the research's config keys are {list(keys)}"
            )
    # A list matches a config whose value is that list, or one of its items.
    return {
        key: [wanted, *wanted] if isinstance(wanted, list) else [wanted]
        for key, wanted in value.items()
    }


def _statuses(value: Any) -> frozenset[TrialStatus] | None:
    items = as_list(value)
    if items is None:
        return None
    statuses = set()
    for item in items:
        text = str(item.value if isinstance(item, TrialStatus) else item).upper()
        if text not in TrialStatus.__members__:
            raise ConfigError(
                f"status: unknown status {item!r}; expected one of "
                f"{', '.join(TrialStatus.__members__)}"
            )
        statuses.add(TrialStatus(text))
    return frozenset(statuses)


def _cells(run: Run, selection: Selection) -> list[tuple[int, str, Any]]:
    """The (iteration, name, value) of the run that pass the filters, in iteration order."""
    names = selection.names
    if selection.iterations == "last":
        wanted = names if names is not None else _names_in(run)
        found = [(last_value(run, name), name) for name in wanted]
        cells = [(hit[0], name, hit[1]) for hit, name in found if hit is not None]
        return sorted(cells, key=lambda cell: cell[0])
    return [
        (step, name, value)
        for step, metrics in run.iterations.items()
        if selection.iterations is None or step in selection.iterations
        for name, value in metrics.items()
        if names is None or name in names
    ]


def _names_in(run: Run) -> list[str]:
    seen: dict[str, None] = {}
    for metrics in run.iterations.values():
        seen.update(dict.fromkeys(metrics))
    return list(seen)


def select_rows(
    runs: Sequence[Run],
    selection: Selection,
    *,
    keys: Sequence[str],
    variables: Sequence[str],
    pivot: bool = False,
    include_config: bool = True,
) -> Rows:
    """The rows of the runs that pass ``selection``.

    Long form: one row per run x iteration x variable, with the columns ``LONG_COLUMNS``, one
    per config key (if ``include_config``), ``alias`` and ``status``. With ``pivot``: one row
    per run x iteration, ``name`` and ``value`` replaced by one column per variable after
    ``status`` (``variable.<name>`` for a variable named like another column); a variable not
    saved in that iteration is None there.
    """
    columns = config_columns(keys) if include_config else {}
    head = ["experiment_id", "trial", "repetition", "iteration"]
    tail = [*columns.values(), "alias", "status"]
    rows: list[dict[str, Any]] = []
    saved: list[dict[str, Any]] = []  # with pivot: each row's variables
    for run in runs:
        if not selection.accepts(run):
            continue
        base = {
            "experiment_id": run.trial.id,
            "trial": run.trial.number,
            "repetition": run.repetition,
        }
        extra = {column: run.config[key] for key, column in columns.items()}
        extra.update(alias=run.alias, status=run.trial.status.value)
        for step, name, value in _cells(run, selection):
            if not pivot:
                rows.append({**base, "iteration": step, "name": name, "value": value, **extra})
                continue
            if not rows or rows[-1]["trial"] != run.trial.number or rows[-1]["iteration"] != step:
                rows.append({**base, "iteration": step, **extra})
                saved.append({})
            saved[-1][name] = value
    if not pivot:
        return Rows([*head, "name", "value", *tail], rows)
    seen = dict.fromkeys(name for values in saved for name in values)
    order = [v for v in variables if v in seen] + [v for v in seen if v not in variables]
    fixed = {*head, *tail}
    shown = {v: f"variable.{v}" if v in fixed else v for v in order}
    for row, values in zip(rows, saved, strict=True):
        row.update({shown[v]: values.get(v) for v in order})
    return Rows([*head, *tail, *shown.values()], rows)
