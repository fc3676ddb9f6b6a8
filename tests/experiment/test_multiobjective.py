"""Several objectives and constraints through the engine: metric and mode lists, trials that
return every objective, the Pareto front and hypervolume of ``Result``, constraints as text or
as a function (kept across a resume), and the bad input of issue 29, each refused before
anything is written or failing only its own trial."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hyperlab
from hyperlab.errors import ConfigError, TrialError
from hyperlab.store import Store
from hyperlab.trial import TrialStatus

SPACE = {"x": {"_type": "uniform", "_value": [-1.0, 3.0]}}


def schaffer(params: dict[str, Any]) -> dict[str, float]:
    """Schaffer's problem N.1: its front is x in [0, 2]; ``lat`` is a third metric."""
    x = params["x"]
    return {"a": x**2, "b": (x - 2.0) ** 2, "lat": 10.0 * x, "acc": -x}


def _run(tmp_path: Path, **options: Any) -> hyperlab.Result:
    options = {"tuner": "random", "max_trials": 30, "seed": 3, "progress": False, **options}
    return hyperlab.run(schaffer, SPACE, storage=str(tmp_path / "runs.db"), **options)


def _dominates(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True)) and a != b


def test_every_objective_is_kept_and_the_front_is_the_non_dominated_set(tmp_path: Path) -> None:
    result = _run(tmp_path, metric=["a", "b"], mode=["min", "min"])
    trials = result.trials
    assert all(t.status is TrialStatus.SUCCEEDED for t in trials)
    assert all(t.values == (t.metrics["a"], t.metrics["b"]) for t in trials)
    assert all(t.value == t.values[0] for t in trials)  # type: ignore[index]
    expected = [
        t.number
        for t in trials
        if not any(_dominates(o.values, t.values) for o in trials)  # type: ignore[arg-type]
    ]
    assert [t.number for t in result.best_trials] == expected
    assert len(result.best_trials) > 3  # most of 30 draws fall in the front's x in [0, 2]
    frame = result.pareto_front()
    assert list(frame["number"]) == expected and list(frame["a"]) == [
        t.values[0]  # type: ignore[index]
        for t in result.best_trials
    ]
    assert result.multi_objective and "Pareto front" in result.summary()
    reloaded = hyperlab.load(result.experiment_id, storage=str(tmp_path / "runs.db"))
    assert [t.values for t in reloaded.best_trials] == [t.values for t in result.best_trials]


def test_mixed_directions_and_hypervolume(tmp_path: Path) -> None:
    result = _run(tmp_path, metric=["a", "acc"], mode=["min", "max"])
    front = result.best_trials  # a = x^2 down, acc = -x up: the front is near x in [-1, 0]
    assert front and sum(t.params["x"] <= 0.0 for t in front) >= len(front) - 1
    hv = result.hypervolume([10.0, -5.0])
    points = np.array([t.values for t in front])
    # 2-D hypervolume by a sweep, in losses (a, -acc) against (10, 5)
    losses = sorted((p[0], -p[1]) for p in points)
    area, last = 0.0, 5.0
    for a, b in losses:
        if b < last:
            area += (10.0 - a) * (last - b)
            last = b
    assert hv == pytest.approx(area)
    with pytest.raises(ConfigError, match="reference_point"):
        result.hypervolume([1.0, 2.0, 3.0])
    with pytest.raises(ConfigError, match="reference_point"):
        result.hypervolume([1.0, float("nan")])


def test_one_best_is_refused_with_several_objectives(tmp_path: Path) -> None:
    result = _run(tmp_path, metric=["a", "b"], max_trials=3)
    for name in ("best_trial", "best_params", "best_value"):
        with pytest.raises(ValueError, match="best_trials"):
            getattr(result, name)


def test_a_single_mode_applies_to_every_metric(tmp_path: Path) -> None:
    result = _run(tmp_path, metric=["a", "b"], mode="max", max_trials=3)
    assert result.modes == (hyperlab.Mode.MAX, hyperlab.Mode.MAX)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"metric": ["a", "b"], "mode": ["min"]}, "1 directions"),
        ({"metric": ["a", "b"], "mode": ["min", "max", "min"]}, "3 directions"),
        ({"metric": "a", "mode": ["min", "max"]}, "2 directions"),
        ({"metric": ["a", "a"]}, "appears twice"),
        ({"metric": []}, r"got \[\]"),
        ({"metric": ["a", "b"], "tuner": "anneal"}, "optimises one objective"),
        ({"metric": ["a", "b"], "tuner": "cmaes"}, "optimises one objective"),
        ({"constraints": ["lat <= 15"], "tuner": "anneal"}, "does not honour constraints"),
        ({"constraints": ["lat <== 15"]}, "does not parse"),
        ({"constraints": ["15 <= 20"]}, "does not parse"),
        ({"constraints": ["lat <= fifteen"]}, "does not parse"),
        ({"constraints": [3]}, "expected strings"),
    ],
)
def test_bad_objectives_are_refused_before_anything_is_written(
    tmp_path: Path, options: dict[str, Any], words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        _run(tmp_path, **options)
    store = Store.open(str(tmp_path / "runs.db"))
    assert store.list_experiments() == []
    store.close()


def test_a_missing_objective_fails_its_trial_naming_it(tmp_path: Path) -> None:
    def partial(params: dict[str, Any]) -> dict[str, float]:
        out = schaffer(params)
        if params["x"] > 1.0:
            del out["b"]
        return out

    result = hyperlab.run(
        partial,
        SPACE,
        metric=["a", "b"],
        tuner="random",
        max_trials=12,
        seed=5,
        progress=False,
        continue_on_failure=True,
        storage=str(tmp_path / "runs.db"),
    )
    failed = [t for t in result.trials if t.status is TrialStatus.FAILED]
    assert failed and all(t.params["x"] > 1.0 for t in failed)
    assert all("objective 'b' is missing" in (t.error or "") for t in failed)
    assert all(t.number not in {f.number for f in failed} for t in result.best_trials)


def test_text_constraints_keep_infeasible_trials_off_the_front(tmp_path: Path) -> None:
    result = _run(tmp_path, metric=["a", "b"], constraints=["lat <= 15", "acc >= -1.9"])
    trials = result.trials
    for t in trials:
        assert t.constraints == pytest.approx((t.metrics["lat"] - 15.0, -1.9 - t.metrics["acc"]))
        assert t.feasible == (t.params["x"] <= 1.5)
        assert t.violation == pytest.approx(
            max(0.0, t.metrics["lat"] - 15.0) + max(0.0, t.params["x"] - 1.9)
        )
    assert any(not t.feasible for t in trials)
    assert all(t.feasible for t in result.best_trials)
    feasible = [t for t in trials if t.feasible]
    expected = [
        t.number for t in feasible if not any(_dominates(o.values, t.values) for o in feasible)
    ]  # type: ignore[arg-type]
    assert [t.number for t in result.best_trials] == expected


def test_a_single_objective_best_is_feasible(tmp_path: Path) -> None:
    result = _run(tmp_path, metric="b", constraints=["lat <= 10"])
    best = result.best_trial
    assert best is not None and best.feasible and best.params["x"] <= 1.0
    infeasible_better = [t for t in result.trials if not t.feasible and t.value < best.value]  # type: ignore[operator]
    assert infeasible_better  # x near 2 is better on b, and infeasible
    assert result.best_trials == [best]


def _budget_constraint(trial: hyperlab.Trial) -> list[float]:
    return [trial.metrics["lat"] - 5.0]


def test_a_constraints_function_is_kept_for_resume(tmp_path: Path) -> None:
    storage = str(tmp_path / "runs.db")
    first = hyperlab.run(
        schaffer,
        SPACE,
        metric=["a", "b"],
        tuner="random",
        max_trials=8,
        seed=1,
        progress=False,
        storage=storage,
        constraints=_budget_constraint,
    )
    assert all(t.constraints == (t.metrics["lat"] - 5.0,) for t in first.trials)
    again = hyperlab.resume(first.experiment_id, storage=storage, max_trials=16, progress=False)
    assert len(again.trials) == 16
    assert all(t.constraints == (t.metrics["lat"] - 5.0,) for t in again.trials)
    assert all(t.feasible for t in again.best_trials)


@pytest.mark.parametrize(
    ("function", "words"),
    [
        (lambda trial: 1 / 0, "constraints function raised ZeroDivisionError"),
        (lambda trial: ["x"], "expected a sequence of finite numbers"),
        (lambda trial: [float("nan")], "expected a sequence of finite numbers"),
        (lambda trial: 3.0, "expected a sequence of finite numbers"),
    ],
)
def test_a_broken_constraints_function_fails_the_trial_naming_it(
    tmp_path: Path, function: Any, words: str
) -> None:
    with pytest.raises(TrialError, match=words):
        _run(tmp_path, metric=["a", "b"], max_trials=2, constraints=function)


def test_a_constraints_function_may_return_none_for_a_trial(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        metric=["a", "b"],
        max_trials=10,
        constraints=lambda t: [] if t.params["x"] < 1.0 else [t.params["x"] - 1.5],
    )
    for t in result.trials:
        assert (t.constraints is None) == (t.params["x"] < 1.0)
        assert t.feasible == (t.params["x"] <= 1.5)


def test_a_constraint_on_a_metric_the_trial_lacks_fails_it(tmp_path: Path) -> None:
    with pytest.raises(TrialError, match="metric 'memory_gb' is missing") as caught:
        _run(tmp_path, metric="a", constraints=["memory_gb <= 16"], max_trials=2)
    result = caught.value.result
    assert result is not None and all(t.status is TrialStatus.FAILED for t in result.trials)


def test_trials_report_values_step_by_step(tmp_path: Path) -> None:
    def curve(params: dict[str, Any]) -> None:
        for step in range(3):
            hyperlab.report({"a": params["x"] ** 2 + 1 / (step + 1), "b": (params["x"] - 2) ** 2})

    result = hyperlab.run(
        curve,
        SPACE,
        metric=["a", "b"],
        tuner="random",
        max_trials=4,
        seed=2,
        progress=False,
        storage=str(tmp_path / "runs.db"),
    )
    for t in result.trials:
        assert t.status is TrialStatus.SUCCEEDED and len(t.reports) == 3
        assert t.values == (t.reports[-1].metrics["a"], t.reports[-1].metrics["b"])


TRAIN = """
import hyperlab
x = hyperlab.get_params()["x"]
hyperlab.report({"a": x * x, "acc": -x, "lat": 10 * x})
"""


def test_a_config_file_runs_a_command_with_metric_and_mode_lists(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "exp.yml").write_text(
        "search_space: {x: {_type: uniform, _value: [-1, 3]}}\n"
        f"trial: {{command: {sys.executable} train.py, code_dir: .}}\n"
        "metric: [a, acc]\nmode: [min, max]\nconstraints: ['lat <= 15']\n"
        "tuner: random\nmax_trials: 6\nseed: 4\nstorage: runs.db\n"
    )
    env = {**os.environ, "HYPERLAB_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "hyperlab", "run", str(tmp_path / "exp.yml")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (summary,) = Store.open(str(tmp_path / "runs.db")).list_experiments()
    result = hyperlab.load(summary.id, storage=str(tmp_path / "runs.db"))
    assert result.metrics == ("a", "acc") and len(result.trials) == 6
    assert all(t.values == (t.metrics["a"], t.metrics["acc"]) for t in result.trials)
    assert all(t.constraints is not None for t in result.trials)
    assert result.best_trials and all(t.feasible for t in result.best_trials)


def test_grid_covers_the_grid_with_several_objectives(tmp_path: Path) -> None:
    space = {"x": {"_type": "choice", "_value": [-1.0, 0.0, 1.0, 2.0, 3.0]}}
    result = hyperlab.run(
        schaffer,
        space,
        metric=["a", "b"],
        tuner="grid",
        progress=False,
        storage=str(tmp_path / "runs.db"),
    )
    assert sorted(t.params["x"] for t in result.trials) == [-1.0, 0.0, 1.0, 2.0, 3.0]
    assert sorted(t.params["x"] for t in result.best_trials) == [0.0, 1.0, 2.0]


@pytest.mark.parametrize("modes", list(itertools.product(["min", "max"], repeat=2)))
def test_the_front_respects_each_direction(tmp_path: Path, modes: tuple[str, str]) -> None:
    result = _run(tmp_path, metric=["a", "b"], mode=list(modes), max_trials=15)
    signs = [1.0 if m == "min" else -1.0 for m in modes]
    losses = {
        t.number: tuple(s * v for s, v in zip(signs, t.values, strict=True)) for t in result.trials
    }  # type: ignore[arg-type]
    expected = [n for n, p in losses.items() if not any(_dominates(q, p) for q in losses.values())]
    assert [t.number for t in result.best_trials] == expected


def test_imported_results_carry_every_objective(tmp_path: Path) -> None:
    import threading

    gate = threading.Event()

    def slow(params: dict[str, Any]) -> dict[str, float]:
        gate.wait(30)
        return schaffer(params)

    exp = hyperlab.Experiment(
        slow,
        SPACE,
        metric=["a", "b"],
        tuner="tpe",
        max_trials=3,
        seed=1,
        progress=False,
        executor="threads",
        storage=str(tmp_path / "runs.db"),
    )
    exp.start()
    try:
        with pytest.raises(ConfigError, match=r"results\[1\].metrics: .*\['b'\] is missing"):
            exp.import_data(
                [
                    {"params": {"x": 0.5}, "value": 0.25, "metrics": {"b": 2.25}},
                    {"params": {"x": 1.0}, "value": 1.0},
                ]
            )
        assert exp.import_data([{"params": {"x": 0.5}, "value": 0.25, "metrics": {"b": 2.25}}]) == 1
    finally:
        gate.set()
    result = exp.wait(60)
    assert len(result.trials) == 3 and all(t.values is not None for t in result.trials)


def test_a_listed_multi_objective_experiment_has_no_best_value(tmp_path: Path) -> None:
    _run(tmp_path, metric=["a", "b"], max_trials=4)
    _run(tmp_path, metric="a", max_trials=4)
    with Store.open(str(tmp_path / "runs.db")) as store:
        several, one = sorted(store.list_experiments(), key=lambda s: len(s.modes), reverse=True)
    assert len(several.modes) == 2 and several.best_value is None  # its front is the answer
    assert len(one.modes) == 1 and one.best_value is not None
