"""Optuna's log lines per finished trial, through ``optuna.logging``: the same script on the
real Optuna (where it is installed) and on hyperlab logs lines of the same form."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import hyperlab.compat.optuna as optuna


class Lines(logging.Handler):
    """Keeps the records' levels and messages."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[tuple[str, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append((record.levelname, record.getMessage()))


@pytest.fixture(autouse=True)
def verbosity() -> Iterator[None]:
    yield
    optuna.logging.set_verbosity(optuna.logging.INFO)
    optuna.logging.enable_default_handler()
    optuna.logging.disable_propagation()


def objective(module: ModuleType) -> Any:
    """A trial that completes, then one pruned (trial 2) and one failed (trial 3)."""

    def run(trial: Any) -> float:
        x = trial.suggest_float("x", -10, 10)
        n = trial.suggest_int("n", 1, 3)
        if trial.number == 2:
            trial.report(x, step=0)
            raise module.TrialPruned()
        if trial.number == 3:
            raise ValueError("no good")
        return x**2 + n

    return run


def trial_lines(module: ModuleType, **create: Any) -> list[tuple[str, str]]:
    """The trial lines (level, message) a 5-trial study logs, through a handler of the
    script's own on Optuna's logger."""
    handler = Lines()
    logger = module.logging.get_logger("optuna")
    logger.addHandler(handler)
    module.logging.disable_default_handler()
    level = module.logging.get_verbosity()
    module.logging.set_verbosity(module.logging.INFO)
    try:
        study = module.create_study(sampler=module.samplers.RandomSampler(seed=1), **create)
        study.optimize(objective(module), n_trials=5, catch=(ValueError,))
    finally:
        logger.removeHandler(handler)
        module.logging.enable_default_handler()
        module.logging.set_verbosity(level)
    return [line for line in handler.lines if line[1].startswith("Trial")]


def pattern(message: str) -> str:
    """The line with its numbers as ``N``: values and parameters may differ, not the words."""
    return re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", message)


def test_the_trial_lines_have_optunas_words_and_levels(tmp_path: Path) -> None:
    real = pytest.importorskip("optuna")
    theirs = trial_lines(real)
    ours = trial_lines(optuna, storage=f"sqlite:///{tmp_path / 's.db'}")
    assert [(level, pattern(m)) for level, m in ours] == [
        (level, pattern(m)) for level, m in theirs
    ]
    assert len(ours) == 6  # 3 finished, 1 pruned, 2 for the failed one


def test_the_lines_say_each_trial_and_the_best_so_far(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    lines = trial_lines(optuna, storage=url, study_name="s")
    study = optuna.load_study(study_name="s", storage=url)
    trials = study.trials
    first = trials[0]
    assert lines[0] == (
        "INFO",
        f"Trial 0 finished with value: {first.value} and parameters: {first.params}. "
        f"Best is trial 0 with value: {first.value}.",
    )
    best = min(trials[:2], key=lambda t: t.value or 0)
    assert lines[1][1].endswith(f"Best is trial {best.number} with value: {best.value}.")
    assert lines[2] == ("INFO", "Trial 2 pruned. ")
    assert lines[3][0] == "WARNING" and lines[3][1].startswith("Trial 3 failed with parameters: {")
    assert lines[3][1].endswith("because of the following error: ValueError('no good').")
    assert lines[4] == ("WARNING", "Trial 3 failed with value None.")


def test_the_default_handler_writes_optunas_form_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert optuna.logging.get_verbosity() == optuna.logging.INFO
    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 's.db'}")
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    err = capsys.readouterr().err.splitlines()
    found = [line for line in err if "Trial" in line]
    assert len(found) == 2
    assert re.fullmatch(
        r"\[I \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] Trial 1 finished with value: \S+ and "
        r"parameters: \{'x': \S+\}\. Best is trial \d with value: \S+\.",
        found[1],
    )

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    assert optuna.logging.get_verbosity() == optuna.logging.WARNING
    study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=2)
    assert "Trial" not in capsys.readouterr().err


def test_propagation_hands_the_lines_to_the_scripts_own_logging(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    optuna.logging.disable_default_handler()
    optuna.logging.enable_propagation()
    with caplog.at_level(logging.INFO):
        study = optuna.create_study(storage=f"sqlite:///{tmp_path / 's.db'}")
        study.optimize(lambda t: t.suggest_float("x", 0, 1), n_trials=1)
    assert [r.getMessage()[:25] for r in caplog.records if r.name == "hyperlab.compat.optuna"] == [
        "Trial 0 finished with val"
    ]
    assert "Trial" not in capsys.readouterr().err
