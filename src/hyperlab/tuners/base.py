"""The tuner interface and the registry that maps names (``"tpe"``, NNI's ``"TPE"``) to tuners.

A tuner proposes parameter sets and learns from finished trials. It knows nothing about
processes, storage or time: the driver calls it from one thread, so it needs no locks.
Its proposals depend only on its seed, the trial number and the trials it has observed, so
that replaying the history after a crash gives the same next proposal.
"""

from __future__ import annotations

import importlib
import inspect
from abc import ABC, abstractmethod
from typing import Any, Literal

import numpy as np
from pydantic import ConfigDict, ValidationError, create_model

from hyperlab.config import describe_validation_error
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Trial

__all__ = ["Tuner", "create_tuner", "register_tuner", "tuner_class", "tuner_names"]


class Tuner(ABC):
    """Proposes parameter sets.

    Args:
        space: The search space to propose from.
        mode: ``"min"`` or ``"max"``: which way ``Trial.value`` is better.
        seed: Root of every random stream the tuner uses.

    Subclasses implement ``suggest``; learning tuners also override ``observe``. Extra
    constructor arguments are keyword-only and come from ``tuner_args``.
    """

    def __init__(
        self, space: SearchSpace, *, mode: Literal["min", "max"] = "min", seed: int | None = None
    ) -> None:
        self.space = space
        self.mode = mode
        self.seed = seed if seed is not None else int(np.random.SeedSequence().generate_state(1)[0])

    @abstractmethod
    def suggest(self, number: int) -> dict[str, Any] | None:
        """The parameters for trial ``number``, or None when there is nothing left to propose."""

    def budget(self) -> int | None:
        """How many trials this tuner can propose at most; None when it never runs out."""
        return None

    def observe(self, trial: Trial) -> None:  # noqa: B027  (an optional hook, not abstract)
        """Learn from a finished trial (any final status; ``trial.value`` set if it succeeded)."""

    def rng(self, *key: int) -> np.random.Generator:
        """A generator derived from the seed and ``key``, independent of call order."""
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))


_REGISTRY: dict[str, str | type[Tuner]] = {
    "random": "hyperlab.tuners._random:RandomTuner",
    "grid": "hyperlab.tuners._grid:GridTuner",
    "tpe": "hyperlab.tuners._tpe:TPETuner",
    "anneal": "hyperlab.tuners._anneal:AnnealTuner",
    "evolution": "hyperlab.tuners._evolution:EvolutionTuner",
    "gp": "hyperlab.tuners._gp:GPTuner",
    "cmaes": "hyperlab.tuners._cmaes:CMAESTuner",
}
_ALIASES: dict[str, str] = {
    "Random": "random",
    "GridSearch": "grid",
    "TPE": "tpe",
    "Anneal": "anneal",
    "Evolution": "evolution",
    "GPTuner": "gp",
}


def register_tuner(name: str, cls: type[Tuner] | str, *, aliases: tuple[str, ...] = ()) -> None:
    """Make a tuner class (or its ``"module:Class"`` path) available as ``name`` and aliases."""
    _REGISTRY[name] = cls
    for alias in aliases:
        _ALIASES[alias] = name


def tuner_names() -> list[str]:
    """The names ``tuner=`` accepts, aliases included."""
    return sorted(_REGISTRY) + sorted(_ALIASES)


def tuner_class(name: str) -> type[Tuner]:
    """The tuner class registered as ``name``; ``ConfigError`` listing the known names."""
    key = _ALIASES.get(name, name) if isinstance(name, str) else name
    try:
        entry = _REGISTRY[key]
    except (KeyError, TypeError):
        raise ConfigError(
            f"tuner: unknown tuner {name!r}; known tuners: {', '.join(tuner_names())}"
        ) from None
    if isinstance(entry, str):
        module, _, attr = entry.partition(":")
        entry = _REGISTRY[key] = getattr(importlib.import_module(module), attr)
    return entry


def create_tuner(
    name: str,
    space: SearchSpace,
    *,
    mode: Literal["min", "max"],
    seed: int,
    args: dict[str, Any] | None = None,
) -> Tuner:
    """Build tuner ``name``; bad ``args`` give a ``ConfigError`` naming the argument and value.

    Arguments are checked against the types the tuner's constructor declares (with pydantic,
    so ``"10"`` for an ``int`` is accepted and ``"x"`` for a ``float`` is not).
    """
    cls = tuner_class(name)
    parameters = _arguments(cls)
    unknown = sorted(set(args or {}) - set(parameters))
    if unknown:
        raise ConfigError(
            f"tuner_args: {name!r} does not accept {', '.join(map(repr, unknown))}; "
            f"its arguments are: {', '.join(parameters) or 'none'}"
        )
    model = create_model(
        f"{cls.__name__}Arguments",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
        **parameters,
    )
    try:
        checked = model(**(args or {}))
    except ValidationError as exc:
        raise ConfigError(f"tuner_args of {name!r}: {describe_validation_error(exc)}") from None
    return cls(space, mode=mode, seed=seed, **{k: getattr(checked, k) for k in args or {}})


def _arguments(cls: type[Tuner]) -> dict[str, tuple[Any, Any]]:
    """The tuner's own keyword-only arguments: name -> (annotation, default)."""
    try:
        signature = inspect.signature(cls.__init__, eval_str=True)
    except (NameError, TypeError):  # annotations that cannot be resolved: check names only
        signature = inspect.signature(cls.__init__)
    return {
        p.name: (
            Any if p.annotation is p.empty or isinstance(p.annotation, str) else p.annotation,
            p.default if p.default is not p.empty else ...,
        )
        for p in signature.parameters.values()
        if p.kind is p.KEYWORD_ONLY and p.name not in ("mode", "seed")
    }
