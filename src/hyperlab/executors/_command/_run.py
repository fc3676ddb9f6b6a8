"""One running command trial: its process group, its exit, and its channel's reader."""

from __future__ import annotations

import contextlib
import enum
import os
import select
import signal
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from hyperlab.executors._logs import CappedLog
from hyperlab.executors._reaper import kill, marked, signal_all
from hyperlab.executors.base import TrialSpec
from hyperlab.reporting.channel import CHANNEL_FILE

__all__ = [
    "CommandRun",
    "Ending",
    "group_runs",
    "signal_marked",
    "tail",
]


class Ending(enum.Enum):
    """Why a command is being ended by the executor."""

    STOP = "stop"  # ``stop`` asked for it, or the driver's verdict told it to stop
    TIMEOUT = "timeout"  # it ran past ``trial_timeout``


class CommandRun:
    """One running command and what its channel said so far.

    Either started here (``process``, the shell we are the parent of), or adopted from a
    driver that died (``process`` None; ``pid`` the shell, ``leader_start`` its start time):
    an adopted shell is not our child, so its exit is seen through its pidfd or ``/proc``
    and its status read from what it recorded (``exit_status``).
    """

    __slots__ = (
        "buffer",
        "code",
        "deadline",
        "ending",
        "exit_status",
        "final",
        "folder",
        "give_up_at",
        "kill_at",
        "last",
        "leader_start",
        "logs",
        "mark",
        "pid",
        "pidfd",
        "process",
        "reader",
        "reaped",
        "reports",
        "spec",
        "verdicts",
    )

    def __init__(
        self,
        spec: TrialSpec,
        folder: Path,
        process: subprocess.Popen | None,
        logs: Sequence[CappedLog] = (),
        *,
        pid: int | None = None,
        leader_start: int | None = None,
        exit_status: Callable[[], int | None] | None = None,
        mark: str | None = None,
    ) -> None:
        if process is not None:
            pid = process.pid
        elif pid is None or exit_status is None:
            raise ValueError("an adopted CommandRun needs its shell's pid and exit_status")
        self.spec = spec
        self.folder = folder
        self.process = process
        self.pid: int = pid
        self.leader_start = leader_start
        self.exit_status = exit_status  # reads an adopted shell's recorded status
        self.mark = mark  # in its processes' environment (hyperlab.executors._reaper)
        self.logs = tuple(logs)  # its stdout.log and stderr.log, when they are capped
        self.reader = open(folder / CHANNEL_FILE, "rb", buffering=0)  # noqa: SIM115
        self.buffer = b""
        self.last: dict | None = None
        self.final: dict | None = None
        self.deadline: float | None = None  # trial_timeout expires (monotonic)
        self.kill_at: float | None = None  # SIGTERM's grace expires: SIGKILL (monotonic)
        self.ending: Ending | None = None
        self.reports = 0  # reports read from the channel; the step of one that gives none
        self.verdicts: set[int] = set()  # its requests for a verdict not answered yet
        self.reaped = False  # the shell's end was seen and its status collected
        self.code: int | None = None  # the shell's exit status, once reaped (None: unknown)
        self.give_up_at: float | None = None  # SIGKILLed and still there: abandon (monotonic)
        try:
            self.pidfd: int | None = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux >= 5.3: poll wakes up every TICK
            self.pidfd = None

    @property
    def adopted(self) -> bool:
        """Whether an earlier driver started this command."""
        return self.process is None

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the trial's process group: the shell and all it started."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)

    def exited(self) -> bool:
        """Whether the shell has exited (without reaping it, so its group id stays valid)."""
        if self.reaped:
            return True
        if self.process is None:
            return self._adopted_exited()
        if self.process.returncode is not None:
            return True
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return True
        return info is not None and info.si_pid != 0

    def _adopted_exited(self) -> bool:
        if self.pidfd is not None:
            readable, _, _ = select.select([self.pidfd], [], [], 0)
            return bool(readable)
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_bytes()
        except OSError:
            return True
        fields = stat[stat.rfind(b")") + 2 :].split()
        return fields[0] == b"Z" or int(fields[19]) != self.leader_start

    def reap(self) -> None:
        """Collect the exited shell's status; its pidfd would wake ``poll`` for ever after."""
        if self.process is not None:
            self.code = self.process.wait()
        elif self.exit_status is not None:
            self.code = self.exit_status()
        self.reaped = True
        self.close_pidfd()

    def group_alive(self) -> bool:
        """Whether any process of the trial's group still runs (ask once the shell is reaped).

        Zombies do not count: orphans wait for init to reap them, which some inits never do.
        """
        try:
            os.killpg(self.pid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return group_runs(self.pid)

    def close_pidfd(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None

    def close(self) -> None:
        self.reader.close()
        self.close_pidfd()
        for log in self.logs:
            log.close()


def signal_marked(mark: str | None, sig: int) -> None:
    """Send ``sig`` to the processes carrying a trial's ``mark`` (those that left its group
    too; nothing without a mark); SIGKILL stops them first (``hyperlab.executors._reaper``)."""
    if mark is None:
        return
    if sig == signal.SIGKILL:
        kill(lambda table: marked(mark, table))
    else:
        signal_all(lambda table: marked(mark, table), sig)


def group_runs(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is alive and not a zombie (True if unknowable)."""
    try:
        names = os.listdir("/proc")
    except OSError:  # no procfs: trust kill(0), zombies included
        return True
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # it just went away
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # state, ppid, pgrp, ...
        if len(fields) > 2 and fields[2] == b"%d" % pgid and fields[0] != b"Z":
            return True
    return False


def tail(path: Path, lines: int) -> str:
    """The last ``lines`` lines of a text file (reading at most its last 64 KiB)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 65536))
            data = f.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace").rstrip()
    return "\n".join(text.splitlines()[-lines:])
