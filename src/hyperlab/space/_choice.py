"""Choices, nested options, and groups of parameters.

Import the public names from :mod:`hyperlab.space`, which documents them.

A *group* is an ordered mapping of names to Parameters or JSON constants: the top level of a search
space (Parameters only) or the sub-parameters of a nested choice option.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from hyperlab.errors import SearchSpaceError
from hyperlab.space._limits import check_options
from hyperlab.space._params import (
    Parameter,
    at_path,
    check_name,
    copy_json,
    describe,
    fail,
    is_spec_dict,
    join,
    json_constant,
    parse_param,
)


def _freeze(value: Any) -> Hashable:
    """A hashable key that tells apart values JSON tells apart (``1``, ``1.0`` and ``True``)."""
    if isinstance(value, Parameter):
        return value
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return (type(value).__name__, value)
    if isinstance(value, (list, tuple)):
        return ("list", tuple(_freeze(v) for v in value))
    if isinstance(value, NestedOption):
        return ("nested", value.name, tuple((k, _freeze(v)) for k, v in value.params.items()))
    if isinstance(value, Mapping):
        return ("dict", frozenset((k, _freeze(v)) for k, v in value.items()))
    raise TypeError(f"cannot compare a {type(value).__name__} with choice options")


class _Params(Mapping[str, Any]):
    """The read-only, picklable mapping of a nested option's sub-parameters."""

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return repr(self._data)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_Params, (self._data,))


@dataclass(frozen=True, eq=False, repr=False)
class NestedOption:
    """A choice option that carries sub-parameters: NNI's ``{"_name": ..., <sub>: <spec>}``.

    ``params`` maps sub-parameter names to Parameters (NNI spec dicts are parsed) or to JSON
    constants, which are passed through as they are. When a choice picks this option, the
    sampled value is ``{"_name": name, <sub>: <sampled value>, ...}``.
    """

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SearchSpaceError(
                f"a nested option's _name must be a non-empty string, got {describe(self.name)}"
            )
        if not isinstance(self.params, Mapping):
            raise SearchSpaceError(
                f"{self.name}: a nested option's params must be a mapping, got "
                f"{describe(self.params)}"
            )
        parsed = {key: _entry(self.name, key, spec) for key, spec in self.params.items()}
        object.__setattr__(self, "params", _Params(parsed))

    def to_nni(self) -> dict[str, Any]:
        """The option as NNI writes it: ``{"_name": ..., <sub>: <spec or constant>, ...}``."""
        out: dict[str, Any] = {"_name": self.name}
        for key, value in self.params.items():
            out[key] = value.to_nni() if isinstance(value, Parameter) else copy_json(value)
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NestedOption):
            return NotImplemented
        return _freeze(self) == _freeze(other)

    def __hash__(self) -> int:
        return hash(_freeze(self))

    def __repr__(self) -> str:
        return repr({"_name": self.name, **self.params})


@dataclass(frozen=True, repr=False, eq=False)
class Choice(Parameter):
    """One of a fixed list of options, each equally likely.

    ``options`` holds JSON constants and :class:`NestedOption` objects (the options written as
    ``{"_name": ..., ...}`` dicts).
    """

    options: tuple[Any, ...]
    type: ClassVar[str] = "choice"
    # Derived in __post_init__, for fast lookups; not part of the value.
    _key: tuple[Hashable, ...] = field(init=False, repr=False, compare=False)
    _names: dict[str, int] = field(init=False, repr=False, compare=False)  # nested: name -> index
    _offsets: dict[int, int] = field(init=False, repr=False, compare=False)  # -> first sub-dim
    _lookup: dict[Hashable, int] = field(init=False, repr=False, compare=False)  # plain options
    _mutable: bool = field(init=False, repr=False, compare=False)  # a list or dict option

    def __post_init__(self) -> None:
        if not isinstance(self.options, (list, tuple)):
            raise SearchSpaceError(
                f"choice needs its options as a list or tuple, got {describe(self.options)}"
            )
        if not self.options:
            raise SearchSpaceError("choice needs at least one option, got none")
        check_options("", len(self.options))
        options = tuple(_option("", i, option) for i, option in enumerate(self.options))
        names: dict[str, int] = {}
        offsets: dict[int, int] = {}
        lookup: dict[Hashable, int] = {}
        n_dims = 1
        for i, option in enumerate(options):
            if isinstance(option, NestedOption):
                if option.name in names:
                    raise SearchSpaceError(
                        f"choice has two nested options named {option.name!r} (options "
                        f"{names[option.name]} and {i}); each _name must be unique"
                    )
                names[option.name] = i
                offsets[i] = n_dims
                n_dims += group_dims(option.params)
            else:
                lookup.setdefault(_freeze(option), i)
        set_ = object.__setattr__
        set_(self, "options", options)
        set_(self, "_key", tuple(_freeze(o) for o in options))
        set_(self, "_names", names)
        set_(self, "_offsets", offsets)
        set_(self, "_lookup", lookup)
        set_(self, "_n_dims", n_dims)
        set_(self, "_mutable", any(isinstance(o, (list, dict)) for o in options))

    @classmethod
    def _from_nni(cls, path: str, values: list[Any] | tuple[Any, ...]) -> Choice:
        check_options(path, len(values))
        # nested options are built here, where their sub-parameters' paths are known; the
        # constants once, by __post_init__ (its errors get the path from at_path)
        options = tuple(
            _option(path, i, option) if isinstance(option, Mapping) else option
            for i, option in enumerate(values)
        )
        with at_path(path):
            return cls(options)

    @property
    def is_nested(self) -> bool:
        """True if some option is a :class:`NestedOption` (written ``{"_name": ...}``)."""
        return bool(self._names)

    def sample(self, rng: np.random.Generator, n: int) -> list[Any]:
        """Draws ``n`` options; a nested option's sub-parameters are drawn where it was picked."""
        idx = rng.integers(0, len(self.options), n)
        return self._assemble(
            idx, lambda _, option, rows: sample_group(option.params, rng, rows.size)
        )

    def to_nni(self) -> dict[str, Any]:
        """The NNI spec ``{"_type": "choice", "_value": [...]}``."""
        value = [o.to_nni() if isinstance(o, NestedOption) else copy_json(o) for o in self.options]
        return {"_type": "choice", "_value": value}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Choice):
            return NotImplemented
        return self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def _values(self) -> tuple[Any, ...]:
        return self.options

    def _assemble(
        self,
        idx: np.ndarray,
        nested_rows: Callable[[int, NestedOption, np.ndarray], list[dict[str, Any]]],
    ) -> list[Any]:
        """Values for option indices ``idx``; ``nested_rows(i, option, rows)`` fills nested ones.

        Used by sampling and decoding: ``rows`` are the positions in ``idx`` that picked nested
        option ``i``, and ``nested_rows`` returns their sub-parameter dicts.
        """
        picked = idx.tolist()
        opts = self.options
        out = [copy_json(opts[i]) for i in picked] if self._mutable else [opts[i] for i in picked]
        for i in self._offsets:
            rows = np.flatnonzero(idx == i)
            if rows.size:
                name = opts[i].name
                for row, sub in zip(rows.tolist(), nested_rows(i, opts[i], rows), strict=True):
                    out[row] = {"_name": name, **sub}
        return out

    def index(self, value: Any) -> int:
        """The position of ``value`` (a nested one by its ``"_name"``); ValueError if absent."""
        if self._names and isinstance(value, Mapping) and "_name" in value:
            found = self._names.get(value["_name"])
        else:
            try:
                found = self._lookup.get(_freeze(value))
            except TypeError:
                found = None
            if found is None:  # 1.0 for option 1, say
                found = next(
                    (i for i, o in enumerate(self.options) if _loosely_equal(o, value)), None
                )
        if found is None:
            raise ValueError(f"{value!r} is not one of the options {list(self.options)!r}")
        return found

    def _indices_from_unit(self, u: np.ndarray) -> np.ndarray:
        """Option indices for unit-cube coordinates: ``floor(u * k)``, capped at ``k - 1``."""
        k = len(self.options)
        return np.minimum((u * k).astype(np.int64), k - 1)

    def _to_unit(self, value: Any) -> float:
        return (self.index(value) + 0.5) / len(self.options)

    def _grid(self, path: str) -> list[Any]:
        out: list[Any] = []
        for option in self.options:
            if isinstance(option, NestedOption):
                sub = grid_group(option.params, join(path, option.name))
                out.extend({"_name": option.name, **point} for point in sub)
            else:
                out.append(copy_json(option))
        return out

    def _grid_size(self, path: str) -> int:
        return sum(
            grid_size_group(o.params, join(path, o.name)) if isinstance(o, NestedOption) else 1
            for o in self.options
        )


def _loosely_equal(option: Any, value: Any) -> bool:
    if isinstance(option, NestedOption):
        return False
    try:
        return bool(option == value)
    except (TypeError, ValueError):
        return False


# ---------------------------------------------------------------- groups


def group_dims(group: Mapping[str, Any]) -> int:
    """Unit-cube dimensions of a group, nested ones included."""
    return sum(p._n_dims for p in group.values() if isinstance(p, Parameter))


def rows_of(names: list[str], columns: list[list[Any]], n: int) -> list[dict[str, Any]]:
    """Turn per-name columns of ``n`` values into ``n`` dicts."""
    if not names:
        return [{} for _ in range(n)]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def constant_column(value: Any, n: int) -> list[Any]:
    """``n`` copies of a JSON constant (shared only when immutable)."""
    if isinstance(value, (list, dict)):
        return [copy_json(value) for _ in range(n)]
    return [value] * n


def sample_group(
    group: Mapping[str, Any], rng: np.random.Generator, n: int
) -> list[dict[str, Any]]:
    """``n`` dicts drawn from a group, one vectorised draw per parameter, in group order.

    A group is a mapping of names to a ``Parameter`` (drawn with ``rng``) or a constant (copied
    into every dict); a nested choice's option is such a group (``NestedOption.params``). For
    tuners and assessors that draw part of a space themselves (PBT resamples one option).
    """
    if n == 0:
        return []
    columns = [
        p.sample(rng, n) if isinstance(p, Parameter) else constant_column(p, n)
        for p in group.values()
    ]
    return rows_of(list(group), columns, n)


def iter_grid_group(group: Mapping[str, Any], path: str) -> Iterator[dict[str, Any]]:
    """The grid points of a group; raises SearchSpaceError before yielding if not enumerable."""
    names = list(group)
    columns = [
        p._grid(join(path, name)) if isinstance(p, Parameter) else [p] for name, p in group.items()
    ]
    return (
        {name: copy_json(v) for name, v in zip(names, combo, strict=True)}
        for combo in itertools.product(*columns)
    )


def grid_group(group: Mapping[str, Any], path: str) -> list[dict[str, Any]]:
    """All grid points of a group, in :func:`itertools.product` order."""
    return list(iter_grid_group(group, path))


def grid_size_group(group: Mapping[str, Any], path: str) -> int:
    """The number of grid points of a group."""
    return math.prod(
        p._grid_size(join(path, name)) for name, p in group.items() if isinstance(p, Parameter)
    )


# ---------------------------------------------------------------- options


def _option(path: str, i: int, option: Any) -> Any:
    if isinstance(option, NestedOption):
        return option
    if isinstance(option, Mapping) and "_name" in option:
        name = option["_name"]
        if not isinstance(name, str) or not name:
            raise fail(
                path,
                f"choice option {i}: a nested option's _name must be a non-empty string, "
                f"got {describe(name)}",
            )
        sub = join(path, name)
        params = {key: _entry(sub, key, spec) for key, spec in option.items() if key != "_name"}
        return NestedOption(name, params)
    return json_constant(path, f"choice option {i}", option)


def _entry(path: str, key: Any, spec: Any) -> Any:
    """A nested option's entry: a Parameter, a parsed NNI spec, or a JSON constant."""
    check_name(path, key)
    sub = join(path, key)
    if isinstance(spec, Parameter) or is_spec_dict(spec):
        return parse_param(sub, spec)
    return json_constant(sub, "a constant", spec)
