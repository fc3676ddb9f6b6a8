"""The write buffer: rows put by the driver, written in one transaction by ``flush``.

This is the hot path (thousands of trials a second), so rows are plain tuples in column order,
JSON is encoded once when a row is buffered (so a bad value fails the call that brought it, not
a later flush), repeated puts of one trial keep only the newest row, and each table is written
with one ``executemany`` of a statement compiled once per store.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from typing import Any

from sqlalchemy import bindparam, insert, update
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.sql import ClauseElement

from hyperlab.store._controls import ControlOutcome
from hyperlab.store._schema import (
    controls,
    experiments,
    imported,
    phases,
    reports,
    trial_events,
    trials,
)
from hyperlab.store.codec import dumps
from hyperlab.trial import ExperimentStatus, Phase, Report, Trial, TrialStatus

__all__ = ["EXPERIMENT_FIELDS", "WriteBuffer"]

EXPERIMENT_FIELDS = frozenset(
    {
        "status",
        "name",
        "started_at",
        "finished_at",
        "error",
        "driver_host",
        "driver_pid",
        "heartbeat_at",
        "options",
        "space",
        "server_url",
        "environment",
    }
)
"""What ``update_experiment`` may change."""

_TRIAL_COLUMNS = tuple(column.name for column in trials.c)
_PHASE_COLUMNS = tuple(column.name for column in phases.c)
_REPORT_COLUMNS = ("experiment_id", "number", "attempt", "step", "metrics", "time")
_EVENT_COLUMNS = ("experiment_id", "number", "attempt", "status", "time")
_IMPORTED_COLUMNS = ("experiment_id", "params", "value", "metrics", "created_at")
_CONTROL_COLUMNS = ("applied_at", "applied", "message", "trial", "control_id")
_UNFINISHED = frozenset(s.value for s in TrialStatus if not s.is_finished())
_MIN_INT64, _MAX_INT64 = -(2**63), 2**63 - 1
_Key = tuple[str, int]


class _Statement:
    """A statement compiled once, executed with rows given as tuples in ``columns`` order."""

    def __init__(self, stmt: ClauseElement, dialect: Dialect, columns: Sequence[str]) -> None:
        compiled: Any = stmt.compile(
            dialect=dialect, column_keys=list(columns), for_executemany=True
        )
        self.sql = str(compiled)
        self.columns = tuple(columns)
        self.positional = bool(compiled.positional)
        if self.positional and tuple(compiled.positiontup or ()) != self.columns:
            raise AssertionError(f"bind order {compiled.positiontup} != {self.columns}")

    def execute(self, conn: Connection, rows: Sequence[tuple[Any, ...]]) -> None:
        if not rows:
            return
        if self.positional:
            conn.exec_driver_sql(self.sql, list(rows))
        else:
            conn.exec_driver_sql(
                self.sql, [dict(zip(self.columns, row, strict=True)) for row in rows]
            )


class WriteBuffer:
    """Rows waiting for the next flush. Only the driver's thread calls its methods."""

    def __init__(self, dialect: Dialect, clock: Callable[[], float]) -> None:
        self._clock = clock
        # the dialect's own INSERT (for ON CONFLICT), imported for the store in use only
        dialect_insert = importlib.import_module(f"sqlalchemy.dialects.{dialect.name}").insert
        upsert = dialect_insert(trials)
        upsert = upsert.on_conflict_do_update(
            index_elements=[trials.c.experiment_id, trials.c.number],
            set_={name: upsert.excluded[name] for name in _TRIAL_COLUMNS[2:]},
        )
        finish = (
            update(controls)
            .where(controls.c.id == bindparam("control_id"))
            .values(
                applied_at=bindparam("applied_at"),
                applied=bindparam("applied"),
                outcome=bindparam("message"),
                trial=bindparam("trial"),
            )
        )
        upsert_phase = dialect_insert(phases)
        upsert_phase = upsert_phase.on_conflict_do_update(
            index_elements=[phases.c.experiment_id, phases.c.number, phases.c.phase],
            set_={name: upsert_phase.excluded[name] for name in _PHASE_COLUMNS[3:]},
        )
        self._upsert_trials = _Statement(upsert, dialect, _TRIAL_COLUMNS)
        self._upsert_phases = _Statement(upsert_phase, dialect, _PHASE_COLUMNS)
        self._insert_reports = _Statement(insert(reports), dialect, _REPORT_COLUMNS)
        self._insert_events = _Statement(insert(trial_events), dialect, _EVENT_COLUMNS)
        self._insert_imported = _Statement(insert(imported), dialect, _IMPORTED_COLUMNS)
        self._finish_controls = _Statement(finish, dialect, _CONTROL_COLUMNS)
        self.trials: dict[_Key, tuple[Any, ...]] = {}
        self.phases: dict[tuple[str, int, int], tuple[Any, ...]] = {}
        self.reports: list[tuple[Any, ...]] = []
        self.events: list[tuple[Any, ...]] = []
        self.imported: list[tuple[Any, ...]] = []
        self.experiments: dict[str, dict[str, Any]] = {}
        self.controls: dict[int, tuple[Any, ...]] = {}
        # Per trial, what this store put last: (status, attempt) to detect status changes,
        # and, while it runs, its params and metrics objects with their JSON, reused when
        # the same objects come back (the driver makes each new Trial with
        # dataclasses.replace, so params is the same dict every time).
        self._last: dict[_Key, tuple[Any, ...]] = {}

    def __len__(self) -> int:
        return (
            len(self.trials)
            + len(self.phases)
            + len(self.reports)
            + len(self.events)
            + len(self.imported)
            + len(self.experiments)
            + len(self.controls)
        )

    def put_trial(self, trial: Trial) -> None:
        """Buffer ``trial``'s row (replacing an unflushed one) and its status change."""
        experiment_id = trial.experiment_id
        number = trial.number
        key = (experiment_id, number)
        params = trial.params
        metrics = trial.metrics
        status = trial.status._value_  # the str; ``.value`` is a slow descriptor
        attempt = trial.attempt
        last = self._last.get(key)
        if last is None:
            params_json = dumps(params)
            metrics_json = dumps(metrics) if metrics else "{}"
        else:
            params_json = last[3] if last[2] is params else dumps(params)
            metrics_json = last[5] if last[4] is metrics else (dumps(metrics) if metrics else "{}")
        value = trial.value
        if value is not None:
            value = float(value)
            if not math.isfinite(value):
                value = None
        seed = trial.seed
        if seed is not None:
            if type(seed) is not int:
                seed = int(seed)  # a NumPy integer
            if not _MIN_INT64 <= seed <= _MAX_INT64:
                raise ValueError(
                    f"trial {trial.id}: seed must fit in a signed 64-bit integer, got {seed}"
                )
        self.trials[key] = (
            experiment_id,
            number,
            params_json,
            status,
            attempt,
            value,
            metrics_json,
            trial.error,
            seed,
            trial.created_at,
            trial.started_at,
            trial.finished_at,
            trial.parent,
            trial.source,
            None if trial.values is None else dumps(list(trial.values)),
            None if trial.constraints is None else dumps(list(trial.constraints)),
            None if trial.constraints is None else trial.violation,
        )
        if last is None or last[0] != status or last[1] != attempt:
            self.events.append((experiment_id, number, attempt, status, self._clock()))
        if status in _UNFINISHED:
            self._last[key] = (status, attempt, params, params_json, metrics, metrics_json)
        else:  # keep no references to the finished trial's dicts
            self._last[key] = (status, attempt, None, None, None, None)

    def put_phase(self, phase: Phase) -> None:
        """Buffer ``phase``'s row (replacing an unflushed one of the same phase)."""
        value = None if phase.value is None else float(phase.value)
        if value is not None and not math.isfinite(value):
            value = None
        key = (phase.experiment_id, phase.number, phase.index)
        self.phases[key] = (
            *key,
            int(phase.parameter_id),
            phase.attempt,
            dumps(phase.params),
            phase.status._value_,
            value,
            dumps(phase.metrics) if phase.metrics else "{}",
            phase.error,
            phase.created_at,
            phase.finished_at,
        )

    def add_report(self, experiment_id: str, number: int, report: Report) -> None:
        """Buffer one intermediate report; a step or time that is not a number fails here."""
        step = report.step if type(report.step) is int else int(report.step)
        metrics = dumps(report.metrics)
        self.reports.append(
            (experiment_id, number, report.attempt, step, metrics, float(report.time))
        )

    def add_imported(
        self, experiment_id: str, params: dict[str, Any], value: float, metrics: dict[str, Any]
    ) -> None:
        """Buffer one imported result."""
        row = (experiment_id, dumps(params), float(value), dumps(metrics), self._clock())
        self.imported.append(row)

    def update_experiment(self, experiment_id: str, fields: dict[str, Any]) -> None:
        """Merge ``fields`` into the experiment's pending update."""
        unknown = sorted(set(fields) - EXPERIMENT_FIELDS)
        if unknown:
            raise TypeError(
                f"update_experiment: cannot change {', '.join(unknown)}; "
                f"allowed fields are {', '.join(sorted(EXPERIMENT_FIELDS))}"
            )
        values = dict(fields)
        if "name" in values:  # a renamed experiment no longer holds a name uniquely
            values["unique_name"] = None
        if "status" in values:
            values["status"] = ExperimentStatus(values["status"]).value
        if "options" in values:  # kept in the ``config`` column
            values["config"] = values.pop("options").model_dump(mode="json")
        for name in ("config", "space"):
            if name in values:
                dumps(values[name])  # fail now, not at flush, if it is not JSON
        self.experiments.setdefault(experiment_id, {}).update(values)

    def finish_control(self, control_id: int, outcome: ControlOutcome) -> None:
        """Buffer the outcome of a control request."""
        self.controls[control_id] = (
            self._clock(),
            outcome.applied,
            outcome.message,
            outcome.trial,
            control_id,
        )

    def drop(self, experiment_id: str) -> None:
        """Forget the waiting rows of one experiment (its driver lost the right to write)."""
        self.trials = {k: v for k, v in self.trials.items() if k[0] != experiment_id}
        self.phases = {k: v for k, v in self.phases.items() if k[0] != experiment_id}
        self.reports = [row for row in self.reports if row[0] != experiment_id]
        self.events = [row for row in self.events if row[0] != experiment_id]
        self.imported = [row for row in self.imported if row[0] != experiment_id]
        self.experiments.pop(experiment_id, None)
        self.forget(experiment_id)

    def forget(self, experiment_id: str) -> None:
        """Drop what was put for a deleted experiment (its trials count as unseen again).

        May run on another thread than ``put_trial``: it iterates over a copy of the keys.
        """
        for key in list(self._last):
            if key[0] == experiment_id:
                self._last.pop(key, None)

    def write(self, conn: Connection) -> None:
        """Execute every pending row on ``conn``, inside the caller's transaction."""
        for experiment_id, values in self.experiments.items():
            conn.execute(
                update(experiments).where(experiments.c.id == experiment_id).values(**values)
            )
        self._upsert_trials.execute(conn, list(self.trials.values()))
        self._upsert_phases.execute(conn, list(self.phases.values()))
        self._insert_events.execute(conn, self.events)
        self._insert_reports.execute(conn, self.reports)
        self._insert_imported.execute(conn, self.imported)
        self._finish_controls.execute(conn, list(self.controls.values()))

    def clear(self) -> None:
        """Forget the pending rows, once they are committed."""
        self.trials = {}
        self.phases = {}
        self.reports = []
        self.events = []
        self.imported = []
        self.experiments = {}
        self.controls = {}
