"""Parameter importance: how much of the objective's variation each parameter explains, from a
random forest fitted on the finished trials: the dashboard's ``importances`` (mean decrease in
impurity, normalised to sum to 1), and ``fanova_importances`` (fANOVA: the share of the forest's
variance over the search space that each parameter's marginal explains, as Optuna's
``FanovaImportanceEvaluator``), which the Optuna layer's ``optuna.importance`` uses.

Needs scikit-learn, imported on first use; without it the route answers 501 naming the extra
to install (``pip install 'hyperlab[importance]'``). The forest sees each parameter in the unit
cube of the search space's encoding (choices as option indexes, log ranges on a log scale, the
sub-parameters of nested options as their own columns, counted towards their top-level
parameter), and is fitted on at most ``MAX_TRIALS`` trials, sampled evenly. A forest costs
about trials x dimensions x trees: ``budget`` keeps that under ``MAX_WORK`` (about a second) by
fitting fewer trees, then on fewer trials, for a search space of many parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hyperlab.errors import HyperlabError
from hyperlab.space import SearchSpace

__all__ = [
    "MAX_TRIALS",
    "ImportanceUnavailable",
    "budget",
    "fanova_importances",
    "importances",
]

MAX_TRIALS = 2000
"""The most trials the forest is fitted on (sampled evenly beyond that)."""
N_TREES = 50
"""The trees of a forest, for a search space of up to 15 dimensions."""
MIN_TREES = 10
"""The fewest trees, however many dimensions the search space has."""
MAX_WORK = 1_500_000
"""The most trials x dimensions x trees a forest is fitted on."""
EXTRA = "importance"
"""The pip extra that installs scikit-learn."""


class ImportanceUnavailable(HyperlabError):
    """Parameter importance needs scikit-learn, which is not installed (the app answers 501)."""


def budget(n_dims: int) -> tuple[int, int]:
    """(trials, trees) of the forest for a search space of ``n_dims`` dimensions: ``N_TREES``
    trees on ``MAX_TRIALS`` trials, or fewer of either so that trials x dimensions x trees
    stays within ``MAX_WORK``."""
    dims = max(1, n_dims)
    trees = max(MIN_TREES, min(N_TREES, MAX_WORK // (MAX_TRIALS * dims)))
    return max(2, min(MAX_TRIALS, MAX_WORK // (dims * trees))), trees


def _forest(
    seed: int, trees: int, *, min_samples_leaf: int = 3, max_depth: int | None = None
) -> Any:
    try:
        from sklearn.ensemble import RandomForestRegressor  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportanceUnavailable(
            f"parameter importance needs scikit-learn ({exc}): pip install 'hyperlab[{EXTRA}]'"
        ) from None
    return RandomForestRegressor(
        n_estimators=trees,
        min_samples_leaf=min_samples_leaf,
        max_depth=max_depth,
        max_features=None,
        random_state=seed,
        n_jobs=1,
    )


def _encoded(
    space: SearchSpace, params: Sequence[dict[str, Any]], targets: Sequence[float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The trials that fit ``space`` as rows of its unit-cube encoding (inactive nested
    dimensions at -1), their targets, and each dimension's top-level parameter (its index)."""
    dims = space.dimensions()
    # dimensions come depth-first: a top-level parameter's (the one without a condition),
    # then its nested ones; so each belongs to the last top-level one before it (its path
    # cannot tell: names may hold the "/" paths are joined with)
    top = np.fromiter((d.condition is None for d in dims), dtype=np.int64, count=len(dims))
    owner = np.cumsum(top) - 1
    rows, ys = [], []
    for p, target in zip(params, targets, strict=True):
        try:
            rows.append(space.encode(p))
        except (ValueError, KeyError, TypeError):  # a trial of an earlier search space
            continue
        ys.append(target)
    x = np.nan_to_num(np.vstack(rows), nan=-1.0) if rows else np.empty((0, len(dims)))
    y = np.asarray(ys, dtype=np.float64)
    scale = float(np.max(np.abs(y))) if len(y) else 0.0
    if scale > 0.0:  # shares of variance do not depend on the unit; 1e308s would overflow it
        y = y / scale
    return x, y, owner


def importances(
    space: SearchSpace,
    params: Sequence[dict[str, Any]],
    targets: Sequence[float],
    *,
    seed: int,
    trees: int = N_TREES,
    min_samples_leaf: int = 3,
    max_depth: int | None = None,
) -> tuple[dict[str, float], int]:
    """Each top-level parameter's importance for ``targets`` (mean decrease in impurity of a
    forest of ``trees`` trees, with leaves of ``min_samples_leaf`` trials at least, of depth
    ``max_depth`` at most), and how many trials it used (those whose parameters fit the space).

    Fewer than two usable trials, or targets that never vary, give every parameter 0.

    Raises:
        ImportanceUnavailable: when scikit-learn is not installed.
    """
    forest = _forest(seed, trees, min_samples_leaf=min_samples_leaf, max_depth=max_depth)
    names = list(space.names)
    x, y, owner = _encoded(space, params, targets)
    zero = dict.fromkeys(names, 0.0)
    if len(y) < 2 or not len(owner) or np.ptp(y) == 0.0:
        return zero, len(y)
    forest.fit(x, y)
    per_dim = np.asarray(forest.feature_importances_, dtype=np.float64)
    per_param = np.bincount(owner, weights=per_dim, minlength=len(names))
    total = per_param.sum()
    if total > 0:
        per_param = per_param / total
    return {name: float(v) for name, v in zip(names, per_param, strict=True)}, len(y)


def fanova_importances(
    space: SearchSpace,
    params: Sequence[dict[str, Any]],
    targets: Sequence[float],
    *,
    seed: int,
    trees: int = 64,
    max_depth: int = 64,
) -> tuple[dict[str, float], int]:
    """Each top-level parameter's fANOVA importance for ``targets`` (Hutter et al. 2014, as
    Optuna's ``FanovaImportanceEvaluator``: a forest of ``trees`` trees of depth at most
    ``max_depth``, each leaf of one sample at least), and how many trials it used.

    A parameter's importance is, averaged over the trees, the variance of the tree's marginal
    prediction over that parameter (its other parameters integrated out uniformly over the
    unit cube) divided by the tree's whole variance; the importances are not normalised.
    Fewer than two usable trials, or targets that never vary, give every parameter 0.

    Raises:
        ImportanceUnavailable: when scikit-learn is not installed.
    """
    forest = _forest(seed, trees, min_samples_leaf=1, max_depth=max_depth)
    names = list(space.names)
    x, y, owner = _encoded(space, params, targets)
    zero = dict.fromkeys(names, 0.0)
    if len(y) < 2 or not len(owner) or np.ptp(y) == 0.0:
        return zero, len(y)
    forest.fit(x, y)
    bounds = np.stack([np.minimum(x.min(axis=0), 0.0), np.maximum(x.max(axis=0), 1.0)], axis=1)
    shares = np.zeros(len(names))
    counted = 0
    for estimator in forest.estimators_:
        lower, upper, values = _leaves(estimator.tree_, bounds)
        width = (upper - lower) / (bounds[:, 1] - bounds[:, 0])
        weight = width.prod(axis=1)
        mean = float(weight @ values)
        total = float(weight @ (values - mean) ** 2)
        if total <= 0.0:
            continue
        counted += 1
        for index in range(len(names)):
            columns = np.flatnonzero(owner == index)
            shares[index] += _marginal_variance(columns, lower, upper, width, values, mean) / total
    if counted:
        shares /= counted
    return {name: float(v) for name, v in zip(names, shares, strict=True)}, len(y)


def _leaves(tree: Any, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The boxes (lower and upper corners) a fitted scikit-learn tree's leaves cover within
    ``bounds``, and their predictions."""
    lowers, uppers, values = [], [], []
    stack = [(0, bounds[:, 0].copy(), bounds[:, 1].copy())]
    while stack:
        node, low, high = stack.pop()
        left, right = tree.children_left[node], tree.children_right[node]
        if left == right:  # a leaf
            lowers.append(low)
            uppers.append(high)
            values.append(float(tree.value[node].ravel()[0]))
            continue
        feature, threshold = tree.feature[node], tree.threshold[node]
        left_high, right_low = high.copy(), low.copy()
        left_high[feature] = min(high[feature], max(low[feature], threshold))
        right_low[feature] = max(low[feature], min(high[feature], threshold))
        stack.append((left, low, left_high))
        stack.append((right, right_low, high))
    return np.array(lowers), np.array(uppers), np.array(values)


def _marginal_variance(
    columns: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    width: np.ndarray,
    values: np.ndarray,
    mean: float,
) -> float:
    """The variance, over the cells the leaves' edges cut ``columns`` into, of the tree's
    prediction averaged over the other dimensions."""
    if not len(columns):
        return 0.0
    others = np.ones(width.shape[1], dtype=bool)
    others[columns] = False
    outside = width[:, others].prod(axis=1)  # each leaf's share of the other dimensions
    edges = [np.unique(np.concatenate([lower[:, c], upper[:, c]])) for c in columns]
    mids = np.meshgrid(*[(e[:-1] + e[1:]) / 2 for e in edges], indexing="ij")
    sizes = np.meshgrid(*[np.diff(e) / (e[-1] - e[0]) for e in edges], indexing="ij")
    centre = np.stack([m.ravel() for m in mids], axis=1)  # cells x columns
    cell = np.prod(np.stack([s.ravel() for s in sizes], axis=1), axis=1)
    inside = np.all(
        (lower[None, :, columns] <= centre[:, None, :])
        & (centre[:, None, :] < upper[None, :, columns]),
        axis=2,
    )  # cells x leaves
    marginal = inside.astype(np.float64) @ (values * outside)
    return float(cell @ (marginal - mean) ** 2)
