"""Parameter importance: how much of the objective's variation each parameter explains, from a
random forest fitted on the finished trials (mean decrease in impurity, normalised to sum to 1).

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

__all__ = ["MAX_TRIALS", "ImportanceUnavailable", "budget", "importances"]

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


def _forest(seed: int, trees: int) -> Any:
    try:
        from sklearn.ensemble import RandomForestRegressor  # type: ignore[import-untyped]
    except ImportError as exc:
        raise ImportanceUnavailable(
            f"parameter importance needs scikit-learn ({exc}): pip install 'hyperlab[{EXTRA}]'"
        ) from None
    return RandomForestRegressor(
        n_estimators=trees, min_samples_leaf=3, max_features=None, random_state=seed, n_jobs=1
    )


def importances(
    space: SearchSpace,
    params: Sequence[dict[str, Any]],
    targets: Sequence[float],
    *,
    seed: int,
    trees: int = N_TREES,
) -> tuple[dict[str, float], int]:
    """Each top-level parameter's importance for ``targets``, and how many trials it used
    (those whose parameters fit the space).

    Fewer than two usable trials, or targets that never vary, give every parameter 0.

    Raises:
        ImportanceUnavailable: when scikit-learn is not installed.
    """
    forest = _forest(seed, trees)
    names = list(space.names)
    dims = space.dimensions()
    # dimensions come depth-first: a top-level parameter's (the one without a condition),
    # then its nested ones; so each belongs to the last top-level one before it (its path
    # cannot tell: names may hold the "/" paths are joined with)
    top = np.fromiter((d.condition is None for d in dims), dtype=np.int64, count=len(dims))
    owner = np.cumsum(top) - 1
    rows, ys = [], []
    for p, y in zip(params, targets, strict=True):
        try:
            rows.append(space.encode(p))
        except (ValueError, KeyError, TypeError):  # a trial of an earlier search space
            continue
        ys.append(y)
    zero = dict.fromkeys(names, 0.0)
    if len(rows) < 2 or not dims:
        return zero, len(rows)
    x = np.nan_to_num(np.vstack(rows), nan=-1.0)  # inactive nested dimensions
    y_arr = np.asarray(ys, dtype=np.float64)
    if np.ptp(y_arr) == 0.0:
        return zero, len(rows)
    forest.fit(x, y_arr)
    per_dim = np.asarray(forest.feature_importances_, dtype=np.float64)
    per_param = np.bincount(owner, weights=per_dim, minlength=len(names))
    total = per_param.sum()
    if total > 0:
        per_param = per_param / total
    return {name: float(v) for name, v in zip(names, per_param, strict=True)}, len(rows)
