"""Worker processes: starting one, reading how it ended, and tying it to its parent.

The ``processes`` executor's pool is made of these, and so is a research's (``hyperlab.research``
runs its own worker code, ``hyperlab.research._worker``, through the same pipes). A worker is
``python -c COMMAND TASK_FD EVENT_FD``: it reads pickled tasks from one pipe and writes its
events to the other, and leads its own session so that its whole process group can be
signalled.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
from multiprocessing.connection import Connection

from hyperlab.executors._reaper import add_mark

__all__ = ["PR_SET_PDEATHSIG", "die_with_parent", "exit_text", "spawn_worker"]

PR_SET_PDEATHSIG = 1
"""Linux's ``prctl`` option that sends a signal to a process when its parent dies."""


def die_with_parent() -> None:
    """Ask Linux to SIGKILL this process when the driver dies, even by SIGKILL."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        except (OSError, AttributeError):  # no prctl: the EOF on the task pipe still ends us
            pass


def spawn_worker(
    command: str, devices: tuple[int, ...], first: bytes, *, mark: str | None = None
) -> tuple[subprocess.Popen, Connection, Connection]:
    """Start ``python -c command TASK_FD EVENT_FD`` as a worker: in its own session (so its
    whole group can be signalled), with this process's ``sys.path``, ``CUDA_VISIBLE_DEVICES``
    set to ``devices`` (when any) and ``mark`` added to its environment's marks (when given,
    see ``hyperlab.executors._reaper``); send it ``first`` (the pickled objective).

    Returns:
        The process, the task pipe to write to, and the event pipe to read from.
    """
    task_read, task_write = os.pipe()
    event_read, event_write = os.pipe()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    if devices:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, devices))
    if mark is not None:
        add_mark(env, mark)
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", command, str(task_read), str(event_write)],
            pass_fds=(task_read, event_write),
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    finally:
        os.close(task_read)
        os.close(event_write)
    tasks = Connection(task_write, readable=False)
    tasks.send_bytes(first)
    return process, tasks, Connection(event_read, writable=False)


def exit_text(process: subprocess.Popen) -> str:
    """How ``process``, a worker that ended before its trial did, ended: a phrase such as
    ``"was killed by signal SIGKILL"`` or ``"exited with code 1 before the trial ended"``."""
    code = process.returncode
    if code is not None and code < 0:
        try:
            return f"was killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code} before the trial ended"
