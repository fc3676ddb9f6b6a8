"""The lease keeper's watchdog follows the loop's own rhythm (issue 31, target 5): when the
database answers slowly, so that the loop records the time spent every 0.3 s instead of every
0.1 s, the watchdog does not write the same row beside each group commit; once the loop stops
recording (an in-process trial that does not report), it steps in still."""

from __future__ import annotations

import time

from hyperlab.experiment._keeper import LeaseKeeper
from hyperlab.store import Lease


class _Store:
    """Counts the watchdog's writes."""

    def __init__(self) -> None:
        self.records = 0

    def record_elapsed(self, lease: Lease, *, elapsed: float) -> bool:
        self.records += 1
        return True

    def renew_lease(self, lease: Lease, *, elapsed: float) -> bool:
        return True


def test_the_watchdog_leaves_a_slow_loop_alone_and_covers_a_stalled_one():
    store = _Store()
    keeper = LeaseKeeper(
        store,  # type: ignore[arg-type]
        Lease("rhythm", "owner", 0.0, None),
        lambda: 0.0,
        record_every=0.1,
    )
    keeper.start()
    try:
        for _ in range(8):  # the loop's group commits, 0.3 s apart (a slow database)
            keeper.recorded()
            time.sleep(0.3)
        slow = store.records
        keeper.recorded()
        time.sleep(1.5)  # the loop is busy elsewhere: nothing recorded
        stalled = store.records - slow
    finally:
        keeper.stop()
    assert slow <= 2  # the first gap, before it knew the loop's rhythm (and a late wake-up)
    assert stalled >= 1
