"""NNI's ``nni.utils`` helpers that trial scripts use."""

from __future__ import annotations

from typing import Any

__all__ = ["merge_parameter"]


def merge_parameter(base_params: Any, override_params: dict[str, Any] | None) -> Any:
    """Update ``base_params`` in place with ``override_params``, as NNI does; return it.

    ``base_params`` is an ``argparse.Namespace`` (or any object with attributes) or a dict.
    Each key of ``override_params`` must already exist in it. A value takes the type of the
    value it replaces when that loses nothing (``3`` for a float becomes ``3.0``, ``4.0`` for an
    int becomes ``4``); a base value of None takes anything.

    Args:
        base_params: Usually the parsed command line.
        override_params: Usually ``nni.get_next_parameter()``; None changes nothing.

    Raises:
        ValueError: A key is not in ``base_params``.
        TypeError: A value cannot take the type of the value it replaces.

    Example:
        >>> args = merge_parameter(parser.parse_args(), nni.get_next_parameter())
    """
    if override_params is None:
        return base_params
    is_dict = isinstance(base_params, dict)
    for key, value in override_params.items():
        if is_dict:
            if key not in base_params:
                raise ValueError(
                    f"Key '{key}' not found in base parameters: the search space's {key!r} "
                    f"is none of {sorted(base_params)}"
                )
            base_params[key] = _cast(key, value, base_params[key])
        else:
            if not hasattr(base_params, key):
                known = sorted(k for k in getattr(base_params, "__dict__", {}) if k[:1] != "_")
                raise ValueError(
                    f"Key '{key}' not found in base parameters: the search space's {key!r} "
                    f"is none of {known}"
                )
            setattr(base_params, key, _cast(key, value, getattr(base_params, key)))
    return base_params


def _cast(key: str, value: Any, current: Any) -> Any:
    """``value`` with the type of ``current`` (lossless numeric casts only)."""
    if current is None or type(value) is type(current):
        return value
    number = (int, float)
    if isinstance(value, number) and not isinstance(value, bool):
        if type(current) is float:
            return float(value)
        if type(current) is int and float(value).is_integer():
            return int(value)
    raise TypeError(
        f"Expected '{key}' in override parameters to have type '{type(current).__name__}' "
        f"like its base value {current!r}, but found {type(value).__name__} {value!r}"
    )
