"""An experiment's overview, kept current by the change cursor: every trial's status, value and
end time in one snapshot (``_listing``), from which the counts by status, the best trial, the
best value so far and the best trials are computed with NumPy.

The snapshot is read once (one pass over the trials), then only the trials changed since are
read again; so a dashboard that polls the experiment, its changes and its plots while trials
finish costs the database a few indexed lookups per poll, not a pass over 100,000 trials.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hyperlab.server._listing import Snapshot, Snapshots
from hyperlab.server._models import BestTrialOut
from hyperlab.store import STATUS_ORDER, ExperimentRecord, Key, Store, TrialFilter
from hyperlab.trial import Mode, TrialStatus

__all__ = ["Summary", "best_numbers", "overview", "succeeded", "summary"]

_KEYS = (Key("status"), Key("value"), Key("finished"))
_SUCCEEDED = STATUS_ORDER.index(TrialStatus.SUCCEEDED)
_EVERY_TRIAL = TrialFilter()


class Summary(NamedTuple):
    """What the overview of an experiment shows: as of change cursor ``cursor``."""

    cursor: int
    n_trials: int
    counts: dict[TrialStatus, int]
    best: BestTrialOut | None


def overview(snapshots: Snapshots, store: Store, record: ExperimentRecord) -> Snapshot:
    """The snapshot of (status, value, finished) of every trial of the experiment."""
    return snapshots.get(store, record.id, record.created_at, _EVERY_TRIAL, _KEYS)


def succeeded(snapshot: Snapshot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(numbers, values, finished) of the succeeded trials with a value, by number."""

    def pick(snap: Snapshot) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        status, value, finished = snap.columns.T
        keep = (status == _SUCCEEDED) & ~np.isnan(value)
        return snap.numbers[keep], value[keep], finished[keep]

    return snapshot.derived("succeeded", pick)


def best_numbers(snapshot: Snapshot, mode: Mode, count: int) -> list[int]:
    """The numbers of the ``count`` succeeded trials with the best values (the earliest among
    equals first)."""

    def ranked(snap: Snapshot) -> np.ndarray:  # once per snapshot, not per request
        numbers, values, _ = succeeded(snap)
        return numbers[np.lexsort((numbers, mode.sign * values))]

    return snapshot.derived(("ranked", mode), ranked)[:count].tolist()


def summary(snapshot: Snapshot, store: Store, record: ExperimentRecord) -> Summary:
    """Counts by status and the best trial, from the overview snapshot."""
    mode = record.options.first_mode

    def compute(snap: Snapshot) -> Summary:
        codes = snap.columns[:, 0].astype(np.int64)
        tally = np.bincount(codes, minlength=len(STATUS_ORDER))
        counts = {STATUS_ORDER[i]: int(n) for i, n in enumerate(tally.tolist()) if n}
        best = None
        top = best_numbers(snap, mode, 1)
        found = store.trials_by_number(record.id, top)
        value = found[0].value if found else None
        if value is not None:
            best = BestTrialOut(number=found[0].number, value=value, params=found[0].params)
        return Summary(snap.cursor, len(snap.numbers), counts, best)

    return snapshot.derived(("summary", mode), compute)
