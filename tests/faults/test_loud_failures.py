"""Defect 6, failures looked like success: an experiment whose first trials all fail the same way
ends in ERROR at once and ``run`` raises ``TrialError`` quoting the failure; one in which some
trials fail returns and counts them."""

from __future__ import annotations

import pytest

import hyperlab
from hyperlab import ExperimentStatus, TrialError, TrialStatus
from tests.faults import objectives

pytestmark = pytest.mark.faults

SPACE = {"x": hyperlab.uniform(0, 1)}


def test_an_objective_that_always_raises_stops_after_the_first_trials(tmp_path):
    storage = str(tmp_path / "raises.db")
    with pytest.raises(TrialError) as caught:
        hyperlab.run(
            objectives.always_raises,
            SPACE,
            max_trials=50,
            executor="threads",
            concurrency=4,
            storage=storage,
            progress=False,
        )
    result = caught.value.result
    assert result.status is ExperimentStatus.ERROR
    message = str(caught.value)
    assert "the first 4 trials all failed with ValueError" in message  # max(3, concurrency)
    # while those 4 fail, a trial whose slot is free may start: at most concurrency - 1 more
    assert 4 <= len(result.trials) <= 4 + 3
    assert {t.status for t in result.trials} <= {TrialStatus.FAILED, TrialStatus.SYS_CANCELED}
    quotes = [f"Trial {t.number}'s error:\n{t.error.strip()}" for t in result.failed_trials]
    assert any(quote in message for quote in quotes), message  # a failed trial's traceback
    assert "Traceback (most recent call last)" in message
    assert "in always_raises" in message and "ValueError: cannot evaluate x=" in message
    loaded = hyperlab.load(result.experiment_id, storage=storage)
    assert loaded.status is ExperimentStatus.ERROR
    assert loaded.failures() == {"ValueError": len(loaded.failed_trials)}


def test_a_wrong_metric_name_stops_after_three_trials(tmp_path):
    storage = str(tmp_path / "metric.db")
    with pytest.raises(TrialError, match="metric 'loss' is missing") as caught:
        hyperlab.run(
            objectives.wrong_metric,
            SPACE,
            metric="loss",
            max_trials=50,
            storage=storage,
            progress=False,
        )
    result = hyperlab.load(caught.value.result.experiment_id, storage=storage)
    assert result.status is ExperimentStatus.ERROR
    assert [t.status for t in result.trials] == [TrialStatus.FAILED] * 3


def test_without_fail_fast_every_trial_runs_and_run_still_raises(tmp_path):
    with pytest.raises(TrialError, match="none of its trials succeeded") as caught:
        hyperlab.run(
            objectives.always_raises,
            SPACE,
            max_trials=8,  # fewer than max_failed_trials (10 in a row)
            fail_fast=False,
            storage=str(tmp_path / "nofailfast.db"),
            progress=False,
        )
    result = caught.value.result
    assert [t.status for t in result.trials] == [TrialStatus.FAILED] * 8


def test_some_failures_return_a_result_that_counts_them(tmp_path):
    result = hyperlab.run(
        objectives.raises_on_odd,
        {"i": hyperlab.choice(*range(10))},
        tuner="grid",
        storage=str(tmp_path / "some.db"),
        progress=False,
    )
    assert result.status is ExperimentStatus.DONE
    assert len(result.trials) == 10
    assert result.failures() == {"RuntimeError": 5}
    assert result.best_value == 0.0
