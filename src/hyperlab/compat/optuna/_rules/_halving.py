"""Optuna's ``SuccessiveHalvingPruner`` (asynchronous successive halving) and
``HyperbandPruner`` (successive halving in brackets), with the rungs they share."""

from __future__ import annotations

import binascii
import math
from dataclasses import dataclass
from typing import Any, Literal

from hyperlab.compat.optuna._rules._base import OptunaRule, RuleArguments, StudyTrials, bad
from hyperlab.errors import ConfigError
from hyperlab.trial import Mode, Trial

__all__ = [
    "HyperbandArguments",
    "HyperbandRule",
    "SuccessiveHalvingArguments",
    "SuccessiveHalvingRule",
]


# ---- arguments -----------------------------------------------------------------------------


@dataclass(eq=False)
class SuccessiveHalvingArguments(RuleArguments):
    """The arguments of Optuna's ``SuccessiveHalvingPruner``. A ``min_resource`` neither an
    integer nor ``"auto"`` is refused (Optuna takes it for ``"auto"``).

    Args:
        min_resource: The first rung's step (``>= 1``), or ``"auto"``.
        reduction_factor: One in ``reduction_factor`` trials goes on at each rung (``>= 2``).
        min_early_stopping_rate: Shifts the rungs up by this many factors.
        bootstrap_count: Prune while a rung holds no more than this many values.
    """

    min_resource: int | Literal["auto"] = "auto"
    reduction_factor: int = 4
    min_early_stopping_rate: int = 0
    bootstrap_count: int = 0

    def check(self, who: str) -> None:
        _check_min_resource(who, self.min_resource, auto=True)
        if self.reduction_factor < 2:
            raise bad(who, "reduction_factor >= 2", f"reduction_factor={self.reduction_factor!r}")
        if self.min_early_stopping_rate < 0:
            raise bad(
                who,
                "min_early_stopping_rate >= 0",
                f"min_early_stopping_rate={self.min_early_stopping_rate!r}",
            )
        _check_bootstrap(who, self.bootstrap_count, "min_resource", self.min_resource)


@dataclass(eq=False)
class HyperbandArguments(RuleArguments):
    """The arguments of Optuna's ``HyperbandPruner``, checked at once rather than at its first
    ``prune`` (where its successive halving brackets check theirs).

    Args:
        min_resource: The first rung's step in bracket 0 (``>= 1``).
        max_resource: The largest step trials reach, or ``"auto"``.
        reduction_factor: ``eta`` (``>= 2``).
        bootstrap_count: As ``SuccessiveHalvingArguments``' (needs an integer
            ``max_resource``).
    """

    min_resource: int = 1
    max_resource: int | Literal["auto"] = "auto"
    reduction_factor: int = 3
    bootstrap_count: int = 0

    def check(self, who: str) -> None:
        _check_min_resource(who, self.min_resource, auto=False)
        max_resource = self.max_resource
        if isinstance(max_resource, bool) or not (
            isinstance(max_resource, int) or max_resource == "auto"
        ):
            raise ConfigError(
                f"{who}: max_resource must be an integer or 'auto', got "
                f"max_resource={max_resource!r}"
            )
        if self.reduction_factor < 2:
            raise bad(who, "reduction_factor >= 2", f"reduction_factor={self.reduction_factor!r}")
        _check_bootstrap(who, self.bootstrap_count, "max_resource", max_resource)


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
        raise bad(who, "bootstrap_count >= 0", f"bootstrap_count={bootstrap_count!r}")
    if bootstrap_count > 0 and resource == "auto":
        raise ConfigError(
            f"{who}: bootstrap_count > 0 needs an integer {name}, got "
            f"bootstrap_count={bootstrap_count!r} with {name}='auto'"
        )


# ---- the rules -----------------------------------------------------------------------------


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
        **kwargs: The fields of ``SuccessiveHalvingArguments``; ``mode``, ``metric``,
            ``seed``, ``space``: the experiment's.
    """

    arguments = SuccessiveHalvingArguments
    args: SuccessiveHalvingArguments

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        resource = self.args.min_resource
        # the first rung's step; None until "auto" is fixed
        self.min_resource: int | None = None if resource == "auto" else resource
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
            reduction_factor=self.args.reduction_factor,
            rate=self.args.min_early_stopping_rate,
            bootstrap_count=self.args.bootstrap_count,
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
        study_name: The name hashed with each trial's number; None for the experiment's id.
            Give the Optuna study's name to put every trial number in the bracket Optuna
            would.
        **kwargs: The fields of ``HyperbandArguments``; ``mode``, ``metric``, ``seed``,
            ``space``: the experiment's.
    """

    arguments = HyperbandArguments
    args: HyperbandArguments

    def __init__(self, *, study_name: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        resource = self.args.max_resource
        # the largest step trials reach; None until "auto" is fixed
        self.max_resource: int | None = None if resource == "auto" else resource
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
            min_resource=self.args.min_resource,
            reduction_factor=self.args.reduction_factor,
            rate=bracket,
            bootstrap_count=self.args.bootstrap_count,
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
        eta = self.args.reduction_factor
        count = math.floor(math.log(self.max_resource / self.args.min_resource, eta)) + 1
        for bracket in range(count):
            s = count - 1 - bracket
            self.budgets.append(math.ceil(count * (eta**s) / (s + 1)))
            self._brackets.append(_Rungs())


# ---- the rungs -----------------------------------------------------------------------------


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
