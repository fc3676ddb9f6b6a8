"""What a trial's report or result may hold: the one rule, checked at the driver's door.

A report (``hyperlab.report``, a reporter call, a yielded value) and a final result (a returned
number or dict, NNI's final result) are a dict of named metrics. Their values are stored as JSON,
so each must be, recursively:

- ``None``, a ``bool``, an ``int``, a ``float`` (NaN and infinities included: they are stored
  and read back; a non-finite *objective* fails its trial) or a ``str``;
- a ``list`` or ``tuple`` of such values (read back as a list);
- a ``dict`` with ``str`` keys and such values.

NumPy scalars become Python numbers (``numpy.float32(0.5)`` is stored as ``0.5``), NumPy arrays
and other array-likes with ``tolist()`` (Torch, JAX, CuPy) become lists, counted against the size
limit like any list. Anything else (a model, ``bytes``, a set, a dict with an ``int`` key, an
integer too large for a float, a string that is not valid Unicode) is refused, and so is a
report or result whose JSON text would exceed ``MAX_METRICS_BYTES`` (1 MiB) or whose values nest
deeper than ``MAX_DEPTH`` (100) levels. The driver fails the trial that sent it, with
``MetricsError``'s message naming the metric and the type, and the experiment goes on.

Only the standard library is imported here: command trials import this package.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

__all__ = ["EXPECTED", "MAX_DEPTH", "MAX_METRICS_BYTES", "MetricsError", "clean_metrics"]

MAX_METRICS_BYTES = 1 << 20
"""At most this many bytes of JSON (about) in one report or one final result: 1 MiB. Save
larger outputs (models, predictions, images) as files under ``hyperlab.trial_dir()``."""

MAX_DEPTH = 100
"""At most this many levels of lists and dicts inside one metric's value."""

EXPECTED = "expected a number, string, bool, None, list or dict of them"
"""What a metric's value may be, as error messages say it."""

_SCALARS = (float, int, str, bool, type(None))
_SMALL_INT = 10**15  # ints below this are 16 characters of JSON at most
_NUMBER_BYTES = 24  # the longest repr of a float: the size counted for any number
_NUMPY_KINDS = "biufUO"  # bool, int, unsigned, float, str, object: the NumPy values taken
_WHOLE = object()  # the key of an error about the metrics as a whole


class MetricsError(ValueError):
    """A report or result the store cannot hold; the message names the metric and the type.

    Attributes:
        key: The metric's name (a non-string name is given as it was).
        path: Where in the metric's value the problem is (``history[2]['x']``), or ``""``
            for the value itself.
        type_name: The type of the value refused (or of the name, for a name not a string).
        reason: The rule it breaks.
    """

    def __init__(self, key: Any, path: str, type_name: str, reason: str) -> None:
        self.key = key
        self.path = path
        self.type_name = type_name
        self.reason = reason
        if key is _WHOLE:
            what = f"metrics of type {type_name}"
        elif not isinstance(key, str):
            what = f"a metric named {_short(key)} of type {type_name}"
        elif path:
            shown = path if len(path) <= 80 else path[:60] + "..." + path[-16:]
            what = f"metric {key!r} holding {shown} of type {type_name}"
        else:
            what = f"metric {key!r} of type {type_name}"
        super().__init__(f"{what}: {reason}")


def clean_metrics(metrics: Any, *, limit: int = MAX_METRICS_BYTES) -> dict[str, Any]:
    """``metrics`` with only JSON values: NumPy scalars as numbers, arrays and tuples as lists.

    Returns ``metrics`` itself when it holds only names and plain scalars (the common case),
    else a new dict; never changes ``metrics``.

    Raises:
        MetricsError: A value breaks the rule of the module docstring; the message says which,
            of what type, and the rule (``metric 'model' of type Model: expected a number,
            string, bool, None, list or dict of them``).
    """
    if not isinstance(metrics, Mapping):
        raise MetricsError(
            _WHOLE, "", type(metrics).__name__, "expected a dict of metrics, with string names"
        )
    if type(metrics) is dict and _plain(metrics, limit):
        return metrics
    budget = _Budget(limit)
    cleaned: dict[str, Any] = {}
    for key, value in metrics.items():
        _check_name(key)
        budget.spend(key, len(key) + 4)
        cleaned[key] = _clean(value, key, "", 0, budget)
    return cleaned


def _plain(metrics: dict, limit: int) -> bool:
    """True when ``metrics`` are names and plain scalars, well within the rule (the hot path:
    no call per value); False sends them to the full check, which says what is wrong."""
    size = 0
    for key, value in metrics.items():
        kind = type(value)
        if type(key) is not str or kind not in _SCALARS:
            return False
        if kind is str:
            if not value.isascii():
                return False
            size += len(value)
        elif kind is int and not -_SMALL_INT < value < _SMALL_INT:
            return False
        size += len(key) + _NUMBER_BYTES
    return size <= limit


class _Budget:
    """The bytes of JSON still allowed; ``spend`` refuses the metric that goes over."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit

    def spend(self, key: str, size: int, path: str = "", type_name: str = "") -> None:
        self.left -= size
        if self.left < 0:
            raise MetricsError(
                key,
                path,
                type_name or "?",
                f"a report or result may hold about {self.limit:,} bytes of JSON at most, and "
                "this one is over; save large outputs in files under hyperlab.trial_dir()",
            )


def _check_name(key: Any) -> None:
    if type(key) is not str:
        if isinstance(key, str):  # a str subclass: a name all the same
            return
        raise MetricsError(key, "", type(key).__name__, "metric names must be strings")


def _check_str(value: str, key: str, path: str, budget: _Budget) -> None:
    budget.spend(key, len(value) + 2, path, "str")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise MetricsError(
                key, path, "str", f"not valid Unicode (a lone surrogate at index {exc.start})"
            ) from None


def _check_int(value: int, key: str, path: str, budget: _Budget) -> None:
    if -_SMALL_INT < value < _SMALL_INT:
        budget.spend(key, _NUMBER_BYTES)
        return
    try:
        float(value)
    except OverflowError:
        raise MetricsError(
            key, path, "int", f"an integer this large has no float value; {EXPECTED}"
        ) from None
    budget.spend(key, len(str(value)), path, "int")


def _clean(value: Any, key: str, path: str, depth: int, budget: _Budget) -> Any:
    """``value`` as JSON values, or ``MetricsError`` naming ``key`` and ``path``."""
    kind = type(value)
    if kind is float or kind is bool or value is None:
        budget.spend(key, _NUMBER_BYTES)
        return value
    if kind is int:
        _check_int(value, key, path, budget)
        return value
    if kind is str:
        _check_str(value, key, path, budget)
        return value
    if depth >= MAX_DEPTH and isinstance(value, (Mapping, list, tuple)):
        raise MetricsError(
            key,
            path,
            kind.__name__,
            f"values may nest {MAX_DEPTH} levels deep at most (or it contains itself)",
        )
    if isinstance(value, Mapping):
        budget.spend(key, 2 + 4 * len(value), path, kind.__name__)
        cleaned = {}
        for name, item in value.items():
            where = f"{path or key}[{_short(name)}]"
            if not isinstance(name, str):
                raise MetricsError(
                    key, where, type(name).__name__, "a key of a dict must be a string"
                )
            budget.spend(key, len(name), where, "str")
            cleaned[str.__str__(name)] = _clean(item, key, where, depth + 1, budget)
        return cleaned
    if isinstance(value, (list, tuple)):
        budget.spend(key, 2 + 2 * len(value), path, kind.__name__)
        base = path or key
        return [
            _clean(item, key, f"{base}[{i}]", depth + 1, budget) for i, item in enumerate(value)
        ]
    if isinstance(value, bool):  # before int: a bool subclass is no number
        return bool(value)
    if isinstance(value, float):  # a subclass (NumPy's float64 is one)
        budget.spend(key, _NUMBER_BYTES)
        return float.__float__(value)
    if isinstance(value, int):  # a subclass (an IntEnum member)
        value = int.__int__(value)
        _check_int(value, key, path, budget)
        return value
    if isinstance(value, str):
        value = str.__str__(value)
        _check_str(value, key, path, budget)
        return value
    return _convert(value, key, path, depth, budget)


def _convert(value: Any, key: str, path: str, depth: int, budget: _Budget) -> Any:
    """A NumPy scalar or array, or another array-like, as Python numbers and lists."""
    name = type(value).__name__
    numpy = sys.modules.get("numpy")  # no NumPy value exists unless NumPy was imported
    if numpy is not None and isinstance(value, (numpy.generic, numpy.ndarray)):
        dtype = value.dtype
        array = isinstance(value, numpy.ndarray)
        if dtype.kind not in _NUMPY_KINDS:
            raise MetricsError(key, path, f"{name} of dtype {dtype}" if array else name, EXPECTED)
        if array:
            numeric = (
                dtype.kind in "biuf"
            )  # its tolist() holds floats, ints (int64: finite) or bools
            each = _NUMBER_BYTES + 2 if numeric else 2  # strings and objects are walked
            budget.spend(key, 2 + each * value.size, path, f"{name} of shape {value.shape}")
            if value.ndim + depth > MAX_DEPTH:
                raise MetricsError(key, path, name, f"{value.ndim} dimensions are too many")
            if numeric:
                return value.tolist()
    elif not callable(getattr(value, "tolist", None)):
        raise MetricsError(key, path, name, EXPECTED)
    try:
        plain = value.tolist()
    except Exception as exc:
        raise MetricsError(
            key, path, name, f"its tolist() raised {type(exc).__name__}: {exc}"
        ) from None
    if type(plain) is type(value):  # tolist() gave itself back: no way to store it
        raise MetricsError(key, path, name, EXPECTED)
    return _clean(plain, key, path, depth + 1, budget)


def _short(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a refused value may be huge)."""
    try:
        text = repr(value)
    except Exception:  # a repr that fails
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
