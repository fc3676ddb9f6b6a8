"""The store's tables, its schema version, and their creation on first open.

Every float column is a double; every JSON column holds text written by ``codec.dumps``
(``json`` on PostgreSQL, text on SQLite). Trial statuses and experiment statuses are stored
as their enum names. All child tables point at ``experiments`` with ``ON DELETE CASCADE``.
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Column,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import Connection, Engine

from hyperlab._version import __version__
from hyperlab.errors import StoreError

__all__ = [
    "SCHEMA_VERSION",
    "controls",
    "ensure_schema",
    "experiments",
    "imported",
    "meta",
    "metadata",
    "phases",
    "pool_answers",
    "pool_events",
    "pool_trials",
    "pool_workers",
    "reports",
    "trial_events",
    "trials",
]

SCHEMA_VERSION = 10
"""Bumped whenever a table changes; a newer database refuses to open with older code, and an
older one is migrated when first opened (see ``_MIGRATIONS``)."""

_ROW_ID = BigInteger().with_variant(Integer, "sqlite")  # SQLite only autoincrements INTEGER
_PG_LOCK_KEY = 0x6879706572_6C6162  # "hyperlab": serialises schema creation on one server

metadata = MetaData()


def _experiment_fk() -> Column:
    return Column(
        "experiment_id",
        String(32),
        ForeignKey("experiments.id", ondelete="CASCADE"),
        nullable=False,
    )


meta = Table(
    "hyperlab_meta",
    metadata,
    Column("key", String(64), primary_key=True),
    Column("value", Text, nullable=False),
)

experiments = Table(
    "experiments",
    metadata,
    Column("id", String(32), primary_key=True),
    Column("name", Text),
    Column("status", String(16), nullable=False),
    Column("config", JSON, nullable=False),
    Column("space", JSON, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("objective", LargeBinary),
    Column("objective_ref", Text),  # since version 2
    Column("objective_path", Text),  # since version 2: the folder its module was imported from
    Column("tuner", LargeBinary),  # since version 2
    Column("created_at", Double, nullable=False),
    Column("started_at", Double),
    Column("finished_at", Double),
    Column("error", Text),
    Column("driver_host", String(255)),
    Column("driver_pid", Integer),
    Column("heartbeat_at", Double),
    Column("lease_owner", String(64)),  # since version 2: the driver that holds the lease
    Column("lease_expires_at", Double),  # since version 2
    Column("elapsed", Double),  # since version 2: experiment time spent so far (seconds)
    Column("server_url", Text),  # since version 3: where its driver serves the REST API
    Column("environment", JSON(none_as_null=True)),  # since version 5: where it was created
    # since version 8: the name again, for an experiment created with a unique name (an
    # Optuna study), else NULL; its unique index arbitrates between racing creators (NULLs
    # are distinct on SQLite and PostgreSQL alike, so other experiments may share names)
    Column("unique_name", Text),
    Index("ix_experiments_created_at", "created_at"),
    Index("ux_experiments_unique_name", "unique_name", unique=True),
)

trials = Table(
    "trials",
    metadata,
    Column(
        "experiment_id",
        String(32),
        ForeignKey("experiments.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("params", JSON, nullable=False),
    Column("status", String(16), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("value", Double),  # NULL unless finite
    Column("metrics", JSON, nullable=False),
    Column("error", Text),
    Column("seed", BigInteger),
    Column("created_at", Double),
    Column("started_at", Double),
    Column("finished_at", Double),
    Column("parent", Integer),  # since version 2: the trial it continues from (PBT)
    Column("source", String(16)),  # since version 3: "custom" for an added trial, else NULL
    # since version 7: several objectives and constraints (NULL for one objective, or none)
    Column("objective_values", JSON(none_as_null=True)),  # every objective's value, in order
    Column("constraint_values", JSON(none_as_null=True)),  # <= 0 each when met
    Column("violation", Double),  # their positive part summed: 0 when feasible
)

phases = Table(  # since version 6: the later phases of multi-phase (NNI) trials
    "phases",
    metadata,
    Column(
        "experiment_id",
        String(32),
        ForeignKey("experiments.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("number", Integer, primary_key=True, autoincrement=False),  # the trial's
    Column("phase", Integer, primary_key=True, autoincrement=False),  # 1, 2...
    Column("parameter_id", BigInteger, nullable=False),  # the tuner's number for its params
    Column("attempt", Integer, nullable=False),
    Column("params", JSON, nullable=False),
    Column("status", String(16), nullable=False),
    Column("value", Double),  # NULL unless finite
    Column("metrics", JSON, nullable=False),
    Column("error", Text),
    Column("created_at", Double),
    Column("finished_at", Double),
)

reports = Table(
    "reports",
    metadata,
    Column("id", _ROW_ID, primary_key=True, autoincrement=True),
    _experiment_fk(),
    Column("number", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("step", BigInteger, nullable=False),
    Column("metrics", JSON, nullable=False),
    Column("time", Double, nullable=False),
    Index("ix_reports_trial", "experiment_id", "number"),
    Index("ix_reports_since", "experiment_id", "id"),  # since version 4: reports after an id
)

trial_events = Table(
    "trial_events",
    metadata,
    Column("id", _ROW_ID, primary_key=True, autoincrement=True),
    _experiment_fk(),
    Column("number", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("status", String(16), nullable=False),
    Column("time", Double, nullable=False),
    Index("ix_trial_events_trial", "experiment_id", "number"),
    Index("ix_trial_events_since", "experiment_id", "id"),  # since version 4: changes after an id
)

imported = Table(  # since version 3: results imported into the tuner (not trials)
    "imported",
    metadata,
    Column("id", _ROW_ID, primary_key=True, autoincrement=True),
    _experiment_fk(),
    Column("params", JSON, nullable=False),
    Column("value", Double, nullable=False),
    Column("metrics", JSON, nullable=False),
    Column("created_at", Double, nullable=False),
    Index("ix_imported_experiment", "experiment_id"),
)

controls = Table(
    "controls",
    metadata,
    Column("id", _ROW_ID, primary_key=True, autoincrement=True),
    _experiment_fk(),
    Column("kind", String(64), nullable=False),
    Column("payload", JSON, nullable=False),
    Column("created_at", Double, nullable=False),
    Column("applied_at", Double),  # NULL while pending
    Column("applied", Boolean),  # since version 2: did the driver do it (NULL while pending)
    Column("outcome", Text),  # the driver's message
    Column("trial", Integer),  # since version 3: the trial a request created (add_trial)
    Index("ix_controls_pending", "experiment_id", "applied_at"),
)

# since version 9: the worker pool (``executor="pool"``). The driver offers trials in
# ``pool_trials``; workers (``hyperlab worker``) register and heartbeat in ``pool_workers``,
# claim offered rows, and write what their trials do to ``pool_events``; the driver answers
# their requests in ``pool_answers`` and asks for stops with ``pool_trials.stop``.
pool_workers = Table(
    "pool_workers",
    metadata,
    Column("id", String(64), primary_key=True),
    _experiment_fk(),
    Column("host", String(255), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("concurrency", Integer, nullable=False),
    Column("version", String(64), nullable=False),  # the worker's hyperlab version
    Column("started_at", Double, nullable=False),
    Column("heartbeat_at", Double, nullable=False),
    Column("ttl", Double, nullable=False),  # its trials are lost after this long without a beat
    Column("stopped_at", Double),  # set when the worker leaves of its own accord
    # since version 10: how many first runs it takes at most (NULL: no bound) and has taken,
    # for drivers whose workers bring their own budget (Optuna's n_trials per process)
    Column("max_trials", Integer),
    Column("taken", Integer),  # NULL for a worker of version 9: none counted
    Index("ix_pool_workers_experiment", "experiment_id"),
)

pool_trials = Table(
    "pool_trials",
    metadata,
    Column(
        "experiment_id",
        String(32),
        ForeignKey("experiments.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("number", Integer, primary_key=True, autoincrement=False),
    Column("attempt", Integer, nullable=False),
    Column("spec", JSON, nullable=False),  # the TrialSpec, as ``hyperlab.pool`` encodes it
    Column("worker_id", String(64)),  # NULL while offered, the claiming worker's id after
    Column("offered_at", Double, nullable=False),
    Column("claimed_at", Double),
    Column("stop", Boolean, nullable=False),  # the driver asks the worker to stop it
    Index("ix_pool_trials_offered", "experiment_id", "worker_id"),
    Index("ix_pool_trials_worker", "worker_id"),
)

pool_events = Table(
    "pool_events",
    metadata,
    Column("id", _ROW_ID, primary_key=True, autoincrement=True),
    _experiment_fk(),
    Column("number", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("kind", String(16), nullable=False),  # the event class's name: Started, Reported...
    Column("payload", JSON, nullable=False),
    Column("time", Double, nullable=False),
    Index("ix_pool_events_since", "experiment_id", "id"),
    # rows are deleted once their trial ended, and readers keep the last id they read: SQLite
    # must never hand out a deleted id again (PostgreSQL's sequences never do)
    sqlite_autoincrement=True,
)

pool_answers = Table(
    "pool_answers",
    metadata,
    Column("id", _ROW_ID, primary_key=True, autoincrement=True),
    _experiment_fk(),
    Column("number", Integer, nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("request", Integer, nullable=False),  # the request's index in its trial
    Column("value", JSON(none_as_null=True)),
    Column("error", Text),
    Index("ix_pool_answers_since", "experiment_id", "id"),
    sqlite_autoincrement=True,  # as pool_events
)


def ensure_schema(engine: Engine, where: str, *, migrate: bool = True) -> None:
    """Create the tables if missing and check the schema version; safe to race.

    With ``migrate=False`` an older database is refused instead of migrated (a worker joining
    a running experiment must not change the schema under its driver).

    The common case (tables there, version current) only reads. Creation runs in one write
    transaction that also takes a lock (``BEGIN IMMEDIATE`` on SQLite, an advisory lock on
    PostgreSQL), so two processes opening a new database at once do not collide.

    Args:
        engine: The store's engine.
        where: The masked URL, for messages.

    Raises:
        StoreError: when the database belongs to a newer hyperlab, or holds other tables but
            no hyperlab meta table.
    """
    with engine.connect() as conn:
        if _check(conn, where, create=False, migrate=migrate):
            return
    with engine.connect().execution_options(hyperlab_write=True) as conn, conn.begin():
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PG_LOCK_KEY})
        _check(conn, where, create=True, migrate=migrate)


def _check(conn: Connection, where: str, *, create: bool, migrate: bool = True) -> bool:
    """True when the schema is complete and current; creates what is missing if ``create``."""
    names = set(inspect(conn).get_table_names())
    if meta.name not in names:
        if names:
            raise StoreError(
                f"{where} holds tables ({', '.join(sorted(names)[:5])}) but no {meta.name!r} "
                "table: it is not a hyperlab store; give an empty database or a new file"
            )
        if create:
            metadata.create_all(conn, checkfirst=False)  # empty, and we hold the lock
            conn.execute(meta.insert().values(key="schema_version", value=str(SCHEMA_VERSION)))
        return False
    found = conn.execute(select(meta.c.value).where(meta.c.key == "schema_version")).scalar()
    version = int(found) if found is not None else 0
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{where} has store schema version {version}, but this hyperlab only knows "
            f"versions up to {SCHEMA_VERSION}: upgrade hyperlab (pip install -U hyperlab)"
        )
    if version < SCHEMA_VERSION:
        if not migrate:
            raise StoreError(
                f"{where} has store schema version {version}, written by an older hyperlab, "
                f"and this hyperlab ({__version__}) has version {SCHEMA_VERSION}: run the same "
                "hyperlab version as the experiment's driver"
            )
        if version not in _MIGRATIONS:
            raise StoreError(
                f"{where} has store schema version {version}, expected {SCHEMA_VERSION}, and "
                "there is no migration from it"
            )
        if not create:
            return False
        while version < SCHEMA_VERSION:
            version = _MIGRATIONS[version](conn)
        conn.execute(meta.update().where(meta.c.key == "schema_version").values(value=str(version)))
        metadata.create_all(conn)  # tables a migration did not create
        return False
    if set(metadata.tables) <= names:
        return True
    if create:
        metadata.create_all(conn)  # checkfirst: only the missing tables
    return False


# ---- migrations: each takes the database from its version to the next, in the caller's
# transaction (which holds the write lock), and returns the new version.


def _add_column(conn: Connection, table: Table, name: str) -> None:
    column = table.c[name]
    kind = column.type.compile(dialect=conn.dialect)
    conn.execute(text(f"ALTER TABLE {table.name} ADD COLUMN {name} {kind}"))


def _v1_to_v2(conn: Connection) -> int:
    """``objective_ref`` moves out of the options into a column; a tuner instance, the
    objective's folder, the driver's lease and the time spent get columns; control outcomes
    get ``applied`` instead of the message prefix ``"error: "``."""
    _add_column(conn, trials, "parent")
    for column in (
        "objective_ref",
        "objective_path",
        "tuner",
        "lease_owner",
        "lease_expires_at",
        "elapsed",
    ):
        _add_column(conn, experiments, column)
    _add_column(conn, controls, "applied")
    for experiment_id, config in conn.execute(select(experiments.c.id, experiments.c.config)):
        if isinstance(config, dict) and "objective_ref" in config:
            ref = config.pop("objective_ref")
            conn.execute(
                experiments.update()
                .where(experiments.c.id == experiment_id)
                .values(config=config, objective_ref=ref)
            )
    for control_id, outcome in conn.execute(
        select(controls.c.id, controls.c.outcome).where(controls.c.applied_at.is_not(None))
    ):
        failed = isinstance(outcome, str) and outcome.startswith("error: ")
        message = outcome.removeprefix("error: ") if failed else ""
        conn.execute(
            controls.update()
            .where(controls.c.id == control_id)
            .values(applied=not failed, outcome=message)
        )
    return 2


def _v2_to_v3(conn: Connection) -> int:
    """Trials record where their parameters came from; experiments where their driver serves;
    imported results get their table (created after the migrations)."""
    _add_column(conn, trials, "source")
    _add_column(conn, experiments, "server_url")
    _add_column(conn, controls, "trial")
    return 3


def _v3_to_v4(conn: Connection) -> int:
    """Status changes and reports get an index by (experiment, id), so that "what changed
    after id N" (the REST API's incremental reads) reads only the new rows."""
    for table, name in ((trial_events, "ix_trial_events_since"), (reports, "ix_reports_since")):
        (index,) = (index for index in table.indexes if index.name == name)
        index.create(conn, checkfirst=True)
    return 4


def _v4_to_v5(conn: Connection) -> int:
    """Experiments record the environment they were created in (NULL for older ones)."""
    _add_column(conn, experiments, "environment")
    return 5


def _v5_to_v6(conn: Connection) -> int:
    """Multi-phase trials get the table of their later phases (created after the
    migrations, empty: no earlier trial had phases)."""
    return 6


def _v6_to_v7(conn: Connection) -> int:
    """Trials keep several objective values and their constraints' values (NULL for the
    trials of earlier versions, which had one objective and no constraints)."""
    for column in ("objective_values", "constraint_values", "violation"):
        _add_column(conn, trials, column)
    return 7


def _v7_to_v8(conn: Connection) -> int:
    """Experiments may hold their name uniquely (``unique_name``, under a unique index).
    Every earlier experiment keeps a plain name (NULL): names already shared by several stay
    shared, and no earlier one is made unique."""
    _add_column(conn, experiments, "unique_name")
    (index,) = (i for i in experiments.indexes if i.name == "ux_experiments_unique_name")
    index.create(conn, checkfirst=True)
    return 8


def _v8_to_v9(conn: Connection) -> int:
    """The worker pool gets its tables (created after the migrations, empty: no earlier
    experiment ran on workers)."""
    return 9


def _v9_to_v10(conn: Connection) -> int:
    """Workers record how many first runs they take at most and have taken (a worker of
    version 9 counted none: it takes no bound). A store without the pool's tables gets them
    whole, after the migrations."""
    found = inspect(conn)
    if found.has_table(pool_workers.name):
        have = {column["name"] for column in found.get_columns(pool_workers.name)}
        for name in ("max_trials", "taken"):
            if name not in have:
                _add_column(conn, pool_workers, name)
    return 10


_MIGRATIONS = {
    1: _v1_to_v2,
    2: _v2_to_v3,
    3: _v3_to_v4,
    4: _v4_to_v5,
    5: _v5_to_v6,
    6: _v6_to_v7,
    7: _v7_to_v8,
    8: _v8_to_v9,
    9: _v9_to_v10,
}
