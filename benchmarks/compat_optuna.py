"""An Optuna script's speed on Optuna and on ``hyperlab.compat.optuna``, side by side.

The same define-by-run objective (3 floats and a categorical, random search, no-op body) runs
N trials (default 500) three ways, each with both libraries in this one process and run:

- ``optimize``: ``study.optimize(objective, n_trials=N)``;
- ``ask/tell``: ``trial = study.ask()``, the suggestions, ``study.tell(trial, value)``;
- ``callbacks``: ``study.optimize(objective, callbacks=[reader, MaxTrialsCallback(N)])``, where
  ``reader`` reads the study after every trial as Optuna users' callbacks do
  (``study.best_value``, ``len(study.get_trials(deepcopy=False))``) and ``MaxTrialsCallback``
  (which counts the COMPLETE trials each time) ends the run after N.

Optuna runs on its in-memory storage and on SQLite (a file); hyperlab on its own store (SQLite
in a temporary folder), which is what ``create_study()`` gives a user who changed only the
import: every trial is persisted. The target (issue 31) is hyperlab >= 1.0x Optuna in memory
for each way; the ratio to Optuna on SQLite (also persisted) is printed too. Runs of the
libraries alternate, ``--repeat`` times; the medians are printed.

``--profile`` then runs hyperlab's ``callbacks`` and ``ask/tell`` ways under cProfile and
prints where a trial's time goes: self time by layer (the Optuna layer's study and trial
objects, the driver, the executor, the store, ...) and the inclusive time of the suggest
path, the driver's answer to a suggestion, the store's writes, the hand-off between threads
and the callbacks (all in microseconds per trial, inflated by the profiler; a study's fixed
costs, its experiment's creation and its driver's start and end, are spread over its trials).

    pip install -e ".[bench]"
    python benchmarks/compat_optuna.py [--trials 500] [--repeat 3] [--sqlite-trials 100]
    python benchmarks/compat_optuna.py --trials 1000 --repeat 0 --profile
"""

from __future__ import annotations

import argparse
import cProfile
import logging
import os
import pstats
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

WAYS = ("optimize", "ask/tell", "callbacks")
PEERS = ("optuna in memory", "optuna sqlite")
TARGET = 1.0  # hyperlab / Optuna in memory, for every way


def objective(trial: Any) -> float:
    trial.suggest_float("a", 0.0, 1.0)
    trial.suggest_float("b", 1e-4, 1.0, log=True)
    trial.suggest_float("c", -5.0, 5.0)
    trial.suggest_categorical("d", ["relu", "tanh", "gelu"])
    return 0.0


def reader(study: Any, trial: Any) -> None:
    """An Optuna callback that reads the study after each trial, as users' callbacks do."""
    if study.best_value > trial.value:
        raise AssertionError("best_value is not the best")
    if len(study.get_trials(deepcopy=False)) <= trial.number:
        raise AssertionError("the trial just ended is missing from study.trials")


def new_study(optuna: Any, storage: str | None) -> Any:
    return optuna.create_study(storage=storage, sampler=optuna.samplers.RandomSampler(seed=0))


def optimize(optuna: Any, storage: str | None, trials: int) -> float:
    study = new_study(optuna, storage)
    start = time.perf_counter()
    study.optimize(objective, n_trials=trials)
    assert study.best_params is not None
    elapsed = time.perf_counter() - start
    assert len(study.trials) == trials
    return trials / elapsed


def ask_and_tell(optuna: Any, storage: str | None, trials: int) -> float:
    study = new_study(optuna, storage)
    start = time.perf_counter()
    for _ in range(trials):
        trial = study.ask()
        study.tell(trial, objective(trial))
    assert study.best_params is not None
    elapsed = time.perf_counter() - start
    assert len(study.trials) == trials
    if optuna.__name__.startswith("hyperlab"):  # end the session's background experiment
        study.stop()  # (Optuna has none, and refuses stop() outside optimize)
    return trials / elapsed


def with_callbacks(optuna: Any, storage: str | None, trials: int) -> float:
    study = new_study(optuna, storage)
    until = optuna.study.MaxTrialsCallback(trials)
    start = time.perf_counter()
    study.optimize(objective, callbacks=[reader, until])
    elapsed = time.perf_counter() - start
    assert len(study.trials) == trials, len(study.trials)
    return trials / elapsed


RUNS: dict[str, Callable[[Any, str | None, int], float]] = {
    "optimize": optimize,
    "ask/tell": ask_and_tell,
    "callbacks": with_callbacks,
}


def measure(args: argparse.Namespace, folder: str, optuna: Any, on_hyperlab: Any) -> None:
    sqlite_file = Path(folder) / "optuna.db"
    sqlite_trials = min(args.trials, args.sqlite_trials)
    print(
        f"{args.trials} trials ({sqlite_trials} on Optuna sqlite), median of {args.repeat} "
        "alternating runs, trials/s (higher is better)"
    )
    for way in WAYS:
        run = RUNS[way]
        rates: dict[str, list[float]] = {"hyperlab": [], **{peer: [] for peer in PEERS}}
        for _ in range(args.repeat):
            rates["hyperlab"].append(run(on_hyperlab, None, args.trials))
            rates["optuna in memory"].append(run(optuna, None, args.trials))
            sqlite_file.unlink(missing_ok=True)  # a fresh file per run
            rates["optuna sqlite"].append(run(optuna, f"sqlite:///{sqlite_file}", sqlite_trials))
        median = {label: statistics.median(found) for label, found in rates.items()}
        for label, trials_per_s in median.items():
            spread = ", ".join(f"{r:.0f}" for r in rates[label])
            print(f"  {way:9s} {label:17s} {trials_per_s:9.1f}   ({spread})")
        for peer in PEERS:
            ratio = median["hyperlab"] / median[peer]
            verdict = ""
            if peer == "optuna in memory":
                verdict = "  met" if ratio >= TARGET else f"  MISSED (target {TARGET:.1f}x)"
            print(f"  {way:9s} hyperlab / {peer}: {ratio:.2f}x{verdict}")


LAYERS = (  # (label, path fragment), first match wins; self time only, so they add up
    ("Optuna layer (study, trial objects, hooks)", "hyperlab/compat/optuna/"),
    ("driver (flow, requests, scheduling)", "hyperlab/experiment/"),
    ("executor (run, context, routing)", "hyperlab/executors/"),
    ("trial context (suggest, request)", "hyperlab/reporting/"),
    ("store (buffer, rows, codec)", "hyperlab/store/"),
    ("search space (parse, sample)", "hyperlab/space/"),
    ("tuner", "hyperlab/tuners/"),
    ("assessor (the pruner)", "hyperlab/assessors/"),
    ("rest of hyperlab", "hyperlab/"),
    ("SQLAlchemy and sqlite3", "sqlalchemy/"),
    ("the benchmark's objective, callbacks", "compat_optuna.py"),
)
INCLUSIVE = (  # (label, file fragment, function): time spent in it and below
    ("suggest_* (the whole suggest path)", "compat/optuna/trial.py", "_suggest"),
    ("  of which the driver's answer", "experiment/_flow.py", "_on_request"),
    ("the driver's end of a trial", "experiment/_flow.py", "_finish"),
    ("the driver's scheduling", "experiment/_flow.py", "_schedule"),
    ("the Optuna layer's hooks (view, log line, callbacks)", "_hooks.py", "on_trial_end"),
    ("  of which the callbacks: reader", "compat_optuna.py", "reader"),
    ("  of which the callbacks: MaxTrialsCallback", "optuna/study.py", "__call__"),
    ("ask()", "compat/optuna/_study.py", "ask"),
    ("tell()", "compat/optuna/_study.py", "tell"),
    ("store writes (put_trial into the buffer)", "store/_driver_writes.py", "put_trial"),
    ("store commits (flush)", "store/_buffer.py", "flush"),
    ("waits on other threads (hand-off)", "~", "<method 'acquire' of '_thread.lock' objects>"),
)


def profile(args: argparse.Namespace, on_hyperlab: Any) -> None:
    for way in ("callbacks", "ask/tell"):
        profiler = cProfile.Profile()
        profiler.enable()
        RUNS[way](on_hyperlab, None, args.trials)
        profiler.disable()
        stats = pstats.Stats(profiler)
        raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
        total = sum(entry[2] for entry in raw.values())
        per_trial = 1e6 / args.trials
        print(f"\nhyperlab {way}: {total * per_trial:.0f} us per trial under cProfile")
        if way == "ask/tell":
            print("  (cProfile sees the asking thread: the driver and the trial show as waits)")
        print("  self time by layer (us/trial):")
        layers = dict.fromkeys([label for label, _ in LAYERS] + ["Python and the rest"], 0.0)
        for (filename, _, _), entry in raw.items():
            where = filename.replace(os.sep, "/")
            label = next((lb for lb, part in LAYERS if part in where), "Python and the rest")
            layers[label] += entry[2]
        for label, seconds in sorted(layers.items(), key=lambda item: -item[1]):
            if seconds > 0:
                print(f"    {label:45s} {seconds * per_trial:8.1f}  {seconds / total:5.1%}")
        print("  inclusive (us/trial):")
        for label, part, function in INCLUSIVE:
            found = [
                entry[3]
                for (filename, _, name), entry in raw.items()
                if name == function and part in filename.replace(os.sep, "/")
            ]
            if found:
                print(f"    {label:53s} {sum(found) * per_trial:8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3, help="0: no timing (with --profile)")
    parser.add_argument(
        "--sqlite-trials",
        type=int,
        default=100,
        help="trials per Optuna SQLite run (its per-trial cost grows with the trials)",
    )
    parser.add_argument("--profile", action="store_true", help="where hyperlab's time goes")
    args = parser.parse_args()

    import optuna

    import hyperlab.compat.optuna as on_hyperlab

    optuna.logging.set_verbosity(logging.WARNING)
    on_hyperlab.logging.set_verbosity(on_hyperlab.logging.WARNING)
    with tempfile.TemporaryDirectory() as folder:
        os.environ["HYPERLAB_HOME"] = str(Path(folder) / "home")
        if args.repeat > 0:
            measure(args, folder, optuna, on_hyperlab)
        if args.profile:
            profile(args, on_hyperlab)


if __name__ == "__main__":
    main()
