"""On the real cluster, as on every executor: whatever a Ray trial reports or returns is stored
or fails that trial alone, naming the metric and its type
(tests/experiment/test_trial_outputs.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.experiment import trial_outputs as outputs
from tests.experiment.test_trial_outputs import check, run_cases

pytest.importorskip("ray", reason="the ray extra is not installed")

CASES = [
    [outputs.KEY, ["model"]],
    [outputs.KEY, ["np", "float32", 0.5]],
    [outputs.KEY, ["array", "int64", [1, 2]]],
    [outputs.KEY, ["float", float("nan")]],
    [outputs.KEY, ["bytes", "ab"]],
    [outputs.KEY, ["keyed", [[1, ["int", 2]]]]],
    [outputs.KEY, ["deep", outputs.DEEP]],
    [outputs.KEY, ["big", 4 * 2**20]],
    [outputs.KEY, ["lock"]],
    [7, ["int", 1]],
]


def test_ray_trials_outputs_are_stored_or_fail_their_trial(cluster: Any, tmp_path: Path) -> None:
    result = run_cases(tmp_path, "ray", CASES, executor_args={"ray_address": cluster.address})
    check(result, CASES)
