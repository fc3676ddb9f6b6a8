"""Unit-cube encoding of a search space: flattened dimensions, encode and decode.

Used by :class:`hyperlab.space.SearchSpace`, which exposes it as ``dimensions()``,
``encode()``, ``decode()`` and ``decode_many()``.

Every parameter, nested ones included, is one dimension, in depth-first definition order: a
choice, then the sub-parameters of each of its nested options, then the next parameter.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperlab.space._choice import Choice, NestedOption, constant_column, rows_of
from hyperlab.space._params import Parameter, join


@dataclass(frozen=True)
class Dimension:
    """One coordinate of the unit-cube encoding.

    Attributes:
        path: ``"lr"`` at the top level; ``"layer0/conv/kernel"`` for the sub-parameter
            ``kernel`` of the nested option named ``conv`` of the choice ``layer0``.
        param: The parameter this coordinate encodes.
        condition: ``(choice path, option name)`` that must be selected for this dimension to be
            active, or None for a top-level parameter.
    """

    path: str
    param: Parameter
    condition: tuple[str, str] | None = None


def dimensions(
    group: Mapping[str, Any], prefix: str = "", condition: tuple[str, str] | None = None
) -> list[Dimension]:
    """The dimensions of a group, depth-first in definition order."""
    out: list[Dimension] = []
    for name, param in group.items():
        if not isinstance(param, Parameter):
            continue
        path = join(prefix, name)
        out.append(Dimension(path, param, condition))
        if isinstance(param, Choice):
            for option in param.options:
                if isinstance(option, NestedOption):
                    out.extend(
                        dimensions(option.params, join(path, option.name), (path, option.name))
                    )
    return out


def encode_into(
    group: Mapping[str, Any], values: Any, x: np.ndarray, start: int, prefix: str = ""
) -> None:
    """Write the coordinates of ``values`` (a parameter dict) into ``x[start:]``."""
    if not isinstance(values, Mapping):
        raise ValueError(
            f"{prefix or 'params'}: expected a dict of parameter values, got {values!r}"
        )
    i = start
    for name, param in group.items():
        if not isinstance(param, Parameter):
            continue
        path = join(prefix, name)
        if name not in values:
            raise ValueError(f"{path}: missing from the parameters to encode")
        value = values[name]
        try:
            x[i] = param._to_unit(value)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: cannot encode {value!r}: {exc}") from None
        if isinstance(param, Choice) and param.is_nested:
            chosen = param.index(value)
            if chosen in param._offsets:
                option = param.options[chosen]
                sub_start = i + param._offsets[chosen]
                encode_into(option.params, value, x, sub_start, join(path, option.name))
        i += param._n_dims


def decode_rows(
    group: Mapping[str, Any], X: np.ndarray, start: int, prefix: str = ""
) -> list[dict[str, Any]]:
    """Parameter dicts for the rows of ``X`` (clipped into [0, 1]), from column ``start`` on."""
    n = X.shape[0]
    columns: list[list[Any]] = []
    i = start
    for name, param in group.items():
        if not isinstance(param, Parameter):
            columns.append(constant_column(param, n))
            continue
        path = join(prefix, name)
        u = X[:, i]
        if np.isnan(u).any():
            raise ValueError(f"{path}: coordinate {i} is NaN but the dimension is active")
        if isinstance(param, Choice):
            nested = _nested_decoder(param, X, i, path)
            columns.append(param._assemble(param._indices_from_unit(u), nested))
        else:
            columns.append(param._from_unit(u))
        i += param._n_dims
    return rows_of(list(group), columns, n)


def _nested_decoder(
    choice: Choice, X: np.ndarray, base: int, path: str
) -> Callable[[int, NestedOption, np.ndarray], list[dict[str, Any]]]:
    """Decodes the sub-parameters of the rows that picked nested option ``j`` of ``choice``,
    whose first dimension is ``base``."""

    def nested_rows(j: int, option: NestedOption, rows: np.ndarray) -> list[dict[str, Any]]:
        sub = join(path, option.name)
        return decode_rows(option.params, X[rows], base + choice._offsets[j], sub)

    return nested_rows
