"""Ray Tune scripts, written as Ray's examples are, run with only their imports changed to
``hyperlab.compat.ray``; and, where Ray Tune is installed, run as they are with Ray, to check
that both give the same number of trials, a best result of the same kind, and early stops.

Each script prints one ``SUMMARY {...}`` line (JSON) read here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parent / "scripts"
GOOD_ALPHAS = {1e-4, 1e-3}


def check_sgd_asha(summary: dict) -> None:
    assert summary["trials"] == 6 and summary["errors"] == 0
    assert summary["best_config"] == {"alpha": summary["best_config"]["alpha"], "loss": "hinge"}
    assert summary["best_config"]["alpha"] in GOOD_ALPHAS
    assert 0.8 < summary["best_metric"] <= 1.0
    assert max(summary["iterations"]) == 9
    assert sum(i < 9 for i in summary["iterations"]) >= 3  # ASHA stopped the bad learners
    assert summary["best_checkpoint"] == ["model.pkl"]


def check_trainable_hyperband(summary: dict) -> None:
    assert summary["trials"] == 5 and summary["errors"] == 0
    assert summary["best_config"] == {"lr": 0.3}
    assert 0 < summary["best_metric"] < 10
    assert max(summary["iterations"]) == 3
    assert sum(i < 3 for i in summary["iterations"]) == 2  # halved at the first rung


def check_legacy_run(summary: dict) -> None:
    assert summary["trials"] == 6
    config = summary["best_config"]
    assert config["width"] == 3 and 0 <= config["x"] <= 1
    assert config["activation"] in ("relu", "tanh") and config["dataset"] == "digits"
    assert summary["widths"] == [1, 1, 2, 2, 3, 3]  # each grid point num_samples times
    assert set(summary["depths"]) <= {0, 1, 2}  # randint: the upper bound excluded
    assert 2.75 <= summary["best_metric"] <= 3.2
    assert summary["iterations"] == [4] * 6
    assert summary["statuses"] == ["TERMINATED"] * 6


def check_generator_run(summary: dict) -> None:
    """Each yield is a result; the generator's return value is not (Ray ignores it)."""
    assert summary["trials"] == 3
    assert summary["best_config"] == {"rate": 2.0} and summary["best_metric"] == 6.0
    assert summary["iterations"] == [3, 3, 3]
    assert summary["scores"] == [[0.5, 1.0, 1.5], [1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]
    assert summary["statuses"] == ["TERMINATED"] * 3


DETERMINISTIC = {"sgd_asha", "trainable_hyperband", "generator_run"}
READ_DATAFRAMES = {"sgd_asha", "legacy_run", "generator_run"}  # they need pandas
CHECKS = {
    "sgd_asha": check_sgd_asha,
    "trainable_hyperband": check_trainable_hyperband,
    "legacy_run": check_legacy_run,
    "generator_run": check_generator_run,
}


def on_hyperlab(source: str) -> str:
    """The script with its Ray imports pointed at hyperlab.compat.ray."""
    changed = re.sub(
        r"^from ray(\.[\w.]+)? import", r"from hyperlab.compat.ray\1 import", source, flags=re.M
    )
    assert "ray" not in re.findall(r"^(?:from|import) (\w+)", changed, flags=re.M)
    return changed


def run_script(name: str, folder: Path, *, hyperlab: bool) -> dict:
    source = (SCRIPTS / f"{name}.py").read_text()
    script = folder / f"{name}.py"
    script.write_text(on_hyperlab(source) if hyperlab else source)
    out = subprocess.run(
        [sys.executable, str(script), str(folder / "results")],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=folder,
    )
    assert out.returncode == 0, out.stderr[-4000:]
    lines = [line for line in out.stdout.splitlines() if line.startswith("SUMMARY ")]
    assert lines, out.stdout[-2000:]
    return json.loads(lines[-1].removeprefix("SUMMARY "))


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_a_ray_tune_script_runs_on_hyperlab(name, tmp_path):
    if name in READ_DATAFRAMES:
        pytest.importorskip("pandas", reason="DataFrames need the pandas extra, not installed")
    CHECKS[name](run_script(name, tmp_path, hyperlab=True))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_ray_tune_and_hyperlab_agree_on_a_script(name, tmp_path):
    pytest.importorskip("ray.tune", reason="Ray Tune is not installed")
    (tmp_path / "ray").mkdir()
    (tmp_path / "hyperlab").mkdir()
    with_ray = run_script(name, tmp_path / "ray", hyperlab=False)
    with_hyperlab = run_script(name, tmp_path / "hyperlab", hyperlab=True)
    CHECKS[name](with_ray)
    CHECKS[name](with_hyperlab)
    assert with_ray["trials"] == with_hyperlab["trials"]
    assert with_ray["best_config"].keys() == with_hyperlab["best_config"].keys()
    if name in DETERMINISTIC:  # grids of deterministic trainables: the very same best
        assert with_ray["best_config"] == with_hyperlab["best_config"]
        assert with_ray["best_metric"] == pytest.approx(with_hyperlab["best_metric"])


def test_the_pbt_example_runs():
    example = Path(__file__).parents[3] / "examples" / "ray_tune" / "pbt_trainable.py"
    out = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-4000:]
    lines = out.stdout.splitlines()
    assert sum(line.startswith("trial ") for line in lines) >= 4
    assert lines[-1].startswith("best: lr=")
