"""``Store.ids_named``: the experiments of one name, newest first, as ``list_experiments``
would list them, read without reading any other experiment."""

from __future__ import annotations

from hyperlab.config import ExperimentOptions
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus


def _record(experiment_id: str, name: str | None, created_at: float) -> ExperimentRecord:
    return ExperimentRecord(
        id=experiment_id,
        name=name,
        status=ExperimentStatus.INITIALIZED,
        options=ExperimentOptions(),
        space={"x": {"_type": "uniform", "_value": [0, 1]}},
        seed=0,
        objective=None,
        created_at=created_at,
    )


def test_ids_named_newest_first_like_the_listing(tmp_path) -> None:
    with Store.open(str(tmp_path / "s.db")) as store:
        for experiment_id, name, created in [
            ("a1", "same", 1.0),
            ("b2", "other", 2.0),
            ("c3", "same", 3.0),
            ("d4", None, 4.0),
            ("e5", "same", 3.0),  # a tie on the time: the larger id first
        ]:
            store.create_experiment(_record(experiment_id, name, created))
        listed = [s.id for s in store.list_experiments() if s.name == "same"]
        assert store.ids_named("same") == listed == ["e5", "c3", "a1"]
        assert store.ids_named("other") == ["b2"]
        assert store.ids_named("nobody") == []
