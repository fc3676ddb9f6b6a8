"""A search space described once (``Param``) and translated for hyperlab, Optuna and hyperopt.

Every library hands the objective the same thing: a dict of parameter values in which a
conditional parameter (``kind="cond"``) is the chosen branch as NNI and hyperlab write it,
``{"_name": branch, <sub-parameter>: value, ...}``, sub-parameters of other branches absent.

- hyperlab: ``hs.choice`` of ``{"_name": ..., ...}`` option dicts (nested choices).
- Optuna: define-by-run, ``trial.suggest_categorical`` for the branch and ``suggest_*`` of its
  sub-parameters inside the ``if``; sub-parameters are named by their path
  (``"model/svc/C"``), so each branch has its own distributions.
- hyperopt: ``hp.choice`` of dicts, labels named by path as for Optuna.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperlab import space as hs

Objective = Callable[[dict[str, Any]], float]


@dataclass(frozen=True)
class Param:
    """One parameter: ``kind`` is "float", "logfloat", "int" (``high`` inclusive), "logint"
    (an integer drawn log-uniformly, ``high`` inclusive; hyperlab and hyperopt give it as a
    whole float, so objectives round it, see ``integer``), "cat" (``options``) or "cond"
    (``branches``: (name, sub-parameters) pairs, chosen uniformly)."""

    name: str
    kind: str
    low: float = 0.0
    high: float = 1.0
    options: tuple[Any, ...] = ()
    branches: tuple[tuple[str, tuple[Param, ...]], ...] = ()


@dataclass(frozen=True)
class Problem:
    """A minimisation problem.

    ``instance(seed)`` gives the objective and its known optimum (None: unknown, regret is
    then measured against the best value reached, see ``report``); BBOB problems give another
    COCO instance per seed, the others ignore it. ``floor``: regrets below it count as equal
    (the objective's resolution; None: 1e-8 on BBOB, 1e-8 times the problem's scale elsewhere).
    ``cost``: rough seconds of objective per 100 evaluations, to schedule the longest runs first.
    """

    name: str
    family: str  # "bbob", "classic", "mixed" or "sklearn"
    params: tuple[Param, ...]
    instance: Callable[[int], tuple[Objective, float | None]]
    floor: float | None = None
    cost: float = 0.0

    @property
    def numeric(self) -> bool:
        """No categorical or conditional parameter: CMA-ES applies."""
        return all(p.kind in ("float", "logfloat", "int", "logint") for p in self.params)

    @property
    def dimension(self) -> int:
        """Parameters, every branch's sub-parameters counted."""
        return _count(self.params)


def _count(params: tuple[Param, ...]) -> int:
    return sum(1 + sum(_count(sub) for _, sub in p.branches) for p in params)


def floats(d: int, low: float, high: float) -> tuple[Param, ...]:
    """``x0 .. x{d-1}``, uniform on ``[low, high]``."""
    return tuple(Param(f"x{i}", "float", low, high) for i in range(d))


def integer(value: Any) -> int:
    """An integer parameter's value as an int (a "logint" comes as a whole float from hyperlab's
    ``qloguniform`` and hyperopt's ``qloguniform``)."""
    return round(float(value))


def vector(params: dict[str, Any], d: int) -> np.ndarray:
    """``x0 .. x{d-1}`` of a parameter dict as an array."""
    return np.array([params[f"x{i}"] for i in range(d)], dtype=float)


# ---------------------------------------------------------------- hyperlab


def _hyperlab_param(p: Param) -> Any:
    if p.kind == "float":
        return hs.uniform(p.low, p.high)
    if p.kind == "logfloat":
        return hs.loguniform(p.low, p.high)
    if p.kind == "int":
        return hs.randint(int(p.low), int(p.high) + 1)
    if p.kind == "logint":
        return hs.qloguniform(p.low, p.high, 1)
    if p.kind == "cat":
        return hs.choice(*p.options)
    return hs.choice(
        *(
            {"_name": branch, **{s.name: _hyperlab_param(s) for s in sub}}
            for branch, sub in p.branches
        )
    )


def hyperlab_space(problem: Problem) -> hs.SearchSpace:
    """The problem's space for hyperlab's tuners."""
    return hs.SearchSpace({p.name: _hyperlab_param(p) for p in problem.params})


# ---------------------------------------------------------------- optuna


def optuna_params(trial: Any, params: tuple[Param, ...], prefix: str = "") -> dict[str, Any]:
    """Suggest ``params`` on an Optuna trial, define-by-run; sub-parameters only when active."""
    out: dict[str, Any] = {}
    for p in params:
        label = prefix + p.name
        if p.kind in ("float", "logfloat"):
            out[p.name] = trial.suggest_float(label, p.low, p.high, log=p.kind == "logfloat")
        elif p.kind in ("int", "logint"):
            log = p.kind == "logint"
            out[p.name] = trial.suggest_int(label, int(p.low), int(p.high), log=log)
        elif p.kind == "cat":
            out[p.name] = trial.suggest_categorical(label, list(p.options))
        else:
            branch = trial.suggest_categorical(label, [b for b, _ in p.branches])
            sub = dict(p.branches)[branch]
            out[p.name] = {"_name": branch, **optuna_params(trial, sub, f"{label}/{branch}/")}
    return out


# ---------------------------------------------------------------- hyperopt


def hyperopt_space(params: tuple[Param, ...], prefix: str = "") -> dict[str, Any]:
    """The space as hyperopt expressions, labels named by path."""
    from hyperopt import hp

    out: dict[str, Any] = {}
    for p in params:
        label = prefix + p.name
        if p.kind == "float":
            out[p.name] = hp.uniform(label, p.low, p.high)
        elif p.kind == "logfloat":
            out[p.name] = hp.loguniform(label, math.log(p.low), math.log(p.high))
        elif p.kind == "int":
            out[p.name] = hp.randint(label, int(p.low), int(p.high) + 1)
        elif p.kind == "logint":
            out[p.name] = hp.qloguniform(label, math.log(p.low), math.log(p.high), 1)
        elif p.kind == "cat":
            out[p.name] = hp.choice(label, list(p.options))
        else:
            out[p.name] = hp.choice(
                label,
                [
                    {"_name": branch, **hyperopt_space(sub, f"{label}/{branch}/")}
                    for branch, sub in p.branches
                ],
            )
    return out


def plain(value: Any) -> Any:
    """numpy scalars (hyperopt's integers) as Python ones, recursively through dicts."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    return value
