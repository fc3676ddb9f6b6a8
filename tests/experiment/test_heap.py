"""The driver leaves the objects that existed before a run out of the collector's passes while
the run goes on, and puts them back at its end, unless the process froze objects itself."""

from __future__ import annotations

import gc

import pytest

import hyperlab


def freeze_counts(storage: str) -> list[int]:
    seen: list[int] = []

    def objective(params: dict) -> float:
        seen.append(gc.get_freeze_count())
        return params["x"]

    hyperlab.run(
        objective, {"x": hyperlab.uniform(0, 1)}, max_trials=3, storage=storage, progress=False
    )
    return seen


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_run_freezes_older_objects_while_it_runs_and_thaws_them_after(tmp_path, unfrozen):
    assert gc.get_freeze_count() == 0
    seen = freeze_counts(f"sqlite:///{tmp_path / 'h.db'}")
    assert len(seen) == 3 and all(count > 0 for count in seen)
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_keeps_them_frozen(tmp_path, unfrozen):
    gc.freeze()
    before = gc.get_freeze_count()
    seen = freeze_counts(f"sqlite:///{tmp_path / 'h.db'}")
    # nothing more frozen (the count drops as frozen objects are freed), nothing thawed
    assert len(seen) == 3 and all(0.9 * before < count <= before for count in seen)
    assert 0.9 * before < gc.get_freeze_count() <= before


def test_with_the_collector_disabled_nothing_is_frozen(tmp_path, unfrozen):
    gc.disable()
    try:
        assert freeze_counts(f"sqlite:///{tmp_path / 'h.db'}") == [0, 0, 0]
    finally:
        gc.enable()
