"""The largest experiment hyperlab allows, for the tests and the benchmark of bounded requests: a
search space at every limit of ``hyperlab.space`` (``MAX_PARAMETERS`` parameters, a choice of
``MAX_OPTIONS`` options, choices nested ``MAX_NESTING`` levels, close to ``MAX_SPACE_SIZE``
characters of JSON), and trials written directly through the store API (as a driver would),
each with a value for every parameter, final metrics and a few reports."""

from __future__ import annotations

import json
import random
from typing import Any

from hyperlab.config import ExperimentOptions
from hyperlab.space import MAX_NESTING, MAX_OPTIONS, MAX_PARAMETERS, MAX_SPACE_SIZE, SearchSpace
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Report, Trial, TrialStatus

T0 = 1_700_000_000.0
BIG = "big"
"""The choice of ``MAX_OPTIONS`` options."""
NESTED = "nested"
"""The top of the choices nested ``MAX_NESTING`` levels."""
CHOICE_OPTIONS = 120
"""Options of each of the other choices (enough for the space to near its size limit)."""


def _nested(level: int) -> dict[str, Any]:
    leaf = {"_type": "uniform", "_value": [0, 1]}
    sub = leaf if level == MAX_NESTING else _nested(level + 1)
    return {"_type": "choice", "_value": [{"_name": f"deep{level}", "sub": sub}, {"_name": "off"}]}


def largest_space() -> dict[str, Any]:
    """A search space at each of the limits (and valid: ``SearchSpace`` takes it)."""
    space: dict[str, Any] = {
        BIG: {"_type": "choice", "_value": [f"option-{i:05d}" for i in range(MAX_OPTIONS)]},
        NESTED: _nested(1),
    }
    count = 2 + MAX_NESTING  # the big choice, the nested choices and their leaf
    i = 0
    while count < MAX_PARAMETERS:
        if i % 2:
            options = [f"c{i}-{j:03d}" for j in range(CHOICE_OPTIONS)]
            space[f"p{i:04d}"] = {"_type": "choice", "_value": options}
        else:
            space[f"p{i:04d}"] = {"_type": "loguniform", "_value": [1e-6, 1.0]}
        count += 1
        i += 1
    size = len(json.dumps(space, separators=(",", ":")))
    assert 0.7 * MAX_SPACE_SIZE < size <= MAX_SPACE_SIZE, size
    SearchSpace(space)  # within every limit
    return space


def _params(space: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for name, spec in space.items():
        if name == NESTED:
            params[name] = {"_name": "off"}
        elif spec["_type"] == "choice":
            params[name] = rng.choice(spec["_value"])
        else:
            params[name] = 10 ** rng.uniform(-6, 0)
    return params


def write_largest(store: Store, experiment_id: str, n_trials: int, *, seed: int = 1) -> None:
    """Create the experiment over ``largest_space()`` and write ``n_trials`` trials: most
    succeeded (a loss and an accuracy), some failed, each with three reports."""
    space = largest_space()
    store.create_experiment(
        ExperimentRecord(
            experiment_id,
            "largest",
            ExperimentStatus.DONE,
            ExperimentOptions(metric="loss"),
            space,
            seed,
            None,
            T0,
        )
    )
    rng = random.Random(seed)
    for number in range(n_trials):
        params = _params(space, rng)
        failed = number % 10 == 9
        loss = None if failed else rng.random() + int(params[BIG][-5:]) / MAX_OPTIONS
        metrics = {} if loss is None else {"loss": loss, "acc": 1 / (1 + loss)}
        store.put_trial(
            Trial(
                experiment_id,
                number,
                params,
                TrialStatus.FAILED if failed else TrialStatus.SUCCEEDED,
                1,
                loss,
                metrics,
                (),
                "boom" if failed else None,
                number,
                T0 + number,
                T0 + number,
                T0 + number + 1 + rng.random(),
                None,
                None,
            )
        )
        for step in range(3):
            report = Report(step, {"loss": (loss or 1.0) + 1 / (step + 1)}, T0 + number, 1)
            store.add_report(experiment_id, number, report)
        if number % 500 == 499:
            store.flush()
    store.flush()
