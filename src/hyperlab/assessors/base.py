"""The assessor interface and the registry that maps names (``"asha"``, NNI's ``"Medianstop"``) to
assessors.

An assessor reads trials' intermediate reports and answers each with a ``Decision``: go on,
pause (a scheduler will resume the trial later, from its checkpoint, with more resource), or
stop. Schedulers also say, through ``actions``, which paused trials to resume and, for
population based training, which new trials to start from another trial's checkpoint.

Like a tuner, an assessor is pure: it sees frozen ``Trial`` and ``Report`` records and the time
the driver gives it, keeps its own state, and knows nothing of processes or storage. The driver
calls it from one thread. Its decisions depend only on its arguments, its seed and the sequence
of calls it received, so a fresh assessor fed the same history (on ``resume``) reaches the same
state and makes the same decisions. ``hyperlab.testing.AssessorContract`` checks this.

The **resource** of a report is ``step + 1`` (epochs, say), or the value of the reported metric
named by ``resource_attr``. The **value** judged is the experiment's ``metric`` (``default`` or
the only metric when none is set), better by ``mode``.

With several objectives (``metric=["loss", "latency"]``) a ``multi_objective`` assessor (MO-ASHA,
``"moasha"``) is built with one mode and one metric name per objective and judges the vector
``losses(report)``; any other assessor judges the one objective the user names with
``assessor_args={"objective": name}``, or the experiment is refused. Constraints need nothing
here: whether a trial is feasible is known only from its final result.
"""

from __future__ import annotations

import enum
import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from hyperlab.config import Registry, check_arguments, class_path, import_path
from hyperlab.errors import ConfigError, TrialError
from hyperlab.space import SearchSpace
from hyperlab.trial import Mode, Report, Trial, TrialStatus, objective_key

__all__ = [
    "ASSESSORS",
    "NNI_ASSESSOR_ADAPTER",
    "Action",
    "Assessor",
    "Branch",
    "Decision",
    "Resume",
    "Stop",
    "Verdicts",
    "assessor_class",
    "assessor_name",
    "assessor_names",
    "create_assessor",
    "nni_assessor_class",
    "register_assessor",
]


class Decision(str, enum.Enum):
    """What a trial does after a report."""

    CONTINUE = "continue"
    PAUSE = "pause"  # stop it now, keep it to resume later from its checkpoint
    STOP = "stop"  # stop it for good: EARLY_STOPPED

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Resume:
    """Resume paused trial ``number``: its objective runs again and continues from its
    checkpoint (``hyperlab.load_checkpoint()``)."""

    number: int


@dataclass(frozen=True)
class Stop:
    """End paused trial ``number`` for good: it is EARLY_STOPPED, with its last value (a
    scheduler's loser that it will never resume)."""

    number: int


@dataclass(frozen=True)
class Branch:
    """Start a new trial with ``params`` that continues from trial ``parent``'s latest
    checkpoint (population based training's exploit and explore)."""

    parent: int
    params: dict[str, Any]


Action = Resume | Stop | Branch
"""What a scheduler asks the driver to do besides answering reports."""


class Verdicts:
    """Which trials an assessor is done with, so that it decides once and for all: a trial it
    told to stop is answered STOP for the reports its attempt sent before the stop reached it,
    and a trial that ended is not judged again until it starts again (resumed, or re-run after
    a crash).

    Example::

        def on_start(self, trial, now):
            self.verdicts.started(trial.number)

        def on_report(self, trial, report, now):
            known = self.verdicts.known(trial.number, report.attempt)
            if known is not None:
                return known
            ...  # judge the report
            return self.verdicts.stop(trial.number, report.attempt)

        def on_end(self, trial, now):
            self.verdicts.ended(trial)
    """

    def __init__(self) -> None:
        self._ended: set[int] = set()
        self._stopped: dict[int, int] = {}  # number -> the attempt told to stop

    def started(self, number: int) -> None:
        """Trial ``number`` (re)started: judge it again."""
        self._ended.discard(number)

    def known(self, number: int, attempt: int) -> Decision | None:
        """The decision already made for a report of ``attempt`` of trial ``number``:
        CONTINUE once the trial ended, STOP once that attempt was told to stop; None when the
        report is to be judged."""
        if number in self._ended:
            return Decision.CONTINUE
        if self._stopped.get(number) == attempt:
            return Decision.STOP
        return None

    def stop(self, number: int, attempt: int) -> Decision:
        """Tell ``attempt`` of trial ``number`` to stop (and its later reports too): STOP."""
        self._stopped[number] = attempt
        return Decision.STOP

    def ended(self, trial: Trial) -> bool:
        """Note how ``trial`` ended; True when it is done for good: finished, and not
        SYS_CANCELED (an interrupted trial runs again on resume)."""
        status = trial.status
        if status.is_finished() and status is not TrialStatus.SYS_CANCELED:
            self._ended.add(trial.number)
            return True
        return False

    def done(self, number: int) -> bool:
        """Whether trial ``number`` ended for good (see ``ended``)."""
        return number in self._ended


class Assessor(ABC):
    """Decides, report by report, whether trials go on.

    Args:
        mode: Which way the judged value is better; one per objective for a
            ``multi_objective`` assessor judging several (a single mode is then broadcast).
        metric: The reported metric judged; None for ``default`` or a report's only metric.
            A ``multi_objective`` assessor takes one name per objective.
        resource_attr: The reported metric that counts a trial's resource; None for
            ``step + 1``.
        seed: Root of the random streams the assessor uses (PBT's perturbations).
        space: The experiment's search space (PBT perturbs parameters within it).

    Subclasses implement ``on_report``; schedulers also override ``on_start``, ``on_end``
    and ``actions``. Extra constructor arguments are keyword-only and come from
    ``assessor_args``; a subclass declares ``resource_attr`` among them (and passes it on) if it
    judges resources, and takes ``**kwargs`` for ``mode``, ``metric``, ``seed``, ``space``,
    which the framework passes.

    Attributes:
        modes: Each judged objective's direction (one item for a single objective).
        metrics: Each judged objective's metric name, in the order of ``modes``.
        mode: The first of ``modes``; metric: the first of ``metrics``.

    Raises:
        ConfigError: several modes or metrics for an assessor that is not ``multi_objective``,
            or not as many metrics as modes.
    """

    multi_objective: ClassVar[bool] = False
    """Whether the assessor judges several objectives at once (it reads ``losses``); any other
    assessor runs on a multi-objective experiment only on one objective the user names
    (``assessor_args={"objective": name}``)."""

    silent_trials_expected: ClassVar[bool] = False
    """Whether trials that never report are usual with this assessor (Optuna's pruners, the
    default of every study): then the driver does not say that it could not judge them."""

    argument_aliases: ClassVar[dict[str, str]] = {}
    """Other names ``assessor_args`` may use for this assessor's arguments (``{"mode":
    "variant"}`` lets ASHA take ``mode="promotion"``, the experiment's ``mode`` being the
    optimisation direction)."""

    def __init__(
        self,
        *,
        mode: Mode | str | Sequence[Mode | str] = Mode.MIN,
        metric: str | Sequence[str | None] | None = None,
        resource_attr: str | None = None,
        seed: int | None = None,
        space: SearchSpace | None = None,
    ) -> None:
        self.modes, self.metrics = _objectives(type(self), mode, metric)
        self.mode = self.modes[0]
        self.metric = self.metrics[0]
        self.resource_attr = resource_attr
        self.space = space
        self.seed = seed if seed is not None else int(np.random.SeedSequence().generate_state(1)[0])

    def on_start(self, trial: Trial, now: float) -> None:  # noqa: B027  (an optional hook)
        """A trial (new, resumed or branched) starts running."""

    @abstractmethod
    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        """The decision on ``trial`` after its ``report``.

        Raises:
            TrialError: the report lacks what the assessor judges (the trial then fails with
                that message).
        """

    def on_end(self, trial: Trial, now: float) -> None:  # noqa: B027  (an optional hook)
        """A trial ended for good (any finished status), or was paused (status PAUSED)."""

    def actions(self, now: float) -> list[Action]:
        """Paused trials to resume or stop, and trials to branch, now; asked after every
        event. An action naming a trial that is not paused (not yet, or no longer) is ignored.
        """
        return []

    def on_no_more_trials(self, count: int, now: float) -> None:  # noqa: B027  (a hook)
        """The driver will create no trial numbered ``count`` or above (its budget is spent, or
        the tuner ran out); called before ``actions`` each time it asks while that holds, so it
        must be idempotent. Schedulers close their unfinished brackets with what they have."""

    def on_more_trials(self, count: int, now: float) -> None:  # noqa: B027  (a hook)
        """Trials numbered ``count`` and above will be created after all: the budget was raised
        after ``on_no_more_trials``. Called once, at that change."""

    def min_concurrency(self) -> int:
        """The concurrency below which this assessor cannot work (PBT: its population)."""
        return 1

    def admits_new_trial(self, number: int) -> bool:
        """Whether the driver may create trial ``number`` from the tuner now (every trial
        numbered below it exists); asked before each one, it changes nothing. A scheduler that
        keeps a fixed population (synchronous PBT) says no while it is complete, so that the
        slots its paused members free stay free. Resumed and branched trials run regardless."""
        return True

    # ---- helpers for subclasses --------------------------------------------------------

    def value(self, report: Report) -> float:
        """The judged value of ``report`` (not sign-adjusted).

        Raises:
            TrialError: the metric is missing or not a finite number.
        """
        return self._read(report, self.metric)

    def loss(self, report: Report) -> float:
        """``value`` turned into a loss to minimise (negated when ``mode`` is max)."""
        return self.mode.sign * self.value(report)

    def losses(self, report: Report) -> tuple[float, ...]:
        """Every judged objective of ``report`` as a loss to minimise, in the order of
        ``metrics``: ``(loss(report),)`` for a single objective.

        Raises:
            TrialError: a metric is missing or not a number (a metric of None reads ``default``
                or the report's only metric, as ``value`` does).
        """
        if len(self.modes) == 1:
            return (self.loss(report),)
        return tuple(
            mode.sign * self._read(report, name)
            for mode, name in zip(self.modes, self.metrics, strict=True)
        )

    def _read(self, report: Report, metric: str | None) -> float:
        metrics = report.metrics
        if self.resource_attr is not None and metric is None:
            metrics = {k: v for k, v in metrics.items() if k != self.resource_attr}
        key = objective_key(metrics, metric)
        if key is None:
            raise TrialError(
                f"the assessor judges one metric, but the trial reported "
                f"{sorted(metrics)} and no `metric` says which; pass metric=<name>"
            )
        if key not in metrics:
            raise TrialError(
                f"the assessor judges metric {key!r}, which the trial's report at step "
                f"{report.step} lacks (it has {sorted(metrics)})"
            )
        value = metrics[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            raise TrialError(f"the assessor judges {key}={value!r}, which is not a number")
        return float(value)

    def resource(self, report: Report) -> float:
        """How much resource the trial had used at ``report``: ``step + 1``, or the metric
        ``resource_attr``.

        Raises:
            TrialError: ``resource_attr`` is missing from the report.
        """
        if self.resource_attr is None:
            return float(report.step + 1)
        value = report.metrics.get(self.resource_attr)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TrialError(
                f"resource_attr={self.resource_attr!r}: the trial's report at step "
                f"{report.step} lacks it (it has {sorted(report.metrics)})"
            )
        return float(value)

    def rng(self, *key: int) -> np.random.Generator:
        """A generator derived from the seed and ``key``, independent of call order."""
        return np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=key))


def _objectives(
    cls: type[Assessor],
    mode: Mode | str | Sequence[Mode | str],
    metric: str | Sequence[str | None] | None,
) -> tuple[tuple[Mode, ...], tuple[str | None, ...]]:
    """``(modes, metrics)`` of an assessor of class ``cls``, one of each per objective."""
    modes = (Mode(mode),) if isinstance(mode, str) else tuple(Mode(m) for m in mode)
    metrics: tuple[str | None, ...] = (
        (metric,) if metric is None or isinstance(metric, str) else tuple(metric)
    )
    if not modes or not metrics:
        raise ConfigError(
            f"assessor: {cls.__name__} needs a mode and a metric per objective, got "
            f"mode={list(modes)}, metric={list(metrics)}"
        )
    if len(modes) == 1 and len(metrics) > 1:
        modes = modes * len(metrics)
    elif len(metrics) == 1 and metric is None:
        metrics = metrics * len(modes)
    if len(modes) != len(metrics):
        raise ConfigError(
            f"assessor: {cls.__name__} got {len(modes)} modes {[m.value for m in modes]} for "
            f"{len(metrics)} metrics {list(metrics)}; give one mode per metric"
        )
    if len(modes) > 1 and not cls.multi_objective:
        raise ConfigError(
            f"assessor: {cls.__name__} judges one objective, got {len(modes)} (metric="
            f"{list(metrics)}); use a multi-objective assessor (moasha), or build it with "
            "one metric and its mode"
        )
    return modes, metrics


ASSESSORS: Registry[Assessor] = Registry(
    "assessor",
    Assessor,
    {
        "median": "hyperlab.assessors._median:MedianAssessor",
        "curvefit": "hyperlab.assessors._curvefit:CurveFittingAssessor",
        "asha": "hyperlab.assessors._asha:ASHA",
        "moasha": "hyperlab.assessors._moasha:MOASHA",
        "hyperband": "hyperlab.assessors._hyperband:Hyperband",
        "pbt": "hyperlab.assessors._pbt:PopulationBasedTraining",
    },
    aliases={
        "Medianstop": "median",
        "Curvefitting": "curvefit",
        "Hyperband": "hyperband",
        "PBT": "pbt",
    },
)
"""Assessor names for ``assessor=``: hyperlab's, NNI's spellings, users' own."""


NNI_ASSESSOR_ADAPTER = "hyperlab.compat.nni.custom:CustomAssessor"
"""The adapter that runs a user's own NNI assessor class (``class MyAssessor(
nni.assessor.Assessor)``), found by its path (the NNI layer sits above the assessors)."""


def nni_assessor_class(assessor: object) -> type | None:
    """The user's NNI assessor class that ``assessor`` is, or names by an unregistered
    ``"module:Class"`` path: a class with NNI's ``assess_trial`` that is no ``Assessor``; None
    for anything else."""
    if isinstance(assessor, str):
        if ":" not in assessor or assessor in ASSESSORS.names():
            return None
        try:
            assessor = import_path("assessor", assessor)
        except ConfigError:
            return None  # ASSESSORS.get says why
    if not isinstance(assessor, type) or issubclass(assessor, Assessor):
        return None
    return assessor if hasattr(assessor, "assess_trial") else None


def register_assessor(
    name: str, cls: type[Assessor] | str, *, aliases: tuple[str, ...] = ()
) -> None:
    """Make an assessor class (or its ``"module:Class"`` path) available as ``name``."""
    ASSESSORS.register(name, cls, aliases=aliases)


def assessor_names() -> list[str]:
    """The names ``assessor=`` accepts, aliases included."""
    return ASSESSORS.names()


def assessor_class(name: str) -> type[Assessor]:
    """The assessor class registered as ``name`` (or at ``"module:Class"``)."""
    return ASSESSORS.get(name)


def assessor_name(assessor: str | type[Assessor]) -> str:
    """What the options store for ``assessor=``: a name as given, else the class's path.

    Raises:
        ConfigError: ``assessor`` is neither a name nor an ``Assessor`` subclass (an instance,
            say: a resumed experiment builds its assessor anew from the class and its
            ``assessor_args``).
    """
    if isinstance(assessor, str):
        return assessor
    if nni_assessor_class(assessor) is not None:
        return class_path(assessor)
    if not isinstance(assessor, type) or not issubclass(assessor, Assessor):
        hint = ""
        if nni_assessor_class(type(assessor)) is not None:
            hint = (
                f"; pass the NNI assessor's class, assessor={type(assessor).__name__}, and its "
                "constructor's arguments as assessor_args (a resumed experiment builds it anew)"
            )
        raise ConfigError(
            "assessor: expected a registered name, an Assessor subclass or instance, or an NNI "
            "Assessor subclass, got "
            f"{type(assessor).__name__} {assessor!r}"[:300]
            + hint
        )
    return ASSESSORS.name_of(assessor) or class_path(assessor)


def create_assessor(
    assessor: str | type[Assessor],
    *,
    mode: Mode | str | Sequence[Mode | str],
    metric: str | Sequence[str | None] | None,
    seed: int,
    space: SearchSpace | None = None,
    args: dict[str, Any] | None = None,
) -> Assessor:
    """The assessor ``assessor`` names (or is), with ``args`` checked against the arguments
    its constructor declares; ``mode`` and ``metric`` give one item per objective for a
    ``multi_objective`` assessor judging several.

    Raises:
        ConfigError: an unknown name (listing the known ones), or an argument the assessor
            does not take or of the wrong type (naming it and the value), or a value the
            assessor refuses (``min_resource >= max_resource``, say).

    A user's NNI assessor class (or its path) runs through ``NNI_ASSESSOR_ADAPTER``, built
    with ``args``.
    """
    nni_class = nni_assessor_class(assessor)
    if nni_class is not None:
        adapter = ASSESSORS.get(NNI_ASSESSOR_ADAPTER)
        nni_args: dict[str, Any] = {"class_name": class_path(nni_class)}
        nni_args["class_args"] = dict(args or {})
        return adapter(mode=mode, metric=metric, seed=seed, space=space, **nni_args)
    if isinstance(assessor, type):
        if not issubclass(assessor, Assessor):
            raise ConfigError(f"assessor: expected an Assessor subclass, got {assessor!r}")
        cls, name = assessor, class_path(assessor)
    elif isinstance(assessor, str):
        cls, name = assessor_class(assessor), assessor
    else:
        raise ConfigError(f"assessor: expected a name or an Assessor subclass, got {assessor!r}")
    fixed = ("mode", "metric", "seed", "space")
    renamed = {cls.argument_aliases.get(key, key): value for key, value in (args or {}).items()}
    checked = check_arguments(cls, renamed, f"assessor_args of {name!r}", given=fixed)
    return cls(mode=mode, metric=metric, seed=seed, space=space, **checked)
