"""``Store.iter_trials``: every trial exactly once, in number order, as ``get_trials`` reads
them (phases and reports included), a batch at a time, on sparse numbers too; what NNI's
listings stream, so that one request holds a batch, not the experiment."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperlab.config import ExperimentOptions
from hyperlab.errors import ExperimentNotFound
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Report, Trial, TrialStatus

SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}
IDS = itertools.count()


def _experiment(store: Store, experiment_id: str) -> None:
    store.create_experiment(
        ExperimentRecord(
            experiment_id,
            experiment_id,
            ExperimentStatus.DONE,
            ExperimentOptions(metric="loss"),
            SPACE,
            0,
            None,
            1.0,
        )
    )


def _trial(experiment_id: str, number: int) -> Trial:
    return Trial(experiment_id, number, {"x": number / 1000}, TrialStatus.SUCCEEDED, 1, 0.5)


def _write(store: Store, experiment_id: str, numbers: list[int]) -> None:
    _experiment(store, experiment_id)
    for number in numbers:
        store.put_trial(_trial(experiment_id, number))
        store.add_report(experiment_id, number, Report(0, {"loss": float(number)}, 2.0, 1))
    store.flush()


@pytest.fixture
def store(persistent_storage):
    with Store.open(persistent_storage) as opened:
        yield opened


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    numbers=st.sets(st.integers(0, 5000), max_size=40).map(sorted),
    batch=st.integers(1, 12),
)
def test_every_trial_once_in_order_as_get_trials_reads_them(store, numbers, batch):
    experiment_id = f"it{next(IDS):06d}"  # one database for every example
    _write(store, experiment_id, numbers)
    batches = list(store.iter_trials(experiment_id, batch=batch))
    assert all(0 < len(b) <= batch for b in batches)
    assert [t for b in batches for t in b] == store.get_trials(experiment_id)
    assert [t.number for b in batches for t in b] == numbers


def test_a_trial_created_while_iterating_comes_too_and_none_twice(store):
    _write(store, "growing", [0, 1, 2, 3])
    seen = []
    for trials in store.iter_trials("growing", batch=2):
        seen += [t.number for t in trials]
        if seen == [0, 1]:
            store.put_trial(_trial("growing", 4))
            store.flush()
    assert seen == [0, 1, 2, 3, 4]


def test_an_unknown_experiment_is_not_found_and_an_empty_one_yields_nothing(store):
    _experiment(store, "empty")
    assert list(store.iter_trials("empty")) == []
    with pytest.raises(ExperimentNotFound):
        list(store.iter_trials("nothing"))
