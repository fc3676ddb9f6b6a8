"""What a round-trip report costs: its time on each executor, and an ASHA run's total.

When an assessor listens, ``hyperlab.report`` returns only once the driver has taken the report
and the assessor decided (so a decision acts at its report on every executor). This measures:

1. the time of one ``report`` call inside a trial, p50 and p99, on each executor, with an
   assessor that always lets trials go on (round trips) and without one (one-way reports);
2. an experiment of ``--trials`` no-op trials x ``--reports`` reports each (random search),
   without an assessor, with one that listens to every report and stops nothing (every report
   a round trip), and with ASHA (round trips, most trials stopped early): the wall time of
   each and their ratios to the first.

Both sides of each comparison run here, in this one run, on the same machine.

    python benchmarks/round_trip.py [--trials 200] [--reports 50] [--executors ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import hyperlab
from hyperlab.assessors.base import Assessor, Decision
from hyperlab.trial import Report, Trial

TIMED_REPORTS = 200
"""Reports timed in each trial of part 1."""

COMMAND_SCRIPT = """
import json, time, hyperlab
times = []
for step in range({n}):
    start = time.perf_counter()
    hyperlab.report(loss=float(step))
    times.append(time.perf_counter() - start)
(hyperlab.trial_dir() / "times.json").write_text(json.dumps(times))
"""


class GoOn(Assessor):
    """Listens to every report and lets every trial go on: the round trip alone."""

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        return Decision.CONTINUE


def timed(params: dict) -> None:
    """A trial that times each of its reports and leaves the times in its folder."""
    times = []
    for step in range(TIMED_REPORTS):
        start = time.perf_counter()
        hyperlab.report(loss=float(step))
        times.append(time.perf_counter() - start)
    (hyperlab.trial_dir() / "times.json").write_text(json.dumps(times))


def report_times(executor: str, listening: bool, folder: Path, trials: int) -> np.ndarray:
    """Every timed report's seconds, from ``trials`` trials run one at a time."""
    objective: object = timed
    if executor == "command":
        script = folder / "timed.py"
        script.write_text(COMMAND_SCRIPT.format(n=TIMED_REPORTS))
        objective = hyperlab.CommandTrial(f"{sys.executable} {script}")
    result = hyperlab.run(
        objective,
        {"x": hyperlab.uniform(0, 1)},
        metric="loss",
        max_trials=trials,
        executor=executor,
        tuner="random",
        assessor=GoOn if listening else None,
        storage=str(folder / "store.db"),
        working_dir=folder,
        progress=False,
    )
    times: list[float] = []
    for trial in result.trials:
        path = folder / result.experiment_id / "trials" / str(trial.number) / "times.json"
        times.extend(json.loads(path.read_text()))
    return np.array(times)


def noop(params: dict) -> None:
    for step in range(params["reports"]):
        hyperlab.report(loss=params["x"] / (step + 1))


def timed_run(executor: str, assessor: str, folder: Path, trials: int, reports: int) -> float:
    """Seconds of an experiment of ``trials`` no-op trials of ``reports`` reports each, with
    ``assessor``: ``"none"``, ``"listen"`` (``GoOn``) or ``"asha"``."""
    chosen = {"none": None, "listen": GoOn, "asha": "asha"}[assessor]
    start = time.perf_counter()
    hyperlab.run(
        noop,
        {"x": hyperlab.uniform(0, 1), "reports": hyperlab.choice(reports)},
        metric="loss",
        max_trials=trials,
        executor=executor,
        concurrency=2,
        tuner="random",
        assessor=chosen,
        assessor_args={"max_resource": reports} if assessor == "asha" else None,
        storage=str(folder / "store.db"),
        working_dir=folder,
        progress=False,
        seed=0,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--reports", type=int, default=50)
    parser.add_argument(
        "--executors", nargs="+", default=["inprocess", "threads", "processes", "command"]
    )
    args = parser.parse_args()
    print(f"1. one report() call, {TIMED_REPORTS} reports x 3 trials per row (microseconds)")
    print(f"{'executor':<11}{'listener':<10}{'p50':>10}{'p99':>10}")
    for executor in args.executors:
        for listening in (False, True):
            with tempfile.TemporaryDirectory() as folder:
                times = report_times(executor, listening, Path(folder), 3) * 1e6
            label = "assessor" if listening else "none"
            p50, p99 = np.percentile(times, [50, 99])
            print(f"{executor:<11}{label:<10}{p50:>10.0f}{p99:>10.0f}")
    print(f"\n2. {args.trials} no-op trials x {args.reports} reports, concurrency 2 (seconds)")
    print(f"{'executor':<11}{'none':>8}{'listen':>8}{'ratio':>7}{'ASHA':>8}{'ratio':>7}")
    for executor in [e for e in args.executors if e in ("threads", "processes", "inprocess")]:
        with tempfile.TemporaryDirectory() as folder:  # warm up: imports, workers' first start
            timed_run(executor, "listen", Path(folder), 4, args.reports)
        seconds = {}
        for assessor in ("none", "listen", "asha"):
            with tempfile.TemporaryDirectory() as folder:
                seconds[assessor] = timed_run(
                    executor, assessor, Path(folder), args.trials, args.reports
                )
        none, listen, asha = seconds["none"], seconds["listen"], seconds["asha"]
        print(
            f"{executor:<11}{none:>8.2f}{listen:>8.2f}{listen / none:>6.2f}x"
            f"{asha:>8.2f}{asha / none:>6.2f}x"
        )


if __name__ == "__main__":
    main()
