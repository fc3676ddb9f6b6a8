"""The store's reads for the REST API: pages of trials, changes since a cursor, reports since
an id, plot data. ``Store`` inherits them; the queries are in ``_trial_queries`` and
``_report_queries``. An unknown experiment has no trials here; callers check it exists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from hyperlab.store._base import StoreBase
from hyperlab.store._report_queries import (
    CurvePoint,
    ReportRow,
    change_cursor,
    changed_numbers,
    changed_trials,
    curve_points,
    first_report_metrics,
    reports_after,
    reports_of,
    sample_columns,
)
from hyperlab.store._trial_queries import (
    Key,
    KeyRows,
    TrialFilter,
    TrialOrder,
    TrialPage,
    constraint_rows,
    count_trials,
    failed_errors,
    key_rows,
    page_numbers,
    status_counts,
    trials_by_number,
)
from hyperlab.trial import Trial, TrialStatus

__all__ = ["ApiReads"]


class ApiReads(StoreBase):
    """The REST API's reads of a ``Store`` (mixed into it): each in one read transaction."""

    def change_cursor(self, experiment_id: str) -> int:
        """The id of the experiment's newest trial status change (0 before the first).

        Every change to a trial's row is a status change, so while this stays the same, so do
        the experiment's trials.
        """
        with self._read() as conn:
            return change_cursor(conn, experiment_id)

    def page_trials(
        self,
        experiment_id: str,
        where: TrialFilter,
        order: TrialOrder,
        *,
        limit: int | None,
        offset: int = 0,
        counted: tuple[int, int] | None = None,
    ) -> TrialPage:
        """One page of the numbers of the trials passing ``where`` in ``order``, the number
        passing it, and the change cursor, read in one transaction.

        Args:
            counted: ``(cursor, total)`` of an earlier page with this filter: while the change
                cursor is still ``cursor``, ``total`` is taken as the number passing it (the
                count reads every trial of the experiment; the page reads ``offset + limit``).

        Raises:
            ConfigError: when a parameter or metric name cannot be read (SQLite cannot address
                a name with a double quote).
        """
        with self._read() as conn:
            cursor = change_cursor(conn, experiment_id)
            if counted is not None and counted[0] == cursor:
                total = counted[1]
            else:
                total = count_trials(conn, experiment_id, where)
            numbers = page_numbers(conn, experiment_id, where, order, limit=limit, offset=offset)
        return TrialPage(cursor, total, numbers)

    def count_trials(self, experiment_id: str, where: TrialFilter) -> int:
        """How many of the experiment's trials pass ``where``."""
        with self._read() as conn:
            return count_trials(conn, experiment_id, where)

    def status_counts(self, experiment_id: str) -> dict[TrialStatus, int]:
        """How many of the experiment's trials are in each status (none: left out)."""
        with self._read() as conn:
            return status_counts(conn, experiment_id)

    def failed_errors(self, experiment_id: str) -> list[tuple[int, str | None]]:
        """(number, error) of the experiment's FAILED trials, by number."""
        with self._read() as conn:
            return failed_errors(conn, experiment_id)

    def constraint_counts(self, experiment_id: str) -> tuple[int, int]:
        """How many of the experiment's trials have constraint values, and how many of those
        violate one (``Trial.feasible`` false), read without loading the trials."""
        checked = infeasible = 0
        with self._read() as conn:
            for values in constraint_rows(conn, experiment_id):
                checked += 1
                infeasible += not all(c <= 0.0 for c in values)
        return checked, infeasible

    def trials_by_number(
        self, experiment_id: str, numbers: Sequence[int], *, reports: bool = False
    ) -> list[Trial]:
        """The trials with these numbers, in the order given (numbers without a trial are left
        out), with their reports if ``reports``."""
        with self._read() as conn:
            found = trials_by_number(conn, experiment_id, numbers)
            if reports:
                attached = reports_of(conn, experiment_id, [t.number for t in found])
                found = [dataclasses.replace(t, reports=attached.get(t.number, ())) for t in found]
        return found

    def trial_key_rows(
        self,
        experiment_id: str,
        where: TrialFilter,
        keys: Sequence[Key],
        *,
        after: int | None = None,
    ) -> KeyRows:
        """(number, *key values) of the trials passing ``where``, read in bulk; with ``after``
        (a change cursor), only of those changed since, and the numbers of every trial changed
        since."""
        with self._read() as conn:
            cursor = change_cursor(conn, experiment_id)
            if after is None:
                return KeyRows(cursor, None, key_rows(conn, experiment_id, where, keys))
            changed = changed_numbers(conn, experiment_id, after)
            since = dataclasses.replace(where, changed_after=after)
            return KeyRows(cursor, changed, key_rows(conn, experiment_id, since, keys))

    def trial_changes(
        self, experiment_id: str, after: int, *, limit: int
    ) -> tuple[list[Trial], int, bool]:
        """The trials whose status changed after the change cursor ``after``, as they are now.

        Returns:
            At most ``limit`` trials (in the order of their latest change), the cursor to poll
            with next, and whether more changed trials remain (poll again at once).
        """
        with self._read() as conn:
            numbers, cursor, more = changed_trials(conn, experiment_id, after, limit)
            found = trials_by_number(conn, experiment_id, numbers)
        return found, cursor, more

    def reports_after(
        self,
        experiment_id: str,
        after: int,
        *,
        numbers: Sequence[int] | None = None,
        limit: int,
    ) -> tuple[list[ReportRow], bool]:
        """Reports with an id above ``after`` (of trials ``numbers`` only, if given), oldest
        first, at most ``limit``; and whether more remain."""
        with self._read() as conn:
            return reports_after(conn, experiment_id, after, numbers=numbers, limit=limit)

    def curve_points(
        self, experiment_id: str, numbers: Sequence[int], metric: str
    ) -> list[CurvePoint]:
        """The intermediate values of ``metric`` of these trials' current attempts, by trial
        and step."""
        if not numbers:
            return []
        with self._read() as conn:
            return curve_points(conn, experiment_id, numbers, metric)

    def first_report_metrics(
        self, experiment_id: str, numbers: Sequence[int]
    ) -> dict[str, Any] | None:
        """The metrics of the earliest report of any of these trials; None if they have none."""
        if not numbers:
            return None
        with self._read() as conn:
            return first_report_metrics(conn, experiment_id, numbers)

    def sample_trials(
        self,
        experiment_id: str,
        where: TrialFilter,
        keys: Sequence[Key],
        *,
        fraction: float | None,
        params: bool = False,
        metrics: bool = False,
    ) -> list[tuple[Any, ...]]:
        """``(number, status, *key values[, params][, metrics])`` of the trials passing
        ``where`` by number, about ``fraction`` of them (the same ones each time) or all when None;
        ``params`` and ``metrics`` add each trial's, decoded."""
        with self._read() as conn:
            return sample_columns(
                conn,
                experiment_id,
                where,
                keys,
                fraction=fraction,
                params=params,
                metrics=metrics,
            )
