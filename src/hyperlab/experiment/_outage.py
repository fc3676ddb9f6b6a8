"""Riding out a database that does not answer for a while.

A database restart, a lost connection or a SQLite lock held past the busy timeout makes the
store raise ``StoreUnavailable``. The driver does not end the experiment for that. Its trials
keep running and their rows wait in the store's write buffer, in memory; the loop tries its
group commit again with backoff (after 0.1 s, then twice as long each time, at most 1 s apart)
and makes no other store call meanwhile: it reads no control request, renews no lease, and
starts no trial in another process (whose row must be written before it runs). The first
commit that goes through ends the outage: it writes everything that waited, and the driver
renews its lease at once. A lease that expired meanwhile is still this driver's unless another
driver took the experiment over, which the commit finds (``LeaseLost``).

Only when the store has not answered for ``store_outage`` seconds, counted from the start of
the first call that failed, does the driver stop: it raises ``StoreUnavailable`` saying so and
how to continue the experiment. Times here are real (``time.monotonic``): a database restarts
in real time, whatever clock the experiment runs on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from hyperlab._steering import resume_command
from hyperlab._terminal import printable
from hyperlab.store import Store, StoreUnavailable

__all__ = ["FIRST_RETRY", "MAX_RETRY", "StoreOutage"]

FIRST_RETRY = 0.1
"""Seconds from the first failed call to the first retry; each wait then doubles."""
MAX_RETRY = 1.0
"""The longest wait between two retries (seconds)."""


class StoreOutage:
    """The driver's store calls, and the outage they are in, if any.

    Only the driver's thread calls it.

    Args:
        store: The experiment's store.
        experiment_id: The experiment the driver runs.
        window: How long the store may not answer before the driver stops (seconds).
    """

    def __init__(self, store: Store, experiment_id: str, window: float) -> None:
        self.store = store
        self.experiment_id = experiment_id
        self.window = window
        self.since: float | None = None  # when the first failed call of this outage began
        self.failures = 0  # failed calls in this outage
        self._retry_at = 0.0
        self._delay = FIRST_RETRY

    @property
    def active(self) -> bool:
        """True from a call that failed to the next flush that went through."""
        return self.since is not None

    def due(self) -> bool:
        """Whether a store call may be made now: always, but in an outage only once the wait
        before the next retry is over."""
        return self.since is None or time.monotonic() >= self._retry_at

    def call(self, call: Callable[[], object]) -> bool:
        """Make one of the loop's store calls, unless an outage waits for its next retry.

        The first call that goes through ends the outage, and a line says how long it lasted.

        Returns:
            True when it was made; False when the store did not answer (or was not asked,
            the outage waiting for its next retry).

        Raises:
            StoreUnavailable: the store has not answered for ``window`` seconds.
        """
        if not self.due():
            return False
        began = time.monotonic()
        try:
            call()
        except StoreUnavailable as exc:
            self._failed(exc, began)
            return False
        if self.since is not None:
            _say(
                f"experiment {self.experiment_id}: the store answers again after "
                f"{time.monotonic() - self.since:.1f}s ({self.failures} failed tries)"
            )
            self.since = None
            self.failures = 0
        return True

    def flush(self) -> bool:
        """Group-commit the store's buffered rows (see ``call``); True when they are written."""
        return self.call(self.store.flush)

    def settle(self, call: Callable[[], object]) -> None:
        """Make a store call that must be made (the run's last writes), waiting for the store
        to answer as long as the outage may last.

        Raises:
            StoreUnavailable: the store has not answered for ``window`` seconds.
        """
        while not self.call(call):
            time.sleep(max(0.0, self._retry_at - time.monotonic()))

    def _failed(self, exc: StoreUnavailable, began: float) -> None:
        now = time.monotonic()
        if self.since is None:
            self.since = began
            self._delay = FIRST_RETRY
            _say(
                f"experiment {self.experiment_id}: the store does not answer ({exc.reason}); "
                f"the trials run on and what they send waits in memory; trying again for up "
                f"to {self.window:g}s (store_outage)"
            )
        self.failures += 1
        if now - self.since >= self.window:
            raise self._given_up(exc, now - self.since) from exc
        self._retry_at = now + self._delay
        self._delay = min(self._delay * 2, MAX_RETRY)

    def _given_up(self, exc: StoreUnavailable, lasted: float) -> StoreUnavailable:
        experiment_id = self.experiment_id
        return StoreUnavailable(
            f"experiment {experiment_id}: the store {self.store.masked_url} has not answered "
            f"for {lasted:.1f}s, past store_outage={self.window:g}s (last: {exc.reason}), so "
            f"its driver stopped. Trials that can outlive it (commands) run on for the next "
            f"driver to adopt; the others were stopped. The {self.store.pending} rows the "
            f"store did not get are lost: the trials they describe run again. Once the "
            f"database answers, continue it with `{resume_command(self.store, experiment_id)}`",
            reason=exc.reason,
        )


def _say(message: str) -> None:
    print(f"hyperlab: {printable(message)}", file=sys.stderr, flush=True)
