"""The cases of ``hyperlab.testing.StoreContract`` about transactions and control requests:
closing, group commits, readers beside the writer, threads, and the control table."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import text

from hyperlab.config import MAX_CONCURRENCY, MAX_TRIALS
from hyperlab.errors import StoreError
from hyperlab.store import (
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
    Store,
    UnreadableRequest,
    UpdateSearchSpace,
)
from hyperlab.testing._store_cases import (
    NO_SECOND_READER,
    record,
    trial,
)
from hyperlab.testing._store_hook import controls, count_selects, engine_write, read, trials, write
from hyperlab.trial import Report

__all__ = ["AccessCases"]


class AccessCases:
    """Flushes are atomic, readers never wait or see unflushed rows, controls keep order."""

    # ---- opening and closing ---------------------------------------------------------------

    def test_closed_store_refuses_work_and_close_flushes(self, storage: str) -> None:
        store = Store.open(storage)
        store.create_experiment(record())
        store.put_trial(trial(0))
        store.close()  # flushes
        store.close()  # twice is fine
        with pytest.raises(StoreError, match="is closed"):
            store.get_experiment("exp00001")
        if not store.in_memory:
            with Store.open(storage) as again:
                assert [t.number for t in again.get_trials("exp00001")] == [0]

    # ---- flushes, readers and threads ------------------------------------------------------

    def test_flush_is_atomic_and_keeps_the_buffer_for_a_retry(
        self, store: Store, other: Store
    ) -> None:
        store.create_experiment(record())
        store.put_trial(trial(0))
        store.add_report("exp00001", 0, Report(0, {"loss": 1.0}, 1.0))
        store.put_trial(trial(0, experiment_id="later123"))  # no such experiment yet: fails
        pending = store.pending
        with pytest.raises(StoreError, match=r"cannot write 5 pending rows .* in "):
            store.flush()
        assert store.pending == pending
        assert other.get_trials("exp00001") == []
        assert other.get_trial_events("exp00001") == []
        store.create_experiment(record("later123"))
        store.flush()
        assert store.pending == 0
        assert [len(t.reports) for t in other.get_trials("exp00001")] == [1]
        assert [t.number for t in other.get_trials("later123")] == [0]
        assert len(other.get_trial_events("exp00001")) == 1

    def test_flush_with_nothing_pending_does_nothing(self, store: Store) -> None:
        selects = count_selects(store)
        store.flush()
        assert store.pending == 0 and selects == []

    def test_readers_see_committed_rows_only_and_do_not_wait(
        self, store: Store, other: Store
    ) -> None:
        if other is store:
            pytest.skip(NO_SECOND_READER)
        writer, reader = store, other
        writer.create_experiment(record())
        writer.put_trial(trial(0))
        assert reader.get_trials("exp00001") == []  # buffered, not flushed
        writer.flush()
        assert [t.number for t in reader.get_trials("exp00001")] == [0]
        # a write transaction in progress holds the write lock; readers neither wait nor see it
        with engine_write(writer) as conn:
            conn.execute(
                trials.insert().values(
                    experiment_id="exp00001",
                    number=1,
                    params={},
                    status="WAITING",
                    attempt=1,
                    metrics={},
                )
            )
            started = time.monotonic()
            assert [t.number for t in reader.get_trials("exp00001")] == [0]
            assert time.monotonic() - started < 2
        assert [t.number for t in reader.get_trials("exp00001")] == [0, 1]

    def test_a_reader_transaction_does_not_block_a_flush(self, store: Store, other: Store) -> None:
        if other is store:
            pytest.skip(NO_SECOND_READER)
        writer, reader = store, other
        writer.create_experiment(record())
        with read(reader) as conn:  # an open read transaction
            conn.execute(text("SELECT count(*) FROM trials")).scalar()
            writer.put_trial(trial(0))
            started = time.monotonic()
            writer.flush()
            assert time.monotonic() - started < 2
        assert len(reader.get_trials("exp00001")) == 1

    def test_reads_from_other_threads_while_the_driver_writes(self, store: Store) -> None:
        store.create_experiment(record())
        stop = threading.Event()
        errors: list[BaseException] = []

        def read() -> None:
            while not stop.is_set():
                try:
                    store.get_trials("exp00001")
                    store.list_experiments()
                    store.pending_controls("exp00001")
                except BaseException as exc:
                    errors.append(exc)
                    return

        readers = [threading.Thread(target=read) for _ in range(2)]
        for thread in readers:
            thread.start()
        try:
            for batch in range(10):
                for number in range(batch * 20, batch * 20 + 20):
                    store.put_trial(trial(number))
                    store.add_report("exp00001", number, Report(0, {"loss": 1.0}, 1.0))
                store.flush()
        finally:
            stop.set()
            for thread in readers:
                thread.join()
        assert errors == []
        assert len(store.get_trials("exp00001")) == 200

    # ---- control requests ------------------------------------------------------------------

    def test_control_lifecycle(self, store: Store, other: Store) -> None:
        store.create_experiment(record())
        first = store.send_control("exp00001", StopExperiment())
        second = store.send_control("exp00001", SetConcurrency(value=4))
        third = store.send_control("exp00001", KillTrial(number=7))
        assert first < second < third
        pending = other.pending_controls("exp00001")
        assert pending == [
            Control(first, "exp00001", StopExperiment(), 1000.0),
            Control(second, "exp00001", SetConcurrency(value=4), 1001.0),
            Control(third, "exp00001", KillTrial(number=7), 1002.0),
        ]
        assert [c.kind for c in pending] == [
            ControlKind.STOP,
            ControlKind.SET_CONCURRENCY,
            ControlKind.KILL_TRIAL,
        ]
        store.finish_control(first, ControlOutcome.ok("stopping", trial=12))
        store.finish_control(third, ControlOutcome.rejected("trial 7 is not running"))
        assert store.pending == 2
        assert [c.id for c in store.pending_controls("exp00001")] == [second]  # at once
        if other is not store:
            assert [c.id for c in other.pending_controls("exp00001")] == [first, second, third]
        store.flush()
        assert [c.id for c in other.pending_controls("exp00001")] == [second]
        applied = other.get_control(first)
        assert (applied.outcome, applied.applied_at) == (
            ControlOutcome(True, "stopping", 12),
            1003.0,
        )
        rejected = other.get_control(third)
        assert rejected.outcome == ControlOutcome(False, "trial 7 is not running")
        unapplied = other.get_control(second)
        assert unapplied.applied_at is None and unapplied.outcome is None
        with pytest.raises(StoreError, match="no control request 999"):
            other.get_control(999)

    def test_every_kind_of_control_request_round_trips(self, store: Store, other: Store) -> None:
        store.create_experiment(record())
        requests: list[ControlRequest] = [
            StopExperiment(),
            KillTrial(number=0),
            SetConcurrency(value=MAX_CONCURRENCY),
            SetMaxTrials(value=MAX_TRIALS),
            SetMaxDuration(value=0.125),
            UpdateSearchSpace(space={"lr": {"_type": "uniform", "_value": [0, 1]}}),
            AddTrial(params={"lr": 0.5, "nested": {"_name": "a", "k": [1, 2]}}),
            ImportData(
                results=[
                    ImportedResult(params={"lr": 0.25}, value=0.5),
                    ImportedResult(params={"lr": 0.75}, value=-1.0, metrics={"acc": 0.9}),
                ]
            ),
        ]
        assert {r.kind for r in requests} == set(ControlKind)
        ids = [store.send_control("exp00001", request) for request in requests]
        assert [c.request for c in other.pending_controls("exp00001")] == requests
        assert [other.get_control(i).request for i in ids] == requests
        assert all(
            type(other.get_control(i).request) is type(r)
            for i, r in zip(ids, requests, strict=True)
        )

    def test_pending_controls_is_one_cheap_query(self, store: Store) -> None:
        store.create_experiment(record())
        store.send_control("exp00001", StopExperiment())
        selects = count_selects(store)
        for _ in range(20):
            store.pending_controls("exp00001")
        assert len(selects) == 20

    def test_a_control_this_version_cannot_read_comes_back_unreadable(
        self, store: Store, other: Store
    ) -> None:
        store.create_experiment(record())
        with write(store, "test") as conn:  # as a newer hyperlab would have written it
            conn.execute(
                controls.insert().values(
                    experiment_id="exp00001", kind="rewind", payload={}, created_at=1.0
                )
            )
        stop = store.send_control("exp00001", StopExperiment())
        unreadable, readable = other.pending_controls("exp00001")
        assert readable.id == stop and readable.request == StopExperiment()
        assert isinstance(unreadable.request, UnreadableRequest)
        assert unreadable.kind == "rewind" and "unknown kind" in unreadable.request.problem
        assert other.pending == 0  # reading wrote nothing
        store.finish_control(unreadable.id, ControlOutcome.rejected(unreadable.request.problem))
        store.flush()
        assert other.get_control(unreadable.id).outcome == ControlOutcome(
            False, unreadable.request.problem
        )
