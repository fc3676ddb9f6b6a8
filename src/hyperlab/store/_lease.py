"""The driver's lease on an experiment: one driver at a time, whatever races to run it.

A driver takes the lease with one atomic conditional write (compare-and-swap on the owner
column: ``UPDATE ... WHERE lease_owner IS <the owner it read>``), renews it with each
heartbeat, and every group commit checks it still holds it (fencing), so a driver that lost
its lease (suspended past its expiry, its experiment deleted) can never write over the driver
that took over. That check is the group commit's write of the experiment time spent
(``UPDATE ... SET elapsed WHERE lease_owner = <owner>``), so ``max_duration``'s count rides in
every commit at no extra statement. A lease may be taken over when it has expired, or at once
when the driver that held it ran on this machine and its process is gone.

On PostgreSQL the owner row is read ``FOR UPDATE``, so racing takers queue on the row lock; on
SQLite the transaction is ``BEGIN IMMEDIATE``, which serialises writers. The compare-and-swap
makes both safe even without the lock.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.engine import Connection

from hyperlab.errors import ExperimentBusy, StoreError
from hyperlab.store._controls import ControlOutcome
from hyperlab.store._records import process_gone
from hyperlab.store._schema import controls, experiments

__all__ = ["Lease", "acquire", "check", "record", "release", "renew"]

STALE_CONTROL = (
    "not applied: the driver it was sent to ended before it could (a new driver took over)"
)


@dataclass(frozen=True)
class Lease:
    """A driver's hold on one experiment.

    Attributes:
        experiment_id: The experiment.
        owner: The driver's id (unique per run).
        elapsed: Experiment time spent by earlier drivers (seconds) when it was taken.
        started_at: When a driver first ran the experiment (None if never).
    """

    experiment_id: str
    owner: str
    elapsed: float
    started_at: float | None


def acquire(
    conn: Connection, experiment_id: str, *, owner: str, pid: int, now: float, ttl: float
) -> Lease:
    """Take the lease for ``owner`` (in the caller's write transaction).

    Pending control requests sent to an earlier driver are answered as not applied, so a stop
    that a dead driver never saw does not stop this one.

    Raises:
        ExperimentBusy: a live driver holds it; the message names its pid and host.
        StoreError: there is no such experiment.
    """
    query = select(
        experiments.c.lease_owner,
        experiments.c.lease_expires_at,
        experiments.c.driver_host,
        experiments.c.driver_pid,
        experiments.c.elapsed,
        experiments.c.started_at,
    ).where(experiments.c.id == experiment_id)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is None:
        raise StoreError(f"no experiment {experiment_id!r}")
    held = row.lease_owner is not None and row.lease_owner != owner
    live = held and (row.lease_expires_at or 0.0) > now
    if live and not process_gone(row.driver_host, row.driver_pid):
        raise _busy(experiment_id, row.driver_host, row.driver_pid, row.lease_expires_at, now)
    swap = experiments.update().where(experiments.c.id == experiment_id)
    if row.lease_owner is None:
        swap = swap.where(experiments.c.lease_owner.is_(None))
    else:
        swap = swap.where(experiments.c.lease_owner == row.lease_owner)
    taken = conn.execute(
        swap.values(
            lease_owner=owner,
            lease_expires_at=now + ttl,
            driver_host=socket.gethostname(),
            driver_pid=pid,
            heartbeat_at=now,
        )
    )
    if taken.rowcount != 1:  # another driver swapped first
        raise _busy(experiment_id, None, None, None, now)
    stale = ControlOutcome.rejected(STALE_CONTROL)
    conn.execute(
        controls.update()
        .where(controls.c.experiment_id == experiment_id, controls.c.applied_at.is_(None))
        .values(applied_at=now, applied=stale.applied, outcome=stale.message)
    )
    return Lease(experiment_id, owner, float(row.elapsed or 0.0), row.started_at)


def renew(conn: Connection, lease: Lease, *, now: float, ttl: float, elapsed: float) -> bool:
    """Extend the lease and record the heartbeat and the time spent; False if it was lost."""
    result = conn.execute(
        experiments.update()
        .where(experiments.c.id == lease.experiment_id, experiments.c.lease_owner == lease.owner)
        .values(lease_expires_at=now + ttl, heartbeat_at=now, elapsed=elapsed)
    )
    return result.rowcount == 1


def record(conn: Connection, lease: Lease, *, elapsed: float) -> bool:
    """Record the experiment time spent, and nothing else; False if the lease was lost."""
    return _record(conn, lease.experiment_id, lease.owner, elapsed)


def release(conn: Connection, lease: Lease, *, now: float, elapsed: float) -> None:
    """Give the lease up, recording the time spent (nothing if it was lost already)."""
    conn.execute(
        experiments.update()
        .where(experiments.c.id == lease.experiment_id, experiments.c.lease_owner == lease.owner)
        .values(lease_owner=None, lease_expires_at=None, heartbeat_at=now, elapsed=elapsed)
    )


def check(
    conn: Connection, held: dict[str, str], elapsed: Mapping[str, float] | None = None
) -> list[str]:
    """The experiments of ``held`` (id -> owner) whose lease is no longer that owner's.

    Run at the start of a group commit. For those in ``elapsed`` the check is the write of
    the experiment time spent (one conditional ``UPDATE`` each); the others are read. Either
    way, on PostgreSQL the rows stay locked, so no driver can take a lease over between this
    check and the commit.
    """
    spent = elapsed or {}
    lost = [
        eid
        for eid, owner in held.items()
        if eid in spent and not _record(conn, eid, owner, spent[eid])
    ]
    others = sorted(eid for eid in held if eid not in spent)
    if not others:
        return lost
    query = select(experiments.c.id, experiments.c.lease_owner).where(experiments.c.id.in_(others))
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    owners = dict(conn.execute(query).all())
    return lost + [eid for eid in others if owners.get(eid) != held[eid]]


def _record(conn: Connection, experiment_id: str, owner: str, elapsed: float) -> bool:
    result = conn.execute(
        experiments.update()
        .where(experiments.c.id == experiment_id, experiments.c.lease_owner == owner)
        .values(elapsed=elapsed)
    )
    return result.rowcount == 1


def _busy(
    experiment_id: str, host: str | None, pid: int | None, expires: float | None, now: float
) -> ExperimentBusy:
    if pid is None:
        who = "another driver that took it a moment ago"
    else:
        where = "this machine" if host == socket.gethostname() else f"host {host}"
        who = f"a driver (pid {pid} on {where}; its lease runs {(expires or now) - now:.0f}s more)"
    return ExperimentBusy(
        f"experiment {experiment_id} is being run by {who}; only one driver runs an experiment "
        f"at a time. Stop it first (hyperlab stop {experiment_id}), or wait for it to end"
    )
