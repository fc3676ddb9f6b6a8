"""Framework overhead: no-op trials per second, hyperlab against Optuna and a bare loop.

Runs, in this one process and this one run, N sequential trials (default 5000) of a no-op
objective over 3 floats and 1 categorical with random search, each timed run being what a user
does (run the trials, read the best parameters; the trial lists are checked after the clock):

- hyperlab, SQLite store on disk, ``inprocess`` executor (the target row)
- hyperlab, SQLite, ``threads`` and ``processes`` executors (``--concurrency`` trials at once;
  reported, no target)
- a bare persisted loop: a random sampler for the same 4 parameters, each trial a row (params as
  JSON, status, value, times) written to SQLite with ``executemany`` in batches and committed
  every ``FLUSH_INTERVAL`` seconds, as hyperlab's group commit does (same WAL and
  ``synchronous=NORMAL`` settings)
- Optuna, in-memory storage and SQLite storage (``RandomSampler``)

Then an ASHA run: no-op trials that each ``hyperlab.report`` 20 times (every report a round
trip to the assessor; the values tie, so no trial is stopped and both runs do the same work)
against the same run without an assessor.

Targets (issue 31): hyperlab SQLite ``inprocess`` >= 10x Optuna in memory (about half the bare
loop); ASHA >= half the trials/s of the run without an assessor. ``--profile`` also prints where a
trial's time goes in the target row (cProfile's own time per module group, scaled to the
unprofiled time per trial).

    pip install -e ".[bench]"
    python benchmarks/overhead.py [--trials 5000] [--repeat 3] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import logging
import math
import pstats
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hyperlab

SPACE = {
    "a": hyperlab.uniform(0.0, 1.0),
    "b": hyperlab.loguniform(1e-4, 1.0),
    "c": hyperlab.uniform(-5.0, 5.0),
    "d": hyperlab.choice("relu", "tanh", "gelu"),
}
FLUSH_INTERVAL = 0.1  # seconds between the bare loop's commits: hyperlab's group commit
BATCH = 256  # rows per executemany in the bare loop
REPORTS = 20  # reports per trial in the ASHA runs


def noop(params: dict) -> float:
    return 0.0


def reporting(params: dict) -> float:
    for _ in range(REPORTS):
        hyperlab.report(0.0)
    return 0.0


def run_hyperlab(
    trials: int,
    storage: str,
    *,
    executor: str = "inprocess",
    concurrency: int = 1,
    objective: Callable[[dict], float] = noop,
    assessor: str | None = None,
) -> float:
    options: dict[str, Any] = {} if assessor is None else {"assessor": assessor}
    start = time.perf_counter()
    result = hyperlab.run(
        objective,
        SPACE,
        tuner="random",
        max_trials=trials,
        storage=storage,
        progress=False,
        seed=0,
        executor=executor,
        concurrency=concurrency,
        **options,
    )
    assert result.best_params is not None
    elapsed = time.perf_counter() - start
    assert len(result.trials) == trials
    assert all(trial.status is hyperlab.TrialStatus.SUCCEEDED for trial in result.trials)
    return trials / elapsed


def run_bare(trials: int, path: Path) -> float:
    """Ask a random sampler, run the no-op, and persist each trial in batches: the floor."""
    start = time.perf_counter()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(
        "CREATE TABLE trials (number INTEGER PRIMARY KEY, params TEXT NOT NULL, "
        "status TEXT NOT NULL, value REAL, started_at REAL, finished_at REAL)"
    )
    rng = random.Random(0)
    choices = ("relu", "tanh", "gelu")
    low, high = math.log(1e-4), math.log(1.0)
    insert = "INSERT INTO trials VALUES (?, ?, ?, ?, ?, ?)"
    rows: list[tuple[Any, ...]] = []
    best: tuple[float, dict] | None = None
    last_commit = time.monotonic()
    db.execute("BEGIN")
    for number in range(trials):
        params = {
            "a": rng.random(),
            "b": math.exp(rng.uniform(low, high)),
            "c": rng.uniform(-5.0, 5.0),
            "d": rng.choice(choices),
        }
        started = time.time()
        value = noop(params)
        rows.append((number, json.dumps(params), "SUCCEEDED", value, started, time.time()))
        if best is None or value < best[0]:
            best = (value, params)
        if len(rows) >= BATCH:
            db.executemany(insert, rows)
            rows.clear()
        if time.monotonic() - last_commit >= FLUSH_INTERVAL:
            db.execute("COMMIT")
            db.execute("BEGIN")
            last_commit = time.monotonic()
    db.executemany(insert, rows)
    db.execute("COMMIT")
    db.close()
    assert best is not None
    elapsed = time.perf_counter() - start
    with sqlite3.connect(path) as check:
        assert check.execute("SELECT count(*) FROM trials").fetchone()[0] == trials
    return trials / elapsed


def run_optuna(trials: int, storage: str | None) -> float:
    import optuna

    optuna.logging.set_verbosity(logging.WARNING)

    def objective(trial: optuna.Trial) -> float:
        trial.suggest_float("a", 0.0, 1.0)
        trial.suggest_float("b", 1e-4, 1.0, log=True)
        trial.suggest_float("c", -5.0, 5.0)
        trial.suggest_categorical("d", ["relu", "tanh", "gelu"])
        return 0.0

    start = time.perf_counter()
    study = optuna.create_study(storage=storage, sampler=optuna.samplers.RandomSampler(seed=0))
    study.optimize(objective, n_trials=trials)
    assert study.best_params is not None
    elapsed = time.perf_counter() - start
    assert len(study.trials) == trials
    return trials / elapsed


# Where a trial's time goes: cProfile's own time of each function, grouped by where it lives
# (the first matching prefix of its file; C functions count for the group of their caller).
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tuner", ("hyperlab/tuners/", "hyperlab/space/", "/random.py")),
    (
        "lease",
        (
            "hyperlab/experiment/_keeper.py",
            "hyperlab/experiment/_outage.py",
            "hyperlab/store/_lease.py",
            "hyperlab/store/_controls.py",
        ),
    ),
    ("store", ("hyperlab/store/", "sqlalchemy/", "/json/", "/sqlite3/")),
    (
        "output routing",
        (
            "hyperlab/executors/routing.py",
            "hyperlab/executors/_output.py",
            "hyperlab/executors/_logs.py",
        ),
    ),
    ("executor hand-off", ("hyperlab/executors/", "hyperlab/reporting/")),
    ("callbacks", ("hyperlab/experiment/_callbacks.py",)),
    ("driver loop", ("hyperlab/experiment/",)),
    ("objective", ("benchmarks/overhead.py",)),
)


def _group(filename: str) -> str:
    for name, prefixes in GROUPS:
        if any(prefix in filename for prefix in prefixes):
            return name
    return "other"


def _spent(trials: int, storage: str) -> dict[str, float]:
    """cProfile's own seconds per group in one ``inprocess`` SQLite run of ``trials``."""
    profiler = cProfile.Profile(time.process_time)  # CPU time: other processes' load drops out
    profiler.enable()
    run_hyperlab(trials, storage)
    profiler.disable()
    stats: dict[Any, Any] = pstats.Stats(profiler).stats  # type: ignore[attr-defined]

    def owner(func: Any, seen: frozenset = frozenset()) -> str:
        filename = func[0]
        if filename != "~" and not filename.startswith("<"):
            return _group(filename)
        callers = stats.get(func, (0, 0, 0, 0, {}))[4]
        if not callers or func in seen:
            return "other"
        caller = max(callers, key=lambda c: callers[c][2])  # the one it spent most time under
        return owner(caller, seen | {func})

    spent: dict[str, float] = {}
    for func, (_, _, own, _, _) in stats.items():
        group = owner(func)
        spent[group] = spent.get(group, 0.0) + own
    return spent


def profile(trials: int, storage: Callable[[int], str]) -> None:
    """Print the µs a trial adds per group: a run of ``trials`` less one of a tenth of them
    (so the setup, the same in both, drops out), under cProfile (which inflates small calls)."""
    small = max(1, trials // 10)
    big, few = _spent(trials, storage(1)), _spent(small, storage(2))
    added = {name: (big.get(name, 0.0) - few.get(name, 0.0)) / (trials - small) for name in big}
    total = sum(added.values())
    print(
        f"\nwhere a trial's time goes (inprocess, SQLite; cProfile's CPU time, setup excluded): "
        f"{1e6 * total:.1f} µs/trial"
    )
    for name in [group for group, _ in GROUPS] + ["other"]:
        own = added.get(name, 0.0)
        print(f"  {name:<18} {1e6 * own:>7.1f} µs  {own / total:>6.1%}")
    setup = {name: few.get(name, 0.0) - small * added.get(name, 0.0) for name in few}
    shown = ", ".join(f"{name} {1e3 * t:.0f}" for name, t in setup.items() if t >= 0.0005)
    print(f"and once per run (setup, cProfile): {1e3 * sum(setup.values()):.0f} ms ({shown})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5000)
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="interleaved rounds (Optuna on SQLite and processes run in the first only); "
        "each contender keeps its best",
    )
    parser.add_argument("--concurrency", type=int, default=4, help="for threads and processes")
    parser.add_argument(
        "--optuna-sqlite",
        type=int,
        default=500,
        help="trials for Optuna on SQLite at most (hundreds a second: its rate from fewer)",
    )
    parser.add_argument("--profile", action="store_true", help="print where a trial's time goes")
    args = parser.parse_args()
    import optuna

    trials, concurrency = args.trials, args.concurrency
    once = {"optuna sqlite", "hyperlab processes"}  # slow: the first round only
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)

        def db(name: str, i: int) -> str:
            return f"sqlite:///{tmp_path / f'{name}-{i}.db'}"

        contenders: dict[str, Callable[[int], float]] = {
            "hyperlab inprocess": lambda i: run_hyperlab(trials, db("inprocess", i)),
            "hyperlab threads": lambda i: run_hyperlab(
                trials, db("threads", i), executor="threads", concurrency=concurrency
            ),
            "hyperlab processes": lambda i: run_hyperlab(
                trials, db("processes", i), executor="processes", concurrency=concurrency
            ),
            "bare loop": lambda i: run_bare(trials, tmp_path / f"bare-{i}.db"),
            "optuna memory": lambda i: run_optuna(trials, None),
            "optuna sqlite": lambda i: run_optuna(min(trials, args.optuna_sqlite), db("optuna", i)),
            "no assessor, 20 reports": lambda i: run_hyperlab(
                trials, db("reports", i), objective=reporting
            ),
            "asha, 20 reports": lambda i: run_hyperlab(
                trials, db("asha", i), objective=reporting, assessor="asha"
            ),
        }
        for name, fn in contenders.items():  # warm up: imports and first-use costs
            if name not in once:
                fn(-1)
        # Rounds interleave the contenders, so a slow spell of the machine hits them alike.
        rates: dict[str, float] = {}
        for i in range(args.repeat):
            for name, fn in contenders.items():
                if name not in once or i == 0:
                    rates[name] = max(rates.get(name, 0.0), fn(i))
        if args.profile:
            profile(trials, lambda i: db("profiled", i))

    print(
        f"\nhyperlab {hyperlab.__version__}, optuna {optuna.__version__}, {trials} trials of a "
        f"no-op, random search, best of {args.repeat} interleaved rounds (Optuna on SQLite and "
        f"processes: one), threads and processes at concurrency {concurrency}; Optuna on SQLite "
        f"ran {min(trials, args.optuna_sqlite)} trials"
    )
    base, bare = rates["optuna memory"], rates["bare loop"]
    print(f"{'':<24} {'trials/s':>10} {'x optuna memory':>16} {'x bare loop':>12}")
    for name, rate in rates.items():
        print(f"{name:<24} {rate:>10,.0f} {rate / base:>16.2f} {rate / bare:>12.2f}")
    target = rates["hyperlab inprocess"] / base
    verdict = "met" if target >= 10 else "MISSED"
    print(
        f"target hyperlab inprocess (SQLite) >= 10x optuna memory: {verdict} ({target:.2f}x; "
        f"{rates['hyperlab inprocess'] / bare:.2f}x the bare loop)"
    )
    versus = rates["hyperlab inprocess"] / rates["optuna sqlite"]
    print(f"hyperlab inprocess / optuna sqlite: {versus:.1f}x")
    asha = rates["asha, 20 reports"] / rates["no assessor, 20 reports"]
    verdict = "met" if asha >= 0.5 else "MISSED"
    print(f"target asha >= 0.5x the same run without an assessor: {verdict} ({asha:.2f}x)")


if __name__ == "__main__":
    main()
