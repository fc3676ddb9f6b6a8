"""The search space (`SearchSpace`) and the builders of its parameters (`uniform`, ...)."""

from __future__ import annotations

import numbers
import os
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from hyperlab.errors import SearchSpaceError
from hyperlab.space._check import check_group
from hyperlab.space._choice import (
    Choice,
    grid_size_group,
    iter_grid_group,
    sample_group,
)
from hyperlab.space._codec import Dimension, decode_rows, dimensions, encode_into
from hyperlab.space._limits import check_limits
from hyperlab.space._nni import read_nni
from hyperlab.space._params import (
    LogNormal,
    LogUniform,
    Normal,
    Parameter,
    QLogNormal,
    QLogUniform,
    QNormal,
    QUniform,
    Randint,
    Uniform,
    check_name,
    parse_param,
)

__all__ = [
    "SearchSpace",
    "choice",
    "lognormal",
    "loguniform",
    "normal",
    "qlognormal",
    "qloguniform",
    "qnormal",
    "quniform",
    "randint",
    "uniform",
]


# ---------------------------------------------------------------- builders


def choice(*options: Any) -> Choice:
    """One of ``options``, each equally likely; each positional argument is one option.

    An option is a JSON constant, or a nested option ``{"_name": "conv", "kernel": randint(1, 8)}``
    whose other keys are sub-parameters (see the module docstring).

    Warns:
        UserWarning: the only option is a list or tuple of several values, as Ray Tune's
            ``tune.choice([...])`` is written: it is one option (that list), not a pick among its
            values; ``choice(*values)`` picks one of them.
    """
    if len(options) == 1 and isinstance(options[0], list | tuple) and len(options[0]) > 1:
        warnings.warn(
            f"choice({options[0]!r}) has one option, the whole {type(options[0]).__name__}; "
            f"to pick one of its values write choice(*{options[0]!r}) "
            f"(hyperlab's choice takes one option per argument)",
            UserWarning,
            stacklevel=2,
        )
    return Choice(options)


def randint(low: int, high: int) -> Randint:
    """An int uniformly drawn from ``low, ..., high - 1``: ``high`` is excluded, as in NNI."""
    return Randint(low, high)


def uniform(low: float, high: float) -> Uniform:
    """A float uniformly drawn from ``[low, high]``."""
    return Uniform(low, high)


def quniform(low: float, high: float, q: float) -> QUniform:
    """``clip(round(x / q) * q, low, high)`` with ``x ~ uniform(low, high)``; a float."""
    return QUniform(low, high, q)


def loguniform(low: float, high: float) -> LogUniform:
    """``exp(uniform(log(low), log(high)))``; needs ``0 < low < high``."""
    return LogUniform(low, high)


def qloguniform(low: float, high: float, q: float) -> QLogUniform:
    """``clip(round(x / q) * q, low, high)`` with ``x ~ loguniform(low, high)``; a float."""
    return QLogUniform(low, high, q)


def normal(mu: float, sigma: float) -> Normal:
    """A float drawn from the normal distribution ``N(mu, sigma)``."""
    return Normal(mu, sigma)


def qnormal(mu: float, sigma: float, q: float) -> QNormal:
    """``round(x / q) * q`` with ``x ~ normal(mu, sigma)``; not clipped."""
    return QNormal(mu, sigma, q)


def lognormal(mu: float, sigma: float) -> LogNormal:
    """``exp(normal(mu, sigma))``: a positive float whose logarithm is normal."""
    return LogNormal(mu, sigma)


def qlognormal(mu: float, sigma: float, q: float) -> QLogNormal:
    """``round(x / q) * q`` with ``x ~ lognormal(mu, sigma)``; a float >= 0."""
    return QLogNormal(mu, sigma, q)


# ---------------------------------------------------------------- the space


class SearchSpace(Mapping[str, Parameter]):
    """Named parameters, in definition order; an immutable mapping of names to Parameters.

    Args:
        params: Parameter names to Parameters (from the builders) or NNI spec dicts
            ``{"_type": ..., "_value": [...]}``, mixed as you like.

    Raises:
        SearchSpaceError: If a name or a spec is invalid, or the space is beyond a limit
            (``MAX_OPTIONS`` options of a choice, ``MAX_PARAMETERS`` parameters, ``MAX_NESTING``
            levels of nested choices, ``MAX_SPACE_SIZE`` characters of JSON: see
            ``hyperlab.space``); the message starts with the parameter's path.

    Example:
        >>> space = SearchSpace({"lr": loguniform(1e-4, 1e-1), "batch": {"_type": "choice",
        ...                      "_value": [16, 32]}})
        >>> space.names
        ('lr', 'batch')
        >>> space.to_nni()["batch"]
        {'_type': 'choice', '_value': [16, 32]}
    """

    __slots__ = ("_dims", "_params")

    def __init__(self, params: Mapping[str, Parameter | Mapping[str, Any]]) -> None:
        if not isinstance(params, Mapping):
            raise SearchSpaceError(
                "a search space must be a mapping of parameter names to specs, got "
                f"{type(params).__name__}"
            )
        check_limits(params)
        parsed: dict[str, Parameter] = {}
        for name, spec in params.items():
            check_name("", name)
            parsed[name] = parse_param(name, spec)
        self._params = parsed
        self._dims = tuple(dimensions(parsed))

    # ------------------------------------------------------------ construction

    @classmethod
    def from_nni(cls, spec: Mapping[str, Any] | str | os.PathLike[str]) -> SearchSpace:
        """Reads NNI search-space JSON, unchanged.

        Args:
            spec: The spec as a dict; a path to a ``.json`` file (``.yaml`` / ``.yml`` files are
                read with PyYAML); or JSON text (a string starting with ``{``).

        Raises:
            SearchSpaceError: For a missing or unreadable file, invalid JSON/YAML (naming the
                file and line), or an invalid space.
        """
        if isinstance(spec, Mapping):
            return cls(spec)
        where, data = read_nni(spec)
        try:
            return cls(data)
        except SearchSpaceError as exc:
            raise SearchSpaceError(f"{exc} (in {where})") from None

    @classmethod
    def coerce(cls, obj: Any) -> SearchSpace:
        """``obj`` as a SearchSpace: itself, ``SearchSpace(mapping)``, or ``from_nni(path)``."""
        if isinstance(obj, SearchSpace):
            return obj
        if isinstance(obj, Mapping):
            return cls(obj)
        if isinstance(obj, (str, os.PathLike)):
            return cls.from_nni(obj)
        raise SearchSpaceError(
            "a search space must be a SearchSpace, a mapping of names to parameters, or a path "
            f"to an NNI JSON/YAML file, got {type(obj).__name__}"
        )

    def to_nni(self) -> dict[str, Any]:
        """The NNI search-space JSON (a fresh dict); ``from_nni(x).to_nni() == x``."""
        return {name: param.to_nni() for name, param in self._params.items()}

    # ------------------------------------------------------------ mapping

    def __getitem__(self, name: str) -> Parameter:
        return self._params[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    @property
    def names(self) -> tuple[str, ...]:
        """The top-level parameter names, in definition order."""
        return tuple(self._params)

    def __eq__(self, other: object) -> bool:
        """Equal if the same names map to equal parameters, in the same order."""
        if not isinstance(other, SearchSpace):
            return NotImplemented
        return list(self._params.items()) == list(other._params.items())

    def __hash__(self) -> int:
        return hash(tuple(self._params.items()))

    def __repr__(self) -> str:
        return f"SearchSpace({self._params!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (SearchSpace, (self._params,))

    def check(self, params: Mapping[str, Any]) -> None:
        """Check that ``params`` is a parameter set of this space (exactly its parameters, each
        value one the parameter can take; see ``hyperlab.space._check``).

        Raises:
            SearchSpaceError: naming the first parameter that is missing, unknown or out of
                its range, and the bound or options it breaks.
        """
        check_group(self._params, params)

    # ------------------------------------------------------------ sampling and grids

    def sample(self, rng: np.random.Generator | int | None, n: int = 1) -> list[dict[str, Any]]:
        """Draws ``n`` parameter sets, one vectorised numpy call per parameter.

        Values are plain Python objects (int, float, str, bool, None, lists, dicts). A nested
        option's sub-parameters are drawn only for the sets that picked it.

        Args:
            rng: The random generator (an int or None seeds a new one). The same generator
                state gives the same sets.
            n: How many sets to draw.
        """
        if not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(rng)
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(f"sample needs n to be a non-negative integer, got {n!r}")
        return sample_group(self._params, rng, int(n))

    def grid(self) -> list[dict[str, Any]]:
        """Every grid point: the product over parameters in order, first parameter slowest.

        Enumerable: choice (options in order, nested options expanded), randint
        (``low .. high - 1``), and the q-spaced ranges quniform and qloguniform: the distinct
        values of ``clip(round(x / q) * q, low, high)`` for ``x`` in ``[low, high]``, ascending
        (``quniform(1, 10, 3)`` gives ``[1.0, 3.0, 6.0, 9.0]``). Points share no lists or dicts.

        Raises:
            SearchSpaceError: For uniform, loguniform or the normal family, naming the path.
        """
        return list(self.iter_grid())

    def iter_grid(self) -> Iterator[dict[str, Any]]:
        """The points of :meth:`grid`, lazily (raises before the first one if not enumerable)."""
        return iter_grid_group(self._params, "")

    def grid_size(self) -> int:
        """``len(self.grid())`` without enumerating; the same SearchSpaceError if not enumerable."""
        return grid_size_group(self._params, "")

    # ------------------------------------------------------------ unit-cube encoding

    def dimensions(self) -> list[Dimension]:
        """One :class:`Dimension` per parameter, nested ones included, depth-first in order."""
        return list(self._dims)

    def encode(self, params: Mapping[str, Any]) -> np.ndarray:
        """A parameter set as a point of the unit cube, shape ``(len(dimensions()),)``.

        Linear ranges map linearly, log ranges on a log scale, the normal family through its
        CDF, randint to ``(v - low + 0.5) / (high - low)`` and a choice to
        ``(index + 0.5) / len(options)``. Dimensions of nested options not picked are NaN.

        Raises:
            ValueError: If a parameter is missing or a value is not one of a choice's options.
        """
        x = np.full(len(self._dims), np.nan)
        encode_into(self._params, params, x, 0)
        return x

    def decode(self, x: Any) -> dict[str, Any]:
        """The parameter set of a unit-cube point; inverse of :meth:`encode`.

        Coordinates are clipped into [0, 1]; q-rounding and integer rounding are applied. NaN is
        allowed only in dimensions that are inactive.
        """
        x = np.asarray(x, dtype=float)
        if x.shape != (len(self._dims),):
            raise ValueError(f"decode needs shape ({len(self._dims)},), got {x.shape}")
        return self.decode_many(x[None, :])[0]

    def decode_many(self, X: Any) -> list[dict[str, Any]]:
        """:meth:`decode` for each row of ``X`` (shape ``(n, len(dimensions()))``), vectorised."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != len(self._dims):
            raise ValueError(f"decode_many needs shape (n, {len(self._dims)}), got {X.shape}")
        return decode_rows(self._params, np.clip(X, 0.0, 1.0), 0)
