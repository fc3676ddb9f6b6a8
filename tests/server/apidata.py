"""Experiments for the REST API's tests, written directly through the store (as a driver would):
many trials in every status, with parameters of every kind, final metrics of odd types, and
intermediate reports over several attempts; and a Python reference of the trial filters and
sorts, to check the server's SQL against."""

from __future__ import annotations

import math
import os
import random
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from hyperlab.config import ExperimentOptions
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Mode, Report, Trial, TrialStatus
from tests.conftest import POSTGRES_URL

SPACE = {
    "lr": {"_type": "loguniform", "_value": [1e-5, 1e-1]},
    "layers": {"_type": "randint", "_value": [1, 9]},
    "opt": {"_type": "choice", "_value": ["sgd", "adam", "rmsprop", None]},
    "block": {
        "_type": "choice",
        "_value": [
            {"_name": "conv", "kernel": {"_type": "randint", "_value": [1, 4]}},
            {"_name": "skip"},
        ],
    },
    "dropout": {"_type": "uniform", "_value": [0, 0.5]},
}
OPTIONS = ("sgd", "adam", "rmsprop", None)
STATUSES = (
    [TrialStatus.SUCCEEDED] * 10
    + [TrialStatus.FAILED] * 2
    + [TrialStatus.EARLY_STOPPED] * 2
    + [TrialStatus.PAUSED, TrialStatus.RUNNING, TrialStatus.WAITING, TrialStatus.USER_CANCELED]
)
T0 = 1_700_000_000.0


def record(experiment_id: str, *, mode: Mode = Mode.MIN, seed: int = 3) -> ExperimentRecord:
    """A finished experiment over ``SPACE`` whose objective is the metric ``loss``."""
    return ExperimentRecord(
        experiment_id,
        "api",
        ExperimentStatus.DONE,
        ExperimentOptions(metric="loss", mode=mode),
        SPACE,
        seed,
        None,
        T0,
    )


def make_trial(experiment_id: str, number: int, rng: random.Random) -> Trial:
    """Trial ``number``: its loss depends mostly on lr; statuses cycle through ``STATUSES``."""
    block: dict[str, Any] = {"_name": "skip"}
    if rng.random() < 0.5:
        block = {"_name": "conv", "kernel": rng.randrange(1, 4)}
    params = {
        "lr": 10 ** rng.uniform(-5, -1),
        "layers": rng.randrange(1, 9),
        "opt": rng.choice(OPTIONS),
        "block": block,
        "dropout": rng.uniform(0, 0.5),
    }
    status = STATUSES[number % len(STATUSES)]
    loss = abs(math.log10(params["lr"]) + 3) + params["dropout"] + rng.random() * 0.01
    started = None if status is TrialStatus.WAITING else T0 + number
    finished = None if not status.is_finished() else T0 + number + rng.uniform(1, 100)
    value = loss if status in (TrialStatus.SUCCEEDED, TrialStatus.EARLY_STOPPED) else None
    metrics: dict[str, Any] = {}
    if value is not None:
        metrics = {"loss": loss, "acc": 1 / (1 + loss)}
        if number % 7 == 0:
            metrics["acc"] = math.nan  # stored as "NaN": reads as missing
        if number % 11 == 0:
            metrics["note"] = "text"
    return Trial(
        experiment_id,
        number,
        params,
        status,
        2 if number % 13 == 0 else 1,
        value,
        metrics,
        (),
        "boom" if status is TrialStatus.FAILED else None,
        number,
        T0 + number,
        started,
        finished,
        None,
        "custom" if number % 9 == 4 else None,
    )


def write_experiment(
    store: Store,
    experiment_id: str,
    n: int,
    *,
    mode: Mode = Mode.MIN,
    reports: int = 3,
    seed: int = 1,
) -> list[Trial]:
    """Create the experiment and write ``n`` trials with their reports, as a driver would."""
    store.create_experiment(record(experiment_id, mode=mode))
    rng = random.Random(seed)
    written = []
    for number in range(n):
        trial = make_trial(experiment_id, number, rng)
        store.put_trial(trial)
        if trial.status is not TrialStatus.WAITING:
            for attempt in range(1, trial.attempt + 1):
                for step in range(reports):
                    loss = (trial.value or 1.0) + 1.0 / (step + 1) + (attempt - 1)
                    at = (trial.started_at or T0) + step
                    store.add_report(
                        experiment_id, number, Report(step, {"loss": loss}, at, attempt)
                    )
        written.append(trial)
        if number % 5000 == 4999:
            store.flush()
    store.flush()
    return written


def finish(store: Store, trial: Trial, value: float, *, at: float | None = None) -> Trial:
    """Write ``trial`` as succeeded with ``value`` (a later status change)."""
    done = replace(
        trial,
        status=TrialStatus.SUCCEEDED,
        value=value,
        metrics={"loss": value, "acc": 1 / (2 + abs(value))},
        finished_at=at if at is not None else time.time(),
        started_at=trial.started_at or T0,
    )
    store.put_trial(done)
    store.flush()
    return done


# ---- a Python reference of the server's filters and sorts -------------------------------------


def number_of(value: Any) -> float | None:
    """A JSON value as the server reads a number: None unless a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def duration(trial: Trial) -> float | None:
    if trial.started_at is None or trial.finished_at is None:
        return None
    return trial.finished_at - trial.started_at


def option_index(value: Any) -> int | None:
    if isinstance(value, dict):
        value = value.get("_name")
        return {"conv": 0, "skip": 1}.get(value)
    return OPTIONS.index(value) if value in OPTIONS else None


@dataclass(frozen=True)
class Ref:
    """What the server should answer for one query: a predicate and a sort key."""

    keep: Callable[[Trial], bool]
    key: Callable[[Trial], float | None]
    descending: bool = False

    def numbers(self, trials: list[Trial]) -> list[int]:
        kept = [t for t in trials if self.keep(t)]
        present = [t for t in kept if self.key(t) is not None]
        missing = [t for t in kept if self.key(t) is None]
        sign = -1.0 if self.descending else 1.0
        present.sort(key=lambda t: (sign * float(self.key(t) or 0.0), t.number))
        missing.sort(key=lambda t: t.number)
        return [t.number for t in present + missing]


def everything(trial: Trial) -> bool:
    return True


# ---- module-scoped stores ---------------------------------------------------------------------


@contextmanager
def module_storage(backend: str, folder: Any, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new, empty database for a whole test module: a SQLite file in ``folder``, or a
    PostgreSQL schema of its own (dropped afterwards)."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'api.db'}"
        return
    admin = request.getfixturevalue("postgres_admin")
    schema = f"hl_api_{os.getpid()}_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema}"})
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))


BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
