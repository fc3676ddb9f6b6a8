"""Whether a parameter set lies in a search space: what a customized trial, an imported result
and a trial kept across a search-space update are checked with.

A set is in the space when it has exactly the space's parameters (for a nested option: its
``"_name"`` and exactly its sub-parameters) and each value is one the parameter can take:

- ``choice``: one of the options (``1.0`` counts as ``1``); a nested option's sub-parameters are
  checked in turn, and its constants must be equal;
- ``randint(low, high)``: an integer (a float with no fraction counts) in ``low .. high - 1``;
- ``uniform``, ``loguniform`` and their q-variants: a finite number in ``[low, high]`` (the
  rounding to ``q`` is not required: a value a user chose by hand is kept as it is);
- ``normal``, ``qnormal``: a finite number; ``lognormal``, ``qlognormal``: a finite number > 0
  (``>= 0`` for ``qlognormal``, whose rounding reaches 0).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hyperlab.errors import SearchSpaceError
from hyperlab.space._choice import Choice, NestedOption, _freeze
from hyperlab.space._params import (
    LogNormal,
    Parameter,
    QLogNormal,
    Randint,
    _Gaussian,
    _Range,
    describe,
    join,
)

__all__ = ["check_group"]


def check_group(group: Mapping[str, Any], values: Any, path: str = "") -> None:
    """Raise ``SearchSpaceError`` naming the first parameter of ``values`` not in ``group``.

    Args:
        group: Names to Parameters (or, in a nested option, JSON constants).
        values: The parameter set.
        path: Where ``group`` sits (empty at the top; ``"layer/conv"`` in a nested option).
    """
    where = path or "params"
    if not isinstance(values, Mapping):
        raise SearchSpaceError(
            f"{where}: expected a dict of parameter values, got {describe(values)}"
        )
    extra = [key for key in values if key not in group and not (path and key == "_name")]
    if extra:
        known = ", ".join(map(str, group)) or "none"
        raise SearchSpaceError(
            f"{join(path, str(extra[0]))}: not a parameter of the search space (its parameters"
            f"{' here' if path else ''}: {known})"
        )
    for name, param in group.items():
        sub = join(path, name)
        if name not in values:
            raise SearchSpaceError(f"{sub}: missing (the search space has it: {param!r})")
        value = values[name]
        if isinstance(param, Parameter):
            _check_value(param, value, sub)
        elif _freeze_or_none(value) != _freeze_or_none(param):
            raise SearchSpaceError(f"{sub}: expected the constant {param!r}, got {describe(value)}")


def _check_value(param: Parameter, value: Any, path: str) -> None:
    if isinstance(param, Choice):
        try:
            chosen = param.index(value)
        except ValueError:
            raise SearchSpaceError(
                f"{path}: {describe(value)} is not one of the options of {param!r}"
            ) from None
        option = param.options[chosen]
        if isinstance(option, NestedOption):
            check_group(option.params, value, join(path, option.name))
        return
    number = _number(value, path, param)
    if isinstance(param, Randint):
        if number != math.floor(number):
            raise SearchSpaceError(f"{path}: expected an integer for {param!r}, got {value!r}")
        if not param.low <= number < param.high:
            raise SearchSpaceError(
                f"{path}: {value!r} is outside {param!r}, which gives {param.low} .. "
                f"{param.high - 1} (the upper bound {param.high} is excluded)"
            )
    elif isinstance(param, _Range):
        if number < param.low:
            raise SearchSpaceError(
                f"{path}: {value!r} is below the lower bound {param.low!r} of {param!r}"
            )
        if number > param.high:
            raise SearchSpaceError(
                f"{path}: {value!r} is above the upper bound {param.high!r} of {param!r}"
            )
    elif isinstance(param, _Gaussian) and isinstance(param, (LogNormal, QLogNormal)):
        positive = number >= 0 if isinstance(param, QLogNormal) else number > 0
        if not positive:
            raise SearchSpaceError(f"{path}: {param!r} gives only positive values, got {value!r}")


def _number(value: Any, path: str, param: Parameter) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SearchSpaceError(
            f"{path}: expected a finite number for {param!r}, got {describe(value)}"
        )
    return float(value)


def _freeze_or_none(value: Any) -> Any:
    try:
        return _freeze(value)
    except TypeError:
        return None
