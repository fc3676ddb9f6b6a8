"""NNI's ``nni.utils`` helpers that trial scripts and users' own tuners and assessors use."""

from __future__ import annotations

from enum import Enum, unique
from typing import Any

__all__ = [
    "ClassArgsValidator",
    "MetricType",
    "NodeType",
    "OptimizeMode",
    "convert_dict2tuple",
    "extract_scalar_history",
    "extract_scalar_reward",
    "merge_parameter",
    "split_index",
]


@unique
class OptimizeMode(Enum):
    """Which way a tuner's rewards are better (its ``optimize_mode`` argument)."""

    Minimize = "minimize"
    Maximize = "maximize"


class NodeType:
    """The keys of NNI's search-space JSON."""

    ROOT = "root"
    TYPE = "_type"
    VALUE = "_value"
    INDEX = "_index"
    NAME = "_name"


class MetricType:
    """The kinds of metric data NNI's dispatcher handles."""

    FINAL = "FINAL"
    PERIODICAL = "PERIODICAL"
    REQUEST_PARAMETER = "REQUEST_PARAMETER"


def split_index(params: Any) -> Any:
    """``params`` without the ``{"_index": i, "_value": v}`` wrappers some tuners use (each
    becomes its ``v``), at any depth."""
    if not isinstance(params, dict):
        return params
    if NodeType.INDEX in params:
        return split_index(params[NodeType.VALUE])
    return {key: split_index(value) for key, value in params.items()}


def extract_scalar_reward(value: Any, scalar_key: str = "default") -> float:
    """The number in a reported result: ``value`` itself, or its ``scalar_key`` entry.

    Raises:
        RuntimeError: neither a number nor a dict holding a number under ``scalar_key``.
    """
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, dict) and isinstance(value.get(scalar_key), (int, float)):
        return value[scalar_key]
    raise RuntimeError(
        f"Incorrect final result: expected a number, or a dict with a number under "
        f"{scalar_key!r}, got {value!r}"
    )


def extract_scalar_history(trial_history: list[Any], scalar_key: str = "default") -> list[float]:
    """``extract_scalar_reward`` of each intermediate result."""
    return [extract_scalar_reward(value, scalar_key) for value in trial_history]


def convert_dict2tuple(value: Any) -> Any:
    """A dict turned (in place, at any depth) into a sorted tuple of its items, so it can be
    hashed; anything else as it is."""
    if isinstance(value, dict):
        for key in value:
            value[key] = convert_dict2tuple(value[key])
        return tuple(sorted(value.items()))
    return value


class ClassArgsValidator:
    """NNI's hook to check a tuner's ``classArgs``: ``validate_class_args(**kwargs)`` raises
    on bad ones (this base accepts all)."""

    def validate_class_args(self, **kwargs: Any) -> None:
        """Raise when ``kwargs`` are not valid arguments of the class."""


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
