"""Keeping the driver's lease: heartbeats, and the experiment time they carry.

The driver's loop renews the lease every ``HEARTBEAT_INTERVAL`` of its clock (so simulated
time drives it in tests). A loop can be busy for long, though: an in-process trial runs inside
it and may not report for minutes. So a watchdog thread renews the lease too, whenever the
loop has not for a heartbeat interval of real time. Each renewal records the experiment time
spent so far, so a crash loses at most one interval of ``max_duration``'s count.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from hyperlab.store import HEARTBEAT_INTERVAL, Lease, Store

__all__ = ["LeaseKeeper"]


class LeaseKeeper:
    """Renews ``lease`` in ``store``, from the loop (``beat``) and from a watchdog thread.

    Args:
        store: The store the lease is held in.
        lease: The lease the driver took.
        elapsed: The experiment time spent so far (seconds), when called.
    """

    def __init__(self, store: Store, lease: Lease, elapsed: Callable[[], float]) -> None:
        self.store = store
        self.lease = lease
        self.elapsed = elapsed
        self.lost = False
        self._lock = threading.Lock()
        self._renewed = time.monotonic()  # real time, for the watchdog
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
                self._renewed = time.monotonic()
            return not self.lost

    def stop(self) -> None:
        """Stop the watchdog (the caller releases the lease)."""
        self._done.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _watch(self) -> None:
        while not self._done.wait(HEARTBEAT_INTERVAL / 2):
            if time.monotonic() - self._renewed < HEARTBEAT_INTERVAL:
                continue
            try:
                if not self.beat():
                    return
            except Exception:  # the store is unreachable for now: the loop will say so
                continue
