"""The REST API's incremental reads at scale (issue 31): "the trials changed after a cursor"
and "the first report of these trials" read through the indexes (each trial's own changes
and reports), not a pass over every change or report; they answer what the definitions say."""

from __future__ import annotations

import dataclasses
import random

import pytest
from sqlalchemy import select

from hyperlab.config import ExperimentOptions
from hyperlab.store import ExperimentRecord, Store
from hyperlab.store._report_queries import changed_trials, first_report_metrics
from hyperlab.store._schema import reports, trial_events
from hyperlab.trial import ExperimentStatus, Report, Trial, TrialStatus

FLOW = [TrialStatus.WAITING, TrialStatus.RUNNING, TrialStatus.SUCCEEDED]


@pytest.fixture
def store(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 's.db'}")
    for experiment in ("e1", "e2"):
        record = ExperimentRecord(
            experiment, None, ExperimentStatus.RUNNING, ExperimentOptions(), {}, 0, None, 0.0
        )
        store.create_experiment(record)
    rng = random.Random(5)
    trials = {n: Trial("e1", n, {"x": n}, TrialStatus.WAITING) for n in range(40)}
    stage = dict.fromkeys(trials, 0)
    for round_ in range(12):  # trials move on in random order, a few at a time, between flushes
        for number in rng.sample(sorted(trials), 9):
            stage[number] += 1
            status = FLOW[stage[number] % 3]
            trials[number] = dataclasses.replace(trials[number], status=status)
            store.put_trial(trials[number])
            store.put_trial(dataclasses.replace(trials[number], number=number, experiment_id="e2"))
            report = Report(round_, {"loss": round_ + number / 100}, float(round_))
            store.add_report("e1", number, report)
        store.flush()
    yield store
    store.close()


def test_changed_trials_are_each_trials_latest_change_in_order(store):
    with store._read() as conn:
        rows = conn.execute(
            select(trial_events.c.id, trial_events.c.number)
            .where(trial_events.c.experiment_id == "e1")
            .order_by(trial_events.c.id)
        ).all()
        ids = [i for i, _ in rows]
        for after in [0, *ids[::7], ids[-1]]:
            latest: dict[int, int] = {}
            for i, number in rows:
                if i > after:
                    latest[number] = i
            expected = sorted(latest, key=latest.__getitem__)
            for limit in (1, 5, 1000):
                numbers, cursor, more = changed_trials(conn, "e1", after, limit)
                assert numbers == expected[:limit]
                assert cursor == (latest[numbers[-1]] if numbers else after)
                assert more == (len(expected) > limit)


def test_the_first_report_of_some_trials(store):
    with store._read() as conn:
        rows = conn.execute(
            select(reports.c.id, reports.c.number, reports.c.metrics)
            .where(reports.c.experiment_id == "e1")
            .order_by(reports.c.id)
        ).all()
        rng = random.Random(2)
        for _ in range(20):
            numbers = rng.sample(range(45), 4)  # some without reports, or no trial
            first = next((m for _, n, m in rows if n in numbers), None)
            assert first_report_metrics(conn, "e1", numbers) == first
        assert first_report_metrics(conn, "e2", [1, 2]) is None
