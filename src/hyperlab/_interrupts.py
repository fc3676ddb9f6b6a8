"""Ctrl-C that never lands in the middle of a write or a read that must be whole.

Python raises ``KeyboardInterrupt`` between any two bytecodes of the main thread. Most code
survives that, but not all: an interrupt between the length and the body of a message read
from a worker's pipe leaves the pipe mid-message (the next read takes the body for a length,
and the trial ends FAILED instead of interrupted), and one inside the ``with`` that commits a
store transaction can leave its connection holding SQLite's write lock while the exception is
handled, so the driver's own final flush waits for a lock it holds itself.

While a driver runs in the main thread, :func:`interrupts_deferred` installs a SIGINT handler
that raises ``KeyboardInterrupt`` as Python's default one does, except inside a
:func:`critical` block, where it waits for the block's end. Outside a driver run (or when the
user installed a SIGINT handler of their own) nothing changes: :func:`critical` is then only a
counter.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["critical", "interrupts_deferred"]


class _State:
    depth = 0  # critical blocks open in the main thread
    pending = False  # a Ctrl-C arrived inside one
    installed = False


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    if _State.depth:
        _State.pending = True
        return
    raise KeyboardInterrupt


@contextlib.contextmanager
def critical() -> Iterator[None]:
    """A block Ctrl-C does not cut: an interrupt that arrives inside it is raised at its end."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers run in the main thread only
        return
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
        if not _State.depth and _State.pending:
            _State.pending = False
            raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """For the block's duration, Ctrl-C waits for the end of any :func:`critical` block.

    Only where Python's own handler is in place, in the main thread, and not nested: a
    handler the user installed is left alone.
    """
    if (
        threading.current_thread() is not threading.main_thread()
        or _State.installed
        or signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    ):
        yield
        return
    signal.signal(signal.SIGINT, _on_sigint)
    _State.installed = True
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _State.installed = False
        _State.pending = False
