"""The most memory a block of code held at once: a measure of the work it did that, unlike a
clock, a loaded machine does not change (a refused input must not have been read or built)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager


class Peak:
    """The peak of the traced memory of a ``peak_allocation`` block, in bytes, once it ended."""

    bytes: int = 0


@contextmanager
def peak_allocation() -> Iterator[Peak]:
    """Trace the allocations of the block; ``Peak.bytes`` is their peak when the block ends."""
    peak = Peak()
    tracemalloc.start()
    try:
        yield peak
    finally:
        peak.bytes = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
