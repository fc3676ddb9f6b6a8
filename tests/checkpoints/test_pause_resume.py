"""Pause and resume through ``hyperlab.run``, with real processes and commands: a paused trial
keeps its reports and checkpoint, and its resumed run continues where it stopped."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

import hyperlab
from hyperlab import CommandTrial, TrialStatus
from hyperlab.assessors.base import Action, Assessor, Decision, Resume
from hyperlab.trial import Report, Trial
from tests.checkpoints import objectives
from tests.executors.harness import PYTHON

SCRIPT = Path(__file__).parent / "scripts" / "count.py"
STEPS = 8


class PauseAtThree(Assessor):
    """Pauses every trial at its step 3, and resumes them all once ``trials`` are paused."""

    seen: ClassVar[list[tuple[int, TrialStatus]]] = []  # (number, status) of each on_end

    def __init__(self, *, trials: int, **kwargs) -> None:
        super().__init__(**kwargs)
        self.trials = trials
        self.paused: set[int] = set()
        self.resumed: set[int] = set()

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        if report.step == 3 and trial.number not in self.resumed:
            return Decision.PAUSE
        return Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        PauseAtThree.seen.append((trial.number, trial.status))
        if trial.status is TrialStatus.PAUSED:
            self.paused.add(trial.number)

    def actions(self, now: float) -> list[Action]:
        if len(self.paused) < self.trials or self.resumed:
            return []
        self.resumed = set(self.paused)
        return [Resume(number) for number in sorted(self.paused)]


@pytest.fixture(autouse=True)
def _fresh_record():
    PauseAtThree.seen.clear()


def run(objective, executor: str, tmp_path: Path, **space):
    return hyperlab.run(
        objective,
        {"steps": hyperlab.choice(STEPS), **space},
        metric="loss",
        assessor=PauseAtThree,
        assessor_args={"trials": 2},
        executor=executor,
        concurrency=2,
        max_trials=2,
        storage=str(tmp_path / "store.db"),
        working_dir=tmp_path,
        progress=False,
    )


def check_paused_then_resumed(result) -> None:
    paused = sorted(n for n, status in PauseAtThree.seen if status is TrialStatus.PAUSED)
    assert paused == [0, 1]  # each was PAUSED once, in the store as the assessor saw it
    for trial in result.trials:
        assert trial.status is TrialStatus.SUCCEEDED, trial.error
        assert trial.attempt == 1


@pytest.mark.parametrize("executor", ["processes", "inprocess", "threads"])
def test_paused_trials_continue_from_their_checkpoints(tmp_path, executor):
    result = run(objectives.count, executor, tmp_path, sleep=hyperlab.choice(0.01))
    check_paused_then_resumed(result)
    for trial in result.trials:
        assert [r.step for r in trial.reports] == list(range(STEPS))  # none twice
        assert trial.metrics["first"] > 3  # the resumed run began after the pause


def test_paused_command_trials_continue_with_one_stdout(tmp_path):
    command = CommandTrial(f"{PYTHON} {SCRIPT} {STEPS} 0.02 save")
    result = run(command, "command", tmp_path)
    check_paused_then_resumed(result)
    for trial in result.trials:
        assert [r.step for r in trial.reports] == list(range(STEPS))
        folder = tmp_path / result.experiment_id / "trials" / str(trial.number)
        lines = (folder / "stdout.log").read_text().splitlines()
        starts = [line for line in lines if line.startswith("start at")]
        assert starts[0] == "start at 0" and len(starts) == 2 and starts[1] != "start at 0"
        assert [line for line in lines if line.startswith("step")] == [
            f"step {step}" for step in range(STEPS)
        ]


@pytest.mark.parametrize("executor", ["processes", "command"])
def test_a_paused_trial_without_a_checkpoint_restarts_from_step_zero(tmp_path, executor):
    objective = (
        CommandTrial(f"{PYTHON} {SCRIPT} {STEPS} 0.02 nosave")
        if executor == "command"
        else objectives.count_without_checkpoints
    )
    result = run(objective, executor, tmp_path, sleep=hyperlab.choice(0.01))
    check_paused_then_resumed(result)
    for trial in result.trials:
        steps = [r.step for r in sorted(trial.reports, key=lambda r: r.time)]  # in run order
        restart = steps.index(0, 1)  # the resumed run counts again from 0: the cost shows
        assert steps[:restart] == list(range(restart)) and restart >= 4
        assert steps[restart:] == list(range(STEPS))
