"""Population based training (Jaderberg et al. 2017), asynchronous: bad trials are replaced by
perturbed copies of good ones that continue from their checkpoints.

**Population.** The population is the trials running now: run PBT with ``concurrency`` equal to
``population_size``. Nothing is judged until ``population_size`` of them have reported.

**Judgement.** A trial is judged each time its resource has grown by ``perturbation_interval``
since it started (for a branched trial: since just before its first report, so a branch that
counts steps on from its parent and one that counts from zero are treated alike) or since its
last judgement. The population is ranked by each trial's value at the judged trial's resource
``r``: its latest report at a resource of at most ``r`` (a branch counts its parent's reports
from before it started as its own), or its first report if it has none there; ties go to the
lower number. So trials that started later are not judged against the further trained values
of the others. The best ``k`` and the worst ``k`` form the top and the bottom quantiles,
``k = ceil(quantile_fraction * n)`` but at most ``n // 2``. A judged trial in the bottom
quantile is stopped (``STOP``: EARLY_STOPPED, its last value kept) and replaced by a ``Branch``:
a new trial whose ``parent`` is a trial of the top quantile (drawn at random) and which starts
from that trial's latest checkpoint (*exploit*) with the parent's parameters perturbed
(*explore*). Other trials go on.

**Explore.** Each parameter is drawn anew from the search space with probability
``resample_probability``; otherwise a number is multiplied by 0.8 or 1.2 (then clipped to its
bounds and rounded to its ``q``; an integer moves at least one step), and a choice moves to a
neighbouring option (a nested option that stays has its sub-parameters perturbed the same way;
a newly picked one has them drawn). Without a search space (an assessor built by hand without
``space``) only numbers are scaled.

**Lineage.** The driver records each branch's ``parent`` (``Trial.parent``), so following
parents from any trial gives its lineage back to a trial the tuner proposed. ``max_trials``
caps all trials, branches included; a branch beyond it is not created.

**Replay.** Judgements depend on the reports in time order, and perturbations on the seed, the
trial's number and how often it was judged, so a fresh assessor fed the history reaches the
same state; a branch decided but not yet created is asked for again.

**Timing.** Asynchronous judgements rank a trial against how far the others got at that moment,
so which trials branch depends on their speed, the executor and the machine's load. With
``synch=True`` (Ray Tune's ``synch``) the population is judged all at once at each perturbation
point instead, its members paused there until the last arrives: the same seed and reports give
the same branches wherever the experiment runs, at any concurrency (members take turns when it
is below ``population_size``). ``hyperlab.assessors._pbt_sync`` has the details.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hyperlab.assessors._pbt_sync import SyncPopulation
from hyperlab.assessors.base import Action, Assessor, Branch, Decision
from hyperlab.errors import ConfigError
from hyperlab.space import (
    Choice,
    LogNormal,
    LogUniform,
    NestedOption,
    Normal,
    Parameter,
    QLogNormal,
    QLogUniform,
    QNormal,
    QUniform,
    Randint,
    Uniform,
    copy_json,
    sample_group,
)
from hyperlab.trial import Report, Trial, TrialStatus

__all__ = ["PopulationBasedTraining"]

_EPS = 1e-9
_FACTORS = (0.8, 1.2)
_SCALED = (Uniform, QUniform, LogUniform, QLogUniform, Normal, QNormal, LogNormal, QLogNormal)


@dataclass
class _Member:
    params: dict[str, Any]
    parent: int | None
    reports: list[tuple[float, float]] = field(default_factory=list)  # (resource, loss)
    next_check: float | None = None  # set at the first report
    judged: int = 0

    def loss_at(self, resource: float) -> float:
        """Its loss at ``resource``: the latest report at a resource of at most that, or its
        first report."""
        for r, loss in reversed(self.reports):
            if r <= resource * (1 + _EPS):
                return loss
        return self.reports[0][1]


class PopulationBasedTraining(Assessor):
    """Population based training: stops the worst trials and branches perturbed copies of the
    best ones from their checkpoints.

    Args:
        population_size: How many trials form the population (>= 2); run with that
            ``concurrency``.
        perturbation_interval: Resource between two judgements of a trial (> 0).
        quantile_fraction: The fraction of the population in the top and in the bottom
            quantile (0 < q <= 0.5).
        resample_probability: The chance that explore draws a parameter anew from the space
            rather than perturbing it (0 to 1).
        resource_attr: The reported metric that counts resource; None for ``step + 1``.
        synch: Judge the whole population together at each perturbation point, pausing its
            members there until every one has arrived (Ray Tune's ``synch``): decisions that
            depend on the reports and the seed alone, not on the trials' speed. Any
            concurrency works (the population takes turns below ``population_size``).
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``, passed by the framework.

    Raises:
        ConfigError: an argument out of its range or of the wrong type, naming it and the
            value.

    The module docstring has the details. Trials must save ``hyperlab.checkpoint()`` and
    start from ``hyperlab.load_checkpoint()``, which gives a branch its parent's latest one.
    """

    def __init__(
        self,
        *,
        population_size: int = 10,
        perturbation_interval: float = 5,
        quantile_fraction: float = 0.25,
        resample_probability: float = 0.25,
        resource_attr: str | None = None,
        synch: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(resource_attr=resource_attr, **kwargs)
        name = "assessor_args: pbt"
        if not isinstance(synch, (bool, np.bool_)):
            raise ConfigError(f"{name} needs synch to be true or false, got {synch!r}")
        if (
            isinstance(population_size, bool)
            or not isinstance(population_size, (int, np.integer))
            or population_size < 2
        ):
            raise ConfigError(
                f"{name} needs population_size to be an integer >= 2, got {population_size!r}"
            )
        if not _number(perturbation_interval) or perturbation_interval <= 0:
            raise ConfigError(
                f"{name} needs perturbation_interval > 0, got {perturbation_interval!r}"
            )
        if not _number(quantile_fraction) or not 0 < quantile_fraction <= 0.5:
            raise ConfigError(
                f"{name} needs 0 < quantile_fraction <= 0.5, got {quantile_fraction!r}"
            )
        if not _number(resample_probability) or not 0 <= resample_probability <= 1:
            raise ConfigError(
                f"{name} needs 0 <= resample_probability <= 1, got {resample_probability!r}"
            )
        self.population_size = int(population_size)
        self.perturbation_interval = float(perturbation_interval)
        self.quantile_fraction = float(quantile_fraction)
        self.resample_probability = float(resample_probability)
        self._members: dict[int, _Member] = {}  # running trials
        self._reports: dict[int, list[tuple[float, float]]] = {}  # every trial's, for branches
        self._stopped: set[int] = set()  # stopped by this assessor
        self._ended: set[int] = set()  # seen ending
        self._queued: list[Branch] = []  # decided, not asked for yet
        self._asked: list[Branch] = []  # asked for, the new trial not seen yet
        self._early: dict[int, int] = {}  # parent -> branches seen before their decision
        self.synch = bool(synch)
        self._sync: SyncPopulation | None = None
        if self.synch:
            self._sync = SyncPopulation(
                self.population_size,
                self.perturbation_interval,
                self.quantile_fraction,
                self.rng,
                self._explore,
            )

    # ---- the assessor interface ----------------------------------------------------------

    def on_start(self, trial: Trial, now: float) -> None:
        if self._sync is not None:
            self._sync.start(trial)
        else:
            self._member(trial)

    def min_concurrency(self) -> int:
        """Asynchronous: the population runs at once, so concurrency must be at least
        ``population_size``; synchronous: any (its members take turns)."""
        return 1 if self._sync is not None else self.population_size

    def admits_new_trial(self, number: int) -> bool:
        """Synchronous: no new trial from the tuner while the population is complete."""
        return self._sync is None or self._sync.admits(number)

    def on_no_more_trials(self, count: int, now: float) -> None:
        if self._sync is not None:
            self._sync.no_more_trials(count)

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        if self._sync is not None:
            resource, loss = self.resource(report), self.loss(report)
            return self._sync.report(trial, resource, loss, report.attempt)
        number = trial.number
        if number in self._ended:
            return Decision.CONTINUE
        if number in self._stopped:
            return Decision.STOP  # a re-run after a crash, before its end was seen
        member = self._member(trial)
        if member is None:
            return Decision.CONTINUE
        resource = self.resource(report)
        loss = self.loss(report)
        if member.next_check is None:  # its first report
            start = 0.0
            if member.parent is not None:
                start = max(0.0, resource - 1.0)
                inherited = self._reports.get(member.parent, [])
                member.reports.extend(x for x in inherited if x[0] < resource * (1 - _EPS))
            member.next_check = start + self.perturbation_interval
        member.reports.append((resource, loss))
        self._reports[number] = member.reports
        if resource < member.next_check * (1 - _EPS):
            return Decision.CONTINUE
        member.next_check = resource + self.perturbation_interval
        member.judged += 1
        ranked = sorted((m.loss_at(resource), n) for n, m in self._members.items() if m.reports)
        n = len(ranked)
        if n < self.population_size:
            return Decision.CONTINUE
        k = min(math.ceil(self.quantile_fraction * n - _EPS), n // 2)
        if number not in {m for _, m in ranked[n - k :]}:
            return Decision.CONTINUE
        rng = self.rng(number, member.judged)
        parent = ranked[int(rng.integers(k))][1]
        params = self._explore(self._members[parent].params, rng)
        if self._early.get(parent):
            self._early[parent] -= 1
        else:
            self._queued.append(Branch(parent, params))
        self._stopped.add(number)
        del self._members[number]
        return Decision.STOP

    def on_end(self, trial: Trial, now: float) -> None:
        if self._sync is not None:
            self._sync.end(trial)
            return
        status = trial.status
        if not status.is_finished() or status is TrialStatus.SYS_CANCELED:
            return  # interrupted trials run again on resume
        self._members.pop(trial.number, None)
        self._ended.add(trial.number)

    def actions(self, now: float) -> list[Action]:
        """The branches decided since the last call (synchronous: also the stops and resumes
        of the members judged, once their pause was seen)."""
        if self._sync is not None:
            return self._sync.actions()
        queued, self._queued = self._queued, []
        self._asked.extend(queued)
        return list(queued)

    # ---- internals -----------------------------------------------------------------------

    def _member(self, trial: Trial) -> _Member | None:
        """The running trial's record, made when it is first seen; None once it ended."""
        number = trial.number
        member = self._members.get(number)
        if member is None and number not in self._stopped and number not in self._ended:
            member = self._members[number] = _Member(dict(trial.params), trial.parent)
            if trial.parent is not None:  # the oldest branch from its parent is done
                for pending in (self._asked, self._queued):
                    match = next((b for b in pending if b.parent == trial.parent), None)
                    if match is not None:
                        pending.remove(match)
                        break
                else:  # a replay feeds a start before a report at the same instant
                    self._early[trial.parent] = self._early.get(trial.parent, 0) + 1
        return member

    def _explore(self, params: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
        return _explore_group(self.space, params, rng, self.resample_probability)


def _explore_group(
    group: Mapping[str, Any] | None,
    values: Mapping[str, Any],
    rng: np.random.Generator,
    resample: float,
) -> dict[str, Any]:
    """``values`` (one group's: the space's top level or a nested option's) perturbed."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        param = None if group is None else group.get(name)
        if isinstance(param, Parameter):
            out[name] = _explore_value(param, value, rng, resample)
        elif group is None:
            out[name] = _scale_loosely(value, rng)
        else:  # a constant of a nested option, or its "_name"
            out[name] = copy_json(value)
    return out


def _explore_value(param: Parameter, value: Any, rng: np.random.Generator, resample: float) -> Any:
    if rng.random() < resample:
        return param.sample(rng, 1)[0]
    if isinstance(param, Choice):
        i = param.index(value)
        j = min(max(i + (1 if rng.random() < 0.5 else -1), 0), len(param.options) - 1)
        option = param.options[j]
        if not isinstance(option, NestedOption):
            return copy_json(option)
        if i == j:
            sub = {k: v for k, v in value.items() if k != "_name"}
            return {"_name": option.name, **_explore_group(option.params, sub, rng, resample)}
        return {"_name": option.name, **sample_group(option.params, rng, 1)[0]}
    factor = _FACTORS[int(rng.integers(2))]
    if isinstance(param, Randint):
        moved = round(value * factor)
        if moved == value:
            moved = value + (1 if factor > 1 else -1)
        return int(min(max(moved, param.low), param.high - 1))
    assert isinstance(param, _SCALED)
    return param.nearest(float(value) * factor)


def _scale_loosely(value: Any, rng: np.random.Generator) -> Any:
    """Without a space: numbers scaled (integers stay integers), dicts recursed, rest kept."""
    if isinstance(value, dict):
        return {k: (v if k == "_name" else _scale_loosely(v, rng)) for k, v in value.items()}
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return copy_json(value)
    factor = _FACTORS[int(rng.integers(2))]
    if isinstance(value, int):
        moved = round(value * factor)
        return moved if moved != value else value + (1 if factor > 1 else -1)
    return value * factor


def _number(value: Any) -> bool:
    return (
        not isinstance(value, bool)
        and isinstance(value, (int, float, np.integer, np.floating))
        and math.isfinite(value)
    )
