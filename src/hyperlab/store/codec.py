"""JSON text for the store's JSON columns, with non-finite floats that survive PostgreSQL.

Public so that readers beside the store (the REST API's filters and plots) encode a value
exactly as the store wrote it: ``from hyperlab.store.codec import dumps, loads``.

PostgreSQL's ``json`` type rejects ``NaN`` and ``Infinity``, which Python's ``json`` writes
for non-finite floats. So the store writes them as the strings ``"NaN"``, ``"Infinity"`` and
``"-Infinity"`` and turns those strings back into floats on read. A genuine string of that form
(a choice option ``"NaN"``, say) is escaped with a leading ``~`` on write (``"~NaN"``, and
``"~~NaN"`` for ``"~NaN"``), and the ``~`` is removed on read, so every value round-trips.

Both directions take a fast path through the C encoder and decoder: the tree is only walked
when the text shows that one of these values is present. NumPy scalars and arrays are written
as their ``tolist()``; tuples come back as lists, as JSON has no tuple.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

__all__ = ["dumps", "loads"]

_SENTINEL = re.compile(r"(~*)(NaN|Infinity|-Infinity)")
_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _default(obj: Any) -> Any:
    if hasattr(obj, "tolist"):  # NumPy scalars and arrays
        return obj.tolist()
    raise TypeError(f"values stored as JSON must be JSON types, got {type(obj).__name__}: {obj!r}")


def _make_encoder() -> Callable[[Any], str]:
    """The C encoder built once (``JSONEncoder.encode`` builds it on every call: 2x slower)."""
    encoder = json.JSONEncoder(
        allow_nan=False, separators=(",", ":"), ensure_ascii=False, default=_default
    )
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # not CPython
        return encoder.encode
    try:
        iterencode = make(
            None, _default, json.encoder.encode_basestring, None, ":", ",", False, False, False
        )
        probe = {"a": [1, 2.5, "é", None, True]}
        if "".join(iterencode(probe, 0)) != encoder.encode(probe):
            return encoder.encode
    except TypeError:  # the private signature changed
        return encoder.encode
    join = "".join
    return lambda obj: join(iterencode(obj, 0))


_encode = _make_encoder()
_decode = json.JSONDecoder().decode


def dumps(obj: Any) -> str:
    """JSON text of ``obj`` with non-finite floats as strings (see the module docstring).

    Raises:
        TypeError: when ``obj`` holds something JSON cannot represent.
    """
    try:
        text = _encode(obj)
    except ValueError:  # a non-finite float
        return _encode(_escape(obj))
    if 'NaN"' in text or 'Infinity"' in text:  # maybe a genuine string that needs its "~"
        return _encode(_escape(obj))
    return text


def loads(text: str | bytes | bytearray | memoryview) -> Any:
    """The value written by ``dumps``, non-finite floats restored."""
    if not isinstance(text, str):
        text = bytes(text).decode()
    obj = _decode(text)
    if 'NaN"' in text or 'Infinity"' in text:
        return _unescape(obj)
    return obj


def _escape(obj: Any) -> Any:
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return "NaN" if obj != obj else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, str):
        return "~" + obj if _SENTINEL.fullmatch(obj) else obj
    if isinstance(obj, dict):
        return {key: _escape(value) for key, value in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_escape(value) for value in obj]
    if hasattr(obj, "tolist"):
        return _escape(obj.tolist())
    return obj


def _unescape(obj: Any) -> Any:
    if isinstance(obj, str):
        match = _SENTINEL.fullmatch(obj)
        if match is None:
            return obj
        return obj[1:] if match.group(1) else _NONFINITE[obj]
    if isinstance(obj, dict):
        return {key: _unescape(value) for key, value in obj.items()}
    if isinstance(obj, list):
        return [_unescape(value) for value in obj]
    return obj
