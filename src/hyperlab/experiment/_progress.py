"""What a running experiment shows of itself: a live bar on a terminal, plain lines elsewhere.

On a terminal, a rich progress bar redrawn ten times a second. When standard error is not a
terminal (``nohup``, batch-system logs, CI), a bar would print nothing useful until the end, so
a plain line goes out every ``interval`` seconds (30 by default) and each time another tenth of
``max_trials`` has finished.

Each shows the best value so far, or, for an experiment with several objectives, the size of
the Pareto front so far (``front 7``), which the driver keeps in a ``FrontSize``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, Protocol, TextIO

from hyperlab._terminal import printable
from hyperlab.config import MAX_TRIALS
from hyperlab.trial import Mode, Trial, TrialStatus

__all__ = [
    "PROGRESS_INTERVAL",
    "FrontSize",
    "Progress",
    "ProgressDisplay",
    "ProgressLines",
    "make_progress",
]

REFRESH_INTERVAL = 0.1
PROGRESS_INTERVAL = 30.0
"""Seconds between plain progress lines when the output is not a terminal."""


class Progress(Protocol):
    """What the driver calls; ``driver`` has ``counts``, ``active``, ``best``, ``max_trials``
    and ``elapsed()``, and ``front`` (a ``FrontSize``, or None for one objective)."""

    def update(self, driver: Any) -> None: ...

    def close(self, driver: Any) -> None: ...


def make_progress(
    progress: bool | float | None,
    experiment_id: str,
    total: int | None,
    where: str | None = None,
) -> Progress | None:
    """The progress display ``progress`` asks for; its first line says ``where`` the
    experiment is kept (its store and folder), if given.

    Args:
        progress: False for none; True or None for a bar when standard error is a terminal
            and plain lines every ``PROGRESS_INTERVAL`` seconds otherwise; a number for plain
            lines every that many seconds, terminal or not.
        experiment_id: Shown on each line.
        total: ``max_trials``, if set.
        where: Where the experiment is kept, as ``stored in URL, files in FOLDER``.
    """
    if progress is False:
        return None
    if isinstance(progress, (int, float)) and not isinstance(progress, bool):
        return ProgressLines(experiment_id, total, interval=float(progress), where=where)
    if sys.stderr.isatty():
        return ProgressDisplay(experiment_id, total, where=where)
    return ProgressLines(experiment_id, total, where=where)


class FrontSize:
    """The Pareto front of the trials seen so far, kept as it grows: each feasible SUCCEEDED
    trial's objectives as losses, those no other dominates (equal ones all kept, as
    ``hyperlab.pareto.pareto_front`` keeps them).

    Args:
        modes: Each objective's direction.
    """

    def __init__(self, modes: Sequence[Mode]) -> None:
        self._signs = [Mode(m).sign for m in modes]
        self._front: list[tuple[float, ...]] = []

    def add(self, trial: Trial) -> None:
        """Count ``trial`` if it is a feasible SUCCEEDED trial with every objective's value."""
        values = trial.objectives
        if trial.status is not TrialStatus.SUCCEEDED or not trial.feasible or values is None:
            return
        if len(values) != len(self._signs):
            return
        point = tuple(sign * v for sign, v in zip(self._signs, values, strict=True))
        if any(_dominates(kept, point) for kept in self._front):
            return
        self._front = [kept for kept in self._front if not _dominates(point, kept)]
        self._front.append(point)

    def __len__(self) -> int:
        return len(self._front)


def _dominates(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return all(x <= y for x, y in zip(a, b, strict=True)) and any(
        x < y for x, y in zip(a, b, strict=True)
    )


def _best(driver: Any) -> str:
    """``best 0.125`` (``best -`` before any), or ``front 7`` with several objectives."""
    front = getattr(driver, "front", None)
    if front is not None:
        return f"front {len(front)}"
    return "best -" if driver.best is None else f"best {driver.best:.6g}"


def _cap(total: int | None) -> int | None:
    """``max_trials`` as a progress total: None for none, and for ``MAX_TRIALS``, what stands
    for no end (Optuna's ``optimize`` with only a timeout)."""
    return None if total is None or total >= MAX_TRIALS else total


class ProgressDisplay:
    """A live bar: trials finished/total, running, failed, best value (or front size) so far,
    elapsed time.

    Redrawn at most ten times a second, however often ``update`` is called.
    """

    def __init__(self, experiment_id: str, total: int | None, where: str | None = None) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as Bar

        self._progress = Bar(
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("running {task.fields[running]}  failed {task.fields[failed]}"),
            TextColumn("{task.fields[best]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        if where is not None:
            self._progress.console.print(
                printable(f"hyperlab {experiment_id}: {where}"), markup=False, highlight=False
            )
        self._task = self._progress.add_task(
            printable(experiment_id), total=_cap(total), running=0, failed=0, best="best -"
        )
        self._progress.start()
        self._last = 0.0

    def update(self, driver: Any, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < REFRESH_INTERVAL:
            return
        self._last = now
        self._progress.update(
            self._task,
            completed=driver.counts["finished"],
            total=_cap(driver.max_trials),
            running=len(driver.active),
            failed=driver.counts["failed"],
            best=_best(driver),
        )

    def close(self, driver: Any) -> None:
        self.update(driver, force=True)
        self._progress.stop()


class ProgressLines:
    """One plain line per ``interval`` seconds and per tenth of ``total`` finished trials.

    Args:
        experiment_id: Shown on each line.
        total: ``max_trials``, if set.
        interval: Seconds between lines when nothing else prompts one.
        out: Where lines go (standard error).
        where: Where the experiment is kept: the first line says it, if given.
    """

    def __init__(
        self,
        experiment_id: str,
        total: int | None,
        *,
        interval: float = PROGRESS_INTERVAL,
        out: TextIO | None = None,
        where: str | None = None,
    ) -> None:
        self.experiment_id = experiment_id
        self.interval = interval
        self.out = out
        self._last = time.monotonic()
        self._tenth = 0
        if where is not None:
            self._print(f"hyperlab {experiment_id}: {where}")

    def update(self, driver: Any) -> None:
        now = time.monotonic()
        total = _cap(driver.max_trials)
        tenth = 10 * driver.counts["finished"] // total if total else 0
        if now - self._last < self.interval and tenth <= self._tenth:
            return
        self._tenth = max(self._tenth, tenth)
        self._last = now
        self._write(driver)

    def close(self, driver: Any) -> None:
        """Nothing: the summary follows."""

    def _write(self, driver: Any) -> None:
        total = _cap(driver.max_trials)
        finished = driver.counts["finished"]
        minutes, seconds = divmod(int(driver.elapsed()), 60)
        line = (
            f"hyperlab {self.experiment_id}: "
            f"{finished if total is None else f'{finished}/{total}'} trials, "
            f"{len(driver.active)} running, {driver.counts['failed']} failed, "
            f"{_best(driver)}, {minutes}m{seconds:02d}s"
        )
        self._print(line)

    def _print(self, line: str) -> None:
        print(printable(line), file=self.out or sys.stderr, flush=True)
