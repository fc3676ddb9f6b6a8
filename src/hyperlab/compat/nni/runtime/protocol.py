"""NNI's ``nni.runtime.protocol``: ``CommandType`` and ``send``, which older advisors call as a
function (``send(CommandType.NewTrialJob, json)``); NNI 3.0's advisors call ``self.send``.

Both reach whoever ``capture`` installed: hyperlab's advisor adapter, around each call it
makes into the advisor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .tuner_command_channel import CommandType

__all__ = ["CommandType", "capture", "send"]

_receivers: list[Callable[[Any, Any], None]] = []


@contextmanager
def capture(receiver: Callable[[Any, Any], None]) -> Iterator[None]:
    """While the block runs, ``send(command, data)`` calls ``receiver(command, data)``."""
    _receivers.append(receiver)
    try:
        yield
    finally:
        _receivers.remove(receiver)


def send(command: CommandType, data: Any) -> None:
    """Send ``command`` with ``data`` (NNI's JSON text) to the experiment.

    Raises:
        RuntimeError: when no experiment is listening (outside an advisor's ``handle_*``
            call made by hyperlab).
    """
    if not _receivers:
        raise RuntimeError(
            f"send({command}): no experiment is listening; an advisor sends from the "
            "handle_* calls hyperlab makes"
        )
    _receivers[-1](command, data)
