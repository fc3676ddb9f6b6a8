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

from hyperlab.store import Store
from tests.compat.corpus.runner import SCRIPTS, Run, run
from tests.compat.nni.experiment.conftest import environment, free_port
from tests.server.nni_client import client_python

TRIAL_SECONDS = "1.5"  # a trial's time, so that Medianstop sees trials still running
LAUNCH_TIMEOUT = 300.0
"""An NNI launch takes about 80 s on two idle cores (NNI's node manager starts first), over
180 s on a loaded machine. Only a hang should reach this bound: NNI's own dispatcher sometimes
dies (its TPE's KeyError after Medianstop) and leaves NNI's experiment running forever."""


def nni_on_hyperlab(source: str) -> str:
    """The launcher's ``from nni.experiment...`` imports pointed at hyperlab.compat.nni."""
    return re.sub(
        r"^from nni\.experiment((?:\.\w+)*) import",
        r"from hyperlab.compat.nni.experiment\1 import",
        source,
        flags=re.M,
    )


def copy_mnist(folder: Path) -> Path:
    """``scripts/nni/mnist`` copied into ``folder``."""
    target = folder / "mnist"
    shutil.copytree(SCRIPTS / "nni" / "mnist", target)
    return target


def nni_launch(launcher: str, folder: Path, *, real: bool) -> Run:
    """Copy ``scripts/nni/mnist`` into ``folder`` and run ``launcher`` there."""
    target = copy_mnist(folder)
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
        return run(
            [launcher, str(free_port())],
            target,
            python=str(python),
            env=env,
            timeout=LAUNCH_TIMEOUT,
        )
    env = environment(TRIAL_SECONDS=TRIAL_SECONDS)
    return run(
        [launcher, str(free_port())],
        target,
        python=sys.executable,
        env=env,
        timeout=LAUNCH_TIMEOUT,
    )


def hyperlab_run_yaml(folder: Path) -> Run:
    """``hyperlab run config.yml`` (what ``nnictl create --config config.yml`` becomes) in a
    copy of the mnist folder; its RESULT built from the store as ``launch_yaml.py`` prints it."""
    target = copy_mnist(folder)
    env = environment(TRIAL_SECONDS=TRIAL_SECONDS, HYPERLAB_HOME=str(target / "hyperlab-home"))
    done = run(["-m", "hyperlab", "run", "config.yml"], target, env=env, timeout=LAUNCH_TIMEOUT)
    if done.returncode != 0:
        return done
    with Store.open(str(target / "hyperlab-home" / "hyperlab.db")) as store:
        (experiment,) = store.list_experiments()
        trials = store.get_trials(experiment.id, reports=True)
    succeeded = [t for t in trials if str(t.status) == "SUCCEEDED"]
    done.result = {
        "trials": len(trials),
        "statuses": sorted(str(t.status) for t in trials),
        "finals": sorted(t.value for t in succeeded if t.value is not None),
        "params": sorted(sorted(t.params) for t in trials)[:1],
        "reports": sorted([str(t.status), len(t.reports)] for t in trials),
    }
    done.results, done.error = [done.result], ""
    return done
