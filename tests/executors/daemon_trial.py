"""A trial that starts a daemon, then ends as its ``mode`` parameter says.

The daemon forks, calls ``setsid`` and forks again (so it is in no process group of the trial
and its parent is gone), ignores SIGTERM and sleeps 300 s; it writes its pid to ``daemon.pid``
in the trial's folder, and the trial reports it (``daemon``) before ending:

- ``finish``: returns (exits 0) with the report as its result;
- ``fail``: raises (a command exits 1);
- ``stop``: reports until it is told to stop;
- ``kill``: ignores SIGTERM and sleeps: only SIGKILL ends it;
- ``hang``: sleeps until a ``trial_timeout`` ends it;
- ``bare``: as ``finish``, the daemon started with an empty environment (no mark to find).

A function trial (``objective``) or a command (``python daemon_trial.py``).
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import hyperlab

DAEMON = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork():
    os._exit(0)
os.setsid()
if os.fork():
    os._exit(0)
path = sys.argv[1]
with open(path + ".tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename(path + ".tmp", path)
time.sleep(300)
"""


def start_daemon(folder: Path, *, bare: bool = False) -> int:
    """Start the daemon and return its pid once it runs."""
    path = folder / "daemon.pid"
    env: dict[str, str] | None = {} if bare else None
    subprocess.run([sys.executable, "-S", "-c", DAEMON, str(path)], check=True, env=env)
    deadline = time.monotonic() + 10
    while not path.exists():
        assert time.monotonic() < deadline, "the daemon did not start"
        time.sleep(0.005)
    return int(path.read_text())


def objective(params: dict) -> dict:
    mode = params["mode"]
    pid = start_daemon(hyperlab.trial_dir(), bare=mode == "bare")
    hyperlab.report(daemon=pid)
    if mode == "fail":
        raise RuntimeError("this trial fails after starting a daemon")
    if mode == "stop":
        while True:
            time.sleep(0.05)
            hyperlab.report(daemon=pid)
    if mode == "kill":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if mode in ("kill", "hang"):
        time.sleep(300)
    return {"daemon": pid}


if __name__ == "__main__":
    objective(hyperlab.get_params())
