"""Drive an executor directly, as the driver does, and record what it delivers."""

from __future__ import annotations

import os
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from hyperlab.executors import END_EVENTS, Event, Executor, TrialSpec

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
PYTHON = shlex.quote(sys.executable)


def script(name: str, *args: object, site: bool = False) -> str:
    """A shell command running ``tests/scripts/<name>`` with this interpreter.

    Without ``site``, Python starts with ``-S`` (no site-packages: twice as fast to start):
    the script then imports hyperlab and nni only through the trial's ``PYTHONPATH``.
    """
    words = [str(SCRIPTS / name), *map(str, args)]
    return " ".join([PYTHON, *([] if site else ["-S"]), *map(shlex.quote, words)])


def spec(number: int, folder: Path, params: dict | None = None, **fields: object) -> TrialSpec:
    return TrialSpec(
        number,
        f"exp12345-{number}",
        params if params is not None else {"x": float(number)},
        1000 + number,
        str(folder / "trials" / str(number)),
        **fields,
    )


@dataclass
class Recorder:
    """The listener: every event, and when (driver-side clock) it arrived."""

    events: list[Event] = field(default_factory=list)
    received: list[float] = field(default_factory=list)

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        self.received.append(time.time())

    def of(self, number: int, kind: type | None = None) -> list[Event]:
        """The events of trial ``number`` (of class ``kind`` only, if given), in order."""
        return [e for e in self.events if e.number == number and isinstance(e, kind or object)]

    def end(self, number: int) -> Event:
        (event,) = [e for e in self.of(number) if isinstance(e, END_EVENTS)]
        return event

    def received_at(self, event: Event) -> float:
        return self.received[self.events.index(event)]


def drive(
    executor: Executor, specs: list[TrialSpec], *, limit: float = 30.0, close: bool = True
) -> Recorder:
    """Submit ``specs`` while ``free_slots`` allows, poll until every trial ended."""
    recorder = Recorder()
    executor.open(recorder)
    waiting = list(specs)
    deadline = time.monotonic() + limit
    try:
        while waiting or executor.running:
            while waiting and executor.free_slots > 0:
                executor.submit(waiting.pop(0))
            executor.poll(0.05)
            assert time.monotonic() < deadline, "the trials did not end in time"
    finally:
        if close:
            executor.close()
    return recorder


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):  # gone between the signal and the read
        return False


def wait_dead(pids: list[int], within: float = 5.0) -> list[int]:
    """The pids still alive after waiting up to ``within`` seconds for them to go."""
    deadline = time.monotonic() + within
    while any(pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    return [p for p in pids if pid_alive(p)]
