"""Snapshots of columns of an experiment's trials, kept current by the change cursor: the trial
tables whose filter or sort reads the JSON columns, and the best value so far, are served
from them.

Reading a parameter or a metric costs the database a pass over every trial's JSON (about
50 ms per 100,000 trials on SQLite, more on PostgreSQL's ``json``), for the count and again
for the page. So such a table is read once, as (number, sort key) rows of the trials that pass
the filter, and kept: the next request reads the change cursor (one indexed lookup); when
trials changed, only those are read again and merged in. The database does the filtering and
reads the keys; a snapshot orders them (NumPy) and remembers what was derived from it (the
order of a table, the best-so-far series) until the next change.

Caches live as long as the app, one entry per (experiment, filter, keys), least recently used
out first; they are safe to use from several threads (two requests may build the same entry
at once; the later one is kept).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from hyperlab.store import Key, Store, TrialFilter, TrialOrder

__all__ = ["MemoCache", "Snapshot", "Snapshots", "needs_snapshot"]

REFRESH_FRACTION = 0.25
"""Above this fraction of a snapshot's trials changed, it is read again whole."""

T = TypeVar("T")


DEEP_OFFSET = 1000
"""From this offset on, a page sorted by number comes from a snapshot too."""


def needs_snapshot(where: TrialFilter, order: TrialOrder, offset: int) -> bool:
    """Whether a trial table is served from a snapshot: its filter or sort reads the JSON
    columns, or it is sorted by a key without an index (where the database would sort every
    trial again for every page), or the page starts deep (where it would step over every
    trial before it); and it is not itself an incremental read (which touches few trials).
    The database serves the first pages by number (through its primary key)."""
    reads_json = where.reads_json or order.key.kind in ("param", "metric")
    sorted_by_key = order.key.kind != "number"
    deep = offset >= DEEP_OFFSET
    return (reads_json or sorted_by_key or deep) and where.changed_after is None


def _arrays(rows: list[tuple[Any, ...]], width: int) -> tuple[np.ndarray, np.ndarray]:
    """Trial numbers and a (rows, width) float array of the keys (NaN for missing)."""
    try:
        data = np.array(rows, dtype=np.float64).reshape(len(rows), width + 1)
    except (TypeError, ValueError):  # a string where a number was expected (SQLite)
        data = np.array(
            [[v if type(v) in (int, float) else np.nan for v in row] for row in rows],
            dtype=np.float64,
        ).reshape(len(rows), width + 1)
    return data[:, 0].astype(np.int64), data[:, 1:]


@dataclass(frozen=True, eq=False)
class Snapshot:
    """The key columns of the trials passing a filter, as of change cursor ``cursor``.

    Attributes:
        cursor: The change cursor the snapshot reflects.
        numbers: The trials' numbers, ascending (int64).
        columns: One row per trial, one float column per key (NaN when missing).
    """

    cursor: int
    numbers: np.ndarray
    columns: np.ndarray
    _memo: dict[Hashable, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def build(cls, cursor: int, numbers: np.ndarray, columns: np.ndarray) -> Snapshot:
        """A snapshot of rows in any order."""
        order = np.argsort(numbers, kind="stable")
        return cls(cursor, numbers[order], columns[order])

    def merged(self, cursor: int, changed: Sequence[int], rows: list[tuple[Any, ...]]) -> Snapshot:
        """This snapshot with the changed trials taken out and ``rows`` (their current rows,
        for those that pass the filter) put in."""
        keep = ~np.isin(self.numbers, np.asarray(changed, dtype=np.int64))
        numbers, columns = _arrays(rows, self.columns.shape[1])
        return Snapshot.build(
            cursor,
            np.concatenate([self.numbers[keep], numbers]),
            np.concatenate([self.columns[keep], columns]),
        )

    def derived(self, key: Hashable, compute: Callable[[Snapshot], T]) -> T:
        """``compute(self)``, computed once per snapshot and ``key``."""
        with self._lock:
            if key in self._memo:
                found: T = self._memo[key]
                return found
        value = compute(self)
        with self._lock:
            self._memo[key] = value
        return value

    def ordered(self, column: int, descending: bool) -> np.ndarray:
        """The trial numbers by the key in ``column`` (missing last), then by number."""

        def order(snapshot: Snapshot) -> np.ndarray:
            keys = snapshot.columns[:, column]
            keys = -keys if descending else keys
            missing = np.isnan(keys)
            by = np.lexsort((snapshot.numbers, np.where(missing, 0.0, keys), missing))
            return snapshot.numbers[by]

        return self.derived(("ordered", column, descending), order)


class Snapshots:
    """The app's snapshots, least recently used out first."""

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._entries: OrderedDict[Hashable, Snapshot] = OrderedDict()
        self._lock = threading.Lock()

    def get(
        self,
        store: Store,
        experiment_id: str,
        epoch: float,
        where: TrialFilter,
        keys: tuple[Key, ...],
    ) -> Snapshot:
        """The current snapshot of ``keys`` of the experiment's trials passing ``where``.

        Args:
            epoch: When the experiment was created: a deleted experiment's snapshots do not
                serve a new experiment of the same id.
        """
        entry_key = (experiment_id, epoch, where, keys)
        with self._lock:
            cached = self._entries.get(entry_key)
        if cached is None:
            snapshot = self._read(store, experiment_id, where, keys)
        elif store.change_cursor(experiment_id) == cached.cursor:
            snapshot = cached
        else:
            delta = store.trial_key_rows(experiment_id, where, keys, after=cached.cursor)
            changed = delta.changed or []
            if len(changed) > max(1000, REFRESH_FRACTION * len(cached.numbers)):
                snapshot = self._read(store, experiment_id, where, keys)
            else:
                snapshot = cached.merged(delta.cursor, changed, delta.rows)
        with self._lock:
            self._entries[entry_key] = snapshot
            self._entries.move_to_end(entry_key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return snapshot

    @staticmethod
    def _read(
        store: Store, experiment_id: str, where: TrialFilter, keys: tuple[Key, ...]
    ) -> Snapshot:
        fresh = store.trial_key_rows(experiment_id, where, keys)
        return Snapshot.build(fresh.cursor, *_arrays(fresh.rows, len(keys)))


class MemoCache:
    """Results remembered by key, least recently used out first; thread-safe. A caller puts
    what makes a result current (a change cursor, a trial count) in the key."""

    def __init__(self, size: int = 32) -> None:
        self._size = size
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        """The result remembered for ``key``, or None."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: Hashable, value: Any) -> None:
        """Remember ``value`` for ``key``."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
