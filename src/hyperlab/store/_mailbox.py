"""The ``Store``'s control requests: readers (the CLI, the server, ``Experiment``) send them,
committed at once; the experiment's driver polls for those pending and answers each one
(buffered, like its other writes)."""

from __future__ import annotations

from sqlalchemy import bindparam, insert, select

from hyperlab.errors import StoreError
from hyperlab.store._base import StoreBase, exists
from hyperlab.store._controls import Control, ControlOutcome, ControlRequest
from hyperlab.store._rows import request_from_row
from hyperlab.store._schema import controls

__all__ = ["ControlMailbox"]

_PENDING_CONTROLS = (
    select(controls.c.id, controls.c.kind, controls.c.payload, controls.c.created_at)
    .where(controls.c.experiment_id == bindparam("experiment_id"))
    .where(controls.c.applied_at.is_(None))
    .order_by(controls.c.id)
)


class ControlMailbox(StoreBase):
    """A ``Store``'s control requests, between their senders and the driver (mixed into it)."""

    def send_control(self, experiment_id: str, request: ControlRequest) -> int:
        """Ask the experiment's driver to do something; committed at once.

        Returns:
            The request's id, to find its outcome with ``get_control``.

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        row = {
            "experiment_id": experiment_id,
            "kind": request.kind.value,
            "payload": request.model_dump(mode="json", exclude={"kind"}),
            "created_at": self._clock(),
        }
        with self._write("send control") as conn:
            if not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
            key = conn.execute(insert(controls).values(row)).inserted_primary_key
            assert key is not None  # an INSERT of one row always has one
            return int(key[0])

    def pending_controls(self, experiment_id: str) -> list[Control]:
        """Control requests not yet applied, oldest first (an unknown experiment has none).

        Cheap enough to poll ten times a second: one indexed query, which on PostgreSQL runs
        outside a transaction (no ``BEGIN`` and ``ROLLBACK`` round trips for each poll of
        each driver). A request this version cannot read (sent by a newer hyperlab) comes as
        an ``UnreadableRequest``, for the driver to reject.
        """
        with self._read() as conn:
            if conn.dialect.name == "postgresql":  # one statement: its own snapshot suffices
                conn = conn.execution_options(isolation_level="AUTOCOMMIT")
            rows = conn.execute(_PENDING_CONTROLS, {"experiment_id": experiment_id}).all()
        finished = self._buffer.controls
        return [
            Control(control_id, experiment_id, request_from_row(kind, payload), created_at)
            for control_id, kind, payload, created_at in rows
            if control_id not in finished
        ]

    def finish_control(self, control_id: int, outcome: ControlOutcome) -> None:
        """Buffer that a control request was applied, with what the driver made of it.

        From now on ``pending_controls`` of this store leaves it out, even before the flush.
        """
        self._buffer.finish_control(control_id, outcome)

    def get_control(self, control_id: int) -> Control:
        """One control request, with its outcome once applied.

        Raises:
            StoreError: when there is no request with this id, or it cannot be read.
        """
        with self._read() as conn:
            row = conn.execute(select(controls).where(controls.c.id == control_id)).first()
        if row is None:
            raise StoreError(f"no control request {control_id} in {self._where}")
        request = request_from_row(row.kind, row.payload)
        outcome = None
        if row.applied_at is not None:
            outcome = ControlOutcome(bool(row.applied), row.outcome or "", row.trial)
        return Control(row.id, row.experiment_id, request, row.created_at, row.applied_at, outcome)
