"""The experiment time spent (``max_duration``'s count) rides in every group commit of a driver
that holds the lease, over every backend: in memory, a SQLite file, PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import event, select

from hyperlab.errors import LeaseLost
from hyperlab.store import Store
from hyperlab.store._schema import experiments
from hyperlab.testing._store_cases import record, trial
from hyperlab.testing.stores import Ticks
from hyperlab.trial import Report

EXP = "exp00001"


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def storage(request: pytest.FixtureRequest, new_storage: Callable[[str], str]) -> str:
    return new_storage(request.param)


@pytest.fixture
def store(storage: str) -> Iterator[Store]:
    """A store stamping 1000.0, 1001.0, ... (so a lease taken with ``ttl=0.5`` has expired by
    the next stamp), with one experiment."""
    opened = Store.open(storage, clock=Ticks())
    opened.create_experiment(record(EXP))
    yield opened
    opened.close()


@pytest.fixture
def other(store: Store, storage: str) -> Iterator[Store]:
    """A second store on the same database; None in memory (a database only one Store sees)."""
    if store.in_memory:
        pytest.skip("an in-memory database is seen by one Store only")
    second = Store.open(storage)
    yield second
    second.close()


def watch(store: Store) -> tuple[list[str], list[int]]:
    """The statements the store runs from now on (their first three words, BEGIN left out),
    and one item per transaction it commits."""
    statements: list[str] = []
    commits: list[int] = []

    def before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not statement.lstrip().upper().startswith("BEGIN"):  # SQLite's BEGIN IMMEDIATE
            statements.append(" ".join(statement.split()[:3]).upper())

    event.listen(store._engine, "before_cursor_execute", before)
    event.listen(store._engine, "commit", lambda conn: commits.append(1))
    return statements, commits


def stored(store: Store) -> dict[str, Any]:
    columns = experiments.c
    query = select(columns.elapsed, columns.heartbeat_at, columns.lease_expires_at)
    with store._read() as conn:
        return dict(conn.execute(query.where(columns.id == EXP)).one()._mapping)


def test_each_flush_records_the_time_spent_in_its_own_transaction(store: Store) -> None:
    spent = [1.5]
    store.acquire_lease(EXP, owner="driver-1", elapsed=lambda: spent[0])
    statements, commits = watch(store)

    store.flush()  # nothing else pending: the time spent alone
    assert statements == ["UPDATE EXPERIMENTS SET"] and len(commits) == 1
    assert store.get_experiment(EXP).elapsed == 1.5

    statements.clear()
    commits.clear()
    spent[0] = 2.25
    store.put_trial(trial(0, EXP))
    store.add_report(EXP, 0, Report(0, {"loss": 1.0}, 1.0))
    store.flush()  # the rows and the time spent: one transaction, the time as its lease check
    flushed = list(statements)
    assert len(commits) == 1
    assert flushed[0] == "UPDATE EXPERIMENTS SET" and flushed.count(flushed[0]) == 1
    assert not [s for s in flushed if s.startswith("SELECT")]  # no separate lease check
    assert store.get_experiment(EXP).elapsed == 2.25
    assert [len(t.reports) for t in store.get_trials(EXP)] == [1]


def test_no_time_is_written_without_a_lease_or_after_its_release(store: Store) -> None:
    statements, _ = watch(store)
    store.flush()
    assert statements == []  # a store holding no lease: nothing pending, nothing done

    lease = store.acquire_lease(EXP, owner="driver-1", elapsed=lambda: 5.0)
    store.release_lease(lease, elapsed=4.0)
    statements.clear()
    store.flush()
    assert statements == []
    assert store.get_experiment(EXP).elapsed == 4.0


def test_a_flush_after_a_takeover_writes_neither_rows_nor_time(store: Store, other: Store) -> None:
    store.acquire_lease(EXP, owner="driver-1", ttl=0.5, elapsed=lambda: 3.0)
    store.flush()
    taken = other.acquire_lease(EXP, owner="driver-2", elapsed=lambda: 7.0)  # it had expired
    assert taken.elapsed == 3.0  # the new driver goes on from the last commit's count
    store.put_trial(trial(0, EXP))
    with pytest.raises(LeaseLost, match=EXP):
        store.flush()
    assert other.get_experiment(EXP).elapsed == 3.0 and other.get_trials(EXP) == []
    statements, _ = watch(store)
    store.flush()  # the lost lease is forgotten: nothing more is written
    assert statements == []
    other.flush()
    assert other.get_experiment(EXP).elapsed == 7.0


def test_record_elapsed_writes_the_time_alone_and_says_when_the_lease_is_lost(
    store: Store, other: Store
) -> None:
    lease = store.acquire_lease(EXP, owner="driver-1", ttl=0.5)
    before = stored(other)
    assert store.record_elapsed(lease, elapsed=2.0)
    after = stored(other)
    assert after == {**before, "elapsed": 2.0}  # not the heartbeat nor the lease's expiry
    other.acquire_lease(EXP, owner="driver-2")
    assert not store.record_elapsed(lease, elapsed=9.0)
    assert stored(other)["elapsed"] == 2.0
