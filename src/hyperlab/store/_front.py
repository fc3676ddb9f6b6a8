"""The Pareto front of an experiment, read by the store: only the columns it needs (number,
value, objective values, constraint values, params) of the SUCCEEDED trials, without their
metrics or reports, and the front computed with ``hyperlab.pareto``. ``Store`` inherits
``FrontReads``; the server and the CLI read the front through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Text, cast, select

from hyperlab.store._base import StoreBase, exists
from hyperlab.store._schema import trials
from hyperlab.store.codec import loads
from hyperlab.trial import Mode, Trial, TrialStatus

__all__ = ["FrontReads", "ParetoFront", "ParetoPoint"]


@dataclass(frozen=True, slots=True)
class ParetoPoint:
    """One SUCCEEDED trial with objective values, as the front sees it.

    Attributes:
        number: The trial's number.
        values: Every objective's value, in the experiment's metric order (one for a
            single-objective experiment).
        constraints: Its constraints' values (each ``<= 0`` when met), or None without any.
        params: Its parameters; empty when the read left them out.
        on_front: Whether it is feasible and no other feasible SUCCEEDED trial dominates it
            (for one objective: it has the best value).
    """

    number: int
    values: tuple[float, ...]
    constraints: tuple[float, ...] | None
    params: dict[str, Any]
    on_front: bool

    @property
    def feasible(self) -> bool:
        """True unless a constraint is violated."""
        return self.constraints is None or all(c <= 0.0 for c in self.constraints)

    @property
    def violation(self) -> float:
        """The sum of its positive constraint values (0 when feasible)."""
        if self.constraints is None:
            return 0.0
        return float(sum(c for c in self.constraints if c > 0.0))


@dataclass(frozen=True, slots=True)
class ParetoFront:
    """The SUCCEEDED trials of an experiment that have objective values, by number, each
    marked whether it is on the Pareto front.

    Attributes:
        modes: Each objective's direction, as given to the read.
        points: Every such trial, feasible or not, in number order.
    """

    modes: tuple[Mode, ...]
    points: tuple[ParetoPoint, ...]

    @property
    def front(self) -> list[int]:
        """The numbers of the trials on the front, in order."""
        return [p.number for p in self.points if p.on_front]

    @property
    def n_infeasible(self) -> int:
        """How many of the points violate a constraint."""
        return sum(not p.feasible for p in self.points)


class FrontReads(StoreBase):
    """The Pareto front read of a ``Store`` (mixed into it)."""

    def get_pareto_front(
        self, experiment_id: str, modes: Sequence[Mode | str], *, params: bool = True
    ) -> ParetoFront:
        """The experiment's SUCCEEDED trials with objective values and its Pareto front, read
        in one query of the columns it needs (no metrics, no reports).

        Each trial's objectives are its stored objective values (several objectives) or its
        value (one objective); a trial with another number of them than ``modes`` is left
        out (it is from before the experiment's objectives changed).

        Args:
            experiment_id: The experiment.
            modes: Each objective's direction, in the order of the experiment's metrics.
            params: Read each trial's parameters too (at 100,000 trials, most of the read).

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        from hyperlab.pareto import pareto_front  # numpy: only for the readers of the front

        directions = tuple(Mode(m) for m in modes)
        t = trials.c
        columns: list[Any] = [
            t.number,
            t.value,
            cast(t.objective_values, Text),
            cast(t.constraint_values, Text),
        ]
        if params:
            columns.append(cast(t.params, Text))
        query = (
            select(*columns)
            .where(t.experiment_id == experiment_id, t.status == TrialStatus.SUCCEEDED.value)
            .order_by(t.number)
        )
        with self._read() as conn:
            rows = conn.execute(query).all()
            if not rows and not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
        records = [_record(experiment_id, row, params) for row in rows]
        done = [r for r in records if r.objectives is not None and len(r.objectives) == len(modes)]
        on_front = {r.number for r in pareto_front(done, directions)}
        points = tuple(
            ParetoPoint(
                number=r.number,
                values=r.objectives or (),
                constraints=r.constraints,
                params=r.params,
                on_front=r.number in on_front,
            )
            for r in done
        )
        return ParetoFront(directions, points)


def _record(experiment_id: str, row: Any, params: bool) -> Trial:
    """A SUCCEEDED trial of the columns read (for ``hyperlab.pareto``; never handed out)."""
    values, constraints = row[2], row[3]
    return Trial(
        experiment_id,
        row.number,
        loads(row[4]) if params else {},
        TrialStatus.SUCCEEDED,
        value=None if row.value is None else float(row.value),
        values=None if values is None else tuple(float(v) for v in loads(values)),
        constraints=None if constraints is None else tuple(float(c) for c in loads(constraints)),
    )
