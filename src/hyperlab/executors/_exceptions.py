"""Carrying a trial's exception from a worker process to the driver.

A ``processes`` worker sends the exception its trial raised, cloudpickled, with its ``failed``
message; the driver's side unpickles it into ``Failed.exception``. Either step may fail (an
exception holding a lock or a socket, a class whose ``__init__`` takes other arguments than
its ``args``); then there is no exception object, and the error text alone tells what happened.
"""

from __future__ import annotations

import cloudpickle

__all__ = ["dump_exception", "load_exception"]


def dump_exception(exc: BaseException | None) -> bytes | None:
    """``exc`` as cloudpickle bytes (its traceback is left out), or None if it cannot be."""
    if exc is None:
        return None
    try:
        return cloudpickle.dumps(exc)
    except Exception:  # anything a custom __reduce__ may raise: the error text remains
        return None


def load_exception(blob: bytes | None) -> BaseException | None:
    """The exception ``dump_exception`` pickled, or None if there is none or it cannot be
    unpickled here."""
    if blob is None:
        return None
    try:
        exc = cloudpickle.loads(blob)
    except Exception:  # its class cannot be imported here, or cannot be rebuilt from its args
        return None
    return exc if isinstance(exc, BaseException) else None
