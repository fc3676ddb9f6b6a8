"""``max_duration``'s count in the store stays current to within one group commit (issue 25,
budgets exact): what a driver killed at any instant loses. In simulated time (the loop's
flushes), and in real time while an in-process trial keeps the loop busy (the watchdog's)."""

from __future__ import annotations

import time

import pytest

import hyperlab
from hyperlab import ExperimentStatus
from hyperlab.experiment._driver import FLUSH_INTERVAL, POLL_TIMEOUT
from hyperlab.store import HEARTBEAT_INTERVAL, Store
from hyperlab.testing.fakes import Report
from tests.simulation import simulate


def forever(spec):
    """A simulated trial that reports every second until it is stopped."""
    while True:
        yield Report(1.0, {"loss": 1.0})


def test_the_stored_elapsed_follows_the_clock_to_within_a_flush(tmp_path):
    sim = simulate(forever, tmp_path, max_duration=15, metric="loss")
    reads = [0.55, 1.27, 4.9, 7.33, 9.96, 12.05, 14.5]  # between heartbeats (every 5 s)
    seen: dict[float, float] = {}
    for t in reads:
        sim.clock.call_at(
            t, lambda t=t: seen.setdefault(t, sim.store.get_experiment(sim.id).elapsed)
        )
    assert sim.run() is ExperimentStatus.DONE
    late = FLUSH_INTERVAL + POLL_TIMEOUT + 1e-6  # the flush due, and one loop turn
    behind = {t: round(t - seen[t], 3) for t in reads}
    assert all(0 <= lag <= late for lag in behind.values()), behind


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_an_in_process_trial_that_does_not_report_does_not_stop_the_count(backend, new_storage):
    """The trial runs inside the driver's loop, which cannot flush meanwhile: the watchdog
    records the time spent, a small transaction every two flush intervals at most."""
    storage = new_storage(backend)
    seen: dict[str, float] = {}

    def busy(params):
        start = time.monotonic()
        time.sleep(1.5)  # working, not reporting
        with Store.open(storage) as reader:
            (summary,) = reader.list_experiments()
            seen["elapsed"] = reader.get_experiment(summary.id).elapsed
        seen["ran"] = time.monotonic() - start
        return 0.0

    assert HEARTBEAT_INTERVAL > 1.5  # a heartbeat would not have written it yet
    hyperlab.run(
        busy,
        {"x": hyperlab.uniform(0, 1)},
        max_trials=1,
        executor="inprocess",
        storage=storage,
        progress=False,
    )
    # counted since the driver started (before the trial), written ~0.2 s apart at most; a
    # loaded machine may hold the watchdog's thread up a while
    assert seen["elapsed"] >= seen["ran"] - 0.75, seen
