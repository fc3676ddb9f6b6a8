"""Running the corpus's NNI launchers (``scripts/nni/mnist``) with NNI 3.0 itself (the
environment of ``tests/server/nni_client.py``) or with hyperlab (the launcher's
``from nni.experiment`` imports rewritten; the trial script keeps ``import nni``, hyperlab's
shim). Each run gets a folder, a free port and (for NNI) a home of its own."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

from tests.compat.corpus.runner import SCRIPTS, Run, run
from tests.compat.nni.experiment.conftest import environment, free_port
from tests.server.nni_client import client_python

TRIAL_SECONDS = "1.5"  # a trial's time, so that Medianstop sees trials still running


def nni_on_hyperlab(source: str) -> str:
    """The launcher's ``from nni.experiment...`` imports pointed at hyperlab.compat.nni."""
    return re.sub(
        r"^from nni\.experiment((?:\.\w+)*) import",
        r"from hyperlab.compat.nni.experiment\1 import",
        source,
        flags=re.M,
    )


def nni_launch(launcher: str, folder: Path, *, real: bool) -> Run:
    """Copy ``scripts/nni/mnist`` into ``folder`` and run ``launcher`` there."""
    target = folder / "mnist"
    shutil.copytree(SCRIPTS / "nni" / "mnist", target)
    if not real:
        script = target / launcher
        script.write_text(nni_on_hyperlab(script.read_text()))
    if real:
        python = client_python()
        home = folder / "home"
        home.mkdir(parents=True)
        # NNI's trial command (``python3 mnist.py``) must find NNI's interpreter first
        path = os.pathsep.join([str(python.parent), os.environ.get("PATH", "")])
        base = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
        env = {**base, "PATH": path, "HOME": str(home), "TRIAL_SECONDS": TRIAL_SECONDS}
        return run([launcher, str(free_port())], target, python=str(python), env=env)
    env = environment(TRIAL_SECONDS=TRIAL_SECONDS)
    return run([launcher, str(free_port())], target, python=sys.executable, env=env)
