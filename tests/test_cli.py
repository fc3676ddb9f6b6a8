"""The ``hyperlab`` command (the parts the core engine provides: --version, ls)."""

from __future__ import annotations

import subprocess
import sys

import hyperlab


def cli(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "hyperlab.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_version():
    out = cli("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"hyperlab {hyperlab.__version__}"


def test_ls_lists_experiments_of_the_home_store(hyperlab_home):
    result = hyperlab.run(
        lambda p: p["x"], {"x": hyperlab.uniform(0, 1)}, max_trials=3, name="listed", progress=False
    )
    out = cli("ls")
    assert out.returncode == 0, out.stderr
    assert result.experiment_id in out.stdout and "listed" in out.stdout
    assert "DONE" in out.stdout and "3/3" in out.stdout


def test_bad_storage_is_one_line_without_traceback():
    out = cli("--storage", "mysql://x/y", "ls")
    assert out.returncode == 1
    assert out.stderr.startswith("hyperlab: error: storage:") and "Traceback" not in out.stderr
