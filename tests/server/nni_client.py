"""NNI 3.0's real Python client, for tests: a virtual environment with ``nni==3.0`` of its own
(NNI cannot be installed beside hyperlab), built once per machine, and a runner for small
scripts that call ``nni.experiment.Experiment`` against a hyperlab server.

The environment lives outside the repository, in ``$HYPERLAB_TEST_CACHE`` (default
``~/.cache/hyperlab-tests``) under ``nni-3.0/``. It is built in place under a file lock (so
parallel test runs build it once) and is used only once its marker file, written last, names
NNI's version and the interpreter it was built from: a build that was interrupted, or made by
another Python, is removed and built again. The first build installs ``nni==3.0`` and its
dependencies with pip (about 30 s with the package mirrors of this workplace); afterwards
finding it costs a file read.

``HYPERLAB_SKIP_NNI_CLIENT=1`` skips the tests that need it (a machine without PyPI).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["NNI_VERSION", "client_python", "run_client"]

NNI_VERSION = "3.0"
BUILD_TIMEOUT = 900.0  # seconds pip may take on a slow network
SCRIPT_TIMEOUT = 60.0  # seconds one client script may take

_PRELUDE = """\
import dataclasses, json, sys
from nni.experiment import Experiment

def plain(value):
    # NNI's records (TrialJob, TrialMetricData, TrialResult) as JSON
    if dataclasses.is_dataclass(value):
        return dataclasses.asdict(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value

port, out_path = int(sys.argv[1]), sys.argv[2]
out = {}
"""
_EPILOGUE = """
with open(out_path, "w") as file:
    json.dump(plain(out), file)
"""


def _cache_root() -> Path:
    root = os.environ.get("HYPERLAB_TEST_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "hyperlab-tests"


def _marker() -> dict[str, str]:
    """What a finished environment's marker says: NNI's version and the base interpreter."""
    return {"nni": NNI_VERSION, "base": os.path.realpath(sys.executable), "python": sys.version}


def _ready(folder: Path) -> bool:
    try:
        written = json.loads((folder / "hyperlab-ready.json").read_text())
    except (OSError, ValueError):
        return False
    return written == _marker() and (folder / "bin" / "python").exists()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _build(folder: Path) -> None:
    """Create the environment in ``folder`` and install NNI; the marker is written last."""
    shutil.rmtree(folder, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(folder)],
        [str(folder / "bin" / "python"), "-m", "pip", "install", "-q", f"nni=={NNI_VERSION}"],
        [str(folder / "bin" / "python"), "-c", "import nni.experiment; print(nni.__version__)"],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, timeout=BUILD_TIMEOUT)
        if done.returncode != 0:
            shutil.rmtree(folder, ignore_errors=True)
            pytest.fail(
                f"building the nni=={NNI_VERSION} environment in {folder} failed at "
                f"{' '.join(step[1:4])} (exit {done.returncode}):\n{done.stderr[-3000:]}\n"
                "Set HYPERLAB_SKIP_NNI_CLIENT=1 to skip the tests of NNI's client.",
                pytrace=False,
            )
    if done.stdout.strip() != NNI_VERSION:
        pytest.fail(f"{folder} has nni {done.stdout.strip()}, not {NNI_VERSION}", pytrace=False)
    marker = folder / "hyperlab-ready.json"
    marker.with_suffix(".tmp").write_text(json.dumps(_marker()))
    os.replace(marker.with_suffix(".tmp"), marker)


def client_python() -> Path:
    """The interpreter of the ``nni==3.0`` environment, built first if needed."""
    if os.environ.get("HYPERLAB_SKIP_NNI_CLIENT") == "1":
        pytest.skip("HYPERLAB_SKIP_NNI_CLIENT=1")
    folder = _cache_root() / f"nni-{NNI_VERSION}"
    if not _ready(folder):
        with _locked(folder.with_name(f"{folder.name}.lock")):
            if not _ready(folder):
                _build(folder)
    return folder / "bin" / "python"


def run_client(python: Path, port: int, body: str, work: Path) -> dict[str, Any]:
    """Run ``body`` with NNI's client and return what it put in ``out`` (as JSON).

    ``body`` sees ``port``, ``Experiment`` and ``out``; NNI's records in ``out`` come back as
    dicts of their fields.
    """
    work.mkdir(parents=True, exist_ok=True)
    script = work / "client.py"
    result = work / "out.json"
    result.unlink(missing_ok=True)
    script.write_text(_PRELUDE + textwrap.dedent(body) + _EPILOGUE)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["HOME"] = str(work)  # whatever NNI writes in a home stays in the test's folder
    done = subprocess.run(
        [str(python), str(script), str(port), str(result)],
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
        env=env,
        cwd=work,
    )
    assert done.returncode == 0, f"NNI's client failed:\n{done.stdout[-3000:]}{done.stderr[-5000:]}"
    return json.loads(result.read_text())
