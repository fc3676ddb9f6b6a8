"""The store: experiments, trials, reports, status changes and control requests in a database.

SQLite file by default (``<home>/hyperlab.db``), in memory with ``":memory:"``, PostgreSQL by
URL. Trials come with their later phases when they are multi-phase NNI trials. The driver is
the only writer of an experiment's rows and group-commits them with ``Store.flush``; the CLI,
the server and ``hyperlab.load`` read, and talk to the driver by ``Store.send_control`` with
typed control requests (``StopExperiment``, ``KillTrial``...). The store also says where an
experiment's files live (``Store.experiment_folder``). Readers page through an experiment's
trials with a ``TrialFilter`` and a ``TrialOrder`` over ``Key`` quantities, evaluated by the
database; ``hyperlab.store.codec`` writes and reads the JSON columns' text.

Example:
    >>> from hyperlab.store import Store
    >>> store = Store.open(":memory:")
    >>> store.list_experiments()
    []
"""

from __future__ import annotations

from hyperlab.errors import ExperimentBusy, LeaseLost, NameTaken, StoreUnavailable, TrialNotFound
from hyperlab.store._controls import (
    AddTrial,
    Control,
    ControlKind,
    ControlOutcome,
    ControlRequest,
    ImportData,
    ImportedResult,
    KillTrial,
    SetConcurrency,
    SetMaxDuration,
    SetMaxTrials,
    StopExperiment,
    UnreadableRequest,
    UpdateSearchSpace,
    parse_request,
)
from hyperlab.store._experiment_rows import ID_ALPHABET
from hyperlab.store._front import ParetoFront, ParetoPoint
from hyperlab.store._lease import Lease
from hyperlab.store._paths import home
from hyperlab.store._pool import PoolAnswer, PoolClaim, PoolEvent, PoolWorker
from hyperlab.store._records import (
    HEARTBEAT_INTERVAL,
    LEASE_TTL,
    ExperimentRecord,
    ExperimentSummary,
    Imported,
    TrialEvent,
    command_ref,
)
from hyperlab.store._schema import SCHEMA_VERSION
from hyperlab.store._store import Store
from hyperlab.store._trial_queries import (
    STATUS_ORDER,
    Choices,
    Key,
    NestedName,
    Range,
    TrialFilter,
    TrialOrder,
)

__all__ = [
    "HEARTBEAT_INTERVAL",
    "ID_ALPHABET",
    "LEASE_TTL",
    "SCHEMA_VERSION",
    "STATUS_ORDER",
    "AddTrial",
    "Choices",
    "Control",
    "ControlKind",
    "ControlOutcome",
    "ControlRequest",
    "ExperimentBusy",
    "ExperimentRecord",
    "ExperimentSummary",
    "ImportData",
    "Imported",
    "ImportedResult",
    "Key",
    "KillTrial",
    "Lease",
    "LeaseLost",
    "NameTaken",
    "NestedName",
    "ParetoFront",
    "ParetoPoint",
    "PoolAnswer",
    "PoolClaim",
    "PoolEvent",
    "PoolWorker",
    "Range",
    "SetConcurrency",
    "SetMaxDuration",
    "SetMaxTrials",
    "StopExperiment",
    "Store",
    "StoreUnavailable",
    "TrialEvent",
    "TrialFilter",
    "TrialNotFound",
    "TrialOrder",
    "UnreadableRequest",
    "UpdateSearchSpace",
    "command_ref",
    "home",
    "parse_request",
]
