"""Optuna's parameter importances (``optuna.importance``), computed as hyperlab's dashboard
computes them (``hyperlab.server.importance``), on the study's completed trials.

``FanovaImportanceEvaluator`` (the default) is fANOVA on a random forest, as Optuna's;
``MeanDecreaseImpurityImportanceEvaluator`` is the forest's mean decrease in impurity, the
dashboard's measure. Both see each parameter in the unit cube of its hyperlab encoding (a
categorical parameter is one column of option indexes, where Optuna one-hot encodes it), so
the numbers differ from Optuna's a little; which parameters matter, and in which order, agree.
Needs scikit-learn (``pip install 'hyperlab[importance]'``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hyperlab.compat.optuna.distributions import BaseDistribution, to_spec
from hyperlab.compat.optuna.trial import FrozenTrial, TrialState
from hyperlab.server.importance import fanova_importances, importances
from hyperlab.space import SearchSpace

if TYPE_CHECKING:
    from hyperlab.compat.optuna._study import Study

__all__ = [
    "BaseImportanceEvaluator",
    "FanovaImportanceEvaluator",
    "MeanDecreaseImpurityImportanceEvaluator",
    "get_param_importances",
]

Target = Callable[[FrozenTrial], float]


class BaseImportanceEvaluator:
    """What an importance evaluator is (``optuna.importance.BaseImportanceEvaluator``)."""

    def evaluate(
        self, study: Study, params: list[str] | None = None, *, target: Target | None = None
    ) -> dict[str, float]:
        """Each parameter's importance, most important first (not normalised)."""
        raise NotImplementedError


class _ForestEvaluator(BaseImportanceEvaluator):
    """An evaluator that fits a random forest of ``n_trees`` trees of depth ``max_depth``."""

    def __init__(self, *, n_trees: int = 64, max_depth: int = 64, seed: int | None = None):
        self._n_trees = n_trees
        self._max_depth = max_depth
        self._seed = seed

    def evaluate(
        self, study: Study, params: list[str] | None = None, *, target: Target | None = None
    ) -> dict[str, float]:
        distributions = _distributions(study, params)
        names = list(distributions) if params is None else list(params)
        varying = {n: d for n, d in distributions.items() if not d.single()}
        if not varying:
            return dict.fromkeys(distributions, 0.0)
        trials = _trials(study, names, target)
        if len(trials) <= 1:
            return dict.fromkeys(names, 0.0)
        space = SearchSpace({name: to_spec(d) for name, d in varying.items()})
        rows = [{name: t.params[name] for name in varying} for t in trials]
        values = [_value(t, target) for t in trials]
        seed = random.randrange(2**32) if self._seed is None else self._seed
        scores = self._scores(space, rows, values, seed)
        found = {**scores, **dict.fromkeys(set(distributions) - set(varying), 0.0)}
        return dict(sorted(found.items(), key=lambda item: item[1], reverse=True))

    def _scores(
        self, space: SearchSpace, rows: list[dict[str, Any]], values: list[float], seed: int
    ) -> dict[str, float]:
        raise NotImplementedError


class FanovaImportanceEvaluator(_ForestEvaluator):
    """fANOVA (``optuna.importance.FanovaImportanceEvaluator``): the share of a random
    forest's variance that each parameter's marginal explains.

    Args:
        n_trees: The trees of the forest.
        max_depth: The greatest depth of a tree.
        seed: Seeds the forest; ``None`` for a random one.
    """

    def _scores(
        self, space: SearchSpace, rows: list[dict[str, Any]], values: list[float], seed: int
    ) -> dict[str, float]:
        scores, _ = fanova_importances(
            space, rows, values, seed=seed, trees=self._n_trees, max_depth=self._max_depth
        )
        return scores


class MeanDecreaseImpurityImportanceEvaluator(_ForestEvaluator):
    """Mean decrease in impurity (``optuna.importance.MeanDecreaseImpurityImportanceEvaluator``),
    the dashboard's measure: how much each parameter's splits reduce a random forest's error.

    Args:
        n_trees: The trees of the forest.
        max_depth: The greatest depth of a tree.
        seed: Seeds the forest; ``None`` for a random one.
    """

    def _scores(
        self, space: SearchSpace, rows: list[dict[str, Any]], values: list[float], seed: int
    ) -> dict[str, float]:
        scores, _ = importances(
            space,
            rows,
            values,
            seed=seed,
            trees=self._n_trees,
            min_samples_leaf=1,
            max_depth=self._max_depth,
        )
        return scores


def get_param_importances(
    study: Study,
    *,
    evaluator: BaseImportanceEvaluator | None = None,
    params: list[str] | None = None,
    target: Target | None = None,
    normalize: bool = True,
) -> dict[str, float]:
    """Each parameter's importance for the study's objective (or ``target``), most important
    first, as Optuna's ``get_param_importances``.

    Args:
        study: The study whose completed trials are assessed.
        evaluator: How; ``FanovaImportanceEvaluator()`` by default.
        params: The parameters to assess (each completed trial that has them all counts);
            all those every completed trial has, by default.
        target: What to explain, from a trial; its value by default.
        normalize: Scale the importances to sum to 1 (equal shares when all are 0).

    Raises:
        TypeError: when ``evaluator`` is not an importance evaluator.
        ValueError: when the study has no completed trial, or ``params`` names a parameter
            no completed trial has, or it has several objectives and no ``target``.
    """
    if target is None and len(study.directions) > 1:  # Optuna's PED-ANOVA would take them
        raise ValueError(
            "If the `study` is being used for multi-objective optimization, please specify "
            "the `target` (hyperlab's evaluators explain one objective), e.g. "
            "target=lambda t: t.values[0]"
        )
    if evaluator is None:
        evaluator = FanovaImportanceEvaluator()
    if not isinstance(evaluator, BaseImportanceEvaluator):
        raise TypeError(
            f"evaluator must be an importance evaluator (FanovaImportanceEvaluator(), "
            f"MeanDecreaseImpurityImportanceEvaluator()), got {evaluator!r}"
        )
    found = evaluator.evaluate(study, params=params, target=target)
    if not normalize:
        return found
    total = sum(found.values())
    if total == 0.0:
        return {name: 1.0 / len(found) for name in found}
    return {name: value / total for name, value in found.items()}


def _distributions(study: Study, params: Sequence[str] | None) -> dict[str, BaseDistribution]:
    """The distributions of the parameters to assess, by name: ``params``, or those all the
    completed trials have with the same distribution (Optuna's intersection search space)."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if not complete:
        raise ValueError("Cannot evaluate parameter importances without completed trials.")
    if params is not None:
        if isinstance(params, str) or not isinstance(params, Sequence):
            raise TypeError(f"params must be a list of parameter names, got {params!r}")
        having = [t for t in complete if set(params) <= set(t.distributions)]
        missing = [p for p in params if not any(p in t.distributions for t in complete)]
        if missing or not having:
            raise ValueError(
                f"params {list(params)}: no completed trial has {missing or list(params)}"
            )
        return {name: having[0].distributions[name] for name in sorted(params)}
    shared = dict(complete[0].distributions)
    for trial in complete[1:]:
        shared = {name: d for name, d in shared.items() if trial.distributions.get(name) == d}
    return dict(sorted(shared.items()))


def _trials(study: Study, names: Sequence[str], target: Target | None) -> list[FrozenTrial]:
    """The completed trials that have all of ``names`` and a finite target."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    return [t for t in complete if set(names) <= set(t.params) and np.isfinite(_value(t, target))]


def _value(trial: FrozenTrial, target: Target | None) -> float:
    if target is not None:
        return float(target(trial))
    assert trial.value is not None  # a completed trial has its value
    return float(trial.value)


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    raise NotImplementedError(
        f"optuna.importance.{name}: not in hyperlab; use FanovaImportanceEvaluator (the default) "
        "or MeanDecreaseImpurityImportanceEvaluator"
    )
