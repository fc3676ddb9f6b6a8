"""Reports are round trips whenever something listens: a decision acts at its report.

A trial that reports in a tight loop under an assessor that stops (or pauses) it at step 2 has
exactly three reports on every executor, however fast it reports; without a listener reports
stay one-way. An executor whose trials cannot wait for decisions is refused with an assessor.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab.assessors.base import Assessor, Decision
from hyperlab.executors import register_executor
from hyperlab.executors._threads import ThreadExecutor
from hyperlab.executors.base import Executor
from hyperlab.store import Store
from hyperlab.trial import Report, Trial

TIGHT = Path(__file__).with_name("tight.py")
EXECUTORS_HERE = ["inprocess", "threads", "processes", "command"]


class StopAtTwo(Assessor):
    """Stops every trial at its report of step 2."""

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        return Decision.STOP if report.step >= 2 else Decision.CONTINUE


def tight(params: dict, reporter: Any) -> None:
    for step in range(50):
        reporter(loss=params["x"] + step)


def objective_for(executor: str) -> Any:
    if executor == "command":
        return hyperlab.CommandTrial(f"{sys.executable} {TIGHT}")
    return tight


@pytest.mark.parametrize("executor", EXECUTORS_HERE)
def test_a_stop_acts_at_the_report_it_was_decided_on(executor, tmp_path):
    result = hyperlab.run(
        objective_for(executor),
        {"x": hyperlab.uniform(0, 1)},
        metric="loss",
        max_trials=3,
        executor=executor,
        assessor=StopAtTwo,
        storage=str(tmp_path / "store.db"),
        working_dir=tmp_path,
        seed=0,
        progress=False,
    )
    assert [(t.status.name, len(t.reports)) for t in result.trials] == [("EARLY_STOPPED", 3)] * 3
    assert all(t.value == t.params["x"] + 2 for t in result.trials)


def test_without_a_listener_reports_stay_one_way(tmp_path):
    result = hyperlab.run(
        tight,
        {"x": hyperlab.uniform(0, 1)},
        metric="loss",
        max_trials=2,
        executor="threads",
        storage=":memory:",
        progress=False,
    )
    assert [len(t.reports) for t in result.trials] == [50, 50]


class OneWay(ThreadExecutor):
    """A threads executor that does not answer its trials' requests."""

    name = "one-way"
    answer = Executor.answer


def test_an_assessor_on_an_executor_that_cannot_answer_is_refused_before_anything_runs(
    tmp_path,
):
    register_executor("one-way", OneWay)  # a unique name: it may stay registered
    with pytest.raises(hyperlab.ConfigError, match=r"'median' assessor.*'one-way' executor"):
        hyperlab.run(
            tight,
            {"x": hyperlab.uniform(0, 1)},
            metric="loss",
            max_trials=2,
            executor="one-way",
            assessor="median",
            storage=str(tmp_path / "store.db"),
            progress=False,
        )
    assert Store.open(str(tmp_path / "store.db")).list_experiments() == []
