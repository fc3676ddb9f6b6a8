"""How a unit's run ends its experiment early, for the group runner (``_runner.py``):
``Failure`` (a unit raised, or saved what cannot be stored), ``Exhausted`` (a generator unit
ran out), and the checks and texts that go with them."""

from __future__ import annotations

import json
import traceback
from typing import Any

from hyperlab.reporting.channel import json_default

__all__ = ["Exhausted", "Failure", "error_text", "short", "storable"]

MAX_ERROR_CHARS = 8000


class Failure(Exception):
    """A unit raised: the experiment fails with ``text`` (its traceback); ``exc`` is what the
    unit raised, if anything (re-raised to the caller by ``debug`` and
    ``continue_on_failure=False``)."""

    def __init__(self, text: str, exc: BaseException | None = None) -> None:
        super().__init__(text)
        self.text = text
        self.exc = exc


class Exhausted(Exception):
    """A generator unit ran out: the experiment ends after this iteration's ``last`` units."""


def storable(value: Any, name: str, unit: str, iteration: int) -> Any:
    """``value`` as the store keeps it (numbers, strings, lists, dicts; numpy converted).

    Raises:
        Failure: It cannot be stored.
    """
    try:
        return json.loads(json.dumps(value, default=json_default, allow_nan=True))
    except (TypeError, ValueError):
        raise Failure(
            f"unit {unit!r} (iteration {iteration}): save_to variable {name!r} holds "
            f"{short(value)}, which cannot be stored; save numbers, strings, lists or dicts "
            f"(objects stay readable by other units as O({unit!r}))"
        ) from None


def short(value: Any) -> str:
    """``value``'s type and the start of its ``repr``, for an error message."""
    text = repr(value)
    return f"{type(value).__name__} {text[:80] + '...' if len(text) > 80 else text}"


def error_text(unit: str, iteration: int) -> str:
    """The text an experiment fails with when ``unit`` raised: the current exception's
    traceback, cut to its last ``MAX_ERROR_CHARS`` characters."""
    text = traceback.format_exc().rstrip()
    if len(text) > MAX_ERROR_CHARS:
        text = "..." + text[-MAX_ERROR_CHARS:]
    return f"unit {unit!r} failed at iteration {iteration}:\n{text}"
