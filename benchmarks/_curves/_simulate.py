"""Contenders replayed over a task's cached curves, one trial at a time, in simulated time.

``run_hyperlab`` plays the driver's part for one of hyperlab's assessors exactly as the
driver's loop does at concurrency 1: a new trial after the one before has ended or paused,
resumed trials first (a scheduler's ``Resume`` goes to the front of the queue), ``Stop`` ends a
paused trial, and once the last configuration was created the assessor hears
``on_no_more_trials``. ``run_optuna`` runs a real Optuna study with the pruner, each trial
reporting its configuration's curve at steps 1, 2, ... (the epochs trained, as hyperlab's
resource ``step + 1``). Both count every epoch trained, resumed trials included.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperlab.assessors import Resume, Stop, create_assessor
from hyperlab.assessors.base import Decision
from hyperlab.space import SearchSpace
from hyperlab.trial import Report, Trial, TrialStatus


@dataclass
class Run:
    """One contender on one task and seed.

    Attributes:
        best: The best score found: the largest last score of a trial (the model it ended or
            was stopped with).
        epochs: The epochs trained.
        trace: ``trace[e]``: the best found after ``e + 1`` epochs trained.
    """

    best: float
    epochs: int
    trace: list[float]

    def best_after(self, epochs: int) -> float:
        """The best found once ``epochs`` epochs were trained (the final best beyond them)."""
        if epochs <= 0 or not self.trace:
            return -math.inf
        return self.trace[min(epochs, len(self.trace)) - 1]


class _Tracker:
    def __init__(self, trials: int) -> None:
        self.latest = np.full(trials, -np.inf)
        self.trace: list[float] = []

    def trained(self, number: int, score: float) -> None:
        self.latest[number] = score
        self.trace.append(float(self.latest.max()))

    def run(self) -> Run:
        return Run(float(self.latest.max()), len(self.trace), self.trace)


def run_hyperlab(
    assessor: str | None,
    args: dict[str, Any],
    scores: np.ndarray,
    configs: list[dict[str, Any]],
    space: dict[str, Any],
    seed: int,
) -> Run:
    """Replay ``scores`` (trials x epochs) under hyperlab's ``assessor`` (None: no stopping)."""
    trials, epochs = scores.shape
    track = _Tracker(trials)
    if assessor is None:
        for number in range(trials):
            for epoch in range(epochs):
                track.trained(number, float(scores[number, epoch]))
        return track.run()
    judge = create_assessor(
        assessor, mode="max", metric="score", seed=seed,
        space=SearchSpace.coerce(space), args=dict(args),
    )  # fmt: skip
    done = [0] * trials
    reports: list[list[Report]] = [[] for _ in range(trials)]

    def record(number: int, status: TrialStatus) -> Trial:
        last = reports[number][-1].metrics if reports[number] else {}
        return Trial(
            experiment_id="bench", number=number, params=configs[number], status=status,
            reports=tuple(reports[number]), metrics=dict(last),
            value=last.get("score") if status is TrialStatus.SUCCEEDED else None,
        )  # fmt: skip

    queue: deque[int] = deque()
    paused: set[int] = set()
    created, now = 0, 0.0
    while True:
        spent = created >= trials
        if spent:
            judge.on_no_more_trials(trials, now)
        for action in judge.actions(now):
            if isinstance(action, Resume) and action.number in paused:
                paused.discard(action.number)
                queue.appendleft(action.number)
            elif isinstance(action, Stop) and action.number in paused:
                paused.discard(action.number)
                judge.on_end(record(action.number, TrialStatus.EARLY_STOPPED), now)
        if queue:
            number = queue.popleft()
        elif not spent and judge.admits_new_trial(created):
            number, created = created, created + 1
        else:
            break
        judge.on_start(record(number, TrialStatus.RUNNING), now)
        status = TrialStatus.SUCCEEDED
        for epoch in range(done[number], epochs):
            score = float(scores[number, epoch])
            now += 1.0
            done[number] = epoch + 1
            track.trained(number, score)
            report = Report(step=epoch, metrics={"score": score}, time=now)
            reports[number].append(report)
            decision = judge.on_report(record(number, TrialStatus.RUNNING), report, now)
            if decision is Decision.STOP:
                status = TrialStatus.EARLY_STOPPED
                break
            if decision is Decision.PAUSE and epoch + 1 < epochs:
                status = TrialStatus.PAUSED
                break
        if status is TrialStatus.PAUSED:
            paused.add(number)
        judge.on_end(record(number, status), now)
    return track.run()


def optuna_pruner(name: str, epochs: int) -> Any:
    """Optuna's pruner ``name`` with its defaults (the end of training, ``max_resource``,
    given to ``HyperbandPruner`` as a user who knows it would)."""
    import optuna

    if name == "optuna-median":
        return optuna.pruners.MedianPruner()
    if name == "optuna-sha":
        return optuna.pruners.SuccessiveHalvingPruner()
    if name == "optuna-hyperband":
        return optuna.pruners.HyperbandPruner(max_resource=epochs)
    raise ValueError(f"unknown Optuna contender {name!r}")


def run_optuna(name: str, scores: np.ndarray, seed: int) -> Run:
    """Replay ``scores`` in an Optuna study with the pruner ``name``; trial ``k`` trains
    configuration ``k`` (the configurations were drawn from the same space with the same seed
    as hyperlab's)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    trials, epochs = scores.shape
    track = _Tracker(trials)

    def objective(trial: Any) -> float:
        number = trial.number
        score = -math.inf
        for epoch in range(epochs):
            score = float(scores[number, epoch])
            track.trained(number, score)
            trial.report(score, epoch + 1)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return score

    study = optuna.create_study(
        direction="maximize",
        sampler=optuna.samplers.RandomSampler(seed=seed),
        pruner=optuna_pruner(name, epochs),
        study_name=f"seed-{seed}",  # HyperbandPruner deals trials to brackets by this name
    )
    study.optimize(objective, n_trials=trials)
    return track.run()
