"""The Parameter base class, the numeric parameter types, and parsing NNI spec dicts.

Import the public names from :mod:`hyperlab.space`, which documents them. Each parameter type
knows its NNI form both ways: ``to_nni()`` writes it, ``parse_param`` reads it through the
registry of types that every subclass with a ``type`` joins. Choices and nested options live in
:mod:`hyperlab.space._choice`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from statistics import NormalDist
from typing import Any, ClassVar

import numpy as np

from hyperlab.errors import SearchSpaceError

NNI_TYPES = (  # in NNI's documentation order
    "choice",
    "randint",
    "uniform",
    "quniform",
    "loguniform",
    "qloguniform",
    "normal",
    "qnormal",
    "lognormal",
    "qlognormal",
)
GRID_RULE = "grid search needs a choice, randint or q-spaced range (quniform, qloguniform)"
_UNIT_EPS = 2.0**-53  # normal-family decoding clips u into [eps, 1 - eps]: |z| <= 8.2
_STD_NORMAL = NormalDist()


# ---------------------------------------------------------------- helpers: paths, values, errors


def join(*parts: str) -> str:
    """Join path components with ``/``, skipping empty ones."""
    return "/".join(p for p in parts if p)


def describe(value: Any) -> str:
    """``'a' (str)``: a value and its type, for error messages."""
    return f"{value!r} ({type(value).__name__})"


def fail(path: str, rule: str) -> SearchSpaceError:
    return SearchSpaceError(f"{path}: {rule}" if path else rule)


@contextmanager
def at_path(path: str) -> Iterator[None]:
    """Prefix ``path`` to the message of a SearchSpaceError raised by a constructor."""
    try:
        yield
    except SearchSpaceError as exc:
        raise fail(path, str(exc)) from None


def _real(type_: str, name: str, value: Any) -> int | float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise SearchSpaceError(
            f"{type_} needs {name} to be a finite real number, got {describe(value)}"
        )
    out = int(value) if isinstance(value, numbers.Integral) else float(value)
    if not math.isfinite(out):
        raise SearchSpaceError(f"{type_} needs {name} to be a finite real number, got {out!r}")
    return out


def _integer(type_: str, name: str, value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise SearchSpaceError(f"{type_} needs {name} to be an integer, got {describe(value)}")
    return int(value)


class _NotJSON(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _to_json(value: Any) -> Any:
    """A JSON-compatible copy of ``value`` (tuples become lists, numpy scalars Python ones)."""
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _NotJSON(value)
        return value
    if isinstance(value, np.generic) and isinstance(value.item(), (bool, int, float, str)):
        return _to_json(value.item())
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, Mapping):
        for key in value:
            if not isinstance(key, str):
                raise _NotJSON(key)
        return {k: _to_json(v) for k, v in value.items()}
    raise _NotJSON(value)


def json_constant(path: str, what: str, value: Any) -> Any:
    try:
        return _to_json(value)
    except _NotJSON as exc:
        rule = (
            f"{what} must be JSON-serializable (null, bool, finite number, string, list, "
            f"or dict with string keys), got {describe(exc.value)}"
        )
        raise fail(path, rule) from None


def copy_json(value: Any) -> Any:
    """A copy of a JSON constant that shares no list or dict with the original: what a tuner
    or an assessor hands out when it reuses a parameter's value (a choice's list option)."""
    if isinstance(value, list):
        return [copy_json(v) for v in value]
    if isinstance(value, dict):
        return {k: copy_json(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------- parameters

_TYPES: dict[str, type[Parameter]] = {}
"""NNI ``_type`` name -> Parameter class; each subclass with a ``type`` registers itself."""


@dataclass(frozen=True, repr=False)
class Parameter:
    """One searchable parameter: a distribution (or a finite set) of values.

    Instances are immutable and compare by value. Build them with :func:`hyperlab.space.choice`,
    :func:`~hyperlab.space.uniform` and the other builders, or from NNI spec dicts.
    """

    type: ClassVar[str] = ""
    _n_dims: ClassVar[int] = 1  # unit-cube dimensions, nested ones included

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("type"):
            _TYPES[cls.type] = cls

    @classmethod
    def _from_nni(cls, path: str, values: list[Any] | tuple[Any, ...]) -> Parameter:
        """The parameter of an NNI spec whose ``_value`` is ``values``, at ``path``."""
        names = [f.name for f in fields(cls)]
        if len(values) != len(names):
            raise fail(
                path,
                f"{cls.type} needs {len(names)} _value items [{', '.join(names)}], "
                f"got {len(values)}: {list(values)!r}",
            )
        with at_path(path):
            return cls(*values)

    def sample(self, rng: np.random.Generator, n: int) -> list[Any]:
        """Draws ``n`` values in one vectorised call; plain Python values, never numpy scalars."""
        return self._draw(rng, n).tolist()

    def to_nni(self) -> dict[str, Any]:
        """The NNI spec, e.g. ``{"_type": "uniform", "_value": [0.1, 1]}``."""
        return {"_type": self.type, "_value": list(self._values())}

    def grid(self) -> list[Any]:
        """Every value grid search visits, in order; SearchSpaceError if not enumerable."""
        return self._grid("")

    def grid_size(self) -> int:
        """``len(self.grid())``, computed without enumerating."""
        return self._grid_size("")

    def __repr__(self) -> str:
        return f"{self.type}({', '.join(repr(v) for v in self._values())})"

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f.name) for f in fields(self))

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        raise NotImplementedError

    def _grid(self, path: str) -> list[Any]:
        raise fail(path, f"{GRID_RULE}, got {self!r}")

    def _grid_size(self, path: str) -> int:
        raise fail(path, f"{GRID_RULE}, got {self!r}")

    def _to_unit(self, value: Any) -> float:
        """This parameter's value mapped into [0, 1]."""
        raise NotImplementedError

    def _from_unit(self, u: np.ndarray) -> list[Any]:
        """Values for points of [0, 1] (already clipped); inverse of :meth:`_to_unit`."""
        raise NotImplementedError


@dataclass(frozen=True, repr=False)
class Randint(Parameter):
    """An integer uniformly drawn from ``low, low + 1, ..., high - 1`` (``high`` excluded)."""

    low: int
    high: int
    type: ClassVar[str] = "randint"

    def __post_init__(self) -> None:
        low, high = _integer(self.type, "low", self.low), _integer(self.type, "high", self.high)
        if low >= high:
            raise SearchSpaceError(
                f"randint needs low < high (high is excluded), got low={low}, high={high}"
            )
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return rng.integers(self.low, self.high, n)

    def _grid(self, path: str) -> list[Any]:
        return list(range(self.low, self.high))

    def _grid_size(self, path: str) -> int:
        return self.high - self.low

    def _to_unit(self, value: Any) -> float:
        u = (float(value) - self.low + 0.5) / (self.high - self.low)
        return min(max(u, 0.0), 1.0)

    def _from_unit(self, u: np.ndarray) -> list[Any]:
        k = self.high - self.low
        return (np.minimum((u * k).astype(np.int64), k - 1) + self.low).tolist()


@dataclass(frozen=True, repr=False)
class _Range(Parameter):
    """A bounded continuous range, linear or log-scaled; ``low < high``."""

    low: float
    high: float
    _log: ClassVar[bool] = False

    def __post_init__(self) -> None:
        low, high = _real(self.type, "low", self.low), _real(self.type, "high", self.high)
        if low >= high:
            raise SearchSpaceError(f"{self.type} needs low < high, got low={low!r}, high={high!r}")
        if self._log and low <= 0:
            raise SearchSpaceError(
                f"{self.type} needs low > 0 (it is log-scaled), got low={low!r}, high={high!r}"
            )
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def _scale(self) -> tuple[float, float]:
        if self._log:
            return math.log(self.low), math.log(self.high)
        return self.low, self.high

    def nearest(self, value: float) -> float:
        """The value this parameter draws that is nearest to ``value``: rounded to a multiple of
        ``q`` for the ``q`` kinds, clipped to ``low``..``high`` for the ranges (a value moved by
        hand, as PBT's perturbations move one, stays drawable)."""
        return float(self._finish(np.array([float(value)]))[0])

    def _finish(self, x: np.ndarray) -> np.ndarray:
        return x.clip(self.low, self.high)

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        x = rng.uniform(*self._scale(), n)
        return self._finish(np.exp(x) if self._log else x)

    def _to_unit(self, value: Any) -> float:
        v = float(value)
        if self._log:
            v = math.log(v) if v > 0 else -math.inf
        lo, hi = self._scale()
        return min(max((v - lo) / (hi - lo), 0.0), 1.0)

    def _from_unit(self, u: np.ndarray) -> list[Any]:
        lo, hi = self._scale()
        x = lo + u * (hi - lo)
        return self._finish(np.exp(x) if self._log else x).tolist()


@dataclass(frozen=True, repr=False)
class _QRange(_Range):
    """A bounded range rounded to multiples of ``q`` and clipped: ``clip(round(x/q)*q, lo, hi)``."""

    q: float

    def __post_init__(self) -> None:
        super().__post_init__()
        q = _real(self.type, "q", self.q)
        if q <= 0:
            raise SearchSpaceError(f"{self.type} needs q > 0, got q={q!r}")
        object.__setattr__(self, "q", q)

    def _finish(self, x: np.ndarray) -> np.ndarray:
        return (np.round(x / self.q) * self.q).clip(self.low, self.high)

    def _grid(self, path: str) -> list[Any]:
        first, last = round(self.low / self.q), round(self.high / self.q)
        out: list[float] = []
        for k in range(first, last + 1):
            v = float(min(max(float(k) * self.q, self.low), self.high))
            if not out or v != out[-1]:
                out.append(v)
        return out

    def _grid_size(self, path: str) -> int:
        # round() is monotone and hits every integer in between; only the two ends can clip,
        # and they clip onto bounds no other multiple of q reaches: all values are distinct.
        return round(self.high / self.q) - round(self.low / self.q) + 1


@dataclass(frozen=True, repr=False)
class Uniform(_Range):
    """A float uniformly drawn from ``[low, high]``."""

    type: ClassVar[str] = "uniform"


@dataclass(frozen=True, repr=False)
class QUniform(_QRange):
    """``clip(round(x / q) * q, low, high)`` with ``x ~ U(low, high)``; a float."""

    type: ClassVar[str] = "quniform"


@dataclass(frozen=True, repr=False)
class LogUniform(_Range):
    """``exp(U(log(low), log(high)))``: uniform on a log scale; ``0 < low < high``."""

    type: ClassVar[str] = "loguniform"
    _log: ClassVar[bool] = True


@dataclass(frozen=True, repr=False)
class QLogUniform(_QRange):
    """``clip(round(x / q) * q, low, high)`` with ``x`` log-uniform on ``[low, high]``; a float."""

    type: ClassVar[str] = "qloguniform"
    _log: ClassVar[bool] = True


@dataclass(frozen=True, repr=False)
class _Gaussian(Parameter):
    """A normal distribution (of the value, or of its logarithm); unbounded."""

    mu: float
    sigma: float
    _log: ClassVar[bool] = False

    def __post_init__(self) -> None:
        mu, sigma = _real(self.type, "mu", self.mu), _real(self.type, "sigma", self.sigma)
        if sigma <= 0:
            raise SearchSpaceError(f"{self.type} needs sigma > 0, got sigma={sigma!r}")
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "sigma", sigma)

    def nearest(self, value: float) -> float:
        """The value this parameter draws that is nearest to ``value``: rounded to a multiple of
        ``q`` for the ``q`` kinds, clipped to ``low``..``high`` for the ranges (a value moved by
        hand, as PBT's perturbations move one, stays drawable)."""
        return float(self._finish(np.array([float(value)]))[0])

    def _finish(self, x: np.ndarray) -> np.ndarray:
        return x

    def _draw(self, rng: np.random.Generator, n: int) -> np.ndarray:
        x = rng.normal(self.mu, self.sigma, n)
        return self._finish(np.exp(x) if self._log else x)

    def _to_unit(self, value: Any) -> float:
        v = float(value)
        if self._log:
            v = math.log(v) if v > 0 else -math.inf
        return 0.5 * math.erfc(-(v - self.mu) / (self.sigma * math.sqrt(2.0)))

    def _from_unit(self, u: np.ndarray) -> list[Any]:
        p = np.clip(u, _UNIT_EPS, 1.0 - _UNIT_EPS).tolist()
        x = self.mu + self.sigma * np.array([_STD_NORMAL.inv_cdf(v) for v in p], dtype=float)
        return self._finish(np.exp(x) if self._log else x).tolist()


@dataclass(frozen=True, repr=False)
class _QGaussian(_Gaussian):
    """A normal-family value rounded to multiples of ``q`` (no clipping)."""

    q: float

    def __post_init__(self) -> None:
        super().__post_init__()
        q = _real(self.type, "q", self.q)
        if q <= 0:
            raise SearchSpaceError(f"{self.type} needs q > 0, got q={q!r}")
        object.__setattr__(self, "q", q)

    def _finish(self, x: np.ndarray) -> np.ndarray:
        return np.round(x / self.q) * self.q + 0.0  # + 0.0 turns -0.0 into 0.0


@dataclass(frozen=True, repr=False)
class Normal(_Gaussian):
    """A float drawn from ``N(mu, sigma)``."""

    type: ClassVar[str] = "normal"


@dataclass(frozen=True, repr=False)
class QNormal(_QGaussian):
    """``round(x / q) * q`` with ``x ~ N(mu, sigma)``; a float, not clipped."""

    type: ClassVar[str] = "qnormal"


@dataclass(frozen=True, repr=False)
class LogNormal(_Gaussian):
    """``exp(N(mu, sigma))``: its logarithm is normal; always > 0."""

    type: ClassVar[str] = "lognormal"
    _log: ClassVar[bool] = True


@dataclass(frozen=True, repr=False)
class QLogNormal(_QGaussian):
    """``round(exp(N(mu, sigma)) / q) * q``; a float >= 0."""

    type: ClassVar[str] = "qlognormal"
    _log: ClassVar[bool] = True


# ---------------------------------------------------------------- NNI spec dicts


def is_spec_dict(value: Any) -> bool:
    """True for a mapping that tries to be an NNI spec (has ``_type`` or ``_value``)."""
    return isinstance(value, Mapping) and ("_type" in value or "_value" in value)


def parse_param(path: str, spec: Any) -> Parameter:
    """A Parameter from a Parameter or an NNI ``{"_type", "_value"}`` dict at ``path``."""
    if isinstance(spec, Parameter):
        return spec
    if is_spec_dict(spec):
        return _parse_nni(path, spec)
    raise fail(
        path,
        "a parameter must be a Parameter (e.g. uniform(0, 1)) or an NNI spec dict "
        f"{{'_type': ..., '_value': [...]}}, got {describe(spec)}",
    )


def check_name(path: str, name: Any) -> str:
    """``name`` if it is a non-empty string, else SearchSpaceError at ``path``."""
    if not isinstance(name, str) or not name:
        raise fail(path, f"parameter names must be non-empty strings, got {describe(name)}")
    return name


def _parse_nni(path: str, spec: Mapping[str, Any]) -> Parameter:
    missing = [key for key in ("_type", "_value") if key not in spec]
    if missing:
        raise fail(path, f"an NNI spec needs '_type' and '_value' keys, missing {missing[0]!r}")
    extra = [key for key in spec if key not in ("_type", "_value")]
    if extra:
        raise fail(
            path,
            f"an NNI spec has only '_type' and '_value' keys, got extra keys {extra!r}",
        )
    type_ = spec["_type"]
    cls = _TYPES.get(type_) if isinstance(type_, str) else None
    if cls is None:
        raise fail(path, f"unknown _type {type_!r}; valid types: {', '.join(NNI_TYPES)}")
    values = spec["_value"]
    if not isinstance(values, (list, tuple)):
        raise fail(path, f"{type_} needs _value to be a list, got {describe(values)}")
    return cls._from_nni(path, values)
