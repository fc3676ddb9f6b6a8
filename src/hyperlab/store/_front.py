"""The Pareto front of an experiment, read by the store: only the columns it needs of the
SUCCEEDED trials (number, each objective's value read out of the JSON by the database, the
violation; the constraint values and params when asked for), never their metrics or reports,
and the front computed with ``hyperlab.pareto``. ``Store`` inherits ``FrontReads``; the
server and the CLI read the front through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Double, Text, cast, func, select, type_coerce
from sqlalchemy.sql.elements import ColumnElement

from hyperlab.store._base import StoreBase, exists
from hyperlab.store._schema import trials
from hyperlab.store._trial_queries import fetch_tuples
from hyperlab.store.codec import loads
from hyperlab.trial import Mode, TrialStatus

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

__all__ = ["FrontReads", "ParetoFront", "ParetoPoint"]


@dataclass(frozen=True, slots=True)
class ParetoPoint:
    """One SUCCEEDED trial with objective values, as the front sees it.

    Attributes:
        number: The trial's number.
        values: Every objective's value, in the experiment's metric order (one for a
            single-objective experiment).
        feasible: Whether it violates no constraint.
        violation: The sum of its positive constraint values (0 when feasible).
        on_front: Whether it is feasible and no other feasible SUCCEEDED trial dominates it
            (for one objective: it has the best value).
        constraints: Its constraints' values (each ``<= 0`` when met): None without any, or
            when the read left them out.
        params: Its parameters; empty when the read left them out.
    """

    number: int
    values: tuple[float, ...]
    feasible: bool
    violation: float
    on_front: bool
    constraints: tuple[float, ...] | None = None
    params: dict[str, Any] | None = None


@dataclass(frozen=True, eq=False)
class ParetoFront:
    """The SUCCEEDED trials of an experiment that have every objective's value, in number
    order, by column (100,000 trials are arrays, not objects), each marked whether it is on
    the Pareto front; ``point(i)`` is the ``i``-th as a ``ParetoPoint``.

    Attributes:
        modes: Each objective's direction, as given to the read.
        numbers: The trials' numbers, ascending.
        values: Their objective values, one row per trial, one column per objective.
        feasible: Whether each violates no constraint.
        violation: Each one's sum of positive constraint values (0 when feasible).
        on_front: Whether each is feasible and dominated by no other feasible trial.
        constraints: Their constraints' values, each None without any; None when the read
            left them out.
        params: Their parameters; None when the read left them out.
    """

    modes: tuple[Mode, ...]
    numbers: NDArray[np.int64]
    values: NDArray[np.float64]
    feasible: NDArray[np.bool_]
    violation: NDArray[np.float64]
    on_front: NDArray[np.bool_]
    constraints: list[tuple[float, ...] | None] | None = None
    params: list[dict[str, Any]] | None = None

    def __len__(self) -> int:
        return len(self.numbers)

    @property
    def front(self) -> list[int]:
        """The numbers of the trials on the front, in order."""
        return [int(n) for n in self.numbers[self.on_front]]

    @property
    def n_infeasible(self) -> int:
        """How many of the trials violate a constraint."""
        return len(self.feasible) - int(self.feasible.sum())

    def point(self, index: int) -> ParetoPoint:
        """The ``index``-th trial (in number order) as a ``ParetoPoint``."""
        return ParetoPoint(
            number=int(self.numbers[index]),
            values=tuple(float(v) for v in self.values[index]),
            feasible=bool(self.feasible[index]),
            violation=float(self.violation[index]),
            on_front=bool(self.on_front[index]),
            constraints=None if self.constraints is None else self.constraints[index],
            params=None if self.params is None else self.params[index],
        )

    @property
    def points(self) -> tuple[ParetoPoint, ...]:
        """Every trial as a ``ParetoPoint``, in number order."""
        return tuple(self.point(i) for i in range(len(self)))


class FrontReads(StoreBase):
    """The Pareto front read of a ``Store`` (mixed into it)."""

    def get_pareto_front(
        self, experiment_id: str, modes: Sequence[Mode | str], *, details: bool = True
    ) -> ParetoFront:
        """The experiment's SUCCEEDED trials with every objective's value, and its Pareto
        front, read in one query of the columns it needs (no metrics, no reports).

        A trial's objectives are its stored objective values (several objectives; the
        database reads each out of the JSON) or its value (one objective); a trial without
        ``len(modes)`` of them is left out (one from before the experiment's objectives
        changed). The front is ``hyperlab.pareto.pareto_front``'s: the feasible trials that no
        other feasible trial dominates.

        Args:
            experiment_id: The experiment.
            modes: Each objective's direction, in the order of the experiment's metrics.
            details: Read each trial's parameters and constraint values too (decoded JSON:
                most of the time at 100,000 trials; the server reads them for a page only).

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        import numpy as np  # only for the readers of the front: `import hyperlab` stays lean

        from hyperlab.pareto import pareto_mask

        directions = tuple(Mode(m) for m in modes)
        t = trials.c
        with self._read() as conn:
            dialect = conn.dialect.name
            objectives = _objectives(dialect, len(directions))
            columns: list[Any] = [t.number, t.violation, *objectives]
            if details:
                columns += [cast(t.constraint_values, Text), cast(t.params, Text)]
            has_all = (
                [t.value.is_not(None)]
                if len(directions) == 1
                else [func.json_array_length(t.objective_values) == len(directions)]
            )
            query = (
                select(*columns)
                .where(
                    t.experiment_id == experiment_id,
                    t.status == TrialStatus.SUCCEEDED.value,
                    *has_all,
                )
                .order_by(t.number)
            )
            rows = fetch_tuples(conn, query)
            if not rows and not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
        k = len(directions)
        # a non-finite value comes as the text the store keeps ("NaN"), which float() reads
        table = np.array([row[: 2 + k] for row in rows], dtype=float).reshape(len(rows), 2 + k)
        violation = np.where(np.isnan(table[:, 1]), 0.0, table[:, 1])  # NULL: no constraints
        feasible = ~(violation > 0.0)
        values = table[:, 2:]
        on_front = np.zeros(len(rows), dtype=bool)
        if feasible.any():
            signs = np.array([m.sign for m in directions])
            on_front[feasible] = pareto_mask(values[feasible] * signs)
        constraints = params = None
        if details:
            constraints = [None if c is None else tuple(c) for c in _bulk([r[-2] for r in rows])]
            params = _bulk([r[-1] for r in rows])
        return ParetoFront(
            modes=directions,
            numbers=table[:, 0].astype(np.int64),
            values=values,
            feasible=feasible,
            violation=violation,
            on_front=on_front,
            constraints=constraints,
            params=params,
        )


def _objectives(dialect: str, k: int) -> list[ColumnElement[Any]]:
    """Each objective's value: the ``value`` column for one objective, else each element of
    the ``objective_values`` JSON array (a non-finite one as the store's text, ``"NaN"``)."""
    t = trials.c
    if k == 1:
        return [t.value]
    if dialect == "postgresql":
        return [cast(t.objective_values.op("->>", return_type=Text)(i), Double) for i in range(k)]
    return [type_coerce(func.json_extract(t.objective_values, f"$[{i}]"), Double) for i in range(k)]


def _bulk(texts: list[Any]) -> list[Any]:
    """The JSON texts decoded in one call (None for NULL)."""
    if not texts:
        return []
    joined = ",".join("null" if text is None else str(text) for text in texts)
    return list(loads(f"[{joined}]"))
