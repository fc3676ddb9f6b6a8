"""A research written straight into a store, as the research engine would leave it: 2 configs x
3 repetitions x 4 iterations, for the tests of results, ``load_research`` and the CLI.

- trial number = config index * 3 + repetition; params = the config's aliases + repetition;
- ``loss`` saved at every iteration, ``acc`` at iterations 1 and 3, ``shape`` (a list) at 0;
- trial 4 re-ran after a crash: attempt 1 left reports of iterations 0 and 1 (loss 99) and
  profile lines, attempt 2 ran all four iterations;
- trial 5 FAILED after iterations 0 and 1;
- each trial's folder holds ``profile.jsonl`` (units ``train`` and ``test``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hyperlab.config import validate_options
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Report, Trial, TrialStatus

CONFIGS = [{"lr": 0.1, "model": "SGD"}, {"lr": 0.01, "model": "Adam"}]
N_REPS = 3
N_ITERS = 4
RERUN = 4
FAILED = 5
FAILED_ITERS = 2


def loss(config: int, repetition: int, iteration: int) -> float:
    return 1.0 / (iteration + 1) + 0.1 * repetition**2 + 0.5 * config


def acc(config: int, repetition: int, iteration: int) -> float:
    return 0.5 + 0.1 * iteration - 0.05 * repetition + 0.2 * config


def unit_time(number: int, iteration: int, unit: str) -> float:
    return (0.01 if unit == "train" else 0.002) * (1 + number) + 0.001 * iteration


def research_record(
    experiment_id: str = "grid0001", name: str = "grid", **research: Any
) -> ExperimentRecord:
    """The record of the research, ``research`` replacing some of its research options."""
    options = validate_options(
        name=name,
        max_trials=len(CONFIGS) * N_REPS,  # a research's budget: all its config x repetitions
        research={
            "n_iters": N_ITERS,
            "n_configs": len(CONFIGS),
            "n_reps": N_REPS,
            "workers": 2,
            "branches": 1,
            "units": ["train", "test"],
            "variables": ["loss", "acc", "shape"],
            "config_keys": ["lr", "model"],
            "profile": True,
            "domain": "Option('lr', [0.1, 0.01]) @ Option('model', ['SGD', 'Adam'])",
            **research,
        },
    )
    return ExperimentRecord(
        id=experiment_id,
        name=name,
        status=ExperimentStatus.DONE,
        options=options,
        space={},
        seed=7,
        objective=None,
        created_at=1_700_000_000.0,
        started_at=1_700_000_001.0,
        finished_at=1_700_000_100.0,
    )


def _metrics(config: int, repetition: int, iteration: int) -> dict[str, object]:
    metrics: dict[str, object] = {"loss": loss(config, repetition, iteration)}
    if iteration in (1, 3):
        metrics["acc"] = acc(config, repetition, iteration)
    if iteration == 0:
        metrics["shape"] = [2, 2]
    return metrics


def write_research(store: Store, experiment_id: str = "grid0001", name: str = "grid") -> None:
    """Create the research described in the module docstring in ``store``."""
    record = research_record(experiment_id, name)
    store.create_experiment(record)
    trials_dir = store.experiment_folder(record) / "trials"
    for c, config in enumerate(CONFIGS):
        for rep in range(N_REPS):
            number = c * N_REPS + rep
            attempt = 2 if number == RERUN else 1
            iters = FAILED_ITERS if number == FAILED else N_ITERS
            profile: list[dict[str, object]] = []
            if number == RERUN:  # the crashed first attempt
                for it in range(2):
                    report = Report(it, {"loss": 99.0, "acc": 99.0}, 1_700_000_010.0 + it, 1)
                    store.add_report(experiment_id, number, report)
                    profile.append(
                        {"iteration": it, "unit": "train", "time": 9.0, "calls": 1, "attempt": 1}
                    )
            last: dict[str, object] = {}
            for it in range(iters):
                metrics = _metrics(c, rep, it)
                last.update(metrics)
                at = 1_700_000_020.0 + it
                store.add_report(experiment_id, number, Report(it, metrics, at, attempt))
                for unit in ("train", "test"):
                    time = unit_time(number, it, unit)
                    profile.append(
                        {
                            "iteration": it,
                            "unit": unit,
                            "time": time,
                            "calls": 1,
                            "attempt": attempt,
                        }
                    )
            failed = number == FAILED
            store.put_trial(
                Trial(
                    experiment_id=experiment_id,
                    number=number,
                    params={**config, "repetition": rep},
                    status=TrialStatus.FAILED if failed else TrialStatus.SUCCEEDED,
                    attempt=attempt,
                    metrics=last,
                    error="Traceback (most recent call last):\nValueError: diverged"
                    if failed
                    else None,
                    started_at=1_700_000_002.0,
                    finished_at=1_700_000_050.0,
                )
            )
            folder = trials_dir / str(number)
            folder.mkdir(parents=True, exist_ok=True)
            lines = "".join(json.dumps(line) + "\n" for line in profile)
            (folder / "profile.jsonl").write_text(lines)
    store.flush()


def write_experiment(store: Store, experiment_id: str = "plain001") -> ExperimentRecord:
    """An ordinary (non-research) experiment with one finished trial."""
    record = ExperimentRecord(
        id=experiment_id,
        name="plain",
        status=ExperimentStatus.DONE,
        options=validate_options(name="plain", metric="loss"),
        space={"x": {"_type": "uniform", "_value": [0, 1]}},
        seed=1,
        objective=None,
        created_at=1_600_000_000.0,
    )
    store.create_experiment(record)
    trial = Trial(
        experiment_id, 0, {"x": 0.5}, TrialStatus.SUCCEEDED, value=0.25, metrics={"loss": 0.25}
    )
    store.put_trial(trial)
    store.flush()
    return record


def trial_folder(store: Store, experiment_id: str) -> Path:
    return store.experiment_folder(store.get_experiment(experiment_id))
