"""The cases of ``hyperlab.testing.StoreContract`` about records: experiments, trials, reports,
status changes, listing and deleting; with the helpers every case uses."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from sqlalchemy import text

from hyperlab.config import ExperimentOptions
from hyperlab.errors import ConfigError, ExperimentNotFound, StoreError
from hyperlab.store import (
    ExperimentRecord,
    ExperimentSummary,
    StopExperiment,
    Store,
    TrialEvent,
    TrialNotFound,
)
from hyperlab.testing._store_hook import count_selects, read
from hyperlab.trial import ExperimentStatus, Mode, Report, Trial, TrialStatus

__all__ = ["RecordCases", "Ticks", "done", "record", "trial"]

NO_SECOND_READER = "an in-memory database is seen by one Store only: no separate reader"


class Ticks:
    """A fake clock for the times the store stamps itself: 1000.0, 1001.0, ..."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start - 1.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def record(experiment_id: str = "exp00001", **fields: Any) -> ExperimentRecord:
    """An experiment record with plain defaults, ``fields`` replacing them."""
    values: dict[str, Any] = {
        "name": None,
        "status": ExperimentStatus.INITIALIZED,
        "options": ExperimentOptions(metric="loss"),
        "space": {"x": {"_type": "uniform", "_value": [0, 1]}},
        "seed": 42,
        "objective": None,
        "created_at": 1_700_000_000.0,
    }
    values.update(fields)
    return ExperimentRecord(id=experiment_id, **values)


def trial(number: int, experiment_id: str = "exp00001", **fields: Any) -> Trial:
    """A WAITING trial with ``params={"x": number / 10}`` unless ``fields`` say otherwise."""
    fields.setdefault("params", {"x": number / 10})
    return Trial(experiment_id=experiment_id, number=number, **fields)


def done(number: int, value: float | None, experiment_id: str = "exp00001", **fields: Any) -> Trial:
    """A SUCCEEDED trial (unless ``fields`` say otherwise) whose ``loss`` is ``value``."""
    fields.setdefault("status", TrialStatus.SUCCEEDED)
    return trial(number, experiment_id, value=value, metrics={"loss": value}, **fields)


class RecordCases:
    """Records round-trip exactly; reads are ordered and cheap; listing and deleting."""

    # ---- experiments -----------------------------------------------------------------------

    def test_experiment_round_trip(self, store: Store) -> None:
        rec = record(
            "abc12345",
            name="tuning ünïcode",
            status=ExperimentStatus.RUNNING,
            options=ExperimentOptions(
                metric="acc", mode=Mode.MAX, tuner_args={"a": [1, 2.5, None, True]}
            ),
            objective_ref="train:objective",
            tuner=b"\x80tuner",
            space={"lr": {"_type": "loguniform", "_value": [1e-5, 1.0]}},
            seed=2**62 + 7,
            objective=b"\x00\x80pickle\xff" * 100,
            created_at=1_700_000_000.123456,
            started_at=1_700_000_001.5,
            finished_at=1_700_000_002.25,
            error="boom\ntraceback",
            driver_host="node-1",
            driver_pid=4242,
            heartbeat_at=1_700_000_001.75,
            environment={"git": {"commit": "3dd6470f", "diff": "+é\n"}, "packages": ["a==1"]},
        )
        store.create_experiment(rec)
        assert store.get_experiment("abc12345") == rec

    def test_duplicate_experiment_is_refused(self, store: Store) -> None:
        store.create_experiment(record())
        with pytest.raises(StoreError, match="'exp00001' already exists"):
            store.create_experiment(record())

    def test_bad_experiment_id_is_refused(self, store: Store) -> None:
        with pytest.raises(ConfigError, match="experiment id"):
            store.create_experiment(record("../etc"))

    def test_unknown_experiment(self, store: Store) -> None:
        with pytest.raises(ExperimentNotFound) as info:
            store.get_experiment("nope1234")
        assert str(info.value) == f"no experiment 'nope1234' in {store.url}"
        assert isinstance(info.value, KeyError)
        for call in (
            lambda: store.get_trials("nope1234"),
            lambda: store.get_trial("nope1234", 0),
            lambda: store.get_trial_events("nope1234"),
            lambda: store.delete_experiment("nope1234"),
            lambda: store.send_control("nope1234", StopExperiment()),
        ):
            with pytest.raises(ExperimentNotFound, match="nope1234"):
                call()
        assert store.pending_controls("nope1234") == []

    def test_update_experiment_is_buffered_and_merged(self, store: Store, other: Store) -> None:
        store.create_experiment(record())
        store.update_experiment("exp00001", status=ExperimentStatus.RUNNING, started_at=5.0)
        store.update_experiment("exp00001", heartbeat_at=6.0, driver_pid=7, driver_host="h")
        store.update_experiment(
            "exp00001", heartbeat_at=8.0, options=ExperimentOptions(mode=Mode.MAX)
        )
        assert store.pending == 1
        if other is not store:
            assert other.get_experiment("exp00001").status is ExperimentStatus.INITIALIZED
        store.flush()
        assert store.pending == 0
        got = other.get_experiment("exp00001")
        assert (got.status, got.started_at, got.heartbeat_at) == (
            ExperimentStatus.RUNNING,
            5.0,
            8.0,
        )
        assert (got.driver_pid, got.driver_host) == (7, "h")
        assert got.options == ExperimentOptions(mode=Mode.MAX)
        assert got.space == record().space

    def test_space_and_server_url_can_change(self, store: Store, other: Store) -> None:
        store.create_experiment(record())
        space = {"lr": {"_type": "loguniform", "_value": [1e-5, 1.0]}}
        store.update_experiment("exp00001", space=space, server_url="http://127.0.0.1:8080")
        store.flush()
        got = other.get_experiment("exp00001")
        assert (got.space, got.server_url) == (space, "http://127.0.0.1:8080")

    def test_imported_results_round_trip_in_order(self, store: Store, other: Store) -> None:
        store.create_experiment(record())
        with pytest.raises(ExperimentNotFound):
            other.get_imported("nope1234")
        assert other.get_imported("exp00001") == []
        store.add_imported("exp00001", {"lr": 0.5, "act": "relu"}, 0.25, {"acc": 0.75})
        store.add_imported("exp00001", {"lr": 0.1, "act": "tanh"}, -2.0, {})
        if other is not store:
            assert other.get_imported("exp00001") == []  # buffered until the flush
        store.flush()
        got = other.get_imported("exp00001")
        assert [(i.params, i.value, i.metrics) for i in got] == [
            ({"lr": 0.5, "act": "relu"}, 0.25, {"acc": 0.75}),
            ({"lr": 0.1, "act": "tanh"}, -2.0, {}),
        ]
        assert got[0].id < got[1].id
        assert store.get_trials("exp00001") == []  # imported results are not trials

    def test_update_experiment_rejects_unknown_fields(self, store: Store) -> None:
        with pytest.raises(TypeError, match="cannot change objective, seed; allowed fields"):
            store.update_experiment("exp00001", seed=1, objective=b"")
        assert store.pending == 0

    # ---- trials ----------------------------------------------------------------------------

    def test_trial_round_trip_with_reports(self, store: Store) -> None:
        store.create_experiment(record())
        full = Trial(
            experiment_id="exp00001",
            number=3,
            params={"lr": 0.001, "layers": [64, 32], "act": "relu", "nested": {"on": True}},
            status=TrialStatus.SUCCEEDED,
            attempt=2,
            value=0.125,
            metrics={"loss": 0.125, "acc": 0.9, "note": "ok"},
            reports=(Report(99, {"ignored": 1}, 0.0),),  # reports inside a Trial are not stored
            error="warning: slow",
            seed=2**63 - 1,
            created_at=10.5,
            started_at=11.25,
            finished_at=12.125,
            parent=1,
            source="custom",
        )
        store.put_trial(full)
        reports_in = [
            Report(1, {"loss": 0.5}, 3.0, attempt=2),
            Report(0, {"loss": 0.9}, 2.0, attempt=2),
            Report(5, {"loss": 0.7}, 1.0, attempt=1),
            Report(1, {"loss": 0.4}, 4.0, attempt=2),
        ]
        for report in reports_in:
            store.add_report("exp00001", 3, report)
        store.flush()
        expected_reports = (reports_in[2], reports_in[1], reports_in[0], reports_in[3])
        expected = dataclasses.replace(full, reports=expected_reports)
        assert store.get_trials("exp00001") == [expected]
        assert store.get_trial("exp00001", 3) == expected
        assert store.get_trials("exp00001", reports=False) == [
            dataclasses.replace(full, reports=())
        ]

    def test_trials_come_back_ordered_by_number_in_three_queries(self, store: Store) -> None:
        store.create_experiment(record())
        for number in (5, 1, 4, 0, 3, 2):
            store.put_trial(trial(number))
            store.add_report("exp00001", number, Report(0, {"loss": number}, 1.0))
        store.flush()
        selects = count_selects(store)
        got = store.get_trials("exp00001")
        assert [t.number for t in got] == [0, 1, 2, 3, 4, 5]
        assert [t.reports[0].metrics["loss"] for t in got] == [0, 1, 2, 3, 4, 5]
        assert len(selects) == 3  # trials, reports, phases

    def test_empty_experiment_has_no_trials(self, store: Store) -> None:
        store.create_experiment(record())
        assert store.get_trials("exp00001") == []
        assert store.get_trial_events("exp00001") == []

    def test_unknown_trial(self, store: Store) -> None:
        store.create_experiment(record())
        with pytest.raises(TrialNotFound, match="no trial 7 in experiment 'exp00001'") as info:
            store.get_trial("exp00001", 7)
        assert isinstance(info.value, StoreError) and isinstance(info.value, KeyError)

    def test_put_trial_replaces_the_whole_row(self, store: Store) -> None:
        store.create_experiment(record())
        store.put_trial(
            trial(0, status=TrialStatus.FAILED, error="bad", metrics={"a": 1, "b": 2}, value=3.0)
        )
        store.flush()
        replacement = trial(0, params={"x": 9}, status=TrialStatus.WAITING, attempt=2)
        store.put_trial(replacement)
        store.flush()
        assert store.get_trials("exp00001") == [replacement]

    def test_repeated_puts_coalesce_but_every_status_change_is_an_event(self, store: Store) -> None:
        store.create_experiment(record())
        waiting = trial(0, created_at=1.0)
        running = dataclasses.replace(waiting, status=TrialStatus.RUNNING, started_at=2.0)
        finished = dataclasses.replace(
            running,
            status=TrialStatus.SUCCEEDED,
            value=0.5,
            metrics={"loss": 0.5},
            finished_at=3.0,
        )
        for each in (waiting, running, running, finished):
            store.put_trial(each)
        assert store.pending == 4  # one trial row, three status changes
        store.flush()
        assert store.pending == 0
        assert store.get_trials("exp00001") == [finished]
        events = store.get_trial_events("exp00001")
        assert [(e.number, e.attempt, e.status) for e in events] == [
            (0, 1, TrialStatus.WAITING),
            (0, 1, TrialStatus.RUNNING),
            (0, 1, TrialStatus.SUCCEEDED),
        ]
        assert all(isinstance(e, TrialEvent) and isinstance(e.time, float) for e in events)
        assert events[0].time <= events[1].time <= events[2].time

    def test_status_events_across_flushes_attempts_and_stores(
        self, store: Store, storage: str
    ) -> None:
        store.create_experiment(record())
        store.put_trial(trial(0))
        store.put_trial(trial(1))
        store.flush()
        store.put_trial(trial(0))  # same status again: no event
        store.put_trial(trial(0, status=TrialStatus.RUNNING))
        store.put_trial(trial(0, status=TrialStatus.WAITING, attempt=2))  # re-queued
        store.flush()
        assert store.get_trial_events("exp00001", 0) == [
            TrialEvent(0, 1, TrialStatus.WAITING, 1000.0),
            TrialEvent(0, 1, TrialStatus.RUNNING, 1002.0),
            TrialEvent(0, 2, TrialStatus.WAITING, 1003.0),
        ]
        assert [e.number for e in store.get_trial_events("exp00001")] == [0, 1, 0, 0]
        if not store.in_memory:
            with Store.open(storage) as resumed:  # a new driver has not seen trial 1 yet
                resumed.put_trial(trial(1))
                resumed.put_trial(trial(1))
                resumed.flush()
            assert len(store.get_trial_events("exp00001", 1)) == 2

    def test_non_finite_floats_round_trip(self, store: Store) -> None:
        store.create_experiment(record(space={"fill": ["NaN", math.nan, math.inf]}))
        params = {
            "nan": math.nan,
            "inf": math.inf,
            "ninf": -math.inf,
            "list": [1.0, math.nan, "Infinity", "~NaN", "-Infinity"],
            "np": np.float64("nan"),
            "NaN": "NaN",
        }
        store.put_trial(
            trial(0, params=params, value=math.nan, metrics={"loss": math.inf, "name": "NaN"})
        )
        store.put_trial(trial(1, value=-math.inf, seed=np.int64(5)))
        store.add_report("exp00001", 0, Report(0, {"loss": -math.inf, "acc": math.nan}, 1.0))
        store.flush()
        first, second = store.get_trials("exp00001")
        assert first.value is None and second.value is None  # non-finite values are stored NULL
        assert second.seed == 5 and type(second.seed) is int
        got = first.params
        assert math.isnan(got["nan"]) and got["inf"] == math.inf and got["ninf"] == -math.inf
        assert math.isnan(got["np"]) and got["NaN"] == "NaN"
        assert got["list"][0] == 1.0 and math.isnan(got["list"][1])
        assert got["list"][2:] == ["Infinity", "~NaN", "-Infinity"]
        assert first.metrics == {"loss": math.inf, "name": "NaN"}
        assert first.reports[0].metrics["loss"] == -math.inf
        assert math.isnan(first.reports[0].metrics["acc"])
        rec = store.get_experiment("exp00001")
        assert rec.space["fill"][0] == "NaN" and math.isnan(rec.space["fill"][1])
        assert rec.space["fill"][2] == math.inf

    def test_values_that_are_not_json_fail_the_put(self, store: Store) -> None:
        with pytest.raises(TypeError, match="must be JSON types, got object"):
            store.put_trial(trial(0, params={"x": object()}))
        with pytest.raises(TypeError, match="must be JSON types"):
            store.add_report("exp00001", 0, Report(0, {"x": {1, 2}}, 1.0))
        assert store.pending == 0

    # ---- listing and deleting --------------------------------------------------------------

    def test_list_experiments_counts_and_best_per_mode(self, store: Store) -> None:
        store.create_experiment(
            record(
                "minexp01", name="low", created_at=100.0, options=ExperimentOptions(max_trials=10)
            )
        )
        store.create_experiment(
            record(
                "maxexp01",
                created_at=300.0,
                options=ExperimentOptions(mode=Mode.MAX),
                status=ExperimentStatus.RUNNING,
                started_at=301.0,
            )
        )
        store.create_experiment(record("emptyexp", created_at=200.0, options=ExperimentOptions()))
        for eid in ("minexp01", "maxexp01"):
            store.put_trial(done(0, 2.0, eid))
            store.put_trial(done(1, 5.0, eid))
            store.put_trial(done(2, math.nan, eid))  # no finite value: ignored
            store.put_trial(done(3, -9.0, eid, status=TrialStatus.FAILED))  # not a success
            store.put_trial(done(4, 99.0, eid, status=TrialStatus.EARLY_STOPPED))
            store.put_trial(trial(5, eid, status=TrialStatus.RUNNING))
            store.put_trial(trial(6, eid))
        store.flush()
        selects = count_selects(store)
        summaries = store.list_experiments()
        assert len(selects) == 1
        assert [s.id for s in summaries] == ["maxexp01", "emptyexp", "minexp01"]
        by_id = {s.id: s for s in summaries}
        assert by_id["minexp01"] == ExperimentSummary(
            id="minexp01",
            name="low",
            status=ExperimentStatus.INITIALIZED,
            mode=Mode.MIN,
            created_at=100.0,
            started_at=None,
            finished_at=None,
            elapsed=0.0,
            driver_lost=False,
            n_trials=7,
            n_finished=5,
            n_failed=1,
            n_running=1,
            best_value=2.0,
            max_trials=10,
            modes=(Mode.MIN,),
        )
        assert by_id["maxexp01"].best_value == 5.0
        assert by_id["maxexp01"].started_at == 301.0
        assert by_id["maxexp01"].status is ExperimentStatus.RUNNING
        assert by_id["maxexp01"].driver_lost  # RUNNING, and no driver holds its lease
        empty = by_id["emptyexp"]
        assert (empty.n_trials, empty.n_finished, empty.n_failed, empty.n_running) == (0, 0, 0, 0)
        assert empty.best_value is None and empty.max_trials is None

    def test_list_experiments_of_an_empty_store(self, store: Store) -> None:
        assert store.list_experiments() == []

    def test_delete_experiment_removes_everything_it_owns(self, store: Store) -> None:
        for eid in ("doomed01", "keeper01"):
            store.create_experiment(record(eid))
            store.put_trial(trial(0, eid))
            store.add_report(eid, 0, Report(0, {"loss": 1.0}, 1.0))
            store.add_imported(eid, {"lr": 0.5}, 1.0, {})
            store.send_control(eid, StopExperiment())
        store.flush()
        store.delete_experiment("doomed01")
        with pytest.raises(ExperimentNotFound):
            store.get_experiment("doomed01")
        with read(store) as conn:
            for table in ("trials", "reports", "trial_events", "imported", "controls"):
                rows = conn.execute(text(f"SELECT experiment_id FROM {table}")).scalars().all()
                assert rows == ["keeper01"], table
        store.create_experiment(record("doomed01"))  # the id can be used again, from scratch
        assert store.get_trials("doomed01") == []
        assert store.pending_controls("doomed01") == []
        store.put_trial(trial(0, "doomed01"))  # counts as a new trial: its status is an event
        store.flush()
        assert len(store.get_trial_events("doomed01")) == 1
        assert [s.id for s in store.list_experiments()] == ["keeper01", "doomed01"]

    def test_best_trial_per_mode_earliest_among_equals(self, store: Store) -> None:
        store.create_experiment(record())
        assert store.get_best_trial("exp00001") is None
        for each in (
            done(0, 0.5),
            done(1, 0.2),
            done(2, 0.9),
            done(3, 0.2),
            trial(4, status=TrialStatus.FAILED),
            done(5, None),
        ):
            store.put_trial(each)
        store.add_report("exp00001", 1, Report(0, {"loss": 0.3}, 1.0))
        store.flush()
        best = store.get_best_trial("exp00001", "min")
        assert best is not None and (best.number, best.value) == (1, 0.2)
        assert [r.metrics for r in best.reports] == [{"loss": 0.3}]
        best_max = store.get_best_trial("exp00001", "max")
        assert best_max is not None and best_max.number == 2
        with pytest.raises(ExperimentNotFound):
            store.get_best_trial("nosuchid")
