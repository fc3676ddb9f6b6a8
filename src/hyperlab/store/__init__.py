"""The store: experiments, trials, reports, status changes and control requests in a database.

SQLite file by default (``<home>/hyperlab.db``), in memory with ``":memory:"``, PostgreSQL by
URL. The driver is the only writer of an experiment's rows and group-commits them with
``Store.flush``; the CLI, the server and ``hyperlab.load`` read, and talk to the driver by
``Store.send_control``.

Example:
    >>> from hyperlab.store import Store
    >>> store = Store.open(":memory:")
    >>> store.list_experiments()
    []
"""

from __future__ import annotations

from hyperlab.errors import TrialNotFound
from hyperlab.store._records import Control, ExperimentRecord, ExperimentSummary, TrialEvent
from hyperlab.store._schema import SCHEMA_VERSION
from hyperlab.store._store import Store

__all__ = [
    "SCHEMA_VERSION",
    "Control",
    "ExperimentRecord",
    "ExperimentSummary",
    "Store",
    "TrialEvent",
    "TrialNotFound",
]
