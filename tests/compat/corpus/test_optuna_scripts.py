"""Scripts written as optuna-examples and Optuna's tutorials write them (``scripts/optuna``),
run on hyperlab with only their import lines rewritten and, Optuna being installed, on Optuna
itself; both runs must pass the script's checks and agree with each other (the same number of
trials, pruning counts within a tolerance, the same enqueued and stopping behaviour, Optuna's
per-trial log lines). ``REFUSED`` scripts fail on hyperlab with the recorded refusal (Optuna
runs them); one that starts running fails its test, so that it is recorded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.compat.corpus.runner import SCRIPTS, Run, optuna_script
from tests.compat.corpus.table import record

pytestmark = pytest.mark.slow

Result = dict[str, Any]


def check_simple(r: Result) -> None:
    assert r["trials"] == r["complete"] == 60 and r["numbers"] == list(range(60))
    assert r["best_value"] < 0.05 and abs(r["best_x"] - 2) < 0.25


def check_sklearn_simple(r: Result) -> None:
    assert r["trials"] == r["complete"] == 20
    assert 0.9 <= r["best_value"] <= 1.0
    assert r["best_keys"] in (["classifier", "svc_c"], ["classifier", "rf_max_depth"])
    assert r["depth_is_int"]


def check_pruning_custom_loop(r: Result) -> None:
    assert r["trials"] == 40 and r["pruned"] + r["complete"] == 40
    assert r["first_five_complete"] and r["pruned"] >= 10  # n_startup_trials=5
    assert all(step >= 5 for step in r["pruned_steps"])  # n_warmup_steps=5
    assert r["best_value"] < 0.1


def check_max_trials_callback(r: Result) -> None:
    assert r["complete"] == 10 and r["trials"] == 10


def check_rdb_resume(r: Result, runs: list[Result]) -> None:
    first, second = runs
    assert (first["before"], first["after"], second["before"], second["after"]) == (0, 8, 8, 16)
    assert second["numbers"] == list(range(16)) and second["best_in_loaded"]
    assert second["names"] == ["example-study"]


def check_enqueue_trial(r: Result) -> None:
    assert r["trials"] == 10 and r["first"] == {"x": 2.0, "y": 0} and r["first_value"] == 0
    assert r["second_x"] == 5.0 and r["second_y_in_range"]
    assert r["best_value"] == 0 and r["best_number"] == 0


def check_callbacks(r: Result) -> None:
    """The callback saw each finished trial with the study holding it, and the study stopped
    at the first good value."""
    assert r["sees_itself"] and len(r["seen"]) == r["trials"]
    assert [state for _, _, state in r["seen"]] == ["COMPLETE"] * r["trials"]
    assert r["best_value"] <= 3


def check_visualization(r: Result) -> None:
    assert set(r["figures"].values()) == {"Figure"}  # plotly figures
    assert r["history_points"] == 30 and r["intermediate_lines"] == 30
    assert r["importance_keys"] == ["x", "y"] and abs(r["importance_sum"] - 1) < 1e-6
    assert r["x_first"] == "x"  # (x - 2)^2 spans far more than y^2


def same_trials(ours: Result, real: Result) -> None:
    assert ours["trials"] == real["trials"]


def same_resumed_trials(ours: Result, real: Result) -> None:
    assert ours["after"] == real["after"]


def same_figures(ours: Result, real: Result) -> None:
    for key in ("figures", "history_points", "intermediate_lines", "importance_keys"):
        assert ours[key] == real[key], key


def similar_pruning(ours: Result, real: Result) -> None:
    """Samplers differ (different random streams): pruning counts within a quarter of trials."""
    assert ours["trials"] == real["trials"]
    assert abs(ours["pruned"] - real["pruned"]) <= 10


def no_comparison(ours: Result, real: Result) -> None:
    """Their own checks are the comparison (the stopping point depends on the grid's order)."""


CHECKS: dict[str, Callable[..., None]] = {
    "simple.py": check_simple,
    "sklearn_simple.py": check_sklearn_simple,
    "pruning_custom_loop.py": check_pruning_custom_loop,
    "max_trials_callback.py": check_max_trials_callback,
    "rdb_resume.py": check_rdb_resume,
    "enqueue_trial.py": check_enqueue_trial,
    "callbacks.py": check_callbacks,
    "visualization.py": check_visualization,
}
COMPARE: dict[str, Callable[[Result, Result], None]] = {
    "simple.py": same_trials,
    "sklearn_simple.py": same_trials,
    "pruning_custom_loop.py": similar_pruning,
    "max_trials_callback.py": same_trials,
    "rdb_resume.py": same_resumed_trials,
    "enqueue_trial.py": same_trials,
    "callbacks.py": no_comparison,
    "visualization.py": same_figures,
}
NEEDS = {"sklearn_simple.py": "sklearn", "visualization.py": "plotly"}
TIMES = {"rdb_resume.py": 2}  # run twice: the second run resumes the first one's study
LOGGED = {"simple.py"}  # Optuna's per-trial INFO lines, compared by count
SHOWN = {  # the result's field the table shows, hyperlab's then Optuna's
    "simple.py": "best_value",
    "sklearn_simple.py": "best_value",
    "pruning_custom_loop.py": "pruned",
    "max_trials_callback.py": "complete",
    "rdb_resume.py": "after",
    "enqueue_trial.py": "best_number",
    "callbacks.py": "trials",
    "visualization.py": "history_points",
}
# script -> what hyperlab's refusal says
REFUSED = {"ask_and_tell_batch.py": "Study.ask(fixed_distributions=...)"}


def test_every_script_is_checked_or_refused():
    scripts = {path.name for path in (SCRIPTS / "optuna").glob("*.py")}
    assert scripts == set(CHECKS) | set(REFUSED)


def checked(name: str, run: Run) -> None:
    assert run.ran, run.error or run.stderr[-3000:]
    check = CHECKS[name]
    if name in TIMES:
        check(run.result, run.results)
    else:
        check(run.result)


def logged_trials(run: Run) -> int:
    return len(re.findall(r"Trial \d+ finished with value", run.stderr))


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_an_optuna_style_script_agrees_with_optuna(name: str, tmp_path: Path, request) -> None:
    if name in NEEDS:
        pytest.importorskip(NEEDS[name], reason=f"the script needs {NEEDS[name]}: not installed")
    ours = optuna_script(name, tmp_path / "hyperlab", real=False, times=TIMES.get(name, 1))
    try:
        import optuna  # noqa: F401
    except ImportError:
        real = None
    else:
        real = optuna_script(name, tmp_path / "optuna", real=True, times=TIMES.get(name, 1))
    agrees: bool | None = None
    why = ours.error
    if ours.ran and real is not None:
        try:
            checked(name, real)
            checked(name, ours)
            COMPARE[name](ours.result, real.result)
            if name in LOGGED:
                assert logged_trials(ours) == logged_trials(real), (
                    f"Optuna logged {logged_trials(real)} trial lines, hyperlab "
                    f"{logged_trials(ours)}"
                )
            agrees = True
            field = SHOWN[name]
            why = f"{field}: {ours.result[field]:.4g} (Optuna: {real.result[field]:.4g})"
        except AssertionError as error:
            agrees, why = False, str(error).splitlines()[0]
    record(request.config, "optuna", name, ran=ours.ran, agrees=agrees, note=why)
    checked(name, ours)
    if real is not None:
        checked(name, real)
        COMPARE[name](ours.result, real.result)
        if name in LOGGED:
            assert logged_trials(ours) == logged_trials(real)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_optuna_style_script_is_refused_as_recorded(name: str, tmp_path: Path, request):
    ours = optuna_script(name, tmp_path / "hyperlab", real=False)
    record(request.config, "optuna", name, ran=ours.ran, agrees=None, note=ours.error)
    assert not ours.ran, (
        f"{name} now runs on hyperlab: give it checks in CHECKS and update the counts of "
        "'What runs unchanged' in docs/migrating.md"
    )
    assert REFUSED[name] in ours.error, ours.stderr[-3000:]
