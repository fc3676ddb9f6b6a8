"""Find and end every process a trial started, even one that left its process group.

Signalling a trial's process group reaches what it started, except what left the group: a
daemon (``setsid``, a double fork), ``start_new_session=True``, a nested driver's command
trials. Two handles still reach those, on Linux:

- **A mark in the environment.** A trial's processes start with a random mark (``new_mark``)
  in ``HYPERLAB_TRIAL_MARKS`` (``add_mark``); every process that inherits the environment,
  through ``setsid``, double forks and ``exec``, carries it, and ``marked`` finds them by
  reading ``/proc/<pid>/environ`` (readable for the processes of one's own user). A nested
  executor appends its own mark, so the outer trial's end still reaches the inner trials. It
  misses a process started with an environment of its own making (``env -i``). The mark
  outlives the driver: a ``command`` trial records it in its folder, so a driver that adopts
  or replaces the trial after a crash still finds its processes.
- **A subreaper.** ``start_keeper`` forks the calling process: the parent becomes a keeper,
  a child subreaper (``PR_SET_CHILD_SUBREAPER``), so every orphan below it is re-parented to it
  instead of to init, and the whole tree stays reachable through ``/proc/<pid>/stat``'s parent
  ids (``descendants``), whatever the processes did to their environment. The keeper reaps
  those orphans as init would, and when its child (the ``processes`` worker) exits, it kills
  whatever is left below it and exits with its child's status.

Why a keeper, and not the driver: a subreaper inherits the orphans of everything below it,
and the driver is often the user's own program (``hyperlab.run`` in a notebook or a script),
whose other subprocesses' orphans would come to it as zombies to reap, and whose own
``os.wait()`` would return processes it never started. Nor the ``processes`` worker itself:
the trial runs in it, so it could not reap an orphan without possibly taking the exit status
of a child the trial waits for. The keeper runs no user code, so it reaps everything. A
``command`` trial is found by its mark only: it must outlive a killed driver to be adopted,
and its shell leads its group, so there is no process of ours to be its subreaper.

``kill`` first stops (SIGSTOP) what it finds, looking again until nothing new turns up, so a
process cannot fork away between the look and the kill, then sends SIGKILL. Each process is
signalled through a pidfd opened and checked against the start time it was found with, so a
process id reused meanwhile is never signalled.

Elsewhere than on Linux there is no ``/proc`` nor ``prctl``: the functions find nothing,
``start_keeper`` does not fork, and only a trial's process group is signalled.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import signal
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NoReturn

__all__ = [
    "MARKS_VARIABLE",
    "Process",
    "add_mark",
    "descendants",
    "kill",
    "marked",
    "new_mark",
    "processes",
    "reap_children",
    "signal_all",
    "start_keeper",
    "tree_is_bare",
]

MARKS_VARIABLE = "HYPERLAB_TRIAL_MARKS"
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
MAX_ROUNDS = 100
"""Looks for new processes while stopping a tree (a fork bomb is stopped within them)."""
KEEPER_REAP_WAIT = 2.0
"""Seconds a keeper waits for the processes it killed to exit, reaping them, before it exits
(what is left then goes to init)."""


@dataclass(frozen=True, slots=True)
class Process:
    """One process as ``/proc/<pid>/stat`` showed it.

    Attributes:
        pid: Its process id.
        ppid: Its parent's.
        start: Its start time (clock ticks since boot): with ``pid``, it names this process and
            no other that reuses the id later.
        zombie: Whether it has exited, waiting for its parent to reap it.
    """

    pid: int
    ppid: int
    start: int
    zombie: bool


def new_mark() -> str:
    """A fresh random mark for one trial's (or one worker's) processes."""
    return secrets.token_hex(16)


def add_mark(env: dict[str, str], value: str) -> dict[str, str]:
    """``env`` with ``value`` added to its marks (those it inherited kept); returned, changed."""
    env[MARKS_VARIABLE] = " ".join([*env.get(MARKS_VARIABLE, "").split(), value])
    return env


def _read_stat(pid: str) -> Process | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:  # gone, or no procfs
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # state, ppid, pgrp, ...
    try:
        return Process(int(pid), int(fields[1]), int(fields[19]), fields[0] in (b"Z", b"X"))
    except (IndexError, ValueError):
        return None


def processes() -> dict[int, Process]:
    """Every process visible in ``/proc`` now, by pid (empty where there is no procfs)."""
    try:
        names = os.listdir("/proc")
    except OSError:
        return {}
    table = {}
    for name in names:
        if name.isdigit() and (found := _read_stat(name)) is not None:
            table[found.pid] = found
    return table


def descendants(root: int, table: dict[int, Process]) -> list[Process]:
    """The processes below ``root`` in ``table`` (children, theirs, and so on), not ``root``."""
    children: dict[int, list[Process]] = {}
    for found in table.values():
        children.setdefault(found.ppid, []).append(found)
    below, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child.pid != root:
                below.append(child)
                todo.append(child.pid)
    return below


def marked(value: str, table: dict[int, Process]) -> list[Process]:
    """The live processes of ``table`` whose environment carries the mark ``value``.

    Only the environment a process started with is seen (what ``exec`` gave it, or a forked
    parent's); processes of other users cannot be read and are never found.
    """
    needle = value.encode()
    found = []
    for process in table.values():
        if process.zombie:
            continue
        try:
            with open(f"/proc/{process.pid}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        for entry in environ.split(b"\0"):
            name, _, marks = entry.partition(b"=")
            if name == MARKS_VARIABLE.encode() and needle in marks.split():
                found.append(process)
                break
    return found


def _children(pid: int) -> set[int] | None:
    """The children of ``pid`` (zombies too), from ``/proc/<pid>/task/*/children``; None if
    the kernel does not list them."""
    found: set[int] = set()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", "rb") as f:
                found.update(int(word) for word in f.read().split())
    except OSError:
        return None
    return found


def tree_is_bare(keeper: int, worker: int) -> bool:
    """Whether ``worker`` is all there is below ``keeper``: cheaper than ``processes()``."""
    return _children(keeper) == {worker} and _children(worker) == set()


class _Target:
    """A process to signal: through a pidfd where there are pidfds, so that a pid reused by
    another process after it was found is never signalled."""

    __slots__ = ("fd", "process")

    def __init__(self, process: Process, fd: int | None) -> None:
        self.process = process
        self.fd = fd

    @classmethod
    def open(cls, process: Process) -> _Target | None:
        """A target for ``process`` if it is still the one found (same start time)."""
        fd = None
        try:
            fd = os.pidfd_open(process.pid)
        except ProcessLookupError:
            return None
        except (AttributeError, OSError):  # no pidfds (Linux < 5.3): by pid, checked first
            pass
        target = cls(process, fd)
        if not target.same():
            target.close()
            return None
        return target

    def same(self) -> bool:
        now = _read_stat(str(self.process.pid))
        return now is not None and now.start == self.process.start and not now.zombie

    def send(self, sig: int) -> bool:
        """Send ``sig``; False if the process is gone."""
        try:
            if self.fd is not None:
                signal.pidfd_send_signal(self.fd, sig)
            elif self.same():
                os.kill(self.process.pid, sig)
            else:
                return False
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


Finder = Callable[[dict[int, Process]], Iterable[Process]]
"""Picks the processes to end from a fresh ``processes()`` table."""


def kill(find: Finder) -> list[Process]:
    """SIGKILL every process ``find`` picks, stopping each first (SIGSTOP) and looking again
    until no new one turns up, so none forks away meanwhile. Returns those signalled.

    It does not wait for them to exit: a stopped process with SIGKILL pending runs no more
    code; its parent (or init) reaps it.
    """
    held: dict[tuple[int, int], _Target | None] = {}
    try:
        for _ in range(MAX_ROUNDS):
            found = {(p.pid, p.start): p for p in find(processes())}
            fresh = [p for key, p in found.items() if key not in held]
            if not fresh:
                break
            for process in fresh:
                target = _Target.open(process)
                if target is not None and not target.send(signal.SIGSTOP):
                    target.close()
                    target = None
                held[process.pid, process.start] = target  # None: gone, or not ours
        return [t.process for t in held.values() if t is not None and t.send(signal.SIGKILL)]
    finally:
        for target in held.values():
            if target is not None:
                target.close()


def signal_all(find: Finder, sig: int) -> None:
    """Send ``sig`` to every process ``find`` picks now (no stopping: SIGTERM, for a grace)."""
    for process in {(p.pid, p.start): p for p in find(processes())}.values():
        target = _Target.open(process)
        if target is not None:
            target.send(sig)
            target.close()


def reap_children(waiting_for: Iterable[int] | None = None, within: float = 0.0) -> None:
    """Reap this process's exited children, waiting up to ``within`` seconds for those of
    ``waiting_for`` (every child, if None) that are still exiting (a SIGKILLed process takes a
    moment)."""
    waiting = None if waiting_for is None else set(waiting_for)
    deadline = time.monotonic() + within
    while True:
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:  # none left
            return
        if waiting is not None:
            for pid in list(waiting):
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        waiting.discard(pid)
                except ChildProcessError:  # reaped above, or by a thread of the trial
                    waiting.discard(pid)
            if not waiting:
                return
        if time.monotonic() >= deadline:
            return
        time.sleep(0.002)


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


class _Orphaned(Exception):
    """The keeper's parent (the driver's thread that started it) is gone."""


def start_keeper(*, close: Iterable[int] = ()) -> int | None:
    """Fork this process, the parent staying behind as a keeper of everything below it.

    Returns in the child, which goes on as the caller: the keeper's pid. The keeper (the
    original process, the driver's child) never returns: a child subreaper, it reaps what is
    re-parented to it; when the child exits, it kills everything left below it (stopped
    first), reaps it and exits as the child did (same code, or killed by the same signal),
    so the driver sees the child's status. It ignores SIGTERM (the driver's stop of the
    group: the child's exit follows). When the driver's thread that started it dies (SIGHUP,
    its parent-death signal), it kills everything below it, the child too. It closes the
    descriptors in ``close`` (the child's pipes to the driver), so that the child's death
    closes them. Call it before any thread starts.

    Returns:
        The keeper's pid in the child; None (no fork) where there is no subreaper (not Linux).
    """
    if not _prctl(PR_SET_CHILD_SUBREAPER, 1):  # not inherited across fork: the keeper's alone
        return None
    parent = os.getppid()
    child = os.fork()
    if child == 0:
        return os.getppid()
    for fd in close:
        with contextlib.suppress(OSError):
            os.close(fd)
    _keep(child, parent)


def _orphaned(signum: int, frame: object) -> None:
    raise _Orphaned


def _keep(child: int, parent: int) -> NoReturn:
    """The keeper's life: reap until ``child`` exits or the driver dies, end the rest, exit."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, _orphaned)
    status: int | None = None
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGHUP)
        if os.getppid() != parent:  # it died before we asked
            raise _Orphaned
        while status is None:
            pid, code = os.wait()  # an orphan re-parented to us, or the child
            if pid == child:
                status = code
    except (_Orphaned, ChildProcessError):
        pass
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    me = os.getpid()
    kill(lambda table: descendants(me, table))
    reap_children(within=KEEPER_REAP_WAIT)
    if status is None:
        os._exit(1)
    _exit_as(os.waitstatus_to_exitcode(status))


def _exit_as(code: int) -> NoReturn:
    """Exit with ``code``, or die of signal ``-code`` (without a core dump) when negative."""
    if code >= 0:
        os._exit(code)
    import resource  # Unix only, as keepers are

    with contextlib.suppress(OSError, ValueError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(OSError, ValueError):
        signal.signal(-code, signal.SIG_DFL)
    with contextlib.suppress(OSError, ValueError):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
    os.kill(os.getpid(), -code)
    os._exit(128 - code)
