"""How much the store costs per trial on the driver's hot path.

Each trial is put three times (WAITING, RUNNING, SUCCEEDED) and the buffer is flushed every
``--batch`` trials, as the driver does every ~100 ms at 2,000 trials/s. Two patterns:

- ``coalesced``: a trial starts and ends between two flushes (one trial row, three events);
- ``spread``: each status of a trial lands in a different flush (three rows, three events).

Run: ``PYTHONPATH=src python benchmarks/store_speed.py [--storage URL] [--trials N]``
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
from pathlib import Path

from hyperlab.config import ExperimentOptions
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Report, Trial, TrialStatus


def _trial(experiment_id: str, number: int) -> Trial:
    params = {"lr": 0.001 * (number % 97 + 1), "layers": number % 5 + 1, "act": "relu"}
    return Trial(experiment_id, number, params, seed=number * 7919, created_at=time.time())


def _running(trial: Trial) -> Trial:
    return dataclasses.replace(trial, status=TrialStatus.RUNNING, started_at=time.time())


def _done(trial: Trial) -> Trial:
    value = trial.params["lr"] * trial.params["layers"]
    return dataclasses.replace(
        trial,
        status=TrialStatus.SUCCEEDED,
        value=value,
        metrics={"default": value, "loss": value / 2},
        finished_at=time.time(),
    )


def run(store: Store, pattern: str, n_trials: int, batch: int, reports: int, repeat: int) -> float:
    """Seconds spent in the store for ``n_trials`` trials."""
    experiment_id = f"b{pattern[:3]}{reports}{repeat:03d}"
    store.create_experiment(
        ExperimentRecord(
            experiment_id, None, ExperimentStatus.RUNNING, ExperimentOptions(), {}, 0, None, 0.0
        )
    )
    trials = [_trial(experiment_id, n) for n in range(n_trials)]
    running = [_running(t) for t in trials]
    done = [_done(t) for t in running]
    start = time.perf_counter()
    for first in range(0, n_trials + 2 * batch, batch):
        if pattern == "coalesced":
            for n in range(first, min(first + batch, n_trials)):
                store.put_trial(trials[n])
                store.put_trial(running[n])
                for step in range(reports):
                    store.add_report(experiment_id, n, Report(step, {"loss": 0.5}, 0.0))
                store.put_trial(done[n])
        else:
            for offset, stage in ((0, trials), (batch, running), (2 * batch, done)):
                for n in range(max(first - offset, 0), min(first - offset + batch, n_trials)):
                    store.put_trial(stage[n])
                    if offset == batch:
                        for step in range(reports):
                            store.add_report(experiment_id, n, Report(step, {"loss": 0.5}, 0.0))
        store.flush()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", default=None, help="default: a SQLite file in a temp dir")
    parser.add_argument("--trials", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=200, help="trials per flush")
    parser.add_argument("--repeat", type=int, default=5, help="runs per case; best and median")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        storage = args.storage or str(Path(tmp) / "bench.db")
        store = Store.open(storage)
        for pattern in ("coalesced", "spread"):
            for reports in (0, 3):
                runs = sorted(
                    run(store, pattern, args.trials, args.batch, reports, repeat) / args.trials
                    for repeat in range(args.repeat)
                )
                best, median = runs[0] * 1e6, runs[len(runs) // 2] * 1e6
                print(
                    f"{pattern:9s} reports/trial={reports}: best {best:5.1f} us/trial, "
                    f"median {median:5.1f} ({1e6 / best:,.0f} trials/s at best)"
                )
        store.close()


if __name__ == "__main__":
    main()
