"""What recording an experiment's environment costs: ``capture_environment`` timed in this
repository (a git repository), against the 100 ms target.

Prints, in this one fresh process:

- the import of ``hyperlab.environment`` and the first (cold) capture, separately;
- the median and the max of N further captures (default 20);
- the parts alone (the git calls, the package list), to see where the time goes;
- reading back an experiment whose environment holds a diff of ``DIFF_LIMIT`` bytes (the worst
  case of ``Store.get_experiment``, which every reader calls).

    python benchmarks/environment_cost.py [--runs 20] [--code-dir PATH]

Exits non-zero when the cold capture or the median misses the target.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

TARGET_MS = 100.0
ROOT = Path(__file__).resolve().parents[1]


def timed_ms(fn: Callable[[], Any]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def series(fn: Callable[[], Any], runs: int) -> tuple[float, float]:
    times = [timed_ms(fn) for _ in range(runs)]
    return statistics.median(times), max(times)


def store_read_ms(env: dict[str, Any], runs: int) -> tuple[float, float]:
    """Median and max of ``get_experiment`` for an experiment whose diff is the largest kept."""
    from hyperlab.config import ExperimentOptions
    from hyperlab.environment import DIFF_LIMIT
    from hyperlab.store import ExperimentRecord, Store
    from hyperlab.trial import ExperimentStatus

    line = "+" + "x" * 78 + "\n"
    big = {**env, "git": {**(env["git"] or {}), "diff": line * (DIFF_LIMIT // len(line))}}
    with tempfile.TemporaryDirectory() as folder, Store.open(f"{folder}/runs.db") as store:
        store.create_experiment(
            ExperimentRecord(
                id="bench001",
                name=None,
                status=ExperimentStatus.INITIALIZED,
                options=ExperimentOptions(),
                space={},
                seed=0,
                objective=None,
                created_at=time.time(),
                environment=big,
            )
        )
        return series(lambda: store.get_experiment("bench001"), runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--code-dir", default=str(ROOT), help="where git is asked (default: here)")
    args = parser.parse_args()

    import_ms = timed_ms(lambda: __import__("hyperlab.environment"))
    from hyperlab import environment

    cold_ms = timed_ms(lambda: environment.capture_environment(args.code_dir))
    median_ms, max_ms = series(lambda: environment.capture_environment(args.code_dir), args.runs)
    env = environment.capture_environment(args.code_dir)
    git_ms, _ = series(lambda: environment._git_state(args.code_dir), args.runs)
    packages_ms, _ = series(environment._installed_packages, args.runs)
    read_median, read_max = store_read_ms(env, args.runs)

    print(f"python {sys.version.split()[0]}, {env['cpu_count']} CPUs, {env['platform']}")
    print(f"code dir {args.code_dir}: {environment.describe_environment(env)[0].split(None, 1)[1]}")
    diff = (env["git"] or {}).get("diff") or ""
    print(f"captured {len(env['packages'])} packages, a {len(diff.encode()):,} byte diff")
    print(f"gpus: {environment.describe_environment(env)[4].split(None, 1)[1]}")
    print()
    target = f"target < {TARGET_MS:.0f} ms"
    rows = [
        ("import hyperlab.environment", f"{import_ms:7.1f} ms"),
        ("first capture (cold)", f"{cold_ms:7.1f} ms   {target}"),
        (f"capture, median of {args.runs}", f"{median_ms:7.1f} ms   {target}"),
        (f"capture, max of {args.runs}", f"{max_ms:7.1f} ms"),
        ("  git calls alone, median", f"{git_ms:7.1f} ms"),
        ("  package list alone, median", f"{packages_ms:7.1f} ms"),
        ("get_experiment, 1 MB diff", f"{read_median:7.1f} ms median, {read_max:.1f} ms max"),
    ]
    for label, value in rows:
        print(f"{label:<30} {value}")
    ok = cold_ms < TARGET_MS and median_ms < TARGET_MS
    print("within target" if ok else "MISSES the target")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
