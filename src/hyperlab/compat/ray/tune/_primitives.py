"""Ray Tune's search primitives, as a ``param_space`` holds them: ``tune.uniform``... return a
``Domain`` (a distribution left to the tuner), ``tune.grid_search`` Ray's ``{"grid_search":
values}``, ``tune.sample_from`` a ``SampleFrom`` (a value computed when a trial's config is
built). ``_space`` translates them into a hyperlab search space.
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Domain",
    "SampleFrom",
    "Unresolved",
    "choice",
    "grid_search",
    "lograndint",
    "loguniform",
    "qlograndint",
    "qloguniform",
    "qrandint",
    "qrandn",
    "quniform",
    "randint",
    "randn",
    "sample_from",
    "uniform",
]


@dataclass(frozen=True, eq=False)
class Domain:
    """A Ray Tune search primitive, as ``tune.uniform(0, 1)`` returns it: a distribution left
    to the tuner. ``kind`` is the builder's name and ``args`` its arguments."""

    kind: str
    args: tuple[Any, ...]

    def __repr__(self) -> str:
        return f"tune.{self.kind}({', '.join(repr(a) for a in self.args)})"


@dataclass(frozen=True, eq=False)
class SampleFrom:
    """``tune.sample_from(func)``: a value computed when a trial's config is built (see
    ``sample_from``). ``takes_spec``: ``func`` takes Ray's ``spec`` (else no argument)."""

    func: Callable[..., Any]
    takes_spec: bool

    def compute(self, config: dict[str, Any], seed: int, name: str) -> Any:
        """``func``'s value for ``config``, with NumPy's and ``random``'s global generators
        seeded from ``seed`` and ``name`` while it runs (and restored after)."""
        import numpy as np

        numpy_state, random_state = np.random.get_state(), random.getstate()
        stream = np.random.SeedSequence([seed & (2**63 - 1), *name.encode()])
        np.random.seed(stream.generate_state(1)[0])
        random.seed(int(stream.generate_state(2, np.uint64)[1]))
        try:
            return self.func(_Spec({"config": config})) if self.takes_spec else self.func()
        finally:
            np.random.set_state(numpy_state)
            random.setstate(random_state)


class Unresolved(Exception):
    """A ``sample_from`` function read a value that another has not computed yet."""


class _Spec(dict):
    """Ray's ``spec``: ``spec.config`` (or ``spec["config"]``) is the trial's config, its keys
    also attributes; reading a ``sample_from`` value not computed yet defers the function."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, key: Any) -> Any:
        value = super().__getitem__(key)
        if isinstance(value, SampleFrom):
            raise Unresolved(key)
        return _Spec(value) if isinstance(value, dict) else value


def uniform(lower: float, upper: float) -> Domain:
    """A float drawn uniformly from ``[lower, upper]``."""
    return Domain("uniform", (lower, upper))


def quniform(lower: float, upper: float, q: float) -> Domain:
    """A float from ``uniform``, rounded to a multiple of ``q`` within the bounds."""
    return Domain("quniform", (lower, upper, q))


def loguniform(lower: float, upper: float, base: Any = None) -> Domain:
    """A float drawn log-uniformly from ``[lower, upper]`` (``base`` is ignored, as by Ray)."""
    return Domain("loguniform", (lower, upper))


def qloguniform(lower: float, upper: float, q: float, base: Any = None) -> Domain:
    """A float from ``loguniform``, rounded to a multiple of ``q`` within the bounds."""
    return Domain("qloguniform", (lower, upper, q))


def randn(mean: float = 0.0, sd: float = 1.0) -> Domain:
    """A float drawn from the normal distribution ``N(mean, sd)``."""
    return Domain("randn", (mean, sd))


def qrandn(mean: float, sd: float, q: float) -> Domain:
    """A float from ``randn``, rounded to a multiple of ``q``."""
    return Domain("qrandn", (mean, sd, q))


def randint(lower: int, upper: int) -> Domain:
    """An int drawn uniformly from ``lower .. upper - 1`` (``upper`` excluded)."""
    return Domain("randint", (lower, upper))


def qrandint(lower: int, upper: int, q: int = 1) -> Domain:
    """An int multiple of ``q`` drawn uniformly between the bounds, both included (for
    ``q == 1``, ``upper`` is excluded, as in ``randint``)."""
    return Domain("qrandint", (lower, upper, q))


def lograndint(lower: int, upper: int, base: Any = None) -> Domain:
    """An int drawn log-uniformly from ``lower .. upper - 1`` (``upper`` excluded)."""
    return Domain("lograndint", (lower, upper))


def qlograndint(lower: int, upper: int, q: int, base: Any = None) -> Domain:
    """An int multiple of ``q`` drawn log-uniformly between the bounds, both included (for
    ``q == 1``, ``upper`` is excluded)."""
    return Domain("qlograndint", (lower, upper, q))


def choice(categories: Iterable[Any]) -> Domain:
    """One of ``categories`` (any objects), each equally likely. An option may itself hold
    search primitives (``choice([{"kind": "a", "x": uniform(0, 1)}, ...])``): they are drawn
    when the option is picked, as Ray does."""
    if isinstance(categories, (str, bytes, Mapping)) or not isinstance(categories, Iterable):
        raise TypeError(f"tune.choice: expected a list of options, got {categories!r}")
    return Domain("choice", (tuple(categories),))


def grid_search(values: Iterable[Any]) -> dict[str, list[Any]]:
    """Every one of ``values``, each in its own trials (times ``num_samples``), as Ray's
    ``{"grid_search": values}``."""
    return {"grid_search": list(values)}


def sample_from(func: Callable[..., Any]) -> SampleFrom:
    """Ray's ``sample_from(lambda spec: ...)``: a value computed for each trial, when its
    config is built, by ``func(spec)`` (``spec.config`` is the rest of the config) or
    ``func()``. The tuner does not search it: it is derived from the searched values, or drawn
    with NumPy's or ``random``'s global generators, which are seeded from the trial's seed
    while ``func`` runs, so that a trial's config is the same wherever it is built (its
    trainable, its ``Result``). Functions may read each other's values, in any order.

    Raises:
        TypeError: ``func`` is not a function of 0 or 1 arguments (Ray's ``ValueError``).
    """
    if not callable(func):
        raise TypeError(f"tune.sample_from: expected a function, got {func!r}")
    signature = inspect.signature(func)
    for takes_spec, args in ((True, ({},)), (False, ())):
        try:
            signature.bind(*args)
        except TypeError:
            continue
        return SampleFrom(func, takes_spec)
    raise TypeError(f"tune.sample_from: {func!r} must take 0 or 1 arguments (spec)")
