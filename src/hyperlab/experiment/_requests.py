"""Parameters that trials define as they run (``hyperlab.suggest``), on the driver's side.

A trial's request for a parameter is answered here:

- a parameter the tuner models (the declared search space, and those promoted below) gets
  the value the tuner proposed for the trial;
- any other is drawn from the distribution the trial gave, seeded by the trial's seed and the
  parameter's name, so that a trial run again gets the same value.

A name keeps the distribution it was first defined with, in the space or by a trial; a request
with another one is refused, naming both. The distributions trials defined are recorded in the
experiment's options (``suggested``).

As Optuna's samplers do, the tuner models a parameter defined by run once every trial that
ended well (SUCCEEDED or EARLY_STOPPED) so far had it (the intersection of their parameters,
``IntersectionSearchSpace`` in Optuna): the driver then rebuilds its tuner on the declared
space plus those, and it learns again from the history. A parameter some trials lack
(conditional on another) stays independently drawn, and so do all of them with a tuner that
cannot take them (a grid over the declared space).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from hyperlab.errors import SearchSpaceError
from hyperlab.executors.base import Requested
from hyperlab.space import Parameter, SearchSpace
from hyperlab.trial import Trial, TrialStatus

__all__ = ["DefinedByRun", "fits", "known_part"]

GOOD_ENDS = (TrialStatus.SUCCEEDED, TrialStatus.EARLY_STOPPED)
CHECKS_KEPT = 4096
"""Outcomes of checks kept at most (``DefinedByRun._check``): one per name and spec."""
Checked = tuple[Parameter | None, Parameter | None, str | None]
"""``DefinedByRun._check``'s outcome: ``(asked, known, error)``."""


class DefinedByRun:
    """The parameters trials defined as they ran, and which of them the tuner models.

    Args:
        declared: The experiment's search space.
        suggested: The distributions trials defined so far (name to NNI spec).
    """

    def __init__(self, declared: SearchSpace, suggested: Mapping[str, Any]) -> None:
        self.declared = declared
        self.params: dict[str, Parameter] = {
            name: SearchSpace({name: spec})[name] for name, spec in suggested.items()
        }
        self.shared: set[str] | None = None  # defined by every trial that ended well so far
        self.modelled = True  # False once the tuner refused a space with them (a grid)
        self._checked: dict[tuple[str, str], Checked] = {}  # see _check

    def answer(self, trial: Trial, request: Requested) -> tuple[Any, str | None, bool]:
        """``(value, error, new)`` for ``trial``'s request: its value (or None and why not),
        and whether it defined a parameter first (``specs`` changed)."""
        name = request.name
        asked, known, error = self._check(name, request.spec)
        if error is not None or asked is None:
            return None, error, False
        if name in trial.params:  # the tuner proposed it
            return trial.params[name], None, False
        new = known is None
        if new:
            self.params[name] = asked
        seed = np.random.SeedSequence([trial.seed or 0, zlib.crc32(name.encode())])
        value = asked.sample(np.random.default_rng(seed), 1)[0]
        return (value.item() if isinstance(value, np.generic) else value), None, new

    def fix(self, request: Requested) -> tuple[Any, str | None, bool]:
        """``(value, error, new)`` for a ``"fixed"`` request: the value the trial was given
        (whatever the tuner proposed), once its distribution agrees with the parameter's."""
        spec = request.spec
        if not isinstance(spec, dict) or "distribution" not in spec or "value" not in spec:
            return None, f"fixed {request.name!r}: needs a distribution and a value", False
        asked, known, error = self._check(request.name, spec["distribution"])
        if error is not None or asked is None:
            return None, error, False
        if known is None:
            self.params[request.name] = asked
        return spec["value"], None, known is None

    def _check(self, name: str, spec: Any) -> Checked:
        """``(asked, known, error)``: the distribution asked for, the one ``name`` already
        has (None for a new name), and why they cannot go together (or None).

        Every trial asks again for the same parameters, and a parse and a comparison cost
        more than the rest of an answer: once ``name`` has its distribution (which it keeps),
        the outcome for a spec of plain values (whose ``repr`` tells them apart) is kept, by
        name and spec, at most ``CHECKS_KEPT`` of them."""
        key = (name, repr(spec)) if _plain(spec) else None
        if key is not None:
            found = self._checked.get(key)
            if found is not None:
                return found
        try:
            asked = SearchSpace({name: spec})[name]
        except SearchSpaceError as exc:
            return None, None, f"suggest({name!r}): {exc}"
        known = self.declared.get(name)
        where = "the search space defines it as"
        if known is None:
            known, where = self.params.get(name), "an earlier trial defined it as"
        checked: Checked = asked, known, None
        if known is not None and known.to_nni() != asked.to_nni():
            error = (
                f"parameter {name!r}: the trial asks for {asked.to_nni()}, but {where} "
                f"{known.to_nni()}; one name keeps one distribution"
            )
            checked = asked, known, error
        if key is not None and known is not None and len(self._checked) < CHECKS_KEPT:
            self._checked[key] = checked
        return checked

    def used(self, params: dict[str, Any], asked: set[str] | None) -> dict[str, Any]:
        """``params`` of a trial that ended without the parameters defined by run that its
        tuner proposed but it never asked for (a trial's params are what it used)."""
        if not self.params:  # nothing defined by run: the common case, on every trial
            return params
        asked = asked or set()
        unused = [
            n for n in params if n in self.params and n not in asked and n not in self.declared
        ]
        if not unused:
            return params
        return {name: value for name, value in params.items() if name not in unused}

    def ended(self, trial: Trial) -> bool:
        """Count a trial that ended; True if the tuner's space (``space()``) changed."""
        if trial.status not in GOOD_ENDS:
            return False
        if not self.params:  # it defined none (as on replay, where all are known)
            if self.shared is None:
                self.shared = set()
            return False
        before = self.shared or set()
        names = {name for name in trial.params if name in self.params}
        self.shared = names if self.shared is None else self.shared & names
        return self.shared != before

    def space(self) -> SearchSpace:
        """What the tuner models: the declared space, then the parameters every trial that
        ended well defined, in the order they were first defined."""
        shared = self.shared if self.shared is not None and self.modelled else set()
        extra = {n: p for n, p in self.params.items() if n in shared and n not in self.declared}
        if not extra:
            return self.declared
        return SearchSpace({**dict(self.declared.items()), **extra})

    def specs(self) -> dict[str, Any]:
        """The distributions trials defined, as NNI specs: the options' ``suggested``."""
        return {name: param.to_nni() for name, param in self.params.items()}


_PLAIN = frozenset((str, int, float, bool, type(None)))


def _plain(value: Any) -> bool:
    """Whether ``value`` is made of strings, numbers, None, lists, tuples and dicts only
    (those very types, not subclasses, which may hold more than their ``repr`` says)."""
    kind = type(value)
    if kind in _PLAIN:
        return True
    if kind is list or kind is tuple:
        return all(_plain(item) for item in value)
    if kind is dict:
        return all(type(k) is str and _plain(v) for k, v in value.items())
    return False


def fits(space: SearchSpace, params: dict[str, Any]) -> bool:
    """Whether ``params`` is a parameter set of ``space``."""
    try:
        space.check(params)
    except SearchSpaceError:
        return False
    return True


def known_part(space: SearchSpace, trial: Trial) -> Trial:
    """``trial`` with only the parameters of ``space`` (those its tuner proposes)."""
    if len(trial.params) == len(space) and all(name in space for name in trial.params):
        return trial
    return replace(trial, params={k: v for k, v in trial.params.items() if k in space})
