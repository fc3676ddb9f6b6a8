"""The objects that exist when a run starts (imported modules, the user's data) are left out of
the garbage collector's passes while it runs.

The driver allocates a few short-lived objects per trial (records, events, rows), so Python's
collector runs every few hundred trials; each pass over the older generations walks every
object the process holds (100,000 and more once NumPy, SQLAlchemy or a framework is imported),
which took about half of a no-op trial's time. ``gc.freeze`` moves those objects to a
permanent generation that no pass walks, and ``gc.unfreeze`` puts them back when the run ends;
what the run and its trials allocate is collected as before. A process that froze objects
itself (before forking workers, say) is left as it is, and so is a run inside a run.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["older_objects_frozen"]


@contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Freeze what the collector tracks now for the block's duration (unless something else
    froze objects already: then nothing changes)."""
    if gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
