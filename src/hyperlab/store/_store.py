"""The Store: experiments, trials, reports, status changes and control requests in one database.

Writes of an experiment's rows (``update_experiment``, ``put_trial``, ``put_phase``,
``add_report``, ``finish_control``) are buffered and group-committed by ``flush``; the driver
is their only writer and calls them from one thread. Creating and deleting experiments and
sending control requests commit at once. Reads run in their own short transaction and see
committed rows only; on SQLite they never take the write lock.

A call that fails because the database does not answer for now (a lost connection, a server
restarting, a lock held past the busy timeout) raises ``StoreUnavailable``, a ``StoreError``
after which the same call may succeed; any other failure raises ``StoreError``.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import string
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, delete, insert, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from hyperlab._interrupts import critical
from hyperlab.errors import (
    ConfigError,
    ExperimentNotFound,
    LeaseLost,
    StoreError,
    StoreUnavailable,
    TrialNotFound,
)
from hyperlab.store._api_reads import ApiReads
from hyperlab.store._buffer import WriteBuffer
from hyperlab.store._controls import (
    Control,
    ControlOutcome,
    ControlRequest,
)
from hyperlab.store._engine import WRITE, create_store_engine, describe_error, is_transient
from hyperlab.store._lease import Lease
from hyperlab.store._lease import acquire as acquire_lease
from hyperlab.store._lease import check as check_leases
from hyperlab.store._lease import record as record_elapsed
from hyperlab.store._lease import release as release_lease
from hyperlab.store._lease import renew as renew_lease
from hyperlab.store._paths import experiment_dir
from hyperlab.store._queries import LIST_EXPERIMENTS, summary_from_row
from hyperlab.store._records import (
    LEASE_TTL,
    ExperimentRecord,
    ExperimentSummary,
    Imported,
    TrialEvent,
)
from hyperlab.store._rows import (
    best_number_query,
    experiment_row,
    options_from_row,
    read_phases,
    read_trials,
    record_from_row,
    request_from_row,
)
from hyperlab.store._schema import (
    controls,
    ensure_schema,
    experiments,
    imported,
    phases,
    reports,
    trial_events,
    trials,
)
from hyperlab.store._urls import MEMORY_URL, StorageTarget, mask_url, resolve_storage
from hyperlab.store.codec import dumps
from hyperlab.trial import Mode, Phase, Report, Trial, TrialStatus

__all__ = ["ID_ALPHABET", "Store"]

_EXPERIMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
ID_ALPHABET = string.ascii_lowercase + string.digits
"""The characters of the ids ``new_experiment_id`` makes."""
_REPORT_COLUMNS = (reports.c.attempt, reports.c.step, reports.c.metrics, reports.c.time)
_PENDING_CONTROLS = (
    select(controls.c.id, controls.c.kind, controls.c.payload, controls.c.created_at)
    .where(controls.c.experiment_id == bindparam("experiment_id"))
    .where(controls.c.applied_at.is_(None))
    .order_by(controls.c.id)
)


class Store(ApiReads):
    """The database of experiments, trials, reports, status changes and control requests.

    Open one with ``Store.open``. One thread (the driver's) may call the buffered writes and
    ``flush``; any thread may call the rest. The in-memory store serialises all calls with one
    lock; its database lives as long as this object and is seen by no other ``Store``.
    Records handed out are immutable snapshots: they never change after they are returned.

    Example::

        store = Store.open("results/hyperlab.db")
        store.create_experiment(record)
        store.put_trial(trial)        # buffered
        store.flush()                 # one transaction
        store.get_trials(record.id)   # [trial]
    """

    def __init__(
        self, engine: Engine, target: StorageTarget, *, clock: Callable[[], float]
    ) -> None:
        """Use ``Store.open``."""
        self.url = target.url
        self._engine = engine
        self._where = mask_url(target.url)
        self._clock = clock
        self._lock: contextlib.AbstractContextManager[Any] = (
            threading.RLock() if target.kind == "memory" else contextlib.nullcontext()
        )
        self._buffer = WriteBuffer(engine.dialect, clock)
        self._closed = False
        self._leases: dict[str, str] = {}  # experiment id -> the owner id this store holds
        self._spent: dict[str, Callable[[], float]] = {}  # id -> its experiment time, to flush
        self._path = target.path
        self._file = _file_id(target.path)

    @classmethod
    def open(
        cls,
        storage: str | os.PathLike[str] | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> Store:
        """Open (and create if needed) the store at ``storage``.

        Args:
            storage: None for ``<home>/hyperlab.db`` (home is ``$HYPERLAB_HOME`` or
                ``~/.hyperlab``); ``":memory:"`` for a database private to this process;
                a ``sqlite:///`` URL or a path ending in ``.db``; a ``postgresql://`` URL.
            clock: Seconds since the epoch, for the times the store stamps itself (status
                changes, control requests).

        Raises:
            ConfigError: when ``storage`` is not one of the above.
            StoreError: when the database cannot be opened, is not a hyperlab store, or was
                written by a newer hyperlab.
        """
        try:
            target = resolve_storage(storage)
        except OSError as exc:
            where = mask_url(str(storage))
            raise StoreError(f"cannot open store {where}: {describe_error(exc)}") from None
        where = mask_url(target.url)
        engine = create_store_engine(target)
        try:
            ensure_schema(engine, where)
        except SQLAlchemyError as exc:
            engine.dispose()
            raise StoreError(f"cannot open store {where}: {describe_error(exc)}") from None
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, target, clock=clock)

    def close(self) -> None:
        """Flush pending rows and release the database; later calls raise ``StoreError``."""
        if self._closed:
            return
        try:
            self.flush()
        finally:
            self._closed = True
            self._engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self._where!r})"

    @property
    def masked_url(self) -> str:
        """The URL with its password (if any) shown as ``***``: for messages and logs."""
        return self._where

    @property
    def in_memory(self) -> bool:
        """True for a ``":memory:"`` store, seen by this object only."""
        return self.url == MEMORY_URL

    # ---- experiments: committed at once ---------------------------------------------------

    def create_experiment(self, rec: ExperimentRecord) -> None:
        """Insert a new experiment.

        Raises:
            ConfigError: when the id is not 1-32 letters, digits, ``_``, ``-`` or ``.``.
            StoreError: when an experiment with this id exists.
        """
        if not isinstance(rec.id, str) or not _EXPERIMENT_ID.fullmatch(rec.id):
            raise ConfigError(
                "experiment id: expected 1 to 32 letters, digits, '_', '-' or '.', starting "
                f"with a letter or digit, got {rec.id!r}"
            )
        row = experiment_row(rec)
        dumps(row["config"])  # a TypeError here, not a StoreError later
        dumps(rec.space)
        dumps(rec.environment)
        with self._write("create experiment") as conn:
            try:
                conn.execute(insert(experiments).values(row))
            except IntegrityError:
                raise StoreError(f"experiment {rec.id!r} already exists in {self._where}") from None

    def get_experiment(self, experiment_id: str) -> ExperimentRecord:
        """The experiment with this id.

        Raises:
            ExperimentNotFound: when there is none.
        """
        with self._read() as conn:
            row = conn.execute(select(experiments).where(experiments.c.id == experiment_id)).first()
        if row is None:
            raise self._not_found(experiment_id)
        return record_from_row(row, self._where)

    def resolve(self, experiment: str) -> str:
        """The id of the experiment that ``experiment`` names: its id, or its name when no
        other experiment has that name.

        Raises:
            ExperimentNotFound: no experiment has this id or name.
            ConfigError: several experiments have this name; the message lists their ids.
        """
        by_id = experiments.c.id == experiment
        query = select(experiments.c.id, experiments.c.created_at).where(
            by_id | (experiments.c.name == experiment)
        )
        with self._read() as conn:
            found = conn.execute(query.order_by(experiments.c.created_at)).all()
        ids = [row.id for row in found]
        if experiment in ids:
            return experiment
        if not ids:
            raise ExperimentNotFound(
                f"no experiment with id or name {experiment!r} in {self._where}"
            )
        if len(ids) > 1:
            raise ConfigError(
                f"the name {experiment!r} is shared by experiments {', '.join(ids)} (oldest "
                "first) in {self._where}; give one of their ids".replace(
                    "{self._where}", self._where
                )
            )
        return ids[0]

    def list_experiments(self) -> list[ExperimentSummary]:
        """Every experiment with counts of its trials, newest first, in one query."""
        with self._read() as conn:
            rows = conn.execute(LIST_EXPERIMENTS).all()
        return [
            summary_from_row(row, options_from_row(row.id, row.config, self._where)) for row in rows
        ]

    def new_experiment_id(self) -> str:
        """A fresh id (8 lowercase letters and digits) that no experiment here has yet."""
        while True:
            candidate = "".join(secrets.choice(ID_ALPHABET) for _ in range(8))
            with self._read() as conn:
                if not _exists(conn, candidate):
                    return candidate

    def experiment_folder(self, record: ExperimentRecord) -> Path:
        """Where the experiment keeps its files (driver log, ``trials/<number>/``...).

        ``<working_dir>/<id>`` when its options set ``working_dir``, else
        ``<home>/experiments/<id>``; for the in-memory store, a folder under the temp folder.
        """
        if record.options.working_dir:
            return Path(record.options.working_dir) / record.id
        return experiment_dir(record.id, memory=self.in_memory)

    def delete_experiment(self, experiment_id: str) -> None:
        """Delete the experiment with its trials, reports, status changes and controls.

        Raises:
            ExperimentNotFound: when there is none.
        """
        with self._write("delete experiment") as conn:
            if not _exists(conn, experiment_id):
                raise self._not_found(experiment_id)
            for table in (controls, trial_events, reports, imported, phases, trials):
                conn.execute(delete(table).where(table.c.experiment_id == experiment_id))
            conn.execute(delete(experiments).where(experiments.c.id == experiment_id))
        self._buffer.forget(experiment_id)

    # ---- buffered writes: the driver's thread only -----------------------------------------

    def update_experiment(self, experiment_id: str, **fields: Any) -> None:
        """Buffer changes to an experiment's fields.

        The fields are any of ``status``, ``name``, ``started_at``, ``finished_at``, ``error``,
        ``driver_host``, ``driver_pid``, ``heartbeat_at``, ``options``, ``space``,
        ``server_url`` and ``environment``. Later
        calls before a flush override earlier ones field by field. An update of an experiment
        that does not exist (any more) changes nothing.

        Raises:
            TypeError: for another field, or options or a space that are not JSON.
        """
        self._buffer.update_experiment(experiment_id, fields)

    def put_trial(self, trial: Trial) -> None:
        """Buffer the whole row of ``trial`` (insert or replace); its ``reports`` are ignored.

        Puts of one trial before a flush keep only the newest row, but every status change
        (a status or attempt different from what this store last put for the trial) is
        recorded as a ``TrialEvent``. ``params`` and ``metrics`` must not be mutated once put.
        A non-finite ``value`` is stored as None.

        Raises:
            TypeError: when params or metrics hold something JSON cannot represent.
            ValueError: when the seed does not fit in 64 bits.
        """
        self._buffer.put_trial(trial)

    def put_phase(self, phase: Phase) -> None:
        """Buffer the whole row of a later phase of a multi-phase trial (insert or replace,
        by trial number and index). A non-finite ``value`` is stored as None.

        Raises:
            TypeError: when params or metrics hold something JSON cannot represent.
        """
        self._buffer.put_phase(phase)

    def add_report(self, experiment_id: str, number: int, report: Report) -> None:
        """Buffer one intermediate report of trial ``number``.

        Raises:
            TypeError: when the metrics hold something JSON cannot represent, or the step or
                time is not a number.
        """
        self._buffer.add_report(experiment_id, number, report)

    def add_imported(
        self, experiment_id: str, params: dict[str, Any], value: float, metrics: dict[str, Any]
    ) -> None:
        """Buffer one result imported into the experiment's tuner (see ``ImportData``).

        Raises:
            TypeError: when params or metrics hold something JSON cannot represent.
        """
        self._buffer.add_imported(experiment_id, params, value, metrics)

    def get_imported(self, experiment_id: str) -> list[Imported]:
        """The results imported into the experiment, in the order they were imported.

        Raises:
            ExperimentNotFound: when there is no such experiment.
        """
        i = imported.c
        query = select(i.id, i.params, i.value, i.metrics, i.created_at)
        with self._read() as conn:
            rows = conn.execute(query.where(i.experiment_id == experiment_id).order_by(i.id)).all()
            if not rows and not _exists(conn, experiment_id):
                raise self._not_found(experiment_id)
        return [Imported(*row) for row in rows]

    def finish_control(self, control_id: int, outcome: ControlOutcome) -> None:
        """Buffer that a control request was applied, with what the driver made of it.

        From now on ``pending_controls`` of this store leaves it out, even before the flush.
        """
        self._buffer.finish_control(control_id, outcome)

    @property
    def pending(self) -> int:
        """The number of buffered rows."""
        return len(self._buffer)

    def flush(self) -> None:
        """Write every buffered row in one transaction; a no-op when nothing is pending.

        Before writing, it checks that the SQLite file is still the one it opened, and that
        this store still holds the leases it took (``acquire_lease``). For a lease taken with
        ``elapsed=``, that check writes the experiment time spent (in the same transaction,
        with no extra statement), and the flush is never a no-op: the driver's periodic group
        commit keeps ``max_duration``'s count current to within one flush interval.

        Raises:
            LeaseLost: an experiment's lease is held by another driver now (or the experiment
                was deleted): that experiment's rows are dropped, the others stay buffered.
            StoreUnavailable: the database does not answer for now (the connection was lost,
                the server restarts, a lock was held past the busy timeout): nothing of the
                transaction is written, and the rows stay buffered for a later flush.
            StoreError: the transaction fails for another reason (the rows stay buffered), or
                the SQLite file was deleted or replaced.
        """
        count = len(self._buffer)
        spent = dict(self._spent)
        if not count and not spent:
            return
        self._check_file(count)
        with self._write(f"write {count} pending rows (kept for the next flush)") as conn:
            elapsed = {experiment_id: clock() for experiment_id, clock in spent.items()}
            lost = check_leases(conn, dict(self._leases), elapsed)
            if not lost:
                self._buffer.write(conn)
        if lost:
            for experiment_id in lost:
                self._buffer.drop(experiment_id)
                self._leases.pop(experiment_id, None)
                self._spent.pop(experiment_id, None)
            raise LeaseLost(
                f"experiment {', '.join(lost)}: this driver no longer holds its lease (another "
                "driver took over after it expired, or the experiment was deleted); its last "
                "rows were not written"
            )
        self._buffer.clear()

    # ---- the driver's lease: committed at once --------------------------------------------

    def acquire_lease(
        self,
        experiment_id: str,
        *,
        owner: str,
        pid: int | None = None,
        ttl: float = LEASE_TTL,
        elapsed: Callable[[], float] | None = None,
    ) -> Lease:
        """Take the experiment's lease for the driver ``owner`` (this process by default).

        From now on every ``flush`` of this store checks the lease is still held before it
        writes the experiment's rows (fencing). Pending control requests sent to an earlier
        driver are answered as not applied.

        Args:
            elapsed: When given, the experiment time spent so far (seconds), called at each
                flush, which records it (see ``flush``) until the lease is released or lost.
                It is called in the flush's thread, inside its transaction: keep it cheap.

        Raises:
            ExperimentBusy: a live driver holds the lease (its message names the driver).
            ExperimentNotFound: there is no such experiment.
        """
        with self._write("take the experiment's lease") as conn:
            if not _exists(conn, experiment_id):
                raise self._not_found(experiment_id)
            lease = acquire_lease(
                conn,
                experiment_id,
                owner=owner,
                pid=os.getpid() if pid is None else pid,
                now=self._clock(),
                ttl=ttl,
            )
        self._leases[experiment_id] = owner
        if elapsed is not None:
            self._spent[experiment_id] = elapsed
        return lease

    def renew_lease(self, lease: Lease, *, elapsed: float, ttl: float = LEASE_TTL) -> bool:
        """Extend ``lease``, recording a heartbeat and the experiment time spent so far.

        Callable from any thread (a watchdog renews while the driver's thread is busy). An
        expired lease that no other driver took is renewed still: a driver that could not reach
        the database for longer than ``ttl`` keeps its experiment when it comes back.

        Returns:
            False when the lease was lost: another driver holds it now, or the experiment is
            gone. The caller must stop writing.

        Raises:
            StoreUnavailable: the database does not answer for now; the lease is not lost.
        """
        self._check_file(0)
        with self._write("renew the experiment's lease") as conn:
            kept = renew_lease(conn, lease, now=self._clock(), ttl=ttl, elapsed=elapsed)
        if not kept:
            self._forget_lease(lease.experiment_id)
        return kept

    def record_elapsed(self, lease: Lease, *, elapsed: float) -> bool:
        """Commit the experiment time spent so far now, in a transaction of its own.

        For a watchdog while the driver's thread is busy (and does not flush); callable from
        any thread. It changes nothing else (not the heartbeat nor the lease's expiry).

        Returns:
            False when the lease was lost (see ``renew_lease``).
        """
        self._check_file(0)
        with self._write("record the experiment's time spent") as conn:
            kept = record_elapsed(conn, lease, elapsed=elapsed)
        if not kept:
            self._forget_lease(lease.experiment_id)
        return kept

    def release_lease(self, lease: Lease, *, elapsed: float) -> None:
        """Give ``lease`` up, recording the experiment time spent; flush first."""
        with self._write("release the experiment's lease") as conn:
            release_lease(conn, lease, now=self._clock(), elapsed=elapsed)
        self._forget_lease(lease.experiment_id)

    def _forget_lease(self, experiment_id: str) -> None:
        self._spent.pop(experiment_id, None)
        self._leases.pop(experiment_id, None)

    # ---- reads ---------------------------------------------------------------------------

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
            if not found and not _exists(conn, experiment_id):
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
                    if after < 0 and not _exists(conn, experiment_id):
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
            if not found and not _exists(conn, experiment_id):
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
                if not _exists(conn, experiment_id):
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
            if not found and not _exists(conn, experiment_id):
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
            if not rows and not _exists(conn, experiment_id):
                raise self._not_found(experiment_id)
        return [TrialEvent(n, attempt, TrialStatus(status), at) for n, attempt, status, at in rows]

    # ---- control requests ----------------------------------------------------------------

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
            if not _exists(conn, experiment_id):
                raise self._not_found(experiment_id)
            key = conn.execute(insert(controls).values(row)).inserted_primary_key
            assert key is not None  # an INSERT of one row always has one
            return int(key[0])

    def pending_controls(self, experiment_id: str) -> list[Control]:
        """Control requests not yet applied, oldest first (an unknown experiment has none).

        Cheap enough to poll ten times a second: one indexed query. A request this version
        cannot read (sent by a newer hyperlab) comes as an ``UnreadableRequest``, for the
        driver to reject.
        """
        with self._read() as conn:
            rows = conn.execute(_PENDING_CONTROLS, {"experiment_id": experiment_id}).all()
        finished = self._buffer.controls
        return [
            Control(control_id, experiment_id, request_from_row(kind, payload), created_at)
            for control_id, kind, payload, created_at in rows
            if control_id not in finished
        ]

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

    # ---- helpers -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _read(self) -> Iterator[Connection]:
        self._check_open()
        with critical(), self._lock:  # a Ctrl-C lets the connection go back whole
            try:
                with self._engine.connect() as conn:
                    yield conn
            except SQLAlchemyError as exc:
                raise self._error(f"cannot read {self._where}", exc) from exc

    @contextlib.contextmanager
    def _write(self, action: str) -> Iterator[Connection]:
        self._check_open()
        with critical(), self._lock:  # a Ctrl-C cannot leave a transaction holding the lock
            try:
                with self._engine.connect().execution_options(**WRITE) as conn, conn.begin():
                    yield conn
            except SQLAlchemyError as exc:
                raise self._error(f"cannot {action} in {self._where}", exc) from exc

    @staticmethod
    def _error(what: str, exc: SQLAlchemyError) -> StoreError:
        """``StoreUnavailable`` when ``exc`` passes (``is_transient``), else ``StoreError``."""
        reason = describe_error(exc)
        if is_transient(exc):
            return StoreUnavailable(f"{what}: {reason}", reason=reason)
        return StoreError(f"{what}: {reason}")

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError(f"store {self._where} is closed")

    def _check_file(self, pending: int) -> None:
        """StoreError if the SQLite file this store opened is no longer the file at its path
        (deleted, or replaced by another): writing on would keep nothing."""
        if self._path is None or _file_id(self._path) == self._file:
            return
        lost = f"; {pending} rows waiting to be written are lost" if pending else ""
        raise StoreError(
            f"the store file {self._path} was deleted or replaced while in use{lost}; "
            "nothing more can be kept there"
        )

    def _not_found(self, experiment_id: str) -> ExperimentNotFound:
        return ExperimentNotFound(f"no experiment {experiment_id!r} in {self._where}")


def _file_id(path: Path | None) -> tuple[int, int] | None:
    """The (device, inode) of a file, None if there is none (or no path)."""
    if path is None:
        return None
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def _exists(conn: Connection, experiment_id: str) -> bool:
    query = select(experiments.c.id).where(experiments.c.id == experiment_id)
    return conn.execute(query).first() is not None
