"""How fast the REST API answers a dashboard's requests over an experiment of 100,000 trials.

The store is written directly through the store API (as a driver would: trials in every
status, five parameters of every kind, final metrics, one report per trial), then each request
is timed through the app in this process (FastAPI's TestClient: routing, the store, JSON; no
network):

- ``cold``: the first request of a new app (no snapshot or cache yet);
- ``warm``: the median of repeats, nothing changed in between (what polling costs);
- ``changed``: the median of repeats, each after 10 trials changed (what polling a running
  experiment costs: snapshots merge the changed trials, caches keyed by cursor recompute).

Run: ``python benchmarks/api_speed.py [--storage URL] [--trials N] [--repeat R]``; the
default store is a SQLite file in a temp dir (``--storage postgresql://...`` for PostgreSQL:
give an empty database or schema).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import statistics
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hyperlab.config import ExperimentOptions
from hyperlab.server import create_app
from hyperlab.store import ExperimentRecord, Store
from hyperlab.store._trial_queries import TrialFilter
from hyperlab.trial import ExperimentStatus, Report, Trial, TrialStatus

with warnings.catch_warnings():  # newer Starlette prefers httpx2; httpx still works
    warnings.filterwarnings("ignore", message=r"Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

EXPERIMENT = "bench001"
TOKEN = "benchmark-token"
SPACE = {
    "lr": {"_type": "loguniform", "_value": [1e-5, 1e-1]},
    "layers": {"_type": "randint", "_value": [1, 9]},
    "opt": {"_type": "choice", "_value": ["sgd", "adam", "rmsprop"]},
    "block": {"_type": "choice", "_value": [{"_name": "conv"}, {"_name": "skip"}]},
    "dropout": {"_type": "uniform", "_value": [0, 0.5]},
}
STATUSES = [TrialStatus.SUCCEEDED] * 8 + [TrialStatus.FAILED, TrialStatus.EARLY_STOPPED]
E = f"/api/v1/experiments/{EXPERIMENT}"
ALL = TrialFilter()
Params = Callable[[Store], dict[str, Any]]


def fixed(**params: Any) -> Params:
    return lambda _store: params


def since_cursor(store: Store) -> dict[str, Any]:
    """What a polling page sends: the cursor of its last answer (here: before the churn)."""
    return {"after": store.change_cursor(EXPERIMENT) - 20}


def last_reports(store: Store) -> dict[str, Any]:
    rows, _ = store.reports_after(EXPERIMENT, 0, limit=1)
    return {"after": rows[0].id + store.count_trials(EXPERIMENT, ALL) - 1000, "limit": 1000}


REQUESTS: list[tuple[str, str, Params]] = [
    ("experiments (list, counts)", "/api/v1/experiments", fixed()),
    ("experiment (counts, best)", E, fixed()),
    ("changes since the cursor", f"{E}/changes", since_cursor),
    ("trials, by number", f"{E}/trials", fixed(limit=50)),
    ("trials, best first", f"{E}/trials", fixed(sort="value", limit=50)),
    ("trials, status + longest, page 400", f"{E}/trials",
     fixed(status="SUCCEEDED", sort="-duration", offset=20_000, limit=50)),
    ("trials, param range, by param", f"{E}/trials",
     fixed(param="lr:1e-4..1e-2", sort="-param.dropout", limit=50)),
    ("trials, choice + metric, page 20", f"{E}/trials",
     fixed(param="opt:adam,sgd", metric="acc:0.5..", sort="metric.acc", offset=1000, limit=50)),
    ("reports after an id", f"{E}/reports", last_reports),
    ("curves of the top 10", f"{E}/plots/curves", fixed(top=10)),
    ("best so far", f"{E}/plots/best", fixed()),
    ("scatter lr vs value", f"{E}/plots/scatter", fixed(x="param.lr")),
    ("parallel coordinates", f"{E}/plots/parallel", fixed()),
    ("importance (cached by count)", f"{E}/plots/importance", fixed()),
]  # fmt: skip


def _trial(number: int, rng: random.Random) -> Trial:
    params = {
        "lr": 10 ** rng.uniform(-5, -1),
        "layers": rng.randrange(1, 9),
        "opt": rng.choice(["sgd", "adam", "rmsprop"]),
        "block": {"_name": rng.choice(["conv", "skip"])},
        "dropout": rng.uniform(0, 0.5),
    }
    status = STATUSES[number % len(STATUSES)]
    loss = abs(math.log10(params["lr"]) + 3) + params["dropout"] + rng.random() * 0.1
    value = None if status is TrialStatus.FAILED else loss
    metrics = {} if value is None else {"loss": loss, "acc": 1 / (1 + loss)}
    start = 1.7e9 + number
    end = start + rng.uniform(1, 100)
    source = "custom" if number % 1000 == 0 else None
    return Trial(
        EXPERIMENT, number, params, status, 1, value, metrics, (), None, number, start, start,
        end, None, source,
    )  # fmt: skip


def build(store: Store, n_trials: int) -> None:
    """Write the experiment and ``n_trials`` trials, one report each."""
    options = ExperimentOptions(metric="loss")
    record = ExperimentRecord(
        EXPERIMENT, "bench", ExperimentStatus.RUNNING, options, SPACE, 1, None, 1.7e9
    )
    store.create_experiment(record)
    rng = random.Random(1)
    for number in range(n_trials):
        trial = _trial(number, rng)
        store.put_trial(trial)
        loss = trial.value if trial.value is not None else 1.0
        store.add_report(EXPERIMENT, number, Report(0, {"loss": loss + 1}, trial.started_at or 0))
        if number % 5000 == 4999:
            store.flush()
    store.flush()


def change(store: Store, rng: random.Random, count: int = 10) -> None:
    """``count`` trials finish again with a new value (a running experiment's churn)."""
    for number in rng.sample(range(len(STATUSES) * 10), count):
        trial = store.get_trial(EXPERIMENT, number)
        for status in (TrialStatus.RUNNING, TrialStatus.SUCCEEDED):
            trial = dataclasses.replace(
                trial, status=status, value=rng.random(), metrics={"loss": 0.5, "acc": 0.5}
            )
            store.put_trial(trial)
    store.flush()


def timed(call: Callable[[], Any]) -> float:
    start = time.perf_counter()
    response = call()
    elapsed = (time.perf_counter() - start) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"{response.status_code}: {response.text}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--storage", default=None, help="default: a SQLite file in a temp dir")
    parser.add_argument("--trials", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=7, help="warm and changed repeats")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        storage = args.storage or str(Path(tmp) / "bench.db")
        store = Store.open(storage)
        start = time.perf_counter()
        build(store, args.trials)
        print(f"{args.trials:,} trials written in {time.perf_counter() - start:.1f} s "
              f"to {store.masked_url}")  # fmt: skip
        app = create_app(store, session_token=TOKEN)
        rng = random.Random(2)
        headers = {"X-Hyperlab-Token": TOKEN}
        with TestClient(app, base_url="http://127.0.0.1:8000", headers=headers) as client:
            print(f"{'request':38s} {'cold':>8s} {'warm':>8s} {'changed':>8s}   (ms)")
            for label, url, make_params in REQUESTS:

                def get(url: str = url, make_params: Params = make_params) -> float:
                    params = make_params(store)  # outside the timing
                    return timed(lambda: client.get(url, params=params))

                cold = get()
                warm = statistics.median(get() for _ in range(args.repeat))
                changed = []
                for _ in range(args.repeat):
                    change(store, rng)
                    changed.append(get())
                print(f"{label:38s} {cold:8.1f} {warm:8.1f} {statistics.median(changed):8.1f}")
        store.close()


if __name__ == "__main__":
    main()
