"""Keeping the driver's lease: heartbeats, and the experiment time they carry.

The driver's loop renews the lease every ``HEARTBEAT_INTERVAL`` of its clock (so simulated
time drives it in tests), and its group commit (every flush interval) records the experiment
time spent, in the commit's own transaction (``Store.acquire_lease(elapsed=...)``). A loop can
be busy for long, though: an in-process trial runs inside it and may not report for minutes,
a tuner may think for seconds. So a watchdog thread steps in whenever the loop has not
recorded the time spent for two flush intervals of real time: it records it alone (a small
transaction of its own), and renews the lease when the loop has not for a heartbeat interval.
A crash therefore loses at most about one flush interval of ``max_duration``'s count.

A flush interval there is the loop's own, as it last went (at most ``MAX_PERIOD``): when the
database answers slowly (many drivers on one server), a group commit takes longer than
``record_every`` and the loop records every 0.3 s, say; the watchdog then waits two of those
periods, rather than writing the same row beside each commit, on a second connection, waiting
for the commit's row lock. After a loop period of ``MAX_PERIOD`` or more (an in-process trial
that did not report), the watchdog steps in after a second, until the loop's next record.

While the store does not answer (``StoreUnavailable``: a database restarting, a lock held past
the busy timeout), the watchdog tries again after twice as long each time, up to
``MAX_RETRY``, and never concludes from it that the lease is lost: only a renewal the store
answers, finding another owner, does (see ``hyperlab.experiment._outage``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from hyperlab.experiment._outage import MAX_RETRY
from hyperlab.store import HEARTBEAT_INTERVAL, Lease, Store

__all__ = ["MAX_PERIOD", "LeaseKeeper"]

MAX_PERIOD = 0.5
"""The longest loop period (real seconds between two of its records) the watchdog allows for."""


class LeaseKeeper:
    """Renews ``lease`` in ``store``, from the loop (``beat``) and from a watchdog thread,
    which also records the time spent while the loop does not (``recorded``).

    Args:
        store: The store the lease is held in.
        lease: The lease the driver took.
        elapsed: The experiment time spent so far (seconds), when called; any thread.
        record_every: The loop's flush interval (real seconds): the watchdog records the time
            spent once the loop has not for twice that long.
    """

    def __init__(
        self,
        store: Store,
        lease: Lease,
        elapsed: Callable[[], float],
        *,
        record_every: float,
    ) -> None:
        self.store = store
        self.lease = lease
        self.elapsed = elapsed
        self.record_every = record_every
        self.lost = False
        self._lock = threading.Lock()
        self._renewed = self._recorded = time.monotonic()  # real time, for the watchdog
        self._looped = self._recorded  # the loop's last record
        self._period = record_every  # the time between its last two
        self._done = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, name=f"hyperlab-lease-{lease.experiment_id}", daemon=True
        )

    def start(self) -> None:
        """Start the watchdog."""
        self._thread.start()

    def beat(self) -> bool:
        """Renew now; False once the lease is lost (another driver took over)."""
        with self._lock:
            if not self.lost:
                self.lost = not self.store.renew_lease(self.lease, elapsed=self.elapsed())
                self._renewed = self._recorded = time.monotonic()
            return not self.lost

    def recorded(self) -> None:
        """The loop's group commit has just recorded the time spent."""
        now = time.monotonic()
        self._period = min(max(now - self._looped, self.record_every), MAX_PERIOD)
        self._looped = self._recorded = now

    def stop(self) -> None:
        """Stop the watchdog (the caller releases the lease)."""
        self._done.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _record(self) -> bool:
        with self._lock:
            if not self.lost:
                self.lost = not self.store.record_elapsed(self.lease, elapsed=self.elapsed())
                self._recorded = time.monotonic()
            return not self.lost

    def _watch(self) -> None:
        wait = self.record_every
        while not self._done.wait(wait):
            now = time.monotonic()
            try:
                if now - self._renewed >= HEARTBEAT_INTERVAL:
                    kept = self.beat()
                elif now - self._recorded >= 2 * self._period:
                    kept = self._record()
                else:
                    wait = self.record_every
                    continue
            except Exception:  # the store does not answer for now: the loop rides it out
                wait = min(2 * wait, MAX_RETRY)
                continue
            if not kept:
                return
            wait = self.record_every
