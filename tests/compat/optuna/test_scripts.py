"""Scripts written for Optuna (in the style of its examples) run on hyperlab with the import
line changed only, and give what they give on Optuna itself (when it is installed)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab.store import Store
from hyperlab.trial import TrialStatus

SCRIPTS = Path(__file__).parent / "scripts"

pytestmark = pytest.mark.slow


def run_script(name: str, tmp_path: Path, *, real: bool) -> dict[str, Any]:
    """Run the script (its ``import optuna`` rewritten unless ``real``); its RESULT line."""
    source = (SCRIPTS / name).read_text()
    if not real:
        source = re.sub(
            r"^import optuna$", "import hyperlab.compat.optuna as optuna", source, flags=re.M
        )
        source = re.sub(
            r"^from optuna\.trial import",
            "from hyperlab.compat.optuna.trial import",
            source,
            flags=re.M,
        )
        assert "hyperlab" in source
    script = tmp_path / ("hl_" if not real else "real_") / name
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(source)
    env = {**os.environ, "HYPERLAB_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, done.stdout[-2000:]
    return json.loads(lines[-1][len("RESULT ") :])


def both(name: str, tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any] | None]:
    ours = run_script(name, tmp_path, real=False)
    try:
        import optuna  # noqa: F401
    except ImportError:
        return ours, None
    return ours, run_script(name, tmp_path, real=True)


def test_a_pruning_partial_fit_script(tmp_path: Path) -> None:
    pytest.importorskip("sklearn", reason="the script trains a scikit-learn model: not installed")
    ours, real = both("pruning_partial_fit.py", tmp_path)
    for result in filter(None, (ours, real)):
        assert result["trials"] == 25
        assert result["pruned"] > 0 and result["complete"] >= 5  # n_startup_trials complete
        assert result["pruned"] + result["complete"] == 25
        assert 0.0 <= result["best_value"] <= 0.4
        assert result["best_params"] == ["alpha"]
        assert all(step >= 3 for step in result["pruned_steps"])  # n_warmup_steps=3
        assert all(step < 29 for step in result["pruned_steps"])  # stopped before the end
    # the study is an ordinary hyperlab experiment, in hyperlab's default store
    storage = str(tmp_path / "home" / "hyperlab.db")
    (experiment,) = Store.open(storage).list_experiments()
    result = hyperlab.load(experiment.id, storage=storage)
    assert len(result.trials) == 25 and result.metric == "value"
    statuses = [t.status for t in result.trials]
    assert statuses.count(TrialStatus.EARLY_STOPPED) == ours["pruned"]


def test_a_conditional_sklearn_script_with_an_enqueued_trial(tmp_path: Path) -> None:
    pytest.importorskip("sklearn", reason="the script trains scikit-learn models: not installed")
    pytest.importorskip("pandas", reason="trials_dataframe() needs the pandas extra: not installed")
    ours, real = both("sklearn_conditional.py", tmp_path)
    for result in filter(None, (ours, real)):
        assert result["trials"] == 16 and result["complete"] == 16
        assert 0.9 <= result["best_value"] <= 1.0
        assert result["enqueued"] == ["RandomForest", 4]
        assert "int" in result["types"] and "str" in result["types"]
        assert result["frame"][0] == 16


def test_an_ask_and_tell_loop(tmp_path: Path) -> None:
    ours, real = both("ask_and_tell.py", tmp_path)
    for result in filter(None, (ours, real)):
        assert result["trials"] == 30
        assert result["pruned"] == result["told_pruned"]
        assert result["complete"] == 30 - result["pruned"]
        assert result["best_value"] < 20
        assert result["best_params"] == ["x", "y"] and result["y_is_int"]
