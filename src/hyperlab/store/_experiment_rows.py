"""The ``Store``'s experiments: creating, reading, naming, listing and deleting them, each
committed at once, and where an experiment keeps its files."""

from __future__ import annotations

import re
import secrets
import string
from pathlib import Path

from sqlalchemy import delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from hyperlab.errors import (
    ConfigError,
    ExperimentBusy,
    ExperimentNotFound,
    NameTaken,
    StoreError,
)
from hyperlab.store._base import StoreBase, exists
from hyperlab.store._engine import describe_error
from hyperlab.store._paths import experiment_dir, files_beside
from hyperlab.store._queries import LIST_EXPERIMENTS, summary_from_row
from hyperlab.store._records import ExperimentRecord, ExperimentSummary
from hyperlab.store._rows import experiment_row, options_from_row, record_from_row
from hyperlab.store._schema import (
    controls,
    experiments,
    imported,
    phases,
    reports,
    trial_events,
    trials,
)
from hyperlab.store.codec import dumps

__all__ = ["ID_ALPHABET", "MAX_UNIQUE_NAME", "ExperimentRows"]

_EXPERIMENT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
ID_ALPHABET = string.ascii_lowercase + string.digits
"""The characters of the ids ``new_experiment_id`` makes."""

MAX_UNIQUE_NAME = 512
"""The most characters a unique name may have (as Optuna's study names): a longer one would
not fit in PostgreSQL's index."""

_CLASHES = 3  # inserts refused for a row that was gone when read: tries before giving up


class _Clash(Exception):
    """An insert the database refused for a duplicate key (id or unique name)."""


def _check_unique_name(name: str | None) -> None:
    if isinstance(name, str) and 0 < len(name) <= MAX_UNIQUE_NAME:
        return
    got = f"{len(name)} characters" if isinstance(name, str) else repr(name)
    raise ConfigError(
        f"name: an experiment created with a unique name needs a name of 1 to "
        f"{MAX_UNIQUE_NAME} characters, got {got}"
    )


class ExperimentRows(StoreBase):
    """A ``Store``'s experiments (mixed into it): each call commits at once or reads."""

    def create_experiment(self, rec: ExperimentRecord) -> None:
        """Insert a new experiment.

        One with ``unique_name`` takes its name only if no other experiment created with a
        unique name holds it: the database's unique index decides between creators racing
        for one name, in any number of processes, and all but one get ``NameTaken`` naming
        the one that won. Experiments created without a unique name may share its name.

        Raises:
            ConfigError: when the id is not 1-32 letters, digits, ``_``, ``-`` or ``.``, or a
                unique name is missing or longer than ``MAX_UNIQUE_NAME`` characters.
            NameTaken: when ``rec.unique_name`` and another experiment holds the name.
            StoreError: when an experiment with this id exists.
        """
        if not isinstance(rec.id, str) or not _EXPERIMENT_ID.fullmatch(rec.id):
            raise ConfigError(
                "experiment id: expected 1 to 32 letters, digits, '_', '-' or '.', starting "
                f"with a letter or digit, got {rec.id!r}"
            )
        if rec.unique_name:
            _check_unique_name(rec.name)
        row = experiment_row(rec)
        dumps(row["config"])  # a TypeError here, not a StoreError later
        dumps(rec.space)
        dumps(rec.environment)
        reason = ""
        for _ in range(_CLASHES):
            try:
                with self._write("create experiment") as conn:
                    try:
                        conn.execute(insert(experiments).values(row))
                    except IntegrityError as exc:  # out of the failed transaction, to read
                        raise _Clash(describe_error(exc)) from None
                return
            except _Clash as clash:
                reason = str(clash)
            self._explain_clash(rec)  # raises, unless what it clashed with was deleted since
        raise StoreError(f"cannot create experiment {rec.id!r} in {self._where}: {reason}")

    def _explain_clash(self, rec: ExperimentRecord) -> None:
        """Raise what a refused insert of ``rec`` clashed with: the holder of its unique name,
        or an experiment with its id; return when neither is there any more."""
        with self._read() as conn:
            if rec.unique_name:
                holder = conn.execute(
                    select(experiments.c.id).where(experiments.c.unique_name == rec.name)
                ).scalar()
                if holder is not None:
                    raise NameTaken(
                        f"the name {rec.name!r} is held by experiment {holder} in "
                        f"{self._where}; load it, or choose another name",
                        name=str(rec.name),
                        experiment_id=holder,
                    )
            if exists(conn, rec.id):
                raise StoreError(f"experiment {rec.id!r} already exists in {self._where}")

    def define_experiment(self, rec: ExperimentRecord, claim: ExperimentRecord) -> None:
        """Write a new experiment's definition (``rec``) over ``claim``, the row recorded for
        it before its definition was known: Optuna's ``create_study`` records a study,
        holding its name, before ``optimize`` gives the objective. Every column but the id,
        the name and whether it is unique is written; ``created_at`` becomes ``rec``'s.

        The write is a compare-and-swap: it happens only while the row is still ``claim``
        as read (same ``created_at``, never started), so of two processes defining one claim
        at once, one does and the other is told.

        Raises:
            ConfigError: ``rec`` has another id or name than ``claim``.
            ExperimentNotFound: there is no such experiment (any more).
            ExperimentBusy: it was defined or started since ``claim`` was read.
        """
        if (rec.id, rec.name) != (claim.id, claim.name):
            raise ConfigError(
                f"define_experiment: the definition (id {rec.id!r}, name {rec.name!r}) must "
                f"keep the claim's id {claim.id!r} and name {claim.name!r}"
            )
        row = experiment_row(rec)
        for kept in ("id", "name", "unique_name"):
            del row[kept]
        dumps(row["config"])
        dumps(rec.space)
        dumps(rec.environment)
        with self._write("define experiment") as conn:
            done = conn.execute(
                update(experiments)
                .where(
                    experiments.c.id == claim.id,
                    experiments.c.created_at == claim.created_at,
                    experiments.c.started_at.is_(None),
                )
                .values(row)
            ).rowcount
            if not done and not exists(conn, claim.id):
                raise self._not_found(claim.id)
        if not done:
            raise ExperimentBusy(
                f"experiment {claim.id} ({claim.name!r}) was defined or started by another "
                f"process since it was read from {self._where}; load it again to continue it"
            )

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

    def ids_named(self, name: str) -> list[str]:
        """The ids of the experiments named ``name``, newest first (as ``list_experiments``
        orders them), in one query that reads no other experiment."""
        query = (
            select(experiments.c.id)
            .where(experiments.c.name == name)
            .order_by(experiments.c.created_at.desc(), experiments.c.id.desc())
        )
        with self._read() as conn:
            return [row.id for row in conn.execute(query)]

    def new_experiment_id(self) -> str:
        """A fresh id (8 lowercase letters and digits) that no experiment here has yet."""
        while True:
            candidate = "".join(secrets.choice(ID_ALPHABET) for _ in range(8))
            with self._read() as conn:
                if not exists(conn, candidate):
                    return candidate

    def files_dir(self) -> Path | None:
        """Where a new experiment's folder goes when its options set no ``working_dir``, for
        it to record as its ``working_dir`` (a stored experiment finds its folder where it was
        created, whatever the default is later): beside a SQLite file,
        ``<its folder>/<its stem>-experiments``; None for ``<home>/experiments``, which is
        where the home's own ``hyperlab.db``, PostgreSQL, and every store while
        ``$HYPERLAB_HOME`` is set keep them."""
        return files_beside(self._path)

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
            if not exists(conn, experiment_id):
                raise self._not_found(experiment_id)
            for table in (controls, trial_events, reports, imported, phases, trials):
                conn.execute(delete(table).where(table.c.experiment_id == experiment_id))
            conn.execute(delete(experiments).where(experiments.c.id == experiment_id))
        self._buffer.forget(experiment_id)
