"""Running the suite: the results cache, the process pool, progress, the problems' scales."""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from .contenders import SUITE_VERSION, init_worker, parse_label, run
from .spaces import hyperlab_space
from .suite import problems

DEFAULT_OUT = Path.home() / ".cache" / "hyperlab-bench" / "quality.jsonl"
COST = {
    "optuna-gp": 8.0,
    "gp": 0.4,
    "auto": 0.4,
    "optuna-tpe-univariate": 0.4,
    "hyperopt-tpe": 0.3,
    "optuna-tpe": 0.25,
    "tpe": 0.08,
    "optuna-cmaes": 0.06,
    "hyperopt-rand": 0.03,
}
"""Rough seconds of a run of 100 trials at 5 dimensions (0.01 if not listed), measured on the
quick suite; they order the runs longest first and weigh the ETA."""


def cost(label: str, name: str, horizon: int) -> float:
    """A run's rough seconds (see ``COST``)."""
    problem, base = problems()[name], parse_label(label).base
    size = horizon / 100 * (horizon / 100 if base in ("gp", "auto", "optuna-gp") else 1)
    seconds = size * COST.get(base, 0.01) * (0.5 + problem.dimension / 10)
    return seconds + horizon / 100 * problem.cost


def usable(path: Path, wanted: set[tuple], horizon: int, stamps: dict[str, str] | None) -> dict:
    """The newest cached record per wanted run with a budget >= ``horizon`` and, unless
    ``stamps`` is None, the current fingerprint."""
    out = {}
    for r in load(path):
        key = (r["contender"], r["problem"], r["seed"], r["concurrency"])
        current = stamps is None or r.get("fingerprint") == stamps.get(r["contender"])
        if key in wanted and r["budget"] >= horizon and current:
            out[key] = r
    return out


def load(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut by a crash
        if record.get("suite") == SUITE_VERSION and "improvements" in record:
            out.append(record)
    return out


def scales_for(names: list[str], path: Path) -> dict[str, dict[str, float]]:
    """Per non-BBOB problem: the median and min of 100 prior draws (seed 12345), and f_opt;
    cached in a JSON file beside the results."""
    cache = json.loads(path.read_text()) if path.exists() else {}
    key = f"v{SUITE_VERSION}"
    cache.setdefault(key, {})
    for name in names:
        problem = problems()[name]
        if problem.family == "bbob" or name in cache[key]:
            continue
        f, f_opt = problem.instance(0)
        draws = hyperlab_space(problem).sample(np.random.default_rng(12345), 100)
        values = [f(p) for p in draws]
        cache[key][name] = {"median": float(np.median(values)), "min": min(values), "f_opt": f_opt}
    path.write_text(json.dumps(cache, indent=1))
    return cache[key]


def clock(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m"
    return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s"


def execute(tasks: list[dict[str, Any]], jobs: int, out: Path, stamps: dict[str, str]) -> int:
    """Run ``tasks`` (longest first), appending each record to ``out``; returns the errors."""
    tasks = sorted(tasks, key=lambda t: -t["cost"])
    total_cost = sum(t["cost"] for t in tasks) or 1.0
    start, done_cost, last, errors, count = time.time(), 0.0, 0.0, 0, 0
    seen: set[tuple[str, str]] = set()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a") as sink:

        def finish(task: dict[str, Any], record: dict[str, Any]) -> None:
            nonlocal done_cost, last, errors, count
            done_cost, count = done_cost + task["cost"], count + 1
            if "error" in record:
                errors += 1
                if (task["contender"], task["problem"]) not in seen:
                    seen.add((task["contender"], task["problem"]))
                    print(
                        f"\nERROR {task['contender']} on {task['problem']} seed "
                        f"{task['seed']}:\n{record['error']}",
                        file=sys.stderr,
                    )
            else:
                record.update(
                    suite=SUITE_VERSION,
                    fingerprint=stamps[task["contender"]],
                    when=time.strftime("%Y-%m-%dT%H:%M:%S"),
                )
                sink.write(json.dumps(record) + "\n")
                sink.flush()
            elapsed = time.time() - start
            if elapsed - last > 10 or count == len(tasks):
                last = elapsed
                eta = elapsed * (total_cost - done_cost) / max(done_cost, 1e-9)
                print(
                    f"[quality] {count}/{len(tasks)} runs, {clock(elapsed)} elapsed, "
                    f"ETA {clock(eta)}",
                    file=sys.stderr,
                    flush=True,
                )

        work = [
            {k: t[k] for k in ("contender", "problem", "seed", "concurrency", "budget")}
            for t in tasks
        ]
        if jobs <= 1:
            init_worker()
            for task, item in zip(tasks, work, strict=True):
                finish(task, run(item))
            return errors
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            os.environ[var] = "1"
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(jobs, mp_context=context, initializer=init_worker) as pool:
            futures: dict[Future, dict[str, Any]] = {
                pool.submit(run, item): task for task, item in zip(tasks, work, strict=True)
            }
            try:
                for future in as_completed(futures):
                    finish(futures[future], future.result())
            except KeyboardInterrupt:
                pool.shutdown(cancel_futures=True)
                raise
    return errors
