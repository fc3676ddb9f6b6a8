"""The translation of a Ray Tune ``param_space`` into a hyperlab search space (the search
primitives themselves, ``tune.uniform``..., are in ``_primitives``).

A Ray ``param_space`` is a nested dict (lists too) whose leaves are search primitives,
``grid_search`` dicts, ``sample_from`` functions or constants. ``translate`` turns it into a
``Template``: one hyperlab parameter per searched leaf, named by its path (``"model/lr"``),
and ``Template.resolve(params, seed)``, which builds from a trial's parameters the config Ray
would give the trainable: the same nesting, constants deep-copied, integers as ``int``, choice
options as the very objects listed (tuples, classes...), and each ``sample_from`` leaf computed
by its function from the rest of the config, as Ray's variant generator does (see
``sample_from``).

Ray's semantics are kept: ``randint`` and ``lograndint`` exclude their upper bound, ``qrandint``
and ``qlograndint`` (``q > 1``) draw multiples of ``q`` between the bounds, both included, and
return ints, ``quniform``/``qloguniform`` round to multiples of ``q`` inside the bounds. To
give the multiples of ``q`` equal chances, the integer ones are stored as a q-range widened by
just under ``q / 2`` on each side (``qrandint(0, 10, 5)`` is ``quniform(-2.5+, 12.5-, 5)``).
The log-scaled integer ones have Ray's values, with probabilities that differ slightly.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hyperlab.compat.ray.tune._primitives import Domain, SampleFrom, Unresolved
from hyperlab.errors import SearchSpaceError
from hyperlab.space import (
    Choice,
    LogUniform,
    Normal,
    Parameter,
    QLogUniform,
    QNormal,
    QUniform,
    Randint,
    SearchSpace,
    Uniform,
)

__all__ = ["Template", "translate"]

_WIDEN = 0.5 - 1e-6
"""How far, in units of ``q``, an integer range is widened on each side (see the docstring)."""


@dataclass(frozen=True, eq=False)
class Leaf:
    """One searched leaf of a param_space and how its hyperlab value becomes Ray's.

    Attributes:
        path: Keys (and list indices) from the root of the param_space.
        name: Its hyperlab parameter's name.
        param: The hyperlab parameter.
        grid: Grid-searched (``grid_search``) rather than drawn.
        integer: The value is returned as an ``int``.
        options: A choice's options as given (decoded by position), else None.
        labels: The stored labels of options that are not plain JSON, else None.
        nested: The templates of a choice's options when some hold search primitives.
    """

    path: tuple[Any, ...]
    name: str
    param: Parameter
    grid: bool = False
    integer: bool = False
    options: tuple[Any, ...] | None = None
    labels: tuple[str, ...] | None = None
    nested: tuple[Template, ...] | None = None

    def decode(self, value: Any) -> Any:
        """The value Ray would give for the stored ``value``."""
        if self.nested is not None:
            sub = {k: v for k, v in value.items() if k != "_name"}
            return self.nested[int(value["_name"])].resolve(sub)
        if self.options is not None:
            assert isinstance(self.param, Choice)
            index = self.labels.index(value) if self.labels else self.param.index(value)
            return copy.deepcopy(self.options[index])
        if self.integer:
            return round(value)
        return value


@dataclass(frozen=True, eq=False)
class Template:
    """A translated param_space: its structure, its searched leaves in order, and the paths
    of its ``sample_from`` leaves."""

    root: Any
    leaves: tuple[Leaf, ...] = field(default=())
    derived: tuple[tuple[tuple[Any, ...], SampleFrom], ...] = field(default=())

    def space(self) -> dict[str, Parameter]:
        """The hyperlab search space: leaf name -> parameter."""
        return {leaf.name: leaf.param for leaf in self.leaves}

    def grid(self) -> list[str]:
        """The names of the grid-searched parameters."""
        return [leaf.name for leaf in self.leaves if leaf.grid]

    def grid_size(self) -> int:
        """The number of points of the grid-searched parameters (1 without any)."""
        return math.prod(len(leaf.options or ()) for leaf in self.leaves if leaf.grid)

    def stored(self, name: str, value: Any) -> Any:
        """The stored value of the leaf ``name`` whose Ray value is ``value`` (the inverse of
        its ``decode``).

        Raises:
            ValueError: The leaf cannot take ``value`` (outside its range, not one of its
                options), or it is a choice whose options hold search primitives.
        """
        leaf = next(leaf for leaf in self.leaves if leaf.name == name)
        if leaf.nested is not None:
            raise ValueError(f"{name}: a choice whose options hold search primitives")
        stored = value
        if leaf.options is not None:
            same = [i for i, o in enumerate(leaf.options) if type(o) is type(value) and o == value]
            if not same:
                raise ValueError(f"{name}: {value!r} is not one of {list(leaf.options)!r}")
            stored = leaf.labels[same[0]] if leaf.labels else leaf.options[same[0]]
        try:
            SearchSpace({name: leaf.param}).check({name: stored})
        except SearchSpaceError as exc:
            raise ValueError(str(exc)) from None
        return stored

    def resolve(self, params: Mapping[str, Any], seed: int = 0, *, derive: bool = True) -> Any:
        """The config Ray would build from the stored ``params`` of a trial with ``seed``
        (with ``derive=False``, its ``sample_from`` values left out).

        Raises:
            SearchSpaceError: ``sample_from`` functions wait for each other's values.
            RuntimeError: a ``sample_from`` function raised (naming its parameter).
        """
        values = {leaf.path: leaf.decode(params[leaf.name]) for leaf in self.leaves}
        config = _fill(self.root, (), values)
        if not derive:
            for path, _ in self.derived:
                _drop(config, path)
            return config
        pending = list(self.derived)
        while pending:  # as Ray: a function that reads an uncomputed value waits its turn
            waiting = []
            for path, node in pending:
                name = _name(path)
                try:
                    value = node.compute(config, seed, name)
                except Unresolved:
                    waiting.append((path, node))
                    continue
                except Exception as exc:
                    raise RuntimeError(
                        f"param_space: {name}: its tune.sample_from function raised "
                        f"{type(exc).__name__}: {exc}"
                    ) from exc
                _put(config, path, value)
            if len(waiting) == len(pending):
                names = ", ".join(_name(path) for path, _ in waiting)
                raise SearchSpaceError(
                    f"param_space: {names}: these tune.sample_from functions wait for each "
                    "other's values"
                )
            pending = waiting
        return config


def translate(param_space: Mapping[str, Any]) -> Template:
    """The ``Template`` of a Ray ``param_space``.

    Raises:
        TypeError: ``param_space`` is not a dict.
        SearchSpaceError: A primitive has invalid arguments (naming the parameter).
        NotImplementedError: A ``sample_from`` or a ``grid_search`` inside a choice option,
            naming the parameter and what to use instead.
    """
    if not isinstance(param_space, Mapping):
        raise TypeError(f"param_space: expected a dict, got {type(param_space).__name__}")
    return _template(dict(param_space), grid_allowed=True)


def _template(root: Any, *, grid_allowed: bool) -> Template:
    leaves: list[Leaf] = []
    derived: list[tuple[tuple[Any, ...], SampleFrom]] = []
    _collect(root, (), leaves, derived, grid_allowed)
    names = [leaf.name for leaf in leaves]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SearchSpaceError(f"param_space: the paths {twice} are spelled two ways")
    return Template(root, tuple(leaves), tuple(derived))


def _name(path: tuple[Any, ...]) -> str:
    return "/".join(str(p) for p in path) or "value"


def _drop(config: Any, path: tuple[Any, ...]) -> None:
    for key in path[:-1]:
        config = config[key]
    if isinstance(config, dict):
        del config[path[-1]]
    else:
        config[path[-1]] = None


def _put(config: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        config = config[key]
    config[path[-1]] = value


def _collect(
    node: Any,
    path: tuple[Any, ...],
    leaves: list[Leaf],
    derived: list[tuple[tuple[Any, ...], SampleFrom]],
    grid_allowed: bool,
) -> None:
    name = _name(path)
    if isinstance(node, Domain):
        leaves.append(_leaf(node, path, name))
    elif isinstance(node, SampleFrom):
        if not grid_allowed:
            raise NotImplementedError(
                f"param_space: {name}: a tune.sample_from inside a tune.choice option has no "
                "hyperlab equivalent; put it at the top level of param_space, reading the "
                "choice through spec.config"
            )
        derived.append((path, node))
    elif isinstance(node, Mapping) and list(node) == ["grid_search"]:
        if not grid_allowed:
            raise NotImplementedError(
                f"param_space: {name}: a grid_search inside a tune.choice option has no "
                "hyperlab equivalent; move it to the top of param_space"
            )
        values = node["grid_search"]
        if not isinstance(values, (list, tuple)) or not values:
            raise SearchSpaceError(f"param_space: {name}: grid_search needs a non-empty list")
        if any(_has_primitives(v) for v in values):
            raise NotImplementedError(
                f"param_space: {name}: search primitives inside grid_search values have no "
                "hyperlab equivalent; list plain values"
            )
        param, options, labels = _plain_choice(name, tuple(values))
        leaves.append(Leaf(path, name, param, grid=True, options=options, labels=labels))
    elif isinstance(node, Mapping):
        for key, value in node.items():
            _collect(value, (*path, key), leaves, derived, grid_allowed)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _collect(value, (*path, i), leaves, derived, grid_allowed)


def _has_primitives(node: Any) -> bool:
    if isinstance(node, (Domain, SampleFrom)):
        return True
    if isinstance(node, Mapping):
        return any(_has_primitives(v) for v in node.values())
    if isinstance(node, list):
        return any(_has_primitives(v) for v in node)
    return False


def _leaf(domain: Domain, path: tuple[Any, ...], name: str) -> Leaf:
    try:
        if domain.kind == "choice":
            return _choice_leaf(domain.args[0], path, name)
        param, integer = _NUMERIC[domain.kind](*domain.args)
    except SearchSpaceError as exc:
        raise SearchSpaceError(f"param_space: {name}: {domain!r}: {exc}") from None
    return Leaf(path, name, param, integer=integer)


def _choice_leaf(options: tuple[Any, ...], path: tuple[Any, ...], name: str) -> Leaf:
    if not options:
        raise SearchSpaceError("choice needs at least one option")
    if not any(_has_primitives(o) for o in options):
        param, plain, labels = _plain_choice(name, options)
        return Leaf(path, name, param, options=plain, labels=labels)
    try:
        nested = tuple(_template(option, grid_allowed=False) for option in options)
    except NotImplementedError as exc:  # named from the option: name it from the root
        named = str(exc).replace("param_space: ", f"param_space: {name}/", 1)
        raise NotImplementedError(named) from None
    param = Choice(
        tuple({"_name": str(i), **t.space()} for i, t in enumerate(nested)),
    )
    return Leaf(path, name, param, nested=nested)


def _plain_choice(
    name: str, options: tuple[Any, ...]
) -> tuple[Choice, tuple[Any, ...], tuple[str, ...] | None]:
    """A choice of options without primitives: stored as they are when they are plain JSON,
    else as labels (``repr``-like names)."""
    if all(_is_plain_json(o) for o in options):
        return Choice(options), options, None
    labels: list[str] = []
    for i, option in enumerate(options):
        label = getattr(option, "__qualname__", None) or repr(option)
        label = label if len(label) <= 60 else label[:57] + "..."
        labels.append(label if label not in labels else f"{label}#{i}")
    return Choice(tuple(labels)), options, tuple(labels)


def _is_plain_json(value: Any) -> bool:
    """JSON that reads back equal and is not taken for a nested option by hyperlab."""
    if isinstance(value, Mapping) and "_name" in value:
        return False
    try:
        return bool(json.loads(json.dumps(value, allow_nan=False)) == value) or isinstance(
            value, tuple
        )
    except (TypeError, ValueError):
        return False


def _fill(node: Any, path: tuple[Any, ...], values: dict[tuple[Any, ...], Any]) -> Any:
    if path in values:
        return values[path]
    if isinstance(node, Mapping):
        return {k: _fill(v, (*path, k), values) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill(v, (*path, i), values) for i, v in enumerate(node)]
    return copy.deepcopy(node)


# ---- the numeric primitives: Ray's kind -> (hyperlab parameter, returns an int)


def _multiples(lower: float, upper: float, q: float) -> tuple[float, float]:
    """The first and last multiples of ``q`` in ``[lower, upper]``."""
    low, high = math.ceil(lower / q) * q, math.floor(upper / q) * q
    if low > high:
        raise SearchSpaceError(f"no multiple of q={q!r} lies between {lower!r} and {upper!r}")
    return low, high


def _positive_q(q: Any) -> float:
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not q > 0:
        raise SearchSpaceError(f"q must be a number > 0, got {q!r}")
    return q


def _q_range(lower: float, upper: float, q: float) -> tuple[Parameter, bool]:
    low, high = _multiples(lower, upper, _positive_q(q))
    return QUniform(low, high, q), False


def _q_log_range(lower: float, upper: float, q: float) -> tuple[Parameter, bool]:
    low, high = _multiples(lower, upper, _positive_q(q))
    return QLogUniform(low, high, q), False


def _int_range(lower: int, upper: int, q: int) -> tuple[Parameter, bool]:
    if q == 1:
        return Randint(lower, upper), False
    low, high = _multiples(lower, upper, _positive_q(q))
    return QUniform(low - _WIDEN * q, high + _WIDEN * q, q), True


def _int_log_range(lower: int, upper: int, q: int) -> tuple[Parameter, bool]:
    if not lower > 0:
        raise SearchSpaceError(f"needs lower > 0 (it is log-scaled), got lower={lower!r}")
    low, high = (lower, upper - 1) if q == 1 else _multiples(lower, upper, _positive_q(q))
    if low > high:
        raise SearchSpaceError(f"needs lower < upper, got lower={lower!r}, upper={upper!r}")
    return QLogUniform(low - _WIDEN * q, high + _WIDEN * q, q), True


_NUMERIC: dict[str, Callable[..., tuple[Parameter, bool]]] = {
    "uniform": lambda lower, upper: (Uniform(lower, upper), False),
    "quniform": _q_range,
    "loguniform": lambda lower, upper: (LogUniform(lower, upper), False),
    "qloguniform": _q_log_range,
    "randn": lambda mean, sd: (Normal(mean, sd), False),
    "qrandn": lambda mean, sd, q: (QNormal(mean, sd, q), False),
    "randint": lambda lower, upper: (Randint(lower, upper), False),
    "qrandint": _int_range,
    "lograndint": lambda lower, upper: _int_log_range(lower, upper, 1),
    "qlograndint": _int_log_range,
}
