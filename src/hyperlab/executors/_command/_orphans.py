"""Process groups of command trials that outlive their driver: adopted, or stopped.

A command trial runs in its own session, so when its driver is killed (SIGKILL, a crash, a
lost machine) the trial goes on. Each trial's folder therefore holds ``group.json``: the
process group, the attempt it runs, the machine and boot it ran on, its leader's start time,
and the mark in its processes' environment (``hyperlab.executors._reaper``), which finds those
that left the group. The shell also writes ``exit_status`` (its exit status and the attempt) as
it exits, through an EXIT trap, so that a driver that did not start the trial can still tell
how it ended.

On resume, a trial whose group is still led by the same process (or whose shell ended with its
status recorded) is adopted: the new driver watches it as its own (``find_group``). Before a
trial runs again instead, whatever is left of its previous attempt is stopped
(``stop_leftover_group``), so two attempts never run at once, and no process of the first
outlives it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path

from hyperlab.executors._command._run import group_runs
from hyperlab.executors._reaper import kill, marked

__all__ = [
    "EXIT_FILE",
    "GROUP_FILE",
    "Group",
    "find_group",
    "leader_state",
    "read_exit_status",
    "record_group",
    "stop_leftover_group",
    "with_exit_status",
]

GROUP_FILE = "group.json"
EXIT_FILE = "exit_status"


def _boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def leader_state(pid: int) -> tuple[int, bytes] | None:
    """The process's start time (clock ticks since boot) and state letter; None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[19]), fields[0]


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot, or None if it is gone."""
    state = leader_state(pid)
    return None if state is None else state[0]


def with_exit_status(command: str, folder: Path, attempt: int) -> str:
    """``command`` for ``/bin/sh -c``, preceded by an EXIT trap that writes ``EXIT_FILE``.

    The trap runs however the shell exits by itself (the command's end, ``exit N``, ``set -e``)
    and writes ``"<status> <attempt>"``; a shell killed by a signal, or replaced by ``exec``,
    writes nothing. It goes on the command's first line, so the shell's messages keep their
    line numbers.
    """
    action = f"echo $? {int(attempt)} > {shlex.quote(str(folder / EXIT_FILE))}"
    return f"trap {shlex.quote(action)} EXIT; {command}"


def read_exit_status(folder: Path, attempt: int) -> int | None:
    """The exit status the shell of ``attempt`` recorded in ``folder``, or None if none."""
    try:
        code, recorded = (folder / EXIT_FILE).read_text().split()
        if int(recorded) == attempt:
            return int(code)
    except (OSError, ValueError):
        pass
    return None


def record_group(folder: Path, pgid: int, *, attempt: int = 1, mark: str | None = None) -> None:
    """Write ``folder/group.json`` for ``attempt`` of the trial, whose process group is ``pgid``
    and whose processes carry ``mark`` in their environment."""
    info = {
        "pgid": pgid,
        "attempt": attempt,
        "mark": mark,
        "host": socket.gethostname(),
        "boot": _boot_id(),
        "started": _start_time(pgid),
        "time": time.time(),
    }
    (folder / GROUP_FILE).write_text(json.dumps(info))


def _read_group(folder: Path) -> dict | None:
    try:
        info = json.loads((folder / GROUP_FILE).read_text())
        int(info["pgid"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return info if isinstance(info, dict) else None


def _here(info: dict) -> bool:
    """Whether the group was recorded on this machine, in this boot."""
    return info.get("host") == socket.gethostname() and info.get("boot") == _boot_id()


@dataclass(frozen=True, slots=True)
class Group:
    """The process group of a trial an earlier driver started, as ``find_group`` found it.

    Attributes:
        pgid: The group's id, which is its leader's (the shell's) process id.
        leader_start: The leader's start time (clock ticks since boot), to tell it from a
            process that reuses its id later.
        started_at: When the trial started (epoch seconds).
        exit_status: The shell's exit status if it already exited by itself, else None (it runs).
        mark: The mark its processes carry in their environment (None if not recorded).
    """

    pgid: int
    leader_start: int
    started_at: float
    exit_status: int | None
    mark: str | None = None


def find_group(folder: Path, attempt: int) -> Group | None:
    """The group of ``attempt`` recorded in ``folder``, if a new driver may adopt it.

    It may if it was recorded for that attempt, on this machine in this boot, and its leader
    is still the same process and runs (not a zombie), or is gone after recording its exit
    status. None otherwise: the trial must run again.
    """
    info = _read_group(folder)
    if info is None or info.get("attempt") != attempt or not _here(info):
        return None
    pgid, started = int(info["pgid"]), info.get("started")
    if not isinstance(started, int):
        return None
    when = info.get("time")
    started_at = float(when) if isinstance(when, (int, float)) else time.time()
    mark = _mark(info)
    state = leader_state(pgid)
    if state is not None and state[0] == started and state[1] != b"Z":
        return Group(pgid, started, started_at, None, mark)
    code = read_exit_status(folder, attempt)  # the shell is gone: did it say how it ended?
    if code is None:
        return None
    return Group(pgid, started, started_at, code, mark)


def _mark(info: dict) -> str | None:
    mark = info.get("mark")
    return mark if isinstance(mark, str) and mark else None


def stop_leftover_group(folder: Path, grace: float) -> bool:
    """Stop the process group a previous attempt left in ``folder``; True if one was running.

    Only a group recorded on this machine in this boot is touched, and only if its leader is
    gone or is still the same process (so a reused process id is never signalled).
    SIGTERM first, SIGKILL after ``grace`` seconds. Then the processes that carry the
    attempt's mark (those that left the group) are killed.
    """
    info = _read_group(folder)
    (folder / GROUP_FILE).unlink(missing_ok=True)
    if info is None or not _here(info):
        return False
    stopped = _stop_group(info, grace)
    mark = _mark(info)
    if mark is not None and kill(lambda table: marked(mark, table)):
        stopped = True
    return stopped


def _stop_group(info: dict, grace: float) -> bool:
    pgid = int(info["pgid"])
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
