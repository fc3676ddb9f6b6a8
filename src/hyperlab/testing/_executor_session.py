"""How ``hyperlab.testing.ExecutorContract`` drives an executor: ``Session`` opens one as the
driver does and keeps everything it delivered, and the process checks (``descendants``,
``is_alive``, ``command_line``) find what its trials left running.

Private: the contract is documented in ``hyperlab.testing.executors``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hyperlab.executors.base import END_EVENTS, Event, Executor, Reported, Started, TrialSpec
from hyperlab.testing.behaviours import PID_FILE

__all__ = ["POLL", "Session", "command_line", "descendants", "is_alive"]

WALL_LIMIT = 30.0
"""Real seconds after which a contract test gives up waiting for events."""
POLL = 0.05
"""Seconds each ``poll`` of the contract waits at most."""


class Session:
    """One executor driven as the driver drives it, with everything it delivered."""

    def __init__(self, executor: Executor, folder: Path) -> None:
        self.executor = executor
        self.folder = folder
        self.events: list[Event] = []
        self.threads: set[int] = set()
        self.specs: dict[int, TrialSpec] = {}
        self.on_event: Callable[[Event], None] | None = None
        self.baseline = descendants()
        executor.open(self._listen)

    def _listen(self, event: Event) -> None:
        self.events.append(event)
        self.threads.add(threading.get_ident())
        if self.on_event is not None:
            self.on_event(event)

    def spec(self, behaviour: str, **params: Any) -> TrialSpec:
        number = len(self.specs)
        spec = TrialSpec(
            number,
            f"contract-{number}",
            {"behaviour": behaviour, "x": 1.0 + number, **params},
            1000 + number,
            str(self.folder / "trials" / str(number)),
        )
        self.specs[number] = spec
        return spec

    def submit(self, spec: TrialSpec) -> None:
        executor = self.executor
        assert executor.free_slots > 0, "the contract submits only while free_slots > 0"
        executor.submit(spec)
        assert executor.running <= executor.concurrency, (
            f"after submit: running={executor.running} > concurrency={executor.concurrency}"
        )

    def of(self, number: int, kind: type | tuple[type, ...] = object) -> list[Any]:
        return [e for e in self.events if e.number == number and isinstance(e, kind)]

    def end(self, number: int) -> Any:
        ends = self.of(number, END_EVENTS)
        assert len(ends) == 1, f"trial {number}: expected one end event, got {ends}"
        return ends[0]

    def ended(self, number: int) -> bool:
        return bool(self.of(number, END_EVENTS))

    def poll_until(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WALL_LIMIT
        while not condition():
            assert time.monotonic() < deadline, f"gave up waiting ({WALL_LIMIT:g}s) for {what}"
            self.executor.poll(POLL)

    def run(self, specs: list[TrialSpec]) -> None:
        """Submit ``specs`` while ``free_slots`` allows; poll until every one ended."""
        waiting = list(specs)

        def done() -> bool:
            while waiting and self.executor.free_slots > 0:
                self.submit(waiting.pop(0))
            return not waiting and all(self.ended(s.number) for s in specs)

        self.poll_until(done, f"trials {[s.number for s in specs]} to end")

    def check(self) -> None:
        """The invariants every test ends with."""
        assert self.threads <= {threading.get_ident()}, (
            "events must reach the listener only in the thread that calls poll"
        )
        for event in self.events:
            assert event.number in self.specs, f"an event of a trial never submitted: {event}"
        for number in self.specs:
            events = self.of(number)
            ends = [e for e in events if isinstance(e, END_EVENTS)]
            assert len(ends) == 1, f"trial {number}: expected exactly one end event, got {events}"
            assert events[-1] is ends[0], f"trial {number}: events after its end: {events}"
            starts = [i for i, e in enumerate(events) if isinstance(e, Started)]
            assert len(starts) <= 1, f"trial {number}: Started twice: {events}"
            reports = [i for i, e in enumerate(events) if isinstance(e, Reported)]
            if reports:
                assert starts and starts[0] < reports[0], (
                    f"trial {number}: Reported before Started: {events}"
                )
            steps = [events[i].step for i in reports]
            assert steps == sorted(set(steps)), f"trial {number}: steps out of order: {steps}"

    def trial_pids(self) -> set[int]:
        """The process ids the trials wrote (this process excluded)."""
        pids = set()
        for spec in self.specs.values():
            path = Path(spec.trial_dir or "") / PID_FILE
            try:
                pids.add(int(path.read_text()))
            except (OSError, ValueError):
                continue
        return pids - {os.getpid()}

    def new_descendants(self) -> set[int]:
        return descendants() - self.baseline


def descendants() -> set[int]:
    """Process ids whose parent chain leads to this process (empty without ``/proc``)."""
    parents: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return set()
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rpartition(")")[2].split()
        except OSError:
            continue
        if fields and fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    todo = [os.getpid()]
    while todo:
        for child in parents.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def command_line(pid: int) -> str:
    """The command line of ``pid`` as one string ("" when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def is_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as gone)."""
    if os.path.isdir("/proc"):
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read().rpartition(")")[2].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
