"""Ray overhead: trials per second of short trials on a local Ray instance, hyperlab's ``ray``
executor against Ray Tune's own ``Tuner``.

For each kind of objective (``noop``: returns at once; ``sleep``: sleeps 50 ms) and each
concurrency (default 1 and 2), in this one process and on one local Ray instance
(``ray.init(num_cpus=2)``, started once), it times N trials (default 200) of random search over
2 floats and 1 categorical, one CPU per trial, with:

- hyperlab: ``hyperlab.run(..., executor="ray", concurrency=c, resources={"cpu": 1},
  tuner="random")``, storing to SQLite in a temporary folder (the default store); its trials
  run in Ray actors it reuses from trial to trial;
- Ray Tune, defaults: ``Tuner(trainable, param_space=..., tune_config=TuneConfig(num_samples=N,
  max_concurrent_trials=c, metric=..., mode=...)).fit()``, a function trainable reporting one
  result with ``tune.report``: a new Ray actor for every trial;
- Ray Tune, ``TuneConfig(reuse_actors=True)``: the same, its actors reused.

Ray Tune's own output is silenced (``RunConfig(verbose=0)``, its files in a temporary folder);
its result loggers (CSV, JSON, TensorBoard) stay on, as they are by default. Each timed run is
what a user does: run the trials and read the best configuration (the trial count and that no
trial failed are checked after the clock stops). Before the timed runs every contender runs a
few trials untimed, so that imports and Ray's first-use costs (worker processes, the actor
classes) fall on no one. The contenders take turns within each kind and concurrency.

It prints, per kind and concurrency, the seconds and trials/s of each contender and the ratios
of hyperlab's trials/s to Ray Tune's, then, for the 50 ms objective, hyperlab's speed-up of
concurrency 2 over 1. Targets:

- hyperlab >= 10x the throughput of Ray Tune with its defaults;
- hyperlab >= the throughput of Ray Tune with ``reuse_actors=True``;
- hyperlab with 2 workers >= 1.8x faster than with 1 on 50 ms trials.

Ray Tune's default mode starts an actor per trial (a second or more each on a small machine),
so ``--tune-trials`` runs it on fewer trials: the figures compared are per-trial rates, which
do not depend on the number of trials beyond the first few (a smaller number gives the same
trials/s), so runs of different sizes compare.

    pip install -e ".[bench]"
    python benchmarks/ray_overhead.py [--trials 200] [--tune-trials 200] [--kinds noop,sleep]
        [--concurrency 1,2] [--skip-tune]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Ray Tune's console output: the classic reporter (which verbose=0 silences entirely) rather
# than the newer one. Set before Ray Tune is imported.
os.environ.setdefault("RAY_AIR_NEW_OUTPUT", "0")

import hyperlab

SLEEP = 0.05
"""Seconds the ``sleep`` objective sleeps."""
CPUS = 2
"""CPUs of the local Ray instance."""
WARMUP_TRIALS = 4
"""Untimed trials each contender runs first."""

TARGET_DEFAULT = 10.0
"""hyperlab's trials/s over Ray Tune's with its defaults, at least."""
TARGET_REUSE = 1.0
"""hyperlab's trials/s over Ray Tune's with reused actors, at least."""
TARGET_SPEEDUP = 1.8
"""hyperlab's speed-up of concurrency 2 over 1 on the 50 ms objective, at least."""

SPACE = {
    "x": hyperlab.uniform(0.0, 1.0),
    "lr": hyperlab.loguniform(1e-4, 1.0),
    "act": hyperlab.choice("relu", "tanh", "gelu"),
}

# ---------------------------------------------------------------- objectives


def hyperlab_noop(params: dict[str, Any]) -> float:
    return float(params["x"])


def hyperlab_sleep(params: dict[str, Any]) -> float:
    time.sleep(SLEEP)
    return float(params["x"])


def tune_noop(config: dict[str, Any]) -> None:
    from ray import tune

    tune.report({"score": float(config["x"])})


def tune_sleep(config: dict[str, Any]) -> None:
    from ray import tune

    time.sleep(SLEEP)
    tune.report({"score": float(config["x"])})


HYPERLAB_OBJECTIVES: dict[str, Callable[[dict[str, Any]], float]] = {
    "noop": hyperlab_noop,
    "sleep": hyperlab_sleep,
}
TUNE_TRAINABLES: dict[str, Callable[[dict[str, Any]], None]] = {
    "noop": tune_noop,
    "sleep": tune_sleep,
}

# ---------------------------------------------------------------- contenders


@dataclass
class Timing:
    """One timed run."""

    trials: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.trials / self.seconds


def run_hyperlab(kind: str, trials: int, concurrency: int, folder: Path) -> Timing:
    folder.mkdir(parents=True)
    start = time.perf_counter()
    result = hyperlab.run(
        HYPERLAB_OBJECTIVES[kind],
        SPACE,
        executor="ray",
        concurrency=concurrency,
        resources={"cpu": 1},
        max_trials=trials,
        tuner="random",
        storage=f"sqlite:///{folder / 'hyperlab.db'}",
        working_dir=folder,
        progress=False,
        seed=0,
    )
    assert result.best_params is not None
    elapsed = time.perf_counter() - start
    statuses = [trial.status for trial in result.trials]
    assert len(statuses) == trials, f"hyperlab ran {len(statuses)} trials, not {trials}"
    assert all(s == hyperlab.TrialStatus.SUCCEEDED for s in statuses), f"hyperlab: {statuses}"
    return Timing(trials, elapsed)


def run_tune(kind: str, trials: int, concurrency: int, folder: Path, *, reuse: bool) -> Timing:
    from ray import tune

    folder.mkdir(parents=True)
    start = time.perf_counter()
    tuner = tune.Tuner(
        TUNE_TRAINABLES[kind],
        param_space={
            "x": tune.uniform(0.0, 1.0),
            "lr": tune.loguniform(1e-4, 1.0),
            "act": tune.choice(["relu", "tanh", "gelu"]),
        },
        tune_config=tune.TuneConfig(
            num_samples=trials,
            max_concurrent_trials=concurrency,
            metric="score",
            mode="min",
            reuse_actors=reuse,
        ),
        run_config=tune.RunConfig(name="tune", storage_path=str(folder), verbose=0),
    )
    results = tuner.fit()
    assert results.get_best_result().config is not None
    elapsed = time.perf_counter() - start
    assert len(results) == trials, f"Ray Tune ran {len(results)} trials, not {trials}"
    assert not results.errors, f"Ray Tune: {results.errors}"
    return Timing(trials, elapsed)


CONTENDERS = ["hyperlab", "tune default", "tune reuse"]


def run_contender(name: str, kind: str, trials: int, concurrency: int, folder: Path) -> Timing:
    if name == "hyperlab":
        return run_hyperlab(kind, trials, concurrency, folder)
    return run_tune(kind, trials, concurrency, folder, reuse=name == "tune reuse")


# ---------------------------------------------------------------- the run


def verdict(value: float, target: float) -> str:
    return "met" if value >= target else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=200, help="trials of each timed run")
    parser.add_argument(
        "--tune-trials",
        type=int,
        default=None,
        help="trials of Ray Tune's default mode (a new actor per trial), default --trials; "
        "a smaller number gives the same trials/s",
    )
    parser.add_argument("--kinds", default="noop,sleep", help="objectives: noop, sleep")
    parser.add_argument("--concurrency", default="1,2", help="trials at once, each a run")
    parser.add_argument("--skip-tune", action="store_true", help="hyperlab only")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    unknown = sorted(set(kinds) - set(HYPERLAB_OBJECTIVES))
    if unknown:
        parser.error(f"unknown kinds {unknown}; known: {', '.join(HYPERLAB_OBJECTIVES)}")
    levels = [int(c) for c in args.concurrency.split(",") if c]
    if not levels or min(levels) < 1 or max(levels) > CPUS:
        parser.error(f"--concurrency: numbers from 1 to {CPUS} (the local Ray instance's CPUs)")
    tune_trials = args.tune_trials or args.trials
    contenders = ["hyperlab"] if args.skip_tune else CONTENDERS
    sizes = {"hyperlab": args.trials, "tune default": tune_trials, "tune reuse": args.trials}

    import ray

    logging.getLogger("hyperlab").setLevel(logging.WARNING)
    for name in ("ray", "ray.tune", "ray.train", "ray.air"):
        logging.getLogger(name).setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", module="ray")
    # address="local": a new instance of this process's own, even when another Ray cluster runs
    # on this machine (with no address, ray.init joins the one it last recorded in /tmp/ray)
    ray.init(
        address="local",
        num_cpus=CPUS,
        include_dashboard=False,
        log_to_driver=False,
        logging_level=logging.ERROR,
    )

    timings: dict[tuple[str, int, str], Timing] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        for name in contenders:  # warm up: imports and Ray's first-use costs
            for kind in kinds:
                folder = tmp_path / f"warmup-{name.replace(' ', '-')}-{kind}"
                run_contender(name, kind, WARMUP_TRIALS, max(levels), folder)
        for kind in kinds:
            for concurrency in levels:
                for name in contenders:
                    folder = tmp_path / f"{name.replace(' ', '-')}-{kind}-{concurrency}"
                    size = sizes[name]
                    timing = run_contender(name, kind, size, concurrency, folder)
                    timings[kind, concurrency, name] = timing
                    print(
                        f"  {kind}, concurrency {concurrency}, {name}: {timing.trials} trials "
                        f"in {timing.seconds:.2f} s",
                        file=sys.stderr,
                        flush=True,
                    )
    ray.shutdown()

    versions = f"hyperlab {hyperlab.__version__}, ray {ray.__version__}"
    print(
        f"{versions}; local Ray instance with {CPUS} CPUs, 1 CPU per trial, random search; "
        f"trials per run: hyperlab {args.trials}"
        + ("" if args.skip_tune else f", tune default {tune_trials}, tune reuse {args.trials}")
    )
    header = f"{'kind':<6}{'conc':>5}"
    for name in contenders:
        header += f"  {name + ' s':>16}{'trials/s':>10}"
    if not args.skip_tune:
        header += f"  {'hl/default':>17}  {'hl/reuse':>16}"
    print(header)
    for kind in kinds:
        for concurrency in levels:
            line = f"{kind:<6}{concurrency:>5}"
            for name in contenders:
                t = timings[kind, concurrency, name]
                line += f"  {t.seconds:>16.2f}{t.rate:>10.1f}"
            if not args.skip_tune:
                hl = timings[kind, concurrency, "hyperlab"].rate
                default = hl / timings[kind, concurrency, "tune default"].rate
                reuse = hl / timings[kind, concurrency, "tune reuse"].rate
                line += f"  {default:>9.1f}x {verdict(default, TARGET_DEFAULT):>6}"
                line += f"  {reuse:>8.2f}x {verdict(reuse, TARGET_REUSE):>6}"
            print(line)

    print("\ntargets:")
    if not args.skip_tune:
        for kind in kinds:
            for concurrency in levels:
                hl = timings[kind, concurrency, "hyperlab"].rate
                default = hl / timings[kind, concurrency, "tune default"].rate
                reuse = hl / timings[kind, concurrency, "tune reuse"].rate
                print(
                    f"  {kind}, concurrency {concurrency}: hyperlab / tune default "
                    f"{default:.1f}x (>= {TARGET_DEFAULT:g}x: {verdict(default, TARGET_DEFAULT)}), "
                    f"hyperlab / tune reuse {reuse:.2f}x "
                    f"(>= {TARGET_REUSE:g}x: {verdict(reuse, TARGET_REUSE)})"
                )
    if "sleep" in kinds and {1, 2} <= set(levels):
        one = timings["sleep", 1, "hyperlab"].rate
        two = timings["sleep", 2, "hyperlab"].rate
        speedup = two / one
        print(
            f"  sleep {SLEEP * 1000:g} ms, hyperlab concurrency 2 over 1: {speedup:.2f}x "
            f"({two:.1f} vs {one:.1f} trials/s; ideal {1 / SLEEP:g} and {2 / SLEEP:g}) "
            f"(>= {TARGET_SPEEDUP:g}x: {verdict(speedup, TARGET_SPEEDUP)})"
        )
    else:
        print("  (the speed-up target needs --kinds with sleep and --concurrency with 1 and 2)")


if __name__ == "__main__":
    main()
