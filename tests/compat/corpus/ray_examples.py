"""Ray Tune's own example scripts, as the installed ray wheel ships them
(``<ray>/tune/examples/*.py``), run on hyperlab with their Ray imports rewritten on the fly.

Nothing of Ray's is copied into this repository: each run reads the installed file, rewrites
its import lines (``from ray import tune`` into ``from hyperlab.compat.ray import tune``,
``from ray.tune.x import Y`` into ``from hyperlab.compat.ray.tune.x import Y``, ``ray.train``
likewise, and ``import ray`` into ``from hyperlab.compat import ray`` once that module has
``init``), writes it with its sibling examples into a folder of the test's own, and runs it
there with ``--smoke-test`` (the examples' own flag for a short budget) in a subprocess. The
scripts that run that way are also run as shipped, not a line changed, with
``python -m hyperlab.compat.ray`` (which makes ``ray`` hyperlab's in its process).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.compat.corpus.runner import first_error

TIMEOUT = 120.0  # seconds one example may take before it counts as failed


def examples_folder() -> Path | None:
    """``<ray>/tune/examples`` of the installed ray wheel, or None without ray."""
    spec = importlib.util.find_spec("ray")
    if spec is None or spec.origin is None:
        return None
    folder = Path(spec.origin).parent / "tune" / "examples"
    return folder if folder.is_dir() else None


def ray_module_ready() -> bool:
    """Whether ``hyperlab.compat.ray`` stands in for ``import ray`` (has ``init``)."""
    return hasattr(importlib.import_module("hyperlab.compat.ray"), "init")


def on_hyperlab(source: str, siblings: set[str], replace_import_ray: bool) -> str:
    """``source`` with its Ray imports pointed at hyperlab; an import of a sibling example
    (``from ray.tune.examples.pbt_function import ...``) becomes an import of the rewritten
    copy beside it."""

    def from_import(match: re.Match[str]) -> str:
        indent, module = match.group(1), match.group(2) or ""
        sibling = module.removeprefix(".tune.examples.")
        if sibling != module and sibling in siblings:
            return f"{indent}from {sibling} import"
        return f"{indent}from hyperlab.compat.ray{module} import"

    changed = re.sub(r"^(\s*)from ray((?:\.\w+)*) import", from_import, source, flags=re.M)
    if replace_import_ray:
        changed = re.sub(
            r"^(\s*)import ray$", r"\1from hyperlab.compat import ray", changed, flags=re.M
        )
    return changed


@dataclass(frozen=True)
class Outcome:
    """How one example ran: its exit status, its first error line, its time."""

    script: str
    returncode: int
    error: str
    seconds: float
    output: str

    @property
    def ran(self) -> bool:
        return self.returncode == 0


def best_config(output: str) -> dict[str, Any] | None:
    """The best config the example printed (``Best hyperparameters found were:  {...}``)."""
    found = re.findall(r"^Best hyperparameters[^{]*(\{.*\})\s*$", output, flags=re.M)
    if not found:
        return None
    try:
        value = ast.literal_eval(found[-1])
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, dict) else None


REWRITTEN = "rewritten"  # its Ray imports rewritten to hyperlab's, run with python
UNCHANGED = "unchanged"  # as shipped, run with python -m hyperlab.compat.ray
WITH_RAY = "with ray"  # as shipped, run with python, on Ray itself


def run_example(name: str, folder: Path, timeout: float = TIMEOUT, how: str = REWRITTEN) -> Outcome:
    """Run the installed example ``name`` (``pbt_function.py``) in ``folder``, ``how`` says:
    ``REWRITTEN``, ``UNCHANGED`` or ``WITH_RAY``."""
    original = how != REWRITTEN
    examples = examples_folder()
    assert examples is not None, "ray is not installed"
    siblings = {path.stem for path in examples.glob("*.py")}
    replace = ray_module_ready()
    folder.mkdir(parents=True, exist_ok=True)
    for path in examples.glob("*.py"):
        source = path.read_text()
        (folder / path.name).write_text(
            source if original else on_hyperlab(source, siblings, replace)
        )
    source = (examples / name).read_text()
    args = ["--smoke-test"] if "--smoke-test" in source else []
    env = {
        **os.environ,
        "HYPERLAB_HOME": str(folder / "hyperlab-home"),
        "HOME": str(folder),  # ~/ray_results and the like stay in the test's folder
        "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")])),
    }
    start = time.monotonic()
    try:
        done = subprocess.run(
            [
                sys.executable,
                *(["-m", "hyperlab.compat.ray"] if how == UNCHANGED else []),
                name,
                *args,
            ],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as expired:
        output = expired.stderr.decode(errors="replace") if expired.stderr else ""
        return Outcome(name, -9, f"timed out after {timeout:g} s", timeout, output)
    seconds = time.monotonic() - start
    error = "" if done.returncode == 0 else first_error(done.stderr)
    return Outcome(name, done.returncode, error, seconds, done.stdout + done.stderr)
