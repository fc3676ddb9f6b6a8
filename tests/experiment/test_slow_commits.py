"""A slow database does not make the driver commit at every loop turn (issue 31, target 5).

The group commit and the control poll are due an interval after the previous one *ended*:
with a commit slower than the interval (many drivers on one PostgreSQL server), counting from
its start made every loop turn commit and poll, so only ``concurrency`` trials ran between two
commits and a busy server got busier."""

from __future__ import annotations

import itertools
import time

import pytest

import hyperlab
from hyperlab.store import Store


def test_a_commit_slower_than_the_interval_is_not_repeated_at_every_loop_turn(
    tmp_path, monkeypatch: pytest.MonkeyPatch
):
    commits = []
    flush = Store.flush

    def slow_flush(self: Store) -> None:
        commits.append(time.monotonic())
        time.sleep(0.15)  # slower than the driver's 0.1 s interval
        flush(self)

    monkeypatch.setattr(Store, "flush", slow_flush)
    result = hyperlab.run(
        lambda params: params["x"],
        {"x": hyperlab.uniform(0.0, 1.0)},
        max_trials=40,
        storage=f"sqlite:///{tmp_path / 'store.db'}",
        progress=False,
        seed=0,
    )
    assert len(result.trials) == 40
    # each commit is due 0.1 s after the previous one *ended*, so commits start at least
    # 0.25 s apart; back to back (0.15 s) only the run's first (its start's commit is due at
    # once) and last (the end's). Counted in gaps, not commits: a loaded machine runs the 40
    # trials longer, which adds commits but never shortens a gap
    gaps = [later - earlier for earlier, later in itertools.pairwise(commits)]
    assert sum(gap < 0.24 for gap in gaps) <= 2, gaps
