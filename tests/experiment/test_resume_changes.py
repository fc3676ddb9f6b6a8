"""``hyperlab.resume`` with changes: a new budget and concurrency apply and are recorded in the
store; a change of the wrong type or out of range is refused, naming it, before anything is
written; a ``max_trials`` the experiment already reached is taken as NNI takes it."""

from __future__ import annotations

import threading
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import hyperlab
from hyperlab.errors import ConfigError
from hyperlab.store import Store
from hyperlab.trial import ExperimentStatus

SPACE = {"x": hyperlab.uniform(0, 1)}


def objective(params: dict[str, Any]) -> float:
    return float(params["x"])


class Overlap:
    """An objective that records how many of its calls ran at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0

    def __call__(self, params: dict[str, Any]) -> float:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(0.2)
        with self.lock:
            self.now -= 1
        return float(params["x"])


@pytest.fixture
def done(tmp_path: Path) -> tuple[str, str]:
    """(storage, id) of an experiment of 3 thread trials, one at a time, that ended DONE."""
    storage = str(tmp_path / "runs.db")
    result = hyperlab.run(
        objective, SPACE, max_trials=3, executor="threads", storage=storage, seed=1, progress=False
    )
    assert result.status is ExperimentStatus.DONE and len(result.trials) == 3
    return storage, result.experiment_id


def snapshot(storage: str, experiment_id: str) -> tuple[Any, ...]:
    """Everything resume could have written: the experiment's row, its trials, its controls."""
    with Store.open(storage) as store:
        record = asdict(store.get_experiment(experiment_id))
        trials = store.get_trials(experiment_id)
        pending = store.pending_controls(experiment_id)
    return record, trials, pending


def stored_options(storage: str, experiment_id: str) -> Any:
    """The options the store holds: what ``hyperlab show`` reports."""
    with Store.open(storage) as store:
        return store.get_experiment(experiment_id).options


def test_a_new_budget_and_concurrency_apply_and_are_recorded(done, tmp_path):
    storage, experiment_id = done
    overlap = Overlap()
    result = hyperlab.resume(
        experiment_id,
        storage=storage,
        objective=overlap,
        max_trials=7,
        max_duration="2h",
        concurrency=2,
        progress=False,
    )
    assert result.status is ExperimentStatus.DONE and len(result.trials) == 7
    assert overlap.most == 2  # the 4 new trials ran two at a time
    options = stored_options(storage, experiment_id)
    assert (options.max_trials, options.max_duration, options.concurrency) == (7, 7200.0, 2)


def test_nothing_given_keeps_the_stored_options(done):
    storage, experiment_id = done
    before = stored_options(storage, experiment_id)
    result = hyperlab.resume(experiment_id, storage=storage, progress=False)
    assert len(result.trials) == 3
    assert stored_options(storage, experiment_id) == before


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"max_trials": -1}, "max_trials: input should be greater than or equal to 1, got -1"),
        ({"max_trials": 0}, "max_trials: input should be greater than or equal to 1, got 0"),
        ({"max_trials": "5"}, "max_trials: input should be a valid integer, got '5'"),
        ({"max_trials": True}, "max_trials: input should be a valid integer, got True"),
        ({"max_trials": 4.0}, "max_trials: input should be a valid integer, got 4.0"),
        ({"max_duration": -5}, "max_duration: expected a positive number of seconds"),
        ({"max_duration": "soon"}, "max_duration: expected a positive number of seconds"),
        ({"max_duration": True}, "max_duration: expected a positive number of seconds"),
        ({"max_duration": float("inf")}, "max_duration: expected a positive number"),
        ({"concurrency": 0}, "concurrency: input should be greater than or equal to 1, got 0"),
        ({"concurrency": "2"}, "concurrency: input should be a valid integer, got '2'"),
        ({"concurrency": 1.5}, "concurrency: input should be a valid integer, got 1.5"),
    ],
)
def test_a_bad_change_is_refused_naming_it_and_nothing_is_written(done, change, expected):
    storage, experiment_id = done
    before = snapshot(storage, experiment_id)
    with pytest.raises(ConfigError) as caught:
        hyperlab.resume(experiment_id, storage=storage, progress=False, **change)
    assert str(caught.value).startswith(expected)
    assert snapshot(storage, experiment_id) == before


@settings(derandomize=True, max_examples=40, deadline=None)
@given(
    field=st.sampled_from(["max_trials", "concurrency"]),
    value=st.integers(max_value=0)
    | st.floats(allow_nan=True)
    | st.text(max_size=3)
    | st.booleans()
    | st.lists(st.integers(), max_size=2),
)
def test_any_budget_that_is_not_a_whole_number_above_0_is_refused(tmp_path_factory, field, value):
    storage = str(tmp_path_factory.mktemp("refused") / "runs.db")
    with pytest.raises(ConfigError, match=rf"^{field}: .*, got "):
        hyperlab.resume("anything", storage=storage, **{field: value})
    assert not Path(storage).exists()  # refused before the store was opened


def test_run_with_resume_checks_the_budget_as_resume_does(done):
    storage, experiment_id = done
    before = snapshot(storage, experiment_id)
    with pytest.raises(ConfigError, match=r"^max_trials: input should be a valid integer"):
        hyperlab.run(objective, SPACE, resume=experiment_id, storage=storage, max_trials="9")
    assert snapshot(storage, experiment_id) == before


def test_max_trials_the_experiment_already_reached_creates_none_and_ends_done(done):
    """As NNI's manager takes a lower maxTrialNumber: no new trial, the experiment ends DONE;
    hyperlab also says so, and records the budget it was given."""
    storage, experiment_id = done
    with pytest.warns(UserWarning, match=rf"max_trials=2: experiment {experiment_id} already "):
        result = hyperlab.resume(experiment_id, storage=storage, max_trials=2, progress=False)
    assert result.status is ExperimentStatus.DONE and len(result.trials) == 3
    assert stored_options(storage, experiment_id).max_trials == 2
    raised = hyperlab.resume(experiment_id, storage=storage, max_trials=4, progress=False)
    assert len(raised.trials) == 4  # raised again: one more
