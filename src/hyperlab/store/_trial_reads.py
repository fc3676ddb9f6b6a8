"""The ``Store``'s reads of an experiment's trials, with their reports and phases, their status
changes, and the results imported into its tuner: each in one read transaction (a batch at a
time for ``iter_trials``)."""

from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy import select

from hyperlab.errors import TrialNotFound
from hyperlab.store._base import StoreBase, exists
from hyperlab.store._records import Imported, TrialEvent
from hyperlab.store._rows import best_number_query, read_phases, read_trials
from hyperlab.store._schema import imported, trial_events, trials
from hyperlab.trial import Mode, Phase, Trial, TrialStatus

__all__ = ["TrialReads"]


class TrialReads(StoreBase):
    """A ``Store``'s reads of trials and what belongs to them (mixed into it)."""

    def get_trials(self, experiment_id: str, *, reports: bool = True) -> list[Trial]:
        """The experiment's trials ordered by number, with their phases (``Trial.phases``),
        in up to three queries.

        Args:
            experiment_id: The experiment.
            reports: Attach each trial's reports, ordered by (attempt, step, time).

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        with self._read() as conn:
            found = read_trials(conn, experiment_id, reports=reports)
            if not found and not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
        return found

    def iter_trials(
        self, experiment_id: str, *, reports: bool = True, batch: int = 200
    ) -> Iterator[list[Trial]]:
        """The experiment's trials as ``get_trials`` reads them, ``batch`` numbers at a time,
        each batch in a transaction of its own: whatever the experiment's size, no more than a
        batch is in memory (trials created meanwhile come too).

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        after = -1
        while True:
            with self._read() as conn:
                numbers = (
                    conn.execute(
                        select(trials.c.number)
                        .where(trials.c.experiment_id == experiment_id, trials.c.number > after)
                        .order_by(trials.c.number)
                        .limit(batch)
                    )
                    .scalars()
                    .all()
                )
                if not numbers:
                    if after < 0 and not exists(conn, experiment_id):
                        raise self._not_found(experiment_id)
                    return
                between = (numbers[0], numbers[-1])
                found = read_trials(conn, experiment_id, between=between, reports=reports)
            yield found
            after = numbers[-1]

    def get_best_trial(self, experiment_id: str, mode: Mode | str = Mode.MIN) -> Trial | None:
        """The succeeded trial with the best value by ``mode``, with its reports; the earliest
        among equals; None if no trial succeeded yet.

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        with self._read() as conn:
            number = conn.execute(best_number_query(experiment_id, Mode(mode))).scalar()
            found = [] if number is None else read_trials(conn, experiment_id, number=number)
            if not found and not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
        return found[0] if found else None

    def get_trial(self, experiment_id: str, number: int) -> Trial:
        """One trial with its reports and phases.

        Raises:
            ExperimentNotFound: when there is no such experiment.
            TrialNotFound: when the experiment has no trial ``number``.
        """
        with self._read() as conn:
            found = read_trials(conn, experiment_id, number=number)
            if not found:
                if not exists(conn, experiment_id):
                    raise self._not_found(experiment_id)
                raise TrialNotFound(
                    f"no trial {number} in experiment {experiment_id!r} in {self._where}"
                )
        return found[0]

    def get_phases(self, experiment_id: str, number: int | None = None) -> list[Phase]:
        """The later phases of the experiment's multi-phase trials (or of trial ``number``),
        ordered by trial number and index; ``get_trials`` attaches them to their trials too.

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        with self._read() as conn:
            found = read_phases(conn, experiment_id, None if number is None else (number, number))
            if not found and not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
        return found

    def get_trial_events(self, experiment_id: str, number: int | None = None) -> list[TrialEvent]:
        """Status changes of the experiment's trials (or of trial ``number``), oldest first.

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        t = trial_events.c
        query = select(t.number, t.attempt, t.status, t.time).where(
            t.experiment_id == experiment_id
        )
        if number is not None:
            query = query.where(t.number == number)
        with self._read() as conn:
            rows = conn.execute(query.order_by(t.id)).all()
            if not rows and not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
        return [TrialEvent(n, attempt, TrialStatus(status), at) for n, attempt, status, at in rows]

    def get_imported(self, experiment_id: str) -> list[Imported]:
        """The results imported into the experiment, in the order they were imported.

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        i = imported.c
        query = select(i.id, i.params, i.value, i.metrics, i.created_at)
        with self._read() as conn:
            rows = conn.execute(query.where(i.experiment_id == experiment_id).order_by(i.id)).all()
            if not rows and not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
        return [Imported(*row) for row in rows]
