"""A strategy loop's side of a running experiment: the trials a user's own code submits
(``Experiment.submit``) and the handles it waits on.

The user's threads never touch the driver's state. ``Submissions.submit`` takes trial numbers
under the lock the driver also takes to number its own trials (``Submissions.lock``), after
checking the budget, and queues the parameters; the driver's loop takes the queue at its next
turn (``Submissions.take``), writes the trials and runs them before any the tuner proposes.
A handle resolves once its trial's end is committed to the store (``Submissions.resolve``), so
a strategy never acts on a result that a crash could still lose; when the run ends, every
handle left resolves with its trial as stored (``Submissions.close``).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from typing import Any

from hyperlab.trial import Trial, TrialStatus

__all__ = ["Submissions", "TrialHandle"]


class TrialHandle(Future[Trial]):
    """A trial of a strategy loop: a ``concurrent.futures.Future`` whose result is the ended
    ``Trial`` (succeeded, failed, stopped early or cancelled), so ``concurrent.futures.wait``
    and ``as_completed`` take handles too.

    It resolves once the trial's end is in the store, or once the experiment's run ended (the
    trial as stored then: WAITING or SYS_CANCELED, run again on resume). A handle cannot be
    cancelled (``cancel`` returns False): stop a trial with ``hyperlab kill``.

    Attributes:
        experiment_id: The experiment the trial belongs to.
        number: The trial's number in it.
        params: Its parameters, as submitted.
    """

    def __init__(self, experiment_id: str, number: int, params: dict[str, Any]) -> None:
        super().__init__()
        self.experiment_id = experiment_id
        self.number = number
        self.params = params

    @property
    def trial(self) -> Trial | None:
        """The ended trial once the handle resolved, else None (it waits or runs)."""
        return self.result() if self.done() else None

    @property
    def value(self) -> float | None:
        """The trial's objective value once it ended with one, else None."""
        trial = self.trial
        return None if trial is None else trial.value

    def cancel(self) -> bool:
        """A trial is not cancelled through its handle: always False."""
        return False

    def __repr__(self) -> str:
        trial = self.trial
        state = "pending" if trial is None else f"{trial.status} value={trial.value}"
        return f"<TrialHandle {self.experiment_id}-{self.number} {state}>"


def _ended(trial: Trial) -> bool:
    """Whether ``trial`` ended for good (SYS_CANCELED runs again while the experiment runs)."""
    return trial.status.is_finished() and trial.status is not TrialStatus.SYS_CANCELED


def resolved(trial: Trial) -> TrialHandle:
    """A handle already resolved with ``trial``."""
    handle = TrialHandle(trial.experiment_id, trial.number, trial.params)
    handle.set_result(trial)
    return handle


class Submissions:
    """The strategy's queue into one driver, and the handles waiting on its trials.

    Args:
        experiment_id: The experiment.
    """

    def __init__(self, experiment_id: str) -> None:
        self.experiment_id = experiment_id
        self.lock = threading.Lock()
        """Held while a trial number is taken, by the driver and by ``submit``."""
        self.attached = False
        """A strategy drives the experiment: it does not end when nothing is left to run."""
        self.watching = False
        """Handles exist: the driver hands its committed ends to ``resolve``."""
        self.closed = False
        self._queue: deque[TrialHandle] = deque()
        self._arrived = threading.Event()  # wakes an idle driver
        self._pending: dict[int, TrialHandle] = {}  # handles not resolved yet, by number
        self._ended: set[int] = set()  # numbers whose end was committed since watching

    def __len__(self) -> int:
        """How many submitted trials the driver has not taken yet."""
        return len(self._queue)

    def submit(
        self, params: Iterable[dict[str, Any]], take_number: Callable[[], int]
    ) -> list[TrialHandle]:
        """Queue trials with ``params``, numbered by ``take_number`` (called under ``lock``
        by the caller, who checked the budget under it)."""
        handles = []
        for one in params:
            handle = TrialHandle(self.experiment_id, take_number(), one)
            handles.append(handle)
            self._pending[handle.number] = handle
        self._queue.extend(handles)
        self.watching = True
        self._arrived.set()
        return handles

    def idle(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for a submission (the driver, with nothing to run)."""
        self._arrived.wait(timeout)
        self._arrived.clear()  # one set meanwhile is not lost: the loop reads the queue

    def waits_on(self, number: int) -> bool:
        """Whether trial ``number`` has a handle not resolved yet (read without the lock: a
        hint for the driver to commit its end at once rather than at the next group commit)."""
        return number in self._pending

    def pending(self) -> list[TrialHandle]:
        """The handles not resolved yet (submitted trials not stored yet among them)."""
        with self.lock:
            return list(self._pending.values())

    def take(self) -> list[TrialHandle]:
        """The submitted trials not taken yet, in number order (the driver's loop)."""
        with self.lock:
            taken = list(self._queue)
            self._queue.clear()
        return taken

    def handle(self, trial: Trial, read: Callable[[int], Trial]) -> TrialHandle:
        """The handle of ``trial`` as a reader of the running experiment found it: resolved if
        it ended (or ended since, read again with ``read``), else the one that resolves when it
        ends."""
        if _ended(trial):
            return resolved(trial)
        with self.lock:
            self.watching = True
            found = self._pending.get(trial.number)
            if found is not None:
                return found
            if not self.closed and trial.number not in self._ended:
                handle = TrialHandle(self.experiment_id, trial.number, trial.params)
                self._pending[trial.number] = handle
                return handle
        return resolved(read(trial.number))  # it ended, or the run did, since it was read

    def resolve(self, ended: list[Trial]) -> None:
        """Resolve the handles of ``ended`` trials, whose ends were just committed."""
        if not self.watching:
            return
        with self.lock:
            for trial in ended:
                if _ended(trial):
                    handle = self._pending.pop(trial.number, None)
                    if handle is None:
                        self._ended.add(trial.number)
                    elif not handle.done():
                        handle.set_result(trial)

    def close(
        self,
        read: Callable[[list[int]], dict[int, Trial]] | None,
        error: BaseException | None,
    ) -> None:
        """The run ended: resolve every handle left with its trial as stored (``read`` gives
        the trials of some numbers), or with ``error`` when nothing more could be written."""
        with self.lock:
            self.closed = True
            self.attached = False
            left = [handle for handle in self._pending.values() if not handle.done()]
            self._pending.clear()
            self._queue.clear()
        if not left:
            return
        found: dict[int, Trial] = {}
        if error is None and read is not None:
            try:
                found = read([handle.number for handle in left])
            except Exception as exc:  # the waiters get it, not the driver
                error = exc
        for handle in left:
            trial = found.get(handle.number)
            if trial is not None:
                handle.set_result(trial)
            else:
                handle.set_exception(error or RuntimeError(f"trial {handle.number} is not stored"))
