"""The live progress bar shown on a terminal while an experiment runs."""

from __future__ import annotations

import sys
import time
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

__all__ = ["ProgressDisplay", "wants_progress"]

REFRESH_INTERVAL = 0.1


def wants_progress(progress: bool | None) -> bool:
    """``progress`` if given, else whether standard error is a terminal."""
    if progress is not None:
        return progress
    return sys.stderr.isatty()


class ProgressDisplay:
    """Trials finished/total, running, failed, best value so far, elapsed time.

    The driver calls ``update`` as often as it likes; the screen is redrawn at most ten times a
    second. ``driver`` is anything with ``counts``, ``active``, ``best``, ``max_trials``.
    """

    def __init__(self, experiment_id: str, total: int | None) -> None:
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("running {task.fields[running]}  failed {task.fields[failed]}"),
            TextColumn("best {task.fields[best]}"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._progress.add_task(
            experiment_id, total=total, running=0, failed=0, best="-"
        )
        self._progress.start()
        self._last = 0.0

    def update(self, driver: Any, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < REFRESH_INTERVAL:
            return
        self._last = now
        best = "-" if driver.best is None else f"{driver.best:.6g}"
        self._progress.update(
            self._task,
            completed=driver.counts["finished"],
            total=driver.max_trials,
            running=len(driver.active),
            failed=driver.counts["failed"],
            best=best,
        )

    def close(self, driver: Any) -> None:
        self.update(driver, force=True)
        self._progress.stop()
