"""The driver's trial records: a new trial (its number's seed, its creation time), the same
trial started and ended, and the ``TrialSpec`` an executor runs it from.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from hyperlab.executors.base import TrialSpec
from hyperlab.experiment._clock import Clock
from hyperlab.trial import Trial, TrialStatus

__all__ = ["SEED_BLOCK", "TrialRecords", "TrialSeeds"]

SEED_BLOCK = 256


class TrialSeeds:
    """Trial ``n``'s seed: a 32-bit value derived from the experiment's seed and ``n`` alone.

    Seeds are drawn ``SEED_BLOCK`` at a time from ``SeedSequence(seed, spawn_key=(1, block))``.
    """

    def __init__(self, experiment_seed: int) -> None:
        self.experiment_seed = experiment_seed
        self._block = -1
        self._seeds: list[int] = []

    def __call__(self, number: int) -> int:
        block, index = divmod(number, SEED_BLOCK)
        if block != self._block:
            sequence = np.random.SeedSequence(self.experiment_seed, spawn_key=(1, block))
            self._seeds = sequence.generate_state(SEED_BLOCK).tolist()
            self._block = block
        return self._seeds[index]


class TrialRecords:
    """Makes the trial records of one experiment.

    Args:
        experiment_id: The experiment.
        seed: The experiment's seed, from which each trial's derives (``TrialSeeds``).
        clock: Where creation times come from.
        trials_dir: The folder under which each trial gets ``<number>/``.
    """

    def __init__(self, experiment_id: str, seed: int, clock: Clock, trials_dir: str) -> None:
        self.experiment_id = experiment_id
        self.seed = TrialSeeds(seed)
        self.clock = clock
        self.trials_dir = trials_dir

    def new(
        self,
        number: int,
        params: dict[str, Any],
        *,
        parent: int | None = None,
        source: str | None = None,
    ) -> Trial:
        """A new WAITING trial, created now."""
        return Trial(
            self.experiment_id,
            number,
            params,
            seed=self.seed(number),
            created_at=self.clock.time(),
            parent=parent,
            source=source,
        )

    def started(self, trial: Trial, when: float) -> Trial:
        """``trial`` RUNNING since ``when``, without what an earlier run of it left (its result,
        its reports, its error)."""
        return Trial(
            self.experiment_id,
            trial.number,
            trial.params,
            TrialStatus.RUNNING,
            trial.attempt,
            seed=trial.seed,
            created_at=trial.created_at,
            started_at=when,
            parent=trial.parent,
            source=trial.source,
        )

    def ended(
        self,
        trial: Trial,
        params: dict[str, Any],
        status: TrialStatus,
        when: float,
        *,
        value: float | None,
        metrics: dict[str, Any],
        error: str | None,
        values: tuple[float, ...] | None = None,
    ) -> Trial:
        """``trial`` ended (or paused) at ``when`` with ``status``, having run ``params``
        (``values``: every objective's, with several)."""
        return Trial(
            self.experiment_id,
            trial.number,
            params,
            status,
            trial.attempt,
            value,
            metrics,
            (),
            error,
            trial.seed,
            trial.created_at,
            trial.started_at,
            when,
            trial.parent,
            trial.source,
            values=values,
        )

    def spec(
        self,
        trial: Trial,
        *,
        checkpoint_keep: int,
        round_trip: bool,
        checkpoint_score: tuple[str, str] | None = None,
    ) -> TrialSpec:
        """How an executor runs ``trial``: in its folder, restored from its parent's
        checkpoint if it has one (see ``TrialSpec`` for ``checkpoint_keep``,
        ``checkpoint_score`` and ``round_trip``)."""
        restore = None if trial.parent is None else f"{self.trials_dir}{os.sep}{trial.parent}"
        return TrialSpec(
            trial.number,
            trial.id,
            trial.params,
            trial.seed,
            f"{self.trials_dir}{os.sep}{trial.number}",
            trial.attempt,
            restore_from=restore,
            checkpoint_keep=checkpoint_keep,
            ran_before=trial.started_at is not None,  # a paused trial resumed
            round_trip=round_trip,
            checkpoint_score=checkpoint_score,
        )
