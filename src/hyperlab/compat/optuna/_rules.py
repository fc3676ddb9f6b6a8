"""Optuna's pruners as hyperlab assessors that decide exactly as Optuna does.

Each rule keeps what Optuna's pruners read of a study, rebuilt from the calls the driver makes
(and replays, in time order, on resume): every trial's intermediate values by step, and which
trials completed (SUCCEEDED, Optuna's COMPLETE). A report at ``step`` is Optuna's
``trial.report(value, step)``, and the decision on it is what ``trial.should_prune()`` returns
right after: the rule judges the trial with all its reports so far, its last step being the
largest step reported, as ``FrozenTrial.last_step``. As in Optuna:

- a second report at a step already reported keeps the first value (a re-run, a later
  ``attempt``, replaces it);
- values may be NaN: a trial whose values are all NaN is pruned by the percentile rules, a NaN
  at a judged step by the others; NaN values of other trials are ignored;
- ``n_warmup_steps`` and ``interval_steps`` decide whether a step is judged with Optuna's
  ``_is_first_in_interval_step``;
- what Optuna's pruners store on the pruner or as trial system attributes (successive halving's
  rung values, ``min_resource="auto"``, Hyperband's brackets) is kept here, and reached again
  on replay.

A trial told to stop stays stopped (its later reports of the same attempt are answered STOP),
and nothing is decided after a trial ended. The rules decide STOP or CONTINUE, never PAUSE.
"""

from __future__ import annotations

import binascii
import math
from abc import abstractmethod
from typing import Any, Literal

import numpy as np

from hyperlab.assessors.base import Assessor, Decision, create_assessor
from hyperlab.errors import ConfigError, TrialError
from hyperlab.trial import Mode, Report, Trial, TrialStatus, objective_key

__all__ = [
    "HyperbandRule",
    "OptunaRule",
    "PatientRule",
    "PercentileRule",
    "StudyTrials",
    "SuccessiveHalvingRule",
    "ThresholdRule",
    "check_halving",
    "check_hyperband",
    "check_patient",
    "check_percentile",
    "check_threshold",
]


# ---- argument checks (shared with the pruners of ``_pruners``) ------------------------------


def _bad(who: str, rule: str, got: str) -> ConfigError:
    return ConfigError(f"{who}: `{rule}` must hold, got {got}")


def check_percentile(
    who: str,
    percentile: float,
    n_startup_trials: int,
    n_warmup_steps: int,
    interval_steps: int,
    n_min_trials: int,
) -> None:
    """Raise ``ConfigError`` (a ``ValueError``) where Optuna's ``PercentilePruner`` raises."""
    if not 0.0 <= percentile <= 100.0:
        raise _bad(who, "0 <= percentile <= 100", f"percentile={percentile!r}")
    if n_startup_trials < 0:
        raise _bad(who, "n_startup_trials >= 0", f"n_startup_trials={n_startup_trials!r}")
    _check_steps(who, n_warmup_steps, interval_steps)
    if n_min_trials < 1:
        raise _bad(who, "n_min_trials >= 1", f"n_min_trials={n_min_trials!r}")


def check_threshold(
    who: str, lower: float | None, upper: float | None, n_warmup_steps: int, interval_steps: int
) -> None:
    """Raise ``ConfigError`` where Optuna's ``ThresholdPruner`` raises a ``ValueError`` (its
    ``TypeError`` for no bound at all is the pruner's: without bounds, the rule prunes NaN
    values only, as Optuna's with infinite bounds)."""
    if lower is not None and upper is not None and lower > upper:
        raise _bad(who, "lower <= upper", f"lower={lower!r}, upper={upper!r}")
    _check_steps(who, n_warmup_steps, interval_steps)


def check_halving(
    who: str,
    min_resource: int | str,
    reduction_factor: int,
    min_early_stopping_rate: int,
    bootstrap_count: int,
) -> None:
    """Raise ``ConfigError`` where Optuna's ``SuccessiveHalvingPruner`` raises, and for a
    ``min_resource`` neither an integer nor ``"auto"`` (which Optuna takes for ``"auto"``)."""
    _check_min_resource(who, min_resource, auto=True)
    if reduction_factor < 2:
        raise _bad(who, "reduction_factor >= 2", f"reduction_factor={reduction_factor!r}")
    if min_early_stopping_rate < 0:
        raise _bad(
            who,
            "min_early_stopping_rate >= 0",
            f"min_early_stopping_rate={min_early_stopping_rate!r}",
        )
    _check_bootstrap(who, bootstrap_count, "min_resource", min_resource)


def check_hyperband(
    who: str,
    min_resource: int,
    max_resource: int | str,
    reduction_factor: int,
    bootstrap_count: int,
) -> None:
    """Raise ``ConfigError`` where Optuna's ``HyperbandPruner`` raises, at once rather than at
    its first ``prune`` (where its successive halving brackets check their arguments)."""
    _check_min_resource(who, min_resource, auto=False)
    if isinstance(max_resource, bool) or not (
        isinstance(max_resource, int) or max_resource == "auto"
    ):
        raise ConfigError(
            f"{who}: max_resource must be an integer or 'auto', got max_resource={max_resource!r}"
        )
    if reduction_factor < 2:
        raise _bad(who, "reduction_factor >= 2", f"reduction_factor={reduction_factor!r}")
    _check_bootstrap(who, bootstrap_count, "max_resource", max_resource)


def check_patient(who: str, patience: int, min_delta: float) -> None:
    """Raise ``ConfigError`` where Optuna's ``PatientPruner`` raises."""
    if patience < 0:
        raise _bad(who, "patience >= 0", f"patience={patience!r}")
    if min_delta < 0:
        raise _bad(who, "min_delta >= 0", f"min_delta={min_delta!r}")


def _check_steps(who: str, n_warmup_steps: int, interval_steps: int) -> None:
    if n_warmup_steps < 0:
        raise _bad(who, "n_warmup_steps >= 0", f"n_warmup_steps={n_warmup_steps!r}")
    if interval_steps < 1:
        raise _bad(who, "interval_steps >= 1", f"interval_steps={interval_steps!r}")


def _check_min_resource(who: str, min_resource: int | str, *, auto: bool) -> None:
    if auto and min_resource == "auto":
        return
    if isinstance(min_resource, bool) or not isinstance(min_resource, int) or min_resource < 1:
        expected = "an integer >= 1 or 'auto'" if auto else "an integer >= 1"
        raise ConfigError(
            f"{who}: min_resource must be {expected}, got min_resource={min_resource!r}"
        )


def _check_bootstrap(who: str, bootstrap_count: int, name: str, resource: int | str) -> None:
    if bootstrap_count < 0:
        raise _bad(who, "bootstrap_count >= 0", f"bootstrap_count={bootstrap_count!r}")
    if bootstrap_count > 0 and resource == "auto":
        raise ConfigError(
            f"{who}: bootstrap_count > 0 needs an integer {name}, got "
            f"bootstrap_count={bootstrap_count!r} with {name}='auto'"
        )


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


# ---- the rules -----------------------------------------------------------------------------


class OptunaRule(Assessor):
    """Base of the rules: keeps the trials' values, asks ``prune`` after every report.

    Subclasses implement ``prune(trial)``, Optuna's ``BasePruner.prune(study, trial)`` with
    ``self.trials`` as the study, ``self.mode`` as its direction.
    """

    silent_trials_expected = True  # Optuna's default pruner, with objectives that never report

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.trials = StudyTrials()
        self._ended: set[int] = set()  # never judged again
        self._stopped: dict[int, int] = {}  # number -> the attempt told to stop

    def on_start(self, trial: Trial, now: float) -> None:
        self._ended.discard(trial.number)

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        number = trial.number
        if number in self._ended:
            return Decision.CONTINUE
        if self._stopped.get(number) == report.attempt:  # reports sent before it stopped
            return Decision.STOP
        if report.step < 0:
            raise TrialError(
                f"Optuna's pruners judge steps >= 0, but the trial reported step={report.step}"
            )
        self.trials.add(number, report.step, self._intermediate(report), report.attempt)
        if self.prune(trial):
            self._stopped[number] = report.attempt
            return Decision.STOP
        return Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        status = trial.status
        if trial.number in self._ended:  # told twice
            return
        if status is TrialStatus.SUCCEEDED:
            self.trials.completed.append(trial.number)
        if status.is_finished() and status is not TrialStatus.SYS_CANCELED:  # it re-runs
            self._ended.add(trial.number)

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


class PercentileRule(OptunaRule):
    """Optuna's ``PercentilePruner`` (and ``MedianPruner``: ``percentile=50``).

    A trial is pruned at step ``s`` (judged as ``n_warmup_steps`` and ``interval_steps`` say)
    when its best value over all its steps is worse than the ``percentile``-th best of the
    values the completed trials reported at ``s`` (NumPy's linear interpolation, NaN ignored),
    once ``n_startup_trials`` trials completed and at least ``n_min_trials`` of them reported
    at ``s``. A trial whose values are all NaN is pruned.

    Args:
        percentile: In ``[0, 100]``: the best ``percentile`` percent are kept.
        n_startup_trials: Nothing is pruned before this many trials completed.
        n_warmup_steps: Nothing is pruned at steps below this.
        interval_steps: Judge once every this many steps, counted from ``n_warmup_steps``.
        n_min_trials: Judge a step only once this many completed trials reported at it.
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``: the experiment's.
    """

    def __init__(
        self,
        *,
        percentile: float,
        n_startup_trials: int = 5,
        n_warmup_steps: int = 0,
        interval_steps: int = 1,
        n_min_trials: int = 1,
        **kwargs: Any,
    ) -> None:
        check_percentile(
            type(self).__name__,
            percentile,
            n_startup_trials,
            n_warmup_steps,
            interval_steps,
            n_min_trials,
        )
        super().__init__(**kwargs)
        self.percentile = float(percentile)
        self.n_startup_trials = n_startup_trials
        self.n_warmup_steps = n_warmup_steps
        self.interval_steps = interval_steps
        self.n_min_trials = n_min_trials

    def prune(self, trial: Trial) -> bool:
        completed = self.trials.completed
        if not completed or len(completed) < self.n_startup_trials:
            return False
        values = self.trials.values[trial.number]
        step = max(values)
        if not _judged(step, values, self.n_warmup_steps, self.interval_steps):
            return False
        best = _best(list(values.values()), self.mode)
        if math.isnan(best):
            return True
        others = [
            self.trials.values[n][step] for n in completed if step in self.trials.values.get(n, {})
        ]
        if len(others) < self.n_min_trials:
            return False
        finite = [v for v in others if not math.isnan(v)]
        if not finite:
            return False
        q = self.percentile if self.mode is Mode.MIN else 100 - self.percentile
        cut = float(np.percentile(np.array(finite, dtype=float), q))
        return best < cut if self.mode is Mode.MAX else best > cut


class ThresholdRule(OptunaRule):
    """Optuna's ``ThresholdPruner``: a trial is pruned at a judged step when its value there
    is NaN, below ``lower`` or above ``upper``.

    Args:
        lower: Prune below this (None: no lower bound).
        upper: Prune above this (None: no upper bound).
        n_warmup_steps / interval_steps: Which steps are judged, as ``PercentileRule``'s.
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``: the experiment's.
    """

    def __init__(
        self,
        *,
        lower: float | None = None,
        upper: float | None = None,
        n_warmup_steps: int = 0,
        interval_steps: int = 1,
        **kwargs: Any,
    ) -> None:
        check_threshold(type(self).__name__, lower, upper, n_warmup_steps, interval_steps)
        super().__init__(**kwargs)
        self.lower = -math.inf if lower is None else float(lower)
        self.upper = math.inf if upper is None else float(upper)
        self.n_warmup_steps = n_warmup_steps
        self.interval_steps = interval_steps

    def prune(self, trial: Trial) -> bool:
        values = self.trials.values[trial.number]
        step = max(values)
        if not _judged(step, values, self.n_warmup_steps, self.interval_steps):
            return False
        latest = values[step]
        return math.isnan(latest) or latest < self.lower or latest > self.upper


class SuccessiveHalvingRule(OptunaRule):
    """Optuna's ``SuccessiveHalvingPruner`` (asynchronous successive halving, stop variant).

    Rung ``k`` sits at step ``min_resource * reduction_factor ** (min_early_stopping_rate +
    k)``. When a trial's last step reaches its next rung, its value at that step is recorded
    there, and it goes on only if that value ranks among the best
    ``max(1, n // reduction_factor)`` of the ``n`` values every trial recorded at the rung
    (ties go on); a report that reaches several rungs is judged at each. A NaN value at a rung
    is pruned; with ``bootstrap_count``, a trial is pruned while no more than that many values
    are recorded at its rung. ``min_resource="auto"`` is fixed at the first report judged after
    a trial completed: the largest last step of the completed trials, divided by 100 (at least
    1); until then nothing is pruned or recorded.

    Args:
        min_resource: The first rung's step (``>= 1``), or ``"auto"``.
        reduction_factor: One in ``reduction_factor`` trials goes on at each rung (``>= 2``).
        min_early_stopping_rate: Shifts the rungs up by this many factors.
        bootstrap_count: Prune while a rung holds no more than this many values.
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``: the experiment's.
    """

    def __init__(
        self,
        *,
        min_resource: int | Literal["auto"] = "auto",
        reduction_factor: int = 4,
        min_early_stopping_rate: int = 0,
        bootstrap_count: int = 0,
        **kwargs: Any,
    ) -> None:
        check_halving(
            type(self).__name__,
            min_resource,
            reduction_factor,
            min_early_stopping_rate,
            bootstrap_count,
        )
        super().__init__(**kwargs)
        self.min_resource: int | None = None if min_resource == "auto" else int(min_resource)
        self.reduction_factor = reduction_factor
        self.min_early_stopping_rate = min_early_stopping_rate
        self.bootstrap_count = bootstrap_count
        self.rungs = _Rungs()

    def prune(self, trial: Trial) -> bool:
        if self.min_resource is None:
            steps = self.trials.completed_last_steps()
            if not steps:
                return False
            self.min_resource = max(max(steps) // 100, 1)
        return self.rungs.judge(
            self.trials,
            trial.number,
            self.mode,
            min_resource=self.min_resource,
            reduction_factor=self.reduction_factor,
            rate=self.min_early_stopping_rate,
            bootstrap_count=self.bootstrap_count,
        )


class HyperbandRule(OptunaRule):
    """Optuna's ``HyperbandPruner``: successive halving in brackets, a trial's bracket drawn
    from a hash of the study's name and its number.

    At the first report judged (with ``max_resource="auto"``: the first after a trial
    completed, ``max_resource`` then being the largest last step of the completed trials + 1)
    it sets up ``n = floor(log(max_resource / min_resource, reduction_factor)) + 1`` brackets;
    bracket ``b`` is ``SuccessiveHalvingRule``'s rule with ``min_early_stopping_rate=b``,
    judging its trials against its own trials only, and holds a share ``ceil(n * eta ** s /
    (s + 1))`` (``s = n - 1 - b``) of the trial numbers. Trial ``number`` goes to the bracket
    of ``crc32(f"{study_name}_{number}")`` modulo the sum of the shares, as Optuna assigns it.

    Args:
        min_resource: The first rung's step in bracket 0 (``>= 1``).
        max_resource: The largest step trials reach, or ``"auto"``.
        reduction_factor: ``eta`` (``>= 2``).
        bootstrap_count: As ``SuccessiveHalvingRule``'s.
        study_name: The name hashed with each trial's number; None for the experiment's id.
            Give the Optuna study's name to put every trial number in the bracket Optuna
            would.
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``: the experiment's.
    """

    def __init__(
        self,
        *,
        min_resource: int = 1,
        max_resource: int | Literal["auto"] = "auto",
        reduction_factor: int = 3,
        bootstrap_count: int = 0,
        study_name: str | None = None,
        **kwargs: Any,
    ) -> None:
        check_hyperband(
            type(self).__name__, min_resource, max_resource, reduction_factor, bootstrap_count
        )
        super().__init__(**kwargs)
        self.min_resource = int(min_resource)
        self.max_resource: int | None = None if max_resource == "auto" else int(max_resource)
        self.reduction_factor = reduction_factor
        self.bootstrap_count = bootstrap_count
        self.study_name = study_name
        self.budgets: list[int] = []  # each bracket's share of the trial numbers
        self._brackets: list[_Rungs] = []

    def prune(self, trial: Trial) -> bool:
        if not self._brackets:
            self._set_up()
            if not self._brackets:
                return False
        bracket = self.bracket_of(trial)
        return self._brackets[bracket].judge(
            self.trials,
            trial.number,
            self.mode,
            min_resource=self.min_resource,
            reduction_factor=self.reduction_factor,
            rate=bracket,
            bootstrap_count=self.bootstrap_count,
        )

    def bracket_of(self, trial: Trial) -> int:
        """The bracket of ``trial`` (0 before the brackets are set up)."""
        total = sum(self.budgets)
        if not total:
            return 0
        name = self.study_name if self.study_name is not None else trial.experiment_id
        n = binascii.crc32(f"{name}_{trial.number}".encode()) % total
        for bracket, budget in enumerate(self.budgets):
            n -= budget
            if n < 0:
                return bracket
        raise AssertionError("unreachable: the shares sum to the modulus")

    def _set_up(self) -> None:
        if self.max_resource is None:
            steps = self.trials.completed_last_steps()
            if not steps:
                return
            self.max_resource = max(steps) + 1
        eta = self.reduction_factor
        count = math.floor(math.log(self.max_resource / self.min_resource, eta)) + 1
        for bracket in range(count):
            s = count - 1 - bracket
            self.budgets.append(math.ceil(count * (eta**s) / (s + 1)))
            self._brackets.append(_Rungs())


class PatientRule(OptunaRule):
    """Optuna's ``PatientPruner``: prunes when the trial's best value over its last
    ``patience + 1`` reported steps is worse than its best before them by more than
    ``min_delta`` (NaN ignored), and then only if the ``wrapped`` rule prunes it too (asked
    only then, as Optuna does).

    Args:
        patience: How many steps without improvement are tolerated (``>= 0``).
        min_delta: How much worse the recent best may be (``>= 0``).
        wrapped: ``{"assessor": "module:Class", "args": {...}}``: another rule of this module
            (None: patience alone decides).
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``: the experiment's.
    """

    def __init__(
        self,
        *,
        patience: int,
        min_delta: float = 0.0,
        wrapped: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        who = type(self).__name__
        check_patient(who, patience, min_delta)
        super().__init__(**kwargs)
        self.patience = patience
        self.min_delta = float(min_delta)
        self.wrapped = None if wrapped is None else self._inner(who, wrapped)

    def _inner(self, who: str, wrapped: dict[str, Any]) -> OptunaRule:
        if set(wrapped) - {"args"} != {"assessor"} or not isinstance(wrapped["assessor"], str):
            raise ConfigError(
                f"{who}: wrapped must be {{'assessor': 'module:Class', 'args': {{...}}}}, got "
                f"{wrapped!r}"
            )
        inner = create_assessor(
            wrapped["assessor"],
            mode=self.mode,
            metric=self.metric,
            seed=self.seed,
            space=self.space,
            args=wrapped.get("args") or {},
        )
        if not isinstance(inner, OptunaRule):
            raise ConfigError(
                f"{who}: wrapped must name a rule of hyperlab.compat.optuna._rules, got "
                f"{wrapped['assessor']!r} ({type(inner).__name__})"
            )
        inner.trials = self.trials  # one study: the wrapped rule reads the same trials
        return inner

    def prune(self, trial: Trial) -> bool:
        values = self.trials.values[trial.number]
        if len(values) <= self.patience + 1:
            return False
        steps = sorted(values)
        before = _best([values[s] for s in steps[: -self.patience - 1]], self.mode)
        after = _best([values[s] for s in steps[-self.patience - 1 :]], self.mode)
        if self.mode is Mode.MIN:
            stalled = before + self.min_delta < after
        else:
            stalled = before - self.min_delta > after
        if not stalled:
            return False
        return True if self.wrapped is None else self.wrapped.prune(trial)


# ---- what the rules share ------------------------------------------------------------------


class _Rungs:
    """Successive halving's rungs: the values each trial recorded at rungs 0, 1, ... (Optuna's
    ``completed_rung_<k>`` system attributes), and every value recorded at each rung."""

    def __init__(self) -> None:
        self.of: dict[int, list[float]] = {}  # number -> its values at rungs 0, 1, ...
        self.at: list[list[float]] = []  # rung -> the values recorded there

    def judge(
        self,
        trials: StudyTrials,
        number: int,
        mode: Mode,
        *,
        min_resource: int,
        reduction_factor: int,
        rate: int,
        bootstrap_count: int,
    ) -> bool:
        """Optuna's ``SuccessiveHalvingPruner.prune`` for trial ``number``, recording it at
        each rung its last step reaches."""
        values = trials.values[number]
        step = max(values)
        value = values[step]
        mine = self.of.setdefault(number, [])
        while True:
            rung = len(mine)
            if step < min_resource * reduction_factor ** (rate + rung):
                return False
            if math.isnan(value):
                return True
            while len(self.at) <= rung:
                self.at.append([])
            competing = [*self.at[rung], value]  # the others' values there, and its own
            self.at[rung].append(value)
            mine.append(value)
            if len(competing) <= bootstrap_count:
                return True
            if not _promotable(value, competing, reduction_factor, mode):
                return True


def _promotable(value: float, competing: list[float], reduction_factor: int, mode: Mode) -> bool:
    """Whether ``value`` is among the best ``max(1, n // reduction_factor)`` of ``competing``
    (ties included)."""
    index = max(len(competing) // reduction_factor - 1, 0)
    competing.sort()
    if mode is Mode.MAX:
        return value >= competing[-(index + 1)]
    return value <= competing[index]


def _judged(step: int, values: dict[int, float], n_warmup_steps: int, interval_steps: int) -> bool:
    """Whether ``step`` is judged: past the warm-up, and the first step reported in its
    interval (Optuna's ``_is_first_in_interval_step``)."""
    if step < n_warmup_steps:
        return False
    nearest = (step - n_warmup_steps) // interval_steps * interval_steps + n_warmup_steps
    before = max((s for s in values if s != step), default=-1)
    return before < nearest


def _best(values: list[float], mode: Mode) -> float:
    """The best of ``values``, NaN ignored (NumPy's ``nanmin``/``nanmax``); NaN if all are."""
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return math.nan
    return min(finite) if mode is Mode.MIN else max(finite)
