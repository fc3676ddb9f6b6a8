"""The Domain algebra of a research: which configs to run, in which order (BatchFlow's ``Domain``).

A domain is a sum of *parts*; each part is a product of *options* (a name and its values):

- a list, tuple, range or 1-d numpy array is a **grid**: every value is tried;
- a hyperlab distribution (``uniform(0, 1)``, ``choice("a", "b")``...) is **sampled**: a fresh
  value for every config;
- anything else is a **constant**: a grid of one value.

A part with at least one grid option gives every combination of its grid values (the first
option varies slowest), each with fresh samples of its sampled options; a part of sampled options
only is infinite. Operators, as in BatchFlow:

- ``d1 * d2``: Cartesian product: every part of ``d1`` with every part of ``d2``. On a name
  clash the later option wins in the config (BatchFlow merges configs in order, with no check),
  and ``size`` still counts every combination.
- ``d1 + d2``: concatenation: all configs of ``d1``, then all of ``d2``; each config has only
  the names of its part.
- ``d1 @ d2``: element-wise zip of two finite, unweighted domains with the same number of
  configs: config ``i`` merges ``d1``'s config ``i`` and ``d2``'s config ``i``.
- ``0.3 * d1 + 0.7 * d2`` (or ``d1 * 0.3``): a weighted mixture: each next config comes from a
  part picked at random with probability proportional to its weight among the parts not yet
  exhausted. A mixture is finite (and then gives every config of its parts in a random order)
  exactly when its parts are. Weights multiply: ``2 * (3 * d)`` weighs ``d`` 6. Consecutive
  weighted parts make one mixture; an unweighted part between them ends it (BatchFlow's blocks).

``Domain()`` is empty: the identity of ``+`` and ``*``, valid only as a start for building
(``is_empty`` tells; iterating it is an error). :meth:`Domain.iterator` gives the configs with
their repetitions as :class:`ConfigItem` records; :class:`~hyperlab.research._alias.Alias` names
values for tables and stored params, and :meth:`Domain.resolve` maps a stored alias back.

Example:
    >>> d = Domain(lr=[0.1, 0.01]) * Domain(layers=[2, 4]) + Domain(lr=[1.0], layers=8)
    >>> d.size, d.keys()
    (5, ['lr', 'layers'])
    >>> [item.key for item in d.iterator()][:2]
    ['layers_2-lr_0.1', 'layers_4-lr_0.1']
"""

from __future__ import annotations

import bisect
import copy
import itertools
import math
import numbers
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperlab.errors import ConfigError
from hyperlab.research._alias import Alias, ConfigItem, alias_key, same_value
from hyperlab.space import Parameter

__all__ = ["Alias", "ConfigItem", "Domain", "Option"]

_DEFAULT_REPEAT_EACH = 100  # BatchFlow's block for an unbounded infinite domain


@dataclass(frozen=True)
class _Option:
    name: str
    values: tuple[Alias, ...] | Parameter  # a grid, or a distribution to sample

    def describe(self) -> str:
        if isinstance(self.values, Parameter):
            return f"{self.name}: {self.values!r}"
        shown = (
            repr(a.alias) if isinstance(a.value, str) and a.alias == a.value else str(a.alias)
            for a in self.values
        )
        return f"{self.name}: [{', '.join(shown)}]"


@dataclass(frozen=True)
class _Part:
    options: tuple[_Option, ...]
    weight: float | None  # None: not in a mixture

    @property
    def grids(self) -> list[tuple[Alias, ...]]:
        return [o.values for o in self.options if not isinstance(o.values, Parameter)]

    @property
    def size(self) -> int | None:
        grids = self.grids
        return math.prod(len(g) for g in grids) if grids else None

    def draws(self, rng: np.random.Generator) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """(config, alias) pairs: every grid combination, or endless samples without grids."""
        grids = self.grids
        combos: Iterator[tuple[Alias, ...]] = (
            itertools.product(*grids) if grids else itertools.repeat(())
        )
        for combo in combos:
            picks = iter(combo)
            config: dict[str, Any] = {}
            alias: dict[str, Any] = {}
            for option in self.options:
                if isinstance(option.values, Parameter):
                    value = option.values.sample(rng, 1)[0]  # JSON: its own alias
                    config[option.name], alias[option.name] = value, copy.deepcopy(value)
                else:
                    pick = next(picks)
                    config[option.name], alias[option.name] = pick.value, pick.alias
            yield config, alias

    def expand(self) -> list[_Part]:
        """One part per grid combination (grid options of one value, sampled ones kept)."""
        out = []
        for combo in itertools.product(*self.grids):
            picks = iter(combo)
            options = tuple(
                o if isinstance(o.values, Parameter) else _Option(o.name, (next(picks),))
                for o in self.options
            )
            out.append(_Part(options, None))
        return out

    def describe(self) -> str:
        text = " * ".join(o.describe() for o in self.options)
        if self.weight is None:
            return text
        return (
            f"{self.weight:g} * ({text})" if len(self.options) > 1 else f"{self.weight:g} * {text}"
        )


def _option(name: Any, values: Any) -> _Option:
    if not isinstance(name, str) or not name:
        raise ConfigError(f"Domain option names must be non-empty strings, got {name!r}")
    if isinstance(values, Parameter):
        return _Option(name, values)
    if isinstance(values, np.ndarray) and values.ndim != 1:
        raise ConfigError(
            f"Domain option {name!r} needs a 1-d array of values, got shape {values.shape}"
        )
    if isinstance(values, (list, tuple, range, np.ndarray)):
        if len(values) == 0:
            raise ConfigError(f"Domain option {name!r} needs at least one value, got {values!r}")
        return _Option(name, tuple(Alias(v) for v in values))
    return _Option(name, (Alias(values),))


def _weight(factor: Any) -> float:
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real):
        raise ConfigError(f"a Domain weight must be a real number, got {factor!r}")
    weight = float(factor)
    if not (math.isfinite(weight) and weight > 0):
        raise ConfigError(f"a Domain weight must be a positive finite number, got {factor!r}")
    return weight


def _combined(a: float | None, b: float | None) -> float | None:
    if a is None or b is None:
        return b if a is None else a
    return _weight(a * b)  # over- or underflow is an error, not a silent inf or 0


def _positive(n: Any, field: str, rule: str = "a positive int") -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise ConfigError(f"Domain.iterator needs {field} to be {rule}, got {n!r}")
    return int(n)


def _positive_or_none(n: Any, field: str) -> int | None:
    return None if n is None else _positive(n, field, "a positive int or None")


class Domain:
    """Options to combine into the configs of a research (BatchFlow's ``Domain``).

    Immutable: operators build new domains (see the module docstring for their semantics).

    Args:
        options: Option name -> values (a grid, a hyperlab distribution or a constant), or a
            Domain to copy. Use it for names that are not Python identifiers.
        **kwargs: More options, as in ``options``.

    Raises:
        ConfigError: A name is not a non-empty string, is given twice, a grid is empty, or two
            different values of one option share an alias.

    Example:
        >>> from hyperlab.space import uniform
        >>> Domain(lr=[0.1, 0.01], momentum=uniform(0, 1), nesterov=True)
        Domain(lr: [0.1, 0.01] * momentum: uniform(0, 1) * nesterov: [True])
    """

    _parts: tuple[_Part, ...]
    _lookup: dict[str, dict[tuple[str, Any], Alias]]  # name -> alias key -> grid value
    _sampled: dict[str, Parameter]  # name -> its first distribution

    def __init__(self, options: Mapping[str, Any] | Domain | None = None, /, **kwargs: Any) -> None:
        if isinstance(options, Domain):
            if kwargs:
                raise ConfigError(f"Domain(domain) takes no other options, got {sorted(kwargs)}")
            self._build(options._parts)
            return
        if options is not None and not isinstance(options, Mapping):
            raise ConfigError(
                f"Domain needs a mapping of option names to values or a Domain, got {options!r}"
            )
        options = dict(options or {})
        both = sorted(set(options) & set(kwargs))
        if both:
            raise ConfigError(f"Domain got options {both} both in the mapping and as keywords")
        merged = {**options, **kwargs}
        opts = tuple(_option(name, values) for name, values in merged.items())
        self._build((_Part(opts, None),) if opts else ())

    @staticmethod
    def _of(parts: tuple[_Part, ...]) -> Domain:
        domain = Domain.__new__(Domain)
        domain._build(parts)
        return domain

    def _build(self, parts: tuple[_Part, ...]) -> None:
        lookup: dict[str, dict[tuple[str, Any], Alias]] = {}
        sampled: dict[str, Parameter] = {}
        for part in parts:
            for option in part.options:
                if isinstance(option.values, Parameter):
                    sampled.setdefault(option.name, option.values)
                    continue
                known = lookup.setdefault(option.name, {})
                for a in option.values:
                    key = alias_key(a.alias)
                    if key in known and not same_value(known[key].value, a.value):
                        raise ConfigError(
                            f"Domain option {option.name!r} has two different values with alias "
                            f"{a.alias!r}: {known[key].value!r} and {a.value!r}; name them apart "
                            f"with Alias(value, 'name')"
                        )
                    known.setdefault(key, a)
        self._parts, self._lookup, self._sampled = parts, lookup, sampled

    # ------------------------------------------------------------ shape

    @property
    def is_empty(self) -> bool:
        """True for ``Domain()``: no configs; a research needs a non-empty domain."""
        return not self._parts

    @property
    def size(self) -> int | None:
        """The number of configs (without repetitions); None if some part is infinite."""
        sizes = [part.size for part in self._parts]
        return None if None in sizes else sum(s for s in sizes if s is not None)

    def __len__(self) -> int:
        size = self.size
        if size is None:
            raise TypeError("an infinite Domain has no len(); its size is None")
        return size

    def __bool__(self) -> bool:
        return not self.is_empty

    def keys(self) -> list[str]:
        """Option names, in order of first appearance."""
        return list(dict.fromkeys(o.name for part in self._parts for o in part.options))

    def describe(self) -> str:
        """``"lr: [0.1, 0.01] * layers: [2, 4] + 0.5 * wd: uniform(0, 1)"``; ``""`` if empty."""
        return " + ".join(part.describe() for part in self._parts)

    def __repr__(self) -> str:
        return f"Domain({self.describe()})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Domain):
            return NotImplemented
        return self._parts == other._parts

    __hash__ = None  # type: ignore[assignment]  # grid values may be unhashable

    # ------------------------------------------------------------ algebra

    def __mul__(self, other: object) -> Domain:
        if isinstance(other, Domain):
            if self.is_empty or other.is_empty:
                return other if self.is_empty else self
            return Domain._of(
                tuple(
                    _Part(p.options + q.options, _combined(p.weight, q.weight))
                    for p in self._parts
                    for q in other._parts
                )
            )
        if isinstance(other, numbers.Real):
            factor = _weight(other)
            return Domain._of(
                tuple(_Part(p.options, _combined(p.weight, factor)) for p in self._parts)
            )
        return NotImplemented

    def __rmul__(self, other: object) -> Domain:
        if isinstance(other, numbers.Real):
            return self * other
        return NotImplemented

    def __add__(self, other: object) -> Domain:
        if isinstance(other, Domain):
            return Domain._of(self._parts + other._parts)
        return NotImplemented

    def __matmul__(self, other: object) -> Domain:
        if not isinstance(other, Domain):
            return NotImplemented
        left, right = self._zippable("left"), other._zippable("right")
        if len(left) != len(right):
            raise ConfigError(
                f"d1 @ d2 needs domains with the same number of configs, got {len(left)} (left) "
                f"and {len(right)} (right)"
            )
        return Domain._of(
            tuple(_Part(p.options + q.options, None) for p, q in zip(left, right, strict=True))
        )

    def _zippable(self, side: str) -> list[_Part]:
        if self.size is None:
            raise ConfigError(f"d1 @ d2 needs finite domains, got an infinite {side} one: {self}")
        if any(part.weight is not None for part in self._parts):
            raise ConfigError(
                f"d1 @ d2 needs unweighted domains (weigh the zipped result instead), got "
                f"{side}: {self}"
            )
        return [single for part in self._parts for single in part.expand()]

    # ------------------------------------------------------------ aliases

    def resolve(self, name: str, alias: Any) -> Any:
        """The value of option ``name`` whose alias is ``alias`` (e.g. read from stored params).

        A grid value's alias maps back to the value; a sampled option's alias is its value.

        Raises:
            ConfigError: No option ``name``, or no value of it has that alias.
        """
        if name not in self.keys():
            raise ConfigError(f"Domain has no option {name!r}; its options are {self.keys()}")
        known = self._lookup.get(name, {})
        key = alias_key(alias)
        if key in known:
            return known[key].value
        if name in self._sampled:
            return alias
        aliases = [k[1] for k in known]
        raise ConfigError(
            f"Domain option {name!r} has no value with alias {alias!r}; its aliases are {aliases}"
        )

    def resolve_config(self, aliases: Mapping[str, Any]) -> dict[str, Any]:
        """``{name: resolve(name, alias)}`` for a whole stored alias dict (``ConfigItem.alias``)."""
        return {name: self.resolve(name, alias) for name, alias in aliases.items()}

    def values_by_alias(self) -> dict[str, list[Alias]]:
        """For each option with grid values, its distinct values with their aliases, in order.

        Sampled options are left out (their alias is their value). ``1``, ``1.0`` and ``True``
        are distinct values, which is why this is a list of :class:`Alias` and not a dict.
        """
        return {name: list(known.values()) for name, known in self._lookup.items()}

    def distributions(self) -> dict[str, Parameter]:
        """For each sampled option, its distribution (the first, if several parts sample it)."""
        return dict(self._sampled)

    # ------------------------------------------------------------ iteration

    def iterator(
        self,
        n_configs: int | None = None,
        n_reps: int = 1,
        repeat_each: int | None = None,
        seed: int | np.random.SeedSequence | None = None,
    ) -> Iterator[ConfigItem]:
        """The configs with their repetitions (BatchFlow's ``set_iter_params`` semantics).

        Configs come in blocks of ``repeat_each``: a block's configs are given in order with
        repetition 0, then the same configs (same values, same indices) with repetition 1, and
        so on up to ``n_reps - 1``, before the next block. With ``n_reps=3`` and two blocks of
        two: ``(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2), (2, 0), (3, 0), (2, 1), ...`` as
        ``(index, repetition)``. If ``n_configs`` exceeds the size of a finite domain, the
        domain starts over (as BatchFlow; samples and mixtures are drawn afresh).

        Args:
            n_configs: How many configs to draw; None: the size of a finite domain, or no end
                for an infinite one (the caller then stops the iterator).
            n_reps: How many times each config is given.
            repeat_each: The block size; by default ``n_configs``, else the domain's size,
                else 100. The last block may be shorter so that ``n_configs`` configs are given.
            seed: Makes sampling and mixtures reproducible (an int >= 0 or a SeedSequence);
                None draws fresh entropy.

        Raises:
            ConfigError: The domain is empty, or an argument is out of range.
        """
        n_total = _positive_or_none(n_configs, "n_configs")
        reps = _positive(n_reps, "n_reps")
        block = _positive_or_none(repeat_each, "repeat_each")
        if isinstance(seed, bool) or not (
            seed is None
            or isinstance(seed, np.random.SeedSequence)
            or (isinstance(seed, numbers.Integral) and int(seed) >= 0)
        ):
            raise ConfigError(
                f"Domain.iterator needs seed to be an int >= 0, a SeedSequence or None, "
                f"got {seed!r}"
            )
        if self.is_empty:
            raise ConfigError("Domain is empty: give it at least one option to iterate")
        n_total = n_total if n_total is not None else self.size
        block = block or n_total or _DEFAULT_REPEAT_EACH
        return self._repeat(np.random.default_rng(seed), n_total, block, reps)

    def _repeat(
        self, rng: np.random.Generator, n_total: int | None, block: int, n_reps: int
    ) -> Iterator[ConfigItem]:
        draws = self._draws(rng)
        start = 0
        while n_total is None or start < n_total:
            size = block if n_total is None else min(block, n_total - start)
            chunk = list(itertools.islice(draws, size))
            for repetition in range(n_reps):
                for i, (config, alias) in enumerate(chunk):
                    yield ConfigItem(start + i, repetition, dict(config), dict(alias))
            start += size

    def _draws(self, rng: np.random.Generator) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        """Every config of every block, over and over (never ends: the domain is not empty)."""
        blocks: list[list[_Part]] = []
        for i, part in enumerate(self._parts):
            if part.weight is not None and i > 0 and self._parts[i - 1].weight is not None:
                blocks[-1].append(part)
            else:
                blocks.append([part])
        while True:
            for parts in blocks:
                iterators = [part.draws(rng) for part in parts]
                weights = [part.weight or 1.0 for part in parts]
                bounds = list(itertools.accumulate(weights))
                while iterators:
                    pick = 0
                    if len(iterators) > 1:  # a part with probability weight / sum(weights)
                        x = rng.random() * bounds[-1]
                        pick = min(bisect.bisect(bounds, x), len(bounds) - 1)  # x may round up
                    try:
                        yield next(iterators[pick])
                    except StopIteration:
                        del iterators[pick], weights[pick]
                        bounds = list(itertools.accumulate(weights))


class Option(Domain):
    """``Option(name, values)`` is ``Domain({name: values})``, as in BatchFlow."""

    def __init__(self, name: str, values: Any) -> None:
        super().__init__({name: values})
