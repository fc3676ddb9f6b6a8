"""``max_duration`` reached while Ray trials run: they end SYS_CANCELED, at their next report or,
for one that does not report, when its actor is killed after ``stop_grace`` (5 s)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from hyperlab import ExperimentStatus, TrialStatus
from tests.executors.test_max_duration import STEPS, run_until_budget_hits

pytest.importorskip("ray", reason="the ray extra is not installed")

pytestmark = pytest.mark.slow


def test_ray_trials_running_when_max_duration_is_reached_end_sys_canceled(
    cluster: Any, tmp_path
) -> None:
    running, result = run_until_budget_hits("ray", "chatty", str(tmp_path / "db.sqlite"))
    assert result.status is ExperimentStatus.DONE
    assert [t.number for t in result.trials] == [t.number for t in running]
    for trial in result.trials:
        assert trial.status is TrialStatus.SYS_CANCELED, (trial.number, trial.status)
        assert 0 < len(trial.reports) < STEPS


def test_a_silent_ray_trial_is_killed_after_the_grace(cluster: Any, tmp_path) -> None:
    started = time.monotonic()
    running, result = run_until_budget_hits("ray", "silent", str(tmp_path / "db.sqlite"))
    assert time.monotonic() - started < 50  # not its minute
    assert result.status is ExperimentStatus.DONE
    assert [t.number for t in result.trials] == [t.number for t in running]
    assert all(t.status is TrialStatus.SYS_CANCELED for t in result.trials)
