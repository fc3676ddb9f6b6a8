"""An assessor's pause and resume on the real cluster: the paused trial's checkpoint comes back
to the driver, and its resumed run (on whichever actor gets it) continues from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab import CommandTrial
from tests.checkpoints import objectives
from tests.checkpoints.test_pause_resume import (
    SCRIPT,
    STEPS,
    _fresh_record,  # noqa: F401 - the autouse fixture that clears the assessor's record
    check_paused_then_resumed,
    run,
)
from tests.executors.harness import PYTHON

pytest.importorskip("ray", reason="the ray extra is not installed")
pytestmark = pytest.mark.slow


def test_paused_function_trials_continue_from_their_checkpoints(
    cluster: Any, tmp_path: Path
) -> None:
    # steps slow enough that the pause reaches the trial before it ends, even on a busy machine
    result = run(objectives.count, "ray", tmp_path, sleep=hyperlab.choice(0.2))
    check_paused_then_resumed(result)
    for trial in result.trials:
        assert [r.step for r in trial.reports] == list(range(STEPS))  # none twice
        assert trial.metrics["first"] > 3  # the resumed run began after the pause


def test_paused_command_trials_continue_with_one_stdout(cluster: Any, tmp_path: Path) -> None:
    result = run(CommandTrial(f"{PYTHON} {SCRIPT} {STEPS} 0.2 save"), "ray", tmp_path)
    check_paused_then_resumed(result)
    for trial in result.trials:
        assert [r.step for r in trial.reports] == list(range(STEPS))
        folder = tmp_path / result.experiment_id / "trials" / str(trial.number)
        lines = (folder / "stdout.log").read_text().splitlines()
        starts = [line for line in lines if line.startswith("start at")]
        assert starts[0] == "start at 0" and len(starts) == 2 and starts[1] != "start at 0"


def with_reporter(params: dict, reporter: Any) -> None:
    for step in range(3):
        reporter(loss=params["x"] + step)


def test_a_ray_tune_style_function_with_a_reporter_runs(cluster: Any) -> None:
    result = hyperlab.run(
        with_reporter,
        {"x": hyperlab.uniform(0, 1)},
        metric="loss",
        executor="ray",
        resources={"cpu": 0.5},
        max_trials=2,
        storage=":memory:",
        progress=False,
    )
    for trial in result.trials:
        assert [r.step for r in trial.reports] == [0, 1, 2]
        assert trial.value == pytest.approx(trial.params["x"] + 2)
