"""Module-level objectives for tests: importable by spawned worker processes."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import time

import hyperlab


def quadratic(params):
    return (params["x"] - 1.0) ** 2


def fail_on_odd(params):
    if params["i"] % 2:
        raise ValueError(f"odd i={params['i']}")
    return float(params["i"])


def exit_hard(params):
    if params["i"] == 1:
        os._exit(3)
    return float(params["i"])


def segfault(params):
    if params["i"] == 1:
        ctypes.string_at(0)
    return float(params["i"])


def sleep_for(params):
    time.sleep(params["sleep"])
    return params["sleep"]


def report_slowly(params):
    """Reports a falling loss every 20 ms for up to 10 s; the final result is the last one."""
    for step in range(500):
        hyperlab.report(loss=1.0 / (step + 1))
        time.sleep(0.02)
    return {"loss": 0.0}


def spawn_grandchild(params):
    """Starts a long-lived child process, records its pid, then hangs."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    pid_file = hyperlab.trial_dir() / "grandchild.pid"
    pid_file.write_text(str(child.pid))
    hyperlab.report(pid=child.pid)
    time.sleep(120)
    return 0.0


def whoami(params):
    """Returns the trial's view of itself."""
    return {
        "default": float(params["i"]),
        "pid": os.getpid(),
        "seed": hyperlab.trial_seed(),
        "dir": str(hyperlab.trial_dir()),
        "same_params": hyperlab.get_params() == params,
    }


def fifty_ms_with_pid(params):
    time.sleep(0.05)
    return {"default": (params["x"] - 0.3) ** 2, "pid": os.getpid()}


def check_own_row(params):
    """Looks itself up in the store (a test of write-ahead; trials never do this otherwise)."""
    from hyperlab.reporting.context import current
    from hyperlab.store import Store

    ctx_id = current().trial_id
    experiment_id, number = ctx_id.rsplit("-", 1)
    row = Store.open(os.environ["HYPERLAB_TEST_URL"]).get_trial(experiment_id, int(number))
    return {"default": 0.0, "found": row.params == params, "status": str(row.status)}
