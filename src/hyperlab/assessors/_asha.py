"""Asynchronous successive halving (ASHA; Li et al., 2020), as a stopping rule (Optuna's
``SuccessiveHalvingPruner``) or with promotions of paused trials (the original algorithm).

Rungs sit at the resources ``r_k = min_resource * reduction_factor ** k`` below
``max_resource``; by default ``min_resource = max_resource / reduction_factor ** 2``, so that
with a known end there are two rungs, at a ninth and a third of it (``eta = 3``), and a trial is
never judged before a ninth of its training. A trial's value at rung ``k`` is the value of its
first report at a resource of ``r_k`` or more; each rung keeps the values recorded there, in
order, and the driver's trials are judged against them as they arrive.
"""

from __future__ import annotations

import bisect
import math
from typing import Any, Literal

from hyperlab.assessors.base import Action, Assessor, Decision, Resume, Verdicts
from hyperlab.errors import ConfigError
from hyperlab.trial import Mode, Report, Trial, TrialStatus

__all__ = ["ASHA"]

_TOLERANCE = 1e-9  # relative: a resource this close below a rung counts as reaching it

Losses = tuple[float, ...]
"""A trial's judged objectives at a rung, as losses (one item for ASHA)."""


class ASHA(Assessor):
    """Asynchronous successive halving: at each rung only the best ``1 / reduction_factor`` of
    the trials go on.

    With ``variant="stop"`` (the default), a trial reaching rung ``k`` goes on only if its
    value there is among the best ``max(1, n // reduction_factor)`` of the ``n`` values
    recorded at that rung so far (itself included; ties with the last of them go on), and is
    stopped (EARLY_STOPPED) otherwise, as Optuna's ``SuccessiveHalvingPruner`` does: the first
    trials to reach a rung go on only if they lead it. A trial whose report jumps over several
    rungs is judged at each, with that report's value.

    With ``variant="promotion"`` (the original ASHA), a trial reaching rung ``k`` is paused
    there (PAUSED). A paused trial is promoted, resumed by ``actions`` to run on to rung
    ``k + 1`` (from its checkpoint), once its value ranks among the best ``n // reduction_factor``
    of the ``n`` values recorded at rung ``k`` (ties with the last of them included): so nothing
    is promoted from a rung before ``reduction_factor`` trials reached it. Promotability is
    sticky: a trial that ranked there once, while paused or about to be, stays promotable even
    if better trials reach the rung before it is resumed; so promotions do not depend on when
    the driver asks, and a fresh assessor replaying the history promotes the same trials.
    Higher rungs are promoted first, the best first. Trials promoted past the last rung run to
    ``max_resource`` and finish on their own.

    A budget of trials ends the promotion variant cleanly: once the driver creates no more
    trials (``on_no_more_trials``), each rung is closed, lowest first, as soon as no running or
    resumed trial can still reach it, and its best ``max(1, n // reduction_factor)`` are
    promoted, so higher rungs that fewer than ``reduction_factor`` trials reached still send
    their best on, and at least one trial runs to ``max_resource``. When the experiment ends
    (DONE), the paused trials never promoted end EARLY_STOPPED, with their last value; after a
    stop they stay PAUSED, and a resumed experiment may still promote them.

    A trial's resource is ``step + 1`` (its reports' steps count epochs) or the reported
    metric ``resource_attr``. Nothing is judged at or beyond ``max_resource``: trials end there
    on their own.

    ASHA judges one objective: on an experiment with several, it judges the one
    ``assessor_args={"objective": name}`` names; ``MOASHA`` (``"moasha"``) judges them all.

    The default rungs keep the best: judging at the first epoch, as the usual
    ``min_resource=1`` does, stops the slow starters that end best (learning curves cross), so
    by default the first rung sits at ``max_resource / reduction_factor ** 2`` (epochs 3 and 9
    for 27 epochs, 11.1 and 33.3 for 100), where a trial costs at least a ninth of its training
    and the schedule about a quarter of training every trial to the end. Chosen on the tuning
    tasks of ``benchmarks/early_stopping.py`` (see ``docs/early-stopping.md``).

    Args:
        min_resource: The first rung's resource (``> 0``). None (the default) for
            ``max_resource / reduction_factor ** 2`` when ``max_resource`` is given, 1 when
            it is not.
        max_resource: The resource at which trials end (``> min_resource``). None (the
            ``stop`` variant only) for no end: rungs go on as far as trials report.
        reduction_factor: ``eta``: one in ``reduction_factor`` trials goes on at each rung
            (an integer ``>= 2``).
        variant: ``"stop"`` to stop the trials that do not go on, ``"promotion"`` to pause
            every trial at each rung and resume the best. (Not ``mode``, which is the
            experiment's optimisation mode: ``assessor_args={"mode": ...}`` is refused, with a
            message listing ``variant`` among the arguments.)
        resource_attr: The reported metric that counts the resource; None for ``step + 1``.
        **kwargs: ``mode``, ``metric``, ``seed``, ``space``: the experiment's, passed by the
            framework (see ``Assessor``).

    Raises:
        ConfigError: a non-positive resource, ``min_resource >= max_resource``,
            ``reduction_factor < 2``, or the promotion variant without ``max_resource``.

    Example:
        >>> hyperlab.run(train, space, metric="loss", assessor="asha",
        ...              assessor_args={"min_resource": 1, "max_resource": 27})
    """

    argument_aliases = {"mode": "variant"}  # assessor_args={"mode": "promotion"} works too

    def __init__(
        self,
        *,
        min_resource: float | None = None,
        max_resource: float | None = None,
        reduction_factor: int = 3,
        variant: Literal["stop", "promotion"] = "stop",
        resource_attr: str | None = None,
        **kwargs: Any,
    ) -> None:
        if min_resource is None:
            min_resource = (
                1.0 if max_resource is None else _first_rung(max_resource, reduction_factor)
            )
        _check(min_resource, max_resource, reduction_factor, variant)
        super().__init__(resource_attr=resource_attr, **kwargs)
        self.min_resource = float(min_resource)
        self.max_resource = None if max_resource is None else float(max_resource)
        self.reduction_factor = int(reduction_factor)
        self.variant = variant
        self.n_rungs = _rung_count(self.min_resource, self.max_resource, self.reduction_factor)
        self._rungs: list[list[tuple[Losses, int]]] = []  # rung -> (losses, number), as recorded
        self._ranked: list[list[Losses]] = []  # rung -> its losses, sorted (kept as recorded)
        self._values: dict[int, list[Losses]] = {}  # number -> its losses at rungs 0, 1, ...
        self._promotable: list[set[int]] = []  # rung -> trials promotable from it (sticky)
        self.verdicts = Verdicts()
        self._paused: set[int] = set()
        self._resumed: set[int] = set()  # asked to resume, not started yet
        self._active: set[int] = set()  # started, and neither paused nor ended since
        self._final = False  # the driver creates no more trials
        self._closed = 0  # rungs below this one were closed (promotion variant, final)

    def rung_resource(self, k: int) -> float:
        """The resource of rung ``k``: ``min_resource * reduction_factor ** k``."""
        return self.min_resource * self.reduction_factor**k

    # ---- the hooks -----------------------------------------------------------------------

    def on_start(self, trial: Trial, now: float) -> None:
        number = trial.number
        self.verdicts.started(number)
        self._paused.discard(number)
        self._resumed.discard(number)
        self._active.add(number)

    def on_report(self, trial: Trial, report: Report, now: float) -> Decision:
        number = trial.number
        known = self.verdicts.known(number, report.attempt)
        if known is not None:
            return known
        loss = self.losses(report)
        resource = self.resource(report)
        if self.variant == "promotion":
            return self._promotion(number, loss, resource)
        values = self._values.setdefault(number, [])
        while len(values) < self.n_rungs and self._reached(resource, len(values)):
            k = len(values)
            self._record(k, number, loss)
            if not self._goes_on(k, number, loss):
                return self.verdicts.stop(number, report.attempt)
        return Decision.CONTINUE

    def on_end(self, trial: Trial, now: float) -> None:
        status = trial.status
        self._active.discard(trial.number)
        if status is TrialStatus.PAUSED:
            self._paused.add(trial.number)
        elif self.verdicts.ended(trial):
            self._paused.discard(trial.number)

    def actions(self, now: float) -> list[Action]:
        """Resume the paused trials that are promotable from the rung they reached; once no
        more trials come, close the rungs no trial can still reach first."""
        if self.variant != "promotion":
            return []
        resumes: list[Action] = []
        while True:
            ready = []
            for number in self._paused - self._resumed:
                values = self._values.get(number)
                if values and number in self._promotable[len(values) - 1]:
                    ready.append((-len(values), values[-1], number))
            ready.sort()
            for _, _, number in ready:
                self._resumed.add(number)
                resumes.append(Resume(number))
            if not (self._final and self._close_next_rung()):
                return resumes

    def on_no_more_trials(self, count: int, now: float) -> None:
        self._final = True

    def on_more_trials(self, count: int, now: float) -> None:
        self._final = False  # rungs closed meanwhile stay closed

    # ---- the rungs -----------------------------------------------------------------------

    def _promotion(self, number: int, loss: Losses, resource: float) -> Decision:
        """Record the trial at every rung its report reaches first; pause it at the lowest
        rung it reached and is not promoted from."""
        values = self._values.setdefault(number, [])
        while len(values) < self.n_rungs and self._reached(resource, len(values)):
            k = len(values)
            self._record(k, number, loss)
            count = len(self._rungs[k]) // self.reduction_factor
            self._promote(k, max(1, count) if k < self._closed else count)
        for k in range(len(values)):
            if number not in self._promotable[k]:
                return Decision.PAUSE
        return Decision.CONTINUE

    def _promote(self, k: int, count: int) -> None:
        """Make the best ``count`` trials recorded at rung ``k`` promotable (ties included)."""
        if count >= 1:
            self._promotable[k].update(self._best(k, count))

    def _best(self, k: int, count: int) -> set[int]:
        """The best ``count`` trials recorded at rung ``k`` (``count >= 1``), with those tied
        with the last of them: by loss here; ``MOASHA`` ranks loss vectors."""
        cutoff = self._ranked[k][count - 1]
        return {n for value, n in self._rungs[k] if value <= cutoff}

    def _goes_on(self, k: int, number: int, loss: Losses) -> bool:
        """Whether trial ``number``, just recorded at rung ``k`` with ``loss``, is among its
        best ``max(1, n // reduction_factor)`` (``_best``): a look at the sorted rung, not a
        pass over it, as a rung holds every trial that reached it."""
        count = max(1, len(self._rungs[k]) // self.reduction_factor)
        if type(self)._best is not ASHA._best:  # ranked otherwise (MOASHA)
            return number in self._best(k, count)
        return loss <= self._ranked[k][count - 1]

    def _close_next_rung(self) -> bool:
        """Close the lowest open rung if no running or resumed trial can still reach it: its
        best ``max(1, n // reduction_factor)`` become promotable. False if it stays open."""
        k = self._closed
        if k >= len(self._rungs):
            return False
        for number in self._active | self._resumed:
            if len(self._values.get(number, ())) <= k:
                return False
        self._closed = k + 1
        self._promote(k, max(1, len(self._rungs[k]) // self.reduction_factor))
        return True

    def _reached(self, resource: float, k: int) -> bool:
        rung = self.rung_resource(k)
        return resource >= rung * (1 - _TOLERANCE)

    def _record(self, k: int, number: int, loss: Losses) -> None:
        while len(self._rungs) <= k:
            self._rungs.append([])
            self._ranked.append([])
            self._promotable.append(set())
        self._rungs[k].append((loss, number))
        bisect.insort(self._ranked[k], loss)
        self._values[number].append(loss)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(min_resource={self.min_resource:g}, max_resource="
            f"{self.max_resource}, reduction_factor={self.reduction_factor}, variant="
            f"{self.variant!r}, mode={_shown(self.modes)})"
        )


def _check(
    min_resource: float, max_resource: float | None, reduction_factor: int, variant: str
) -> None:
    def bad(rule: str, got: str) -> ConfigError:
        return ConfigError(f"ASHA: `{rule}` must hold, got {got}")

    if not min_resource > 0:
        raise bad("min_resource > 0", f"min_resource={min_resource!r}")
    if max_resource is not None:
        if not max_resource > 0:
            raise bad("max_resource > 0", f"max_resource={max_resource!r}")
        if not min_resource < max_resource:
            raise bad(
                "min_resource < max_resource",
                f"min_resource={min_resource!r}, max_resource={max_resource!r}",
            )
    if not reduction_factor >= 2:
        raise bad("reduction_factor >= 2", f"reduction_factor={reduction_factor!r}")
    if variant not in ("stop", "promotion"):
        raise ConfigError(f"ASHA: variant must be 'stop' or 'promotion', got {variant!r}")
    if variant == "promotion" and max_resource is None:
        raise ConfigError(
            "ASHA: variant='promotion' needs max_resource (where promoted trials end), got "
            "max_resource=None"
        )


def _first_rung(max_resource: float, reduction_factor: int) -> float:
    """The default first rung: ``max_resource / reduction_factor ** 2``, or the argument as
    given when it cannot be computed (``_check`` names the wrong value)."""
    try:
        if max_resource > 0 and reduction_factor >= 2:
            return float(max_resource) / int(reduction_factor) ** 2
    except (TypeError, ValueError, OverflowError):
        pass
    return 1.0


def _shown(modes: tuple[Mode, ...]) -> str:
    return repr(modes[0].value) if len(modes) == 1 else repr([m.value for m in modes])


def _rung_count(min_resource: float, max_resource: float | None, eta: int) -> int | float:
    """How many rungs lie below ``max_resource`` (infinitely many without one)."""
    if max_resource is None:
        return math.inf
    count = 0
    while min_resource * eta**count < max_resource * (1 - _TOLERANCE):
        count += 1
    return count
