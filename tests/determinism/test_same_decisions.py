"""The same seed gives the same decisions on every executor.

At concurrency 1, an experiment whose trials' reports depend only on their parameters gives
the same trial table on ``inprocess``, ``threads``, ``processes`` and ``command``: statuses,
attempts, parents (population based training's branches), every report (step and value),
final values, and so every decision of the assessor (median stops, ASHA's and Hyperband's
pauses and promotions, PBT's branches). Reports are round trips whenever an assessor listens,
so a decision takes effect at the report it was made on, however fast the trial reports.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import hyperlab
from tests.determinism.curve import STEPS, curve

SCRIPT = Path(__file__).with_name("curve.py")
EXECUTORS = ["inprocess", "threads", "processes", "command"]
ASSESSORS = {
    "median": {"start_step": 2},
    "asha-stop": {"min_resource": 1, "max_resource": STEPS, "reduction_factor": 3},
    "asha-promotion": {
        "min_resource": 1,
        "max_resource": STEPS,
        "reduction_factor": 3,
        "variant": "promotion",
    },
    "hyperband": {"min_resource": 1, "max_resource": STEPS, "reduction_factor": 3},
    "pbt": {"population_size": 2, "perturbation_interval": 4, "synch": True},
}
CONCURRENCY = {"pbt": 2}  # synchronous PBT judges its whole population at once
SPACE = {"x": hyperlab.uniform(0, 1), "y": hyperlab.uniform(0, 1)}


def table(assessor: str, executor: str, tmp_path: Path) -> list[tuple]:
    """The trial table of one run: everything a decision changes."""
    objective = curve
    if executor == "command":
        objective = hyperlab.CommandTrial(f"{sys.executable} {SCRIPT}")
    result = hyperlab.run(
        objective,
        SPACE,
        metric="loss",
        mode="min",
        tuner="random",
        assessor=assessor.split("-")[0],
        assessor_args=ASSESSORS[assessor],
        executor=executor,
        concurrency=CONCURRENCY.get(assessor, 1),
        max_trials=10,
        seed=7,
        storage=str(tmp_path / f"{executor}.db"),
        working_dir=tmp_path / executor,
        progress=False,
    )
    rows = []
    for trial in sorted(result.trials, key=lambda t: t.number):
        reports = [(r.attempt, r.step, r.metrics["loss"]) for r in trial.reports]
        rows.append(
            (
                trial.number,
                trial.params,
                trial.status.name,
                trial.attempt,
                trial.parent,
                reports,
                trial.value,
            )
        )
    return rows


@pytest.mark.slow
@pytest.mark.parametrize("assessor", list(ASSESSORS))
def test_every_executor_gives_the_same_table(assessor, tmp_path):
    tables = {executor: table(assessor, executor, tmp_path) for executor in EXECUTORS}
    reference = tables["inprocess"]
    statuses = {row[2] for row in reference}
    assert statuses - {"SUCCEEDED"}, f"{assessor} decided nothing: {reference}"
    for executor in EXECUTORS[1:]:
        assert tables[executor] == reference, executor
