"""What the rules share: the study as Optuna's pruners read it (``StudyTrials``), the base of
the rules (``OptunaRule``), the base of their arguments (``RuleArguments``), and the helpers
more than one rule uses.

A rule's arguments are written once, as a ``RuleArguments`` dataclass listing Optuna's
pruner's arguments in its order, with its defaults, and checked by its ``check``: the pruner of
``_pruners`` derives from that dataclass (so it takes them as Optuna's pruner does), and the
rule takes the same fields as keyword-only arguments (from ``assessor_args``).
"""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, get_type_hints

from hyperlab.assessors.base import Assessor, Decision, Verdicts
from hyperlab.errors import ConfigError, TrialError
from hyperlab.trial import Mode, Report, Trial, TrialStatus, objective_key

__all__ = [
    "OptunaRule",
    "RuleArguments",
    "StudyTrials",
    "bad",
    "best",
    "check_steps",
    "judged",
]


# ---- arguments -----------------------------------------------------------------------------


@dataclass(eq=False)
class RuleArguments(ABC):
    """Base of the dataclasses of the rules' arguments, each the arguments of one Optuna
    pruner, in the order of its signature (positional, then keyword-only after ``KW_ONLY``),
    with its defaults.

    A pruner of ``_pruners`` derives from its rule's arguments and checks them when made; a rule
    makes its arguments from its keyword arguments (``OptunaRule.arguments``) and checks them.
    """

    @abstractmethod
    def check(self, who: str) -> None:
        """Raise ``ConfigError`` (a ``ValueError``) where Optuna's pruner raises ``ValueError``
        for these arguments, naming ``who`` (the pruner or rule class), the rule broken and
        the values received."""


def bad(who: str, rule: str, got: str) -> ConfigError:
    """The error for an argument breaking ``rule``: "`rule` must hold, got ``got``"."""
    return ConfigError(f"{who}: `{rule}` must hold, got {got}")


def check_steps(who: str, n_warmup_steps: int, interval_steps: int) -> None:
    """Check the arguments choosing the judged steps, as Optuna's pruners do."""
    if n_warmup_steps < 0:
        raise bad(who, "n_warmup_steps >= 0", f"n_warmup_steps={n_warmup_steps!r}")
    if interval_steps < 1:
        raise bad(who, "interval_steps >= 1", f"interval_steps={interval_steps!r}")


# ---- the study as Optuna's pruners read it -------------------------------------------------


class StudyTrials:
    """Every trial's intermediate values by step, and the completed trials, in the order
    they completed: what Optuna's pruners read of a study."""

    def __init__(self) -> None:
        self.values: dict[int, dict[int, float]] = {}
        self._attempts: dict[int, dict[int, int]] = {}  # number -> step -> attempt reporting it
        self.completed: list[int] = []

    def add(self, number: int, step: int, value: float, attempt: int) -> None:
        """Record a report; one at a step already reported by this attempt is ignored."""
        values = self.values.setdefault(number, {})
        attempts = self._attempts.setdefault(number, {})
        if step not in values or attempt > attempts[step]:
            values[step] = value
            attempts[step] = attempt

    def last_step(self, number: int) -> int | None:
        """The largest step trial ``number`` reported (``FrozenTrial.last_step``)."""
        values = self.values.get(number)
        return max(values) if values else None

    def completed_last_steps(self) -> list[int]:
        """The last steps of the completed trials that reported."""
        steps = (self.last_step(n) for n in self.completed)
        return [s for s in steps if s is not None]


# ---- the base rule -------------------------------------------------------------------------


class OptunaRule(Assessor):
    """Base of the rules: keeps the trials' values, asks ``prune`` after every report.

    A subclass sets ``arguments`` to the ``RuleArguments`` dataclass of its pruner: it takes
    their fields as keyword-only arguments (its signature lists them, with their types and
    defaults, for ``assessor_args``), followed by the keyword-only arguments of its own
    ``__init__``, if any, and keeps them, checked, as ``args``. It implements ``prune(trial)``,
    Optuna's ``BasePruner.prune(study, trial)`` with ``self.trials`` as the study, ``self.mode``
    as its direction.

    Args:
        **kwargs: The fields of ``arguments``; ``mode``, ``metric``, ``seed``, ``space``: the
            experiment's.

    Raises:
        ConfigError: an argument out of range, naming it and its value.
    """

    silent_trials_expected = True  # Optuna's default pruner, with objectives that never report

    arguments: ClassVar[type[RuleArguments]]
    """The dataclass of the rule's arguments, those of the Optuna pruner it reproduces."""

    __signature__: ClassVar[inspect.Signature]
    """The arguments the rule takes, those of ``arguments`` and its own, keyword-only;
    ``inspect.signature`` returns a class's ``__signature__`` (PEP 362)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.__signature__ = _keyword_signature(cls)

    def __init__(self, **kwargs: Any) -> None:
        given = {f.name: kwargs.pop(f.name) for f in fields(self.arguments) if f.name in kwargs}
        self.args = self.arguments(**given)
        self.args.check(type(self).__name__)
        super().__init__(**kwargs)
        self.trials = StudyTrials()
        self.verdicts = Verdicts()

    def on_start(self, trial: Trial, now: float) -> None:
        self.verdicts.started(trial.number)

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        number = trial.number
        known = self.verdicts.known(number, report.attempt)
        if known is Decision.STOP and report.step >= 0:
            # told to stop, an Optuna trial that never asks should_prune() goes on reporting,
            # and ends COMPLETE: Optuna's study keeps these values, so other trials are judged
            # against them
            self.trials.add(number, report.step, self._intermediate(report), report.attempt)
        if known is not None:
            return known
        if report.step < 0:
            raise TrialError(
                f"Optuna's pruners judge steps >= 0, but the trial reported step={report.step}"
            )
        self.trials.add(number, report.step, self._intermediate(report), report.attempt)
        if self.prune(trial):
            return self.verdicts.stop(number, report.attempt)
        return Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        if self.verdicts.done(trial.number):  # told twice
            return
        if trial.status is TrialStatus.SUCCEEDED:
            self.trials.completed.append(trial.number)
        self.verdicts.ended(trial)

    @abstractmethod
    def prune(self, trial: Trial) -> bool:
        """Whether ``trial`` is pruned now, given every trial's values so far."""

    def _intermediate(self, report: Report) -> float:
        """The judged value of ``report``, NaN included (Optuna's pruners take NaN)."""
        key = objective_key(report.metrics, self.metric)
        raw = report.metrics.get(key) if key is not None else None
        if isinstance(raw, float) and math.isnan(raw):
            return raw
        return self.value(report)


def _keyword_signature(cls: type[OptunaRule]) -> inspect.Signature:
    """The signature of rule ``cls``: the fields of its ``arguments``, then the keyword-only
    arguments of its ``__init__``, all keyword-only and with their types resolved (which
    ``create_assessor`` checks ``assessor_args`` against), then ``**kwargs``."""
    keyword, empty = inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.empty
    hints = get_type_hints(cls.arguments)
    shared = [
        inspect.Parameter(
            f.name,
            keyword,
            default=empty if f.default is MISSING else f.default,
            annotation=hints[f.name],
        )
        for f in fields(cls.arguments)
    ]
    own = inspect.signature(cls.__init__, eval_str=True).parameters.values()
    rest = inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD, annotation=Any)
    return inspect.Signature(
        [*shared, *(p for p in own if p.kind is keyword), rest], return_annotation=None
    )


# ---- helpers of more than one rule ---------------------------------------------------------


def judged(step: int, values: dict[int, float], n_warmup_steps: int, interval_steps: int) -> bool:
    """Whether ``step`` is judged: past the warm-up, and the first step reported in its
    interval (Optuna's ``_is_first_in_interval_step``)."""
    if step < n_warmup_steps:
        return False
    nearest = (step - n_warmup_steps) // interval_steps * interval_steps + n_warmup_steps
    before = max((s for s in values if s != step), default=-1)
    return before < nearest


def best(values: list[float], mode: Mode) -> float:
    """The best of ``values``, NaN ignored (NumPy's ``nanmin``/``nanmax``); NaN if all are."""
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return math.nan
    return min(finite) if mode is Mode.MIN else max(finite)
