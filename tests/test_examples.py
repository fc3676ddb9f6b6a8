"""The shipped examples run end to end, as their READMEs say."""

from __future__ import annotations

import os
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import hyperlab
from hyperlab.store import Store

ROOT = Path(__file__).resolve().parents[1]


def test_sklearn_nni_example_runs_unchanged(tmp_path, hyperlab_home):
    """NNI's config and trial script as they are; only the budget is made small."""
    pytest.importorskip("sklearn", reason="the example needs sklearn, which is not installed")
    example = ROOT / "examples" / "sklearn-nni"
    config = yaml.safe_load((example / "config.yml").read_text())
    config.update(
        maxTrialNumber=3,
        searchSpaceFile=str(example / "search_space.json"),
        trialCodeDirectory=str(example),
    )
    path = tmp_path / "config.yml"
    path.write_text(yaml.safe_dump(config))
    # the trial command says `python3`: make that the interpreter running the tests (the one
    # with scikit-learn), whichever python3 comes first on the PATH otherwise
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "python3"  # a script, not a symlink: a venv's python must keep its venv
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n')
    wrapper.chmod(0o755)
    path_var = os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")])
    env = {**os.environ, "HYPERLAB_HOME": str(hyperlab_home), "PATH": path_var}
    out = subprocess.run(
        [sys.executable, "-m", "hyperlab", "run", str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "DONE, 3 trials" in out.stdout
    (summary,) = Store.open(None).list_experiments()
    result = hyperlab.load(summary.id)
    assert all(t.status is hyperlab.TrialStatus.SUCCEEDED for t in result.trials)
    assert all(0.0 < t.value <= 1.0 for t in result.trials)  # cross-validated accuracy
    assert all(len(t.reports) == 3 for t in result.trials)  # one per fold
    assert result.best_value == max(t.value for t in result.trials)  # optimize_mode: maximize


def test_research_example_runs_and_prints_its_table(tmp_path, hyperlab_home):
    """examples/research/study.py as the README runs it: a table per config and a plot."""
    for module in ["sklearn", "pandas", "matplotlib"]:  # the research extra and scikit-learn
        pytest.importorskip(module, reason=f"the example needs {module}, which is not installed")
    env = {
        **os.environ,
        "HYPERLAB_HOME": str(hyperlab_home),
        "HYPERLAB_EXAMPLE_OUTPUT": str(tmp_path),
    }
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "research" / "study.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if " ± " in line]
    assert len(rows) == 12  # 3 models x 4 settings
    assert all(line.rstrip().endswith("(3)") for line in rows)  # 3 repetitions each
    assert (tmp_path / "learning_curves.png").stat().st_size > 10_000
    (summary,) = Store.open(None).list_experiments()
    trials = hyperlab.load(summary.id).trials
    assert len(trials) == 36 and all(t.status is hyperlab.TrialStatus.SUCCEEDED for t in trials)


def test_evolution_example_evolves_and_resumes_from_the_store(tmp_path, hyperlab_home):
    """examples/evolution/evolve.py, a strategy loop, for two generations; then resumed for a
    third, whose parents it reads back from the store."""
    pytest.importorskip("sklearn", reason="the example needs sklearn, which is not installed")
    script = ROOT / "examples" / "evolution" / "evolve.py"
    storage = f"sqlite:///{tmp_path / 'evolution.db'}"
    env = {**os.environ, "HYPERLAB_HOME": str(hyperlab_home)}

    def run(*args: str) -> list[str]:
        out = subprocess.run(
            [sys.executable, str(script), "--storage", storage, *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr
        return [line.split(":")[0] for line in out.stdout.splitlines() if ": accuracy" in line]

    assert run("--generations", "2") == ["generation 0", "generation 1"]
    # resumed: the last stored generation, read back, then one more (not a fresh start)
    assert run("--generations", "3", "--resume") == ["generation 1", "generation 2"]

    result = hyperlab.load("evolve-svc", storage=storage)
    assert result.status is hyperlab.ExperimentStatus.DONE
    assert [t.number for t in result.trials] == list(range(24))  # 3 generations of 8
    assert all(t.status is hyperlab.TrialStatus.SUCCEEDED for t in result.trials)
    assert all(t.source == "custom" and t.attempt == 1 for t in result.trials)  # submitted
    space = runpy.run_path(str(script))["SPACE"]
    for trial in result.trials:  # mutations stay in the space
        space.check(trial.params)
    values = [[t.value for t in result.trials[g * 8 : g * 8 + 8]] for g in range(3)]
    assert sum(values[2]) / 8 > sum(values[0]) / 8  # selection: children beat random points
    assert result.best_value == max(map(max, values)) > max(values[0])  # and found better
