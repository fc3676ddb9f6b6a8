"""Two handles that continue one stopped experiment, both built before either runs (two
processes resuming it at once): the one that runs second must not number its trials from the
stale read of the first's trials."""

from __future__ import annotations

from pathlib import Path

import pytest

import hyperlab
from hyperlab.errors import ExperimentBusy
from hyperlab.store import Store


def square(params: dict[str, float]) -> float:
    return params["x"] ** 2


def test_a_resume_built_before_another_driver_ran_refuses_to_start(tmp_path: Path) -> None:
    storage = str(tmp_path / "race.db")
    space = {"x": hyperlab.uniform(0, 1)}
    first = hyperlab.run(square, space, max_trials=3, tuner="random", storage=storage)
    assert first.status is hyperlab.ExperimentStatus.DONE
    early = hyperlab.Experiment.resume(first.experiment_id, storage=storage, max_trials=5)
    late = hyperlab.Experiment.resume(first.experiment_id, storage=storage, max_trials=5)
    early.run()
    with pytest.raises(ExperimentBusy, match=r"another driver ran it .* load it again"):
        late.run()
    with Store.open(storage) as store:
        numbers = [t.number for t in store.get_trials(first.experiment_id, reports=False)]
        record = store.get_experiment(first.experiment_id)
    assert numbers == [0, 1, 2, 3, 4]  # none numbered twice
    assert record.status is hyperlab.ExperimentStatus.DONE
    again = hyperlab.Experiment.resume(first.experiment_id, storage=storage, max_trials=6)
    again.run()  # a fresh read continues it
    with Store.open(storage) as store:
        assert [t.number for t in store.get_trials(first.experiment_id, reports=False)] == list(
            range(6)
        )
