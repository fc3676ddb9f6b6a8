"""The units of a research's experiments, their ``when`` schedules, and references.

A unit is one step of an iteration: a callable, a generator (advanced one value per scheduled
iteration), or a method of an instance created once per experiment. Units run in the order
they were added; each reads the config and earlier units' outputs by name, either as explicit
references (``C("lr")``, ``O("model")``) or by its parameters' names.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hyperlab.errors import ConfigError

__all__ = ["C", "O", "Unit", "When", "check_units"]

SPECIAL_NAMES = ("config", "iteration", "repetition", "seed", "devices")
"""Names a unit's parameter may have to receive the experiment's state rather than a value
produced by another unit: the config (actual values), the iteration (0-based), the
repetition, the trial's seed and the devices (indices as the unit's process sees them)."""


@dataclass(frozen=True)
class C:
    """A reference to a config value, passed to a unit: ``add_callable(f, lr=C("lr"))``."""

    key: str


@dataclass(frozen=True)
class O:  # noqa: E742  (BatchFlow's name for a unit's output)
    """A reference to the latest output of an earlier unit (by its name) or to a saved
    variable (a ``save_to`` name): ``add_callable(evaluate, O("model"))``."""

    name: str


@dataclass(frozen=True)
class When:
    """When a unit runs, as BatchFlow's ``when``: ``N`` or ``"%N"`` (every N-th iteration:
    N-1, 2N-1, ...; ``"%N"`` is BatchFlow's older spelling), ``"#k"`` (at iteration k,
    0-based), ``"last"`` (the last iteration: ``n_iters - 1``, or when the experiment ends
    early), or a list of those. ``update_domain`` reads the same forms, counting finished
    experiments instead of iterations."""

    every: tuple[int, ...] = ()
    at: frozenset[int] = frozenset()
    last: bool = False

    @classmethod
    def parse(cls, when: Any, unit: str) -> When:
        """The schedule ``when`` describes; ``ConfigError`` naming ``unit`` (a unit's name, or
        what the schedule is for, e.g. ``"update_domain"``) and the value."""
        items = list(when) if isinstance(when, (list, tuple)) else [when]
        every: list[int] = []
        at: set[int] = set()
        last = False
        for item in items:
            if isinstance(item, numbers.Integral) and not isinstance(item, bool) and int(item) >= 1:
                every.append(int(item))
            elif item == "last":
                last = True
            elif isinstance(item, str) and item.startswith("#") and item[1:].isdigit():
                at.add(int(item[1:]))
            elif isinstance(item, str) and item.startswith("%") and item[1:].isdigit():
                if int(item[1:]) < 1:
                    raise _bad_when(when, unit)
                every.append(int(item[1:]))
            else:
                raise _bad_when(when, unit)
        if not items:
            raise _bad_when(when, unit)
        return cls(tuple(every), frozenset(at), last)

    def due(self, iteration: int, *, last: bool) -> bool:
        """Whether the unit runs at ``iteration`` (``last``: it is the final one)."""
        if last and self.last:
            return True
        if iteration in self.at:
            return True
        return any((iteration + 1) % n == 0 for n in self.every)

    @property
    def only_last(self) -> bool:
        """True when the unit runs at the last iteration only."""
        return self.last and not self.every and not self.at


def _bad_when(when: Any, unit: str) -> ConfigError:
    subject = unit if unit == "update_domain" else f"unit {unit!r}"
    return ConfigError(
        f"when: expected a positive int or '%N' (every N-th), '#k' (at the k-th, 0-based), "
        f"'last', or a list of those for {subject}, got {when!r}"
    )


Kind = Literal["callable", "generator", "instance", "method"]


@dataclass(frozen=True)
class Unit:
    """One unit of a research's experiment.

    Attributes:
        name: Unique among the research's units; its latest output is readable by this name.
        kind: ``"callable"`` (called when due), ``"generator"`` (created at the first
            iteration it is due, advanced once each time it is due; its end ends the
            experiment), ``"instance"`` (``function`` is called once per experiment to create
            the object; it runs no step of its own) or ``"method"`` (``function`` is the
            ``"instance.method"`` to call).
        function: The callable, generator function or class; for a method, its path.
        args / kwargs: Given as they are, with ``C`` and ``O`` references resolved.
        save_to: The variable names its output is saved to (several: the output unpacked).
        when: Its schedule.
        root: Shared by the configs of a worker's branches: computed once for all of them.
    """

    name: str
    kind: Kind
    function: Any
    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    save_to: tuple[str, ...] = ()
    when: When = field(default_factory=lambda: When((1,)))
    root: bool = False

    def references(self) -> list[C | O]:
        """The ``C`` and ``O`` references among its arguments."""
        values = [*self.args, *self.kwargs.values()]
        return [v for v in values if isinstance(v, (C, O))]


def filled_names(function: Any, args: tuple, kwargs: dict[str, Any]) -> list[str]:
    """The names of ``function``'s parameters that ``args``/``kwargs`` leave open: a unit's
    runner fills them by name."""
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # some builtins have no signature
        return []
    names = []
    for index, p in enumerate(signature.parameters.values()):
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in kwargs:
            continue
        if p.kind is not p.KEYWORD_ONLY and index < len(args):
            continue
        names.append(p.name)
    return names


def parse_save_to(save_to: str | Sequence[str] | None, unit: str) -> tuple[str, ...]:
    """``save_to`` as a tuple of variable names; ``ConfigError`` on anything else."""
    if save_to is None:
        return ()
    names = [save_to] if isinstance(save_to, str) else save_to
    if not isinstance(names, (list, tuple)) or not names:
        raise ConfigError(
            f"save_to: expected a variable name or a list of names for unit {unit!r}, "
            f"got {save_to!r}"
        )
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise ConfigError(
                f"save_to: expected variable names that are identifiers for unit {unit!r}, "
                f"got {name!r}"
            )
    if len(set(names)) != len(names):
        raise ConfigError(f"save_to: unit {unit!r} names a variable twice: {list(names)!r}")
    return tuple(names)


def check_units(units: Sequence[Unit], config_keys: Sequence[str]) -> None:
    """Check what can be checked before anything runs; ``ConfigError`` naming the unit.

    Every ``O`` reference names an earlier unit or a variable saved by one, every ``C``
    reference a config key, every method an instance unit added before it, and no variable
    is saved by two units.
    """
    if not any(u.kind != "instance" for u in units):
        raise ConfigError(
            "units: the research has no unit to run; add one with add_callable or add_generator"
        )
    known: set[str] = set()
    saved: dict[str, str] = {}
    instances: set[str] = set()
    for unit in units:
        for ref in unit.references():
            if isinstance(ref, O) and ref.name not in known:
                raise ConfigError(
                    f"unit {unit.name!r}: O({ref.name!r}) names no earlier unit and no variable "
                    f"saved by one; known so far: {sorted(known) or 'none'}"
                )
            if isinstance(ref, C) and ref.key not in config_keys:
                raise ConfigError(
                    f"unit {unit.name!r}: C({ref.key!r}) is not a config key; the domain's keys "
                    f"are {list(config_keys)}"
                )
        if unit.kind == "method":
            owner = str(unit.function).split(".", 1)[0]
            if owner not in instances:
                raise ConfigError(
                    f"unit {unit.name!r}: {unit.function!r} names no instance added before it "
                    f"(add_instance({owner!r}, ...)); instances: {sorted(instances) or 'none'}"
                )
        for name in unit.save_to:
            if name in saved:
                raise ConfigError(
                    f"save_to: variable {name!r} is saved by units {saved[name]!r} and "
                    f"{unit.name!r}; give one of them another name"
                )
            saved[name] = unit.name
        known.add(unit.name)
        known.update(unit.save_to)
        if unit.kind == "instance":
            instances.add(unit.name)


def unit_name(function: Any, name: str | None) -> str:
    """The unit's name: ``name``, else the function's (``__name__``, or the method path)."""
    if name is not None:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"name: expected a non-empty string, got {name!r}")
        return name
    if isinstance(function, str):
        return function
    found = getattr(function, "__name__", None)
    if not isinstance(found, str) or found == "<lambda>":
        raise ConfigError(f"name: give a name to the unit {function!r} (it has no usable __name__)")
    return found
