"""Process groups of command trials left running by a driver that died.

A command trial runs in its own session, so when its driver is killed (SIGKILL, a crash, a
lost machine) the trial goes on. Each trial's folder therefore holds ``group.json``: the
process group, the machine and boot it ran on, and its leader's start time. Before a trial
runs again (a resumed experiment re-runs interrupted trials), whatever is left of its previous
attempt is stopped, so two attempts never run at once.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
from pathlib import Path

from hyperlab.executors._command._run import group_runs

__all__ = ["GROUP_FILE", "record_group", "stop_leftover_group"]

GROUP_FILE = "group.json"


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return int(stat[stat.rfind(b")") + 2 :].split()[19])


def record_group(folder: Path, pgid: int) -> None:
    """Write ``folder/group.json`` for the trial whose process group is ``pgid``."""
    info = {
        "pgid": pgid,
        "host": socket.gethostname(),
        "boot": _boot_id(),
        "started": _start_time(pgid),
    }
    (folder / GROUP_FILE).write_text(json.dumps(info))


def stop_leftover_group(folder: Path, grace: float) -> bool:
    """Stop the process group a previous attempt left in ``folder``; True if one was running.

    Only a group recorded on this machine in this boot is touched, and only if its leader is
    gone or is still the same process (so a reused process id is never signalled).
    SIGTERM first, SIGKILL after ``grace`` seconds.
    """
    path = folder / GROUP_FILE
    try:
        info = json.loads(path.read_text())
        pgid = int(info["pgid"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    path.unlink(missing_ok=True)
    if info.get("host") != socket.gethostname() or info.get("boot") != _boot_id():
        return False
    leader_start = _start_time(pgid)
    if leader_start is not None and leader_start != info.get("started"):
        return False  # the id now belongs to another process
    if not group_runs(pgid):
        return False
    deadline = time.monotonic() + grace
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    while group_runs(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    return True
