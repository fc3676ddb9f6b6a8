"""The tuner interface and the registry that maps names (``"tpe"``, NNI's ``"TPE"``) to tuners.

A tuner proposes parameter sets and learns from finished trials. It knows nothing about
processes, storage or time: the driver calls it from one thread, so it needs no locks.
Its proposals depend only on its seed, the trial number and the trials it has observed, so
that replaying the history after a crash gives the same next proposal.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from hyperlab.config import Registry, check_arguments, class_path, import_path
from hyperlab.errors import ConfigError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Trial

__all__ = [
    "NNI_ADVISOR_ADAPTER",
    "NNI_TUNER_ADAPTER",
    "TUNERS",
    "Tuner",
    "create_tuner",
    "nni_tuner_class",
    "register_tuner",
    "tuner_class",
    "tuner_name",
    "tuner_names",
]


class Tuner(ABC):
    """Proposes parameter sets.

    Args:
        space: The search space to propose from.
        mode: ``Mode.MIN`` or ``Mode.MAX`` (or ``"min"`` / ``"max"``): which way
            ``Trial.value`` is better; with several objectives, one per objective, in the
            order of ``Trial.values`` (only a ``multi_objective`` tuner takes several).
        seed: Root of every random stream the tuner uses.

    Subclasses implement ``suggest``; learning tuners also override ``observe``. Extra
    constructor arguments are keyword-only and come from ``tuner_args``.

    Attributes:
        modes: Each objective's direction (one item with a single objective).
        mode: The first objective's direction.
    """

    multi_objective: ClassVar[bool] = False
    """Whether the tuner takes several objectives (``metric=[...]``): it then reads
    ``Trial.values`` (``Trial.objectives``) and ``modes``; others are refused before a run."""

    constraints: ClassVar[bool] = False
    """Whether the tuner honours constraints (``Trial.constraints``, ``Trial.feasible``);
    others are refused when an experiment has ``constraints``."""

    def __init__(
        self,
        space: SearchSpace,
        *,
        mode: Mode | str | Sequence[Mode | str] = Mode.MIN,
        seed: int | None = None,
    ) -> None:
        self.space = space
        self.modes = _modes(mode)
        self.mode = self.modes[0]
        self.seed = seed if seed is not None else int(np.random.SeedSequence().generate_state(1)[0])

    @abstractmethod
    def suggest(self, number: int) -> dict[str, Any] | None:
        """The parameters for trial ``number``, or None when there is nothing left to propose."""

    def budget(self) -> int | None:
        """How many trials this tuner can propose at most; None when it never runs out."""
        return None

    def observe(self, trial: Trial) -> None:  # noqa: B027  (an optional hook, not abstract)
        """Learn from a finished trial (any final status; ``trial.value`` set if it succeeded)."""

    def requeued(self, trial: Trial) -> None:  # noqa: B027  (an optional hook, not abstract)
        """On resume: ``trial`` was interrupted and runs again with its stored params."""

    def waits(self) -> bool:
        """After ``suggest`` returned None: True if that holds only for now, because a trial
        still running may, once it ends, give the tuner more to propose (an adaptive research
        domain); the driver then asks again after the next trial ends."""
        return False

    def runs_out(self) -> bool:
        """True when the tuner ends the experiment by itself (a finite ``budget``, or a finite
        domain whose size is not known in advance), so no other budget is required."""
        return self.budget() is not None

    def rng(self, *key: int) -> np.random.Generator:
        """A generator derived from the seed and ``key``, independent of call order."""
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))


def _modes(mode: Mode | str | Sequence[Mode | str]) -> tuple[Mode, ...]:
    if isinstance(mode, str):
        return (Mode(mode),)
    modes = tuple(Mode(m) for m in mode)
    if not modes:
        raise ConfigError("mode: expected 'min', 'max' or a list of them, got []")
    return modes


def _check_objectives(cls: type, name: str, modes: tuple[Mode, ...], constrained: bool) -> None:
    """Refuse a tuner class that cannot take the experiment's objectives or constraints,
    before anything runs.

    Raises:
        ConfigError: naming it, what it lacks, and what to use instead.
    """
    if len(modes) > 1 and not getattr(cls, "multi_objective", False):
        raise ConfigError(
            f"tuner: {name!r} optimises one objective, and this experiment has "
            f"{len(modes)} (metric is a list); use a multi-objective tuner "
            f"({', '.join(_able('multi_objective'))}), or one metric"
        )
    if constrained and not getattr(cls, "constraints", False):
        raise ConfigError(
            f"tuner: {name!r} does not honour constraints, and this experiment has some; use "
            f"one that does ({', '.join(_able('constraints'))}), or remove constraints"
        )


def _able(flag: str) -> list[str]:
    able = []
    for name in TUNERS.registered():
        try:
            if getattr(TUNERS.get(name), flag, False):
                able.append(name)
        except ConfigError:
            continue
    return able


TUNERS: Registry[Tuner] = Registry(
    "tuner",
    Tuner,
    {
        "auto": "hyperlab.tuners._auto:AutoTuner",
        "none": "hyperlab.tuners._none:NoTuner",
        "random": "hyperlab.tuners._random:RandomTuner",
        "grid": "hyperlab.tuners._grid:GridTuner",
        "tpe": "hyperlab.tuners._tpe:TPETuner",
        "anneal": "hyperlab.tuners._anneal:AnnealTuner",
        "evolution": "hyperlab.tuners._evolution:EvolutionTuner",
        "gp": "hyperlab.tuners._gp:GPTuner",
        "cmaes": "hyperlab.tuners._cmaes:CMAESTuner",
        "bohb": "hyperlab.tuners._bohb:BOHB",
        "nsga2": "hyperlab.tuners._nsga:NSGAIITuner",
        "nsga3": "hyperlab.tuners._nsga:NSGAIIITuner",
    },
    aliases={
        "Random": "random",
        "GridSearch": "grid",
        "TPE": "tpe",
        "Anneal": "anneal",
        "Evolution": "evolution",
        "GPTuner": "gp",
        "BOHB": "bohb",
        "NSGAII": "nsga2",
        "NSGAIII": "nsga3",
    },
)
"""Tuner names for ``tuner=``: hyperlab's, NNI's spellings, and users' own (``register_tuner``)."""


NNI_TUNER_ADAPTER = "hyperlab.compat.nni.custom:CustomTuner"
"""The adapter that runs a user's own NNI tuner class (``class MyTuner(nni.tuner.Tuner)``),
found by its path (the NNI layer sits above the tuners)."""

NNI_ADVISOR_ADAPTER = "hyperlab.compat.nni.advisor:CustomAdvisor"
"""The adapter that runs a user's own NNI advisor class (``class MyAdvisor(MsgDispatcherBase)``,
with ``handle_request_trial_jobs``) as the tuner."""


def nni_tuner_class(tuner: object) -> type | None:
    """The user's NNI tuner or advisor class that ``tuner`` is, or names by an unregistered
    ``"module:Class"`` path: a class with NNI's ``receive_trial_result`` and
    ``generate_parameters`` (or ``generate_multiple_parameters``), or an advisor's
    ``handle_request_trial_jobs``, that is no ``Tuner``; None for anything else."""
    if isinstance(tuner, str):
        if ":" not in tuner or tuner in TUNERS.names():
            return None
        try:
            tuner = import_path("tuner", tuner)
        except ConfigError:
            return None  # TUNERS.get says why
    if not isinstance(tuner, type) or issubclass(tuner, Tuner):
        return None
    if hasattr(tuner, "handle_request_trial_jobs"):
        return tuner
    proposes = hasattr(tuner, "generate_parameters") or hasattr(
        tuner, "generate_multiple_parameters"
    )
    return tuner if proposes and hasattr(tuner, "receive_trial_result") else None


def register_tuner(name: str, cls: type[Tuner] | str, *, aliases: tuple[str, ...] = ()) -> None:
    """Make a tuner class (or its ``"module:Class"`` path) available as ``name`` and aliases."""
    TUNERS.register(name, cls, aliases=aliases)


def tuner_names() -> list[str]:
    """The names ``tuner=`` accepts, aliases included."""
    return TUNERS.names()


def tuner_class(name: str) -> type[Tuner]:
    """The tuner class registered as ``name`` (or at ``"module:Class"``); ``ConfigError``
    listing the known names otherwise."""
    return TUNERS.get(name)


def tuner_name(tuner: str | type[Tuner] | Tuner) -> str:
    """What the options store for ``tuner=``: a name as given, else the class's import path
    (a user's NNI tuner class's too).

    Raises:
        ConfigError: an instance of a user's NNI tuner class (a resumed experiment builds its
            tuner anew: pass the class and its arguments as ``tuner_args``).
    """
    if isinstance(tuner, str):
        return tuner
    if not isinstance(tuner, (type, Tuner)) and nni_tuner_class(type(tuner)) is not None:
        raise ConfigError(
            f"tuner: an instance of the NNI tuner {type(tuner).__name__} was given; pass the "
            f"class, tuner={type(tuner).__name__}, and its constructor's arguments as "
            "tuner_args (a resumed experiment builds it anew from them)"
        )
    cls = tuner if isinstance(tuner, type) else type(tuner)
    return TUNERS.name_of(cls) or class_path(cls)


def create_tuner(
    tuner: str | type[Tuner] | Tuner,
    space: SearchSpace,
    *,
    mode: Mode | str | Sequence[Mode | str],
    seed: int,
    args: dict[str, Any] | None = None,
    constrained: bool = False,
) -> Tuner:
    """The tuner ``tuner`` names (or is) for ``space``; bad ``args`` give a ``ConfigError``
    naming the argument and value.

    Args:
        tuner: A registered name, a ``"module:Class"`` path, a ``Tuner`` subclass, or an
            instance, which is used as it is (it must have been built for ``space`` and
            ``mode``; ``args`` must then be empty). A user's NNI tuner class (or its path)
            runs through ``NNI_TUNER_ADAPTER``, an NNI advisor class through
            ``NNI_ADVISOR_ADAPTER``, built with ``args``.
        space: The search space.
        mode: Which way values are better: one direction, or one per objective.
        seed: The tuner's seed (ignored for an instance, which has its own).
        constrained: The experiment has constraints.
        args: Keyword arguments of the tuner's constructor, checked against the types it
            declares (with pydantic, so ``"10"`` for an ``int`` is accepted and ``"x"`` for a
            ``float`` is not).
    """
    modes = _modes(mode)
    mode = modes if len(modes) > 1 else modes[0]
    if isinstance(tuner, Tuner):
        _check_objectives(type(tuner), type(tuner).__name__, modes, constrained)
        return _check_instance(tuner, space, modes, args)
    nni_class = nni_tuner_class(tuner)
    if nni_class is not None:
        _check_objectives(nni_class, nni_class.__name__, modes, constrained)
        advisor = hasattr(nni_class, "handle_request_trial_jobs")
        adapter = TUNERS.get(NNI_ADVISOR_ADAPTER if advisor else NNI_TUNER_ADAPTER)
        nni_args = {"class_name": class_path(nni_class), "class_args": dict(args or {})}
        return adapter(space, mode=mode, seed=seed, **nni_args)
    if isinstance(tuner, type):
        if not issubclass(tuner, Tuner):
            raise ConfigError(f"tuner: expected a Tuner subclass, got {tuner!r}")
        cls, name = tuner, class_path(tuner)
    elif isinstance(tuner, str):
        cls, name = tuner_class(tuner), tuner
    else:
        raise ConfigError(
            f"tuner: expected a name, a Tuner subclass or a Tuner instance, got {tuner!r}"
        )
    _check_objectives(cls, name, modes, constrained)
    checked = check_arguments(cls, args, f"tuner_args of {name!r}", given=("mode", "seed"))
    return cls(space, mode=mode, seed=seed, **checked)


def _check_instance(
    tuner: Tuner, space: SearchSpace, modes: tuple[Mode, ...], args: dict[str, Any] | None
) -> Tuner:
    if args:
        raise ConfigError(
            f"tuner_args: a tuner given as an instance ({type(tuner).__name__}) takes no "
            f"tuner_args, got {sorted(args)}; pass its arguments to its constructor"
        )
    if tuner.space != space:
        raise ConfigError(
            f"tuner: the {type(tuner).__name__} instance was built for another search space "
            f"({tuner.space!r}) than the experiment's ({space!r})"
        )
    if tuner.modes != modes:
        raise ConfigError(
            f"tuner: the {type(tuner).__name__} instance has mode="
            f"{_shown(tuner.modes)}, the experiment mode={_shown(modes)}"
        )
    return tuner


def _shown(modes: tuple[Mode, ...]) -> str:
    return repr(modes[0].value) if len(modes) == 1 else repr([m.value for m in modes])
