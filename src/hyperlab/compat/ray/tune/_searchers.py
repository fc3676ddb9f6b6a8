"""Ray Tune's search algorithms, translated into hyperlab tuners.

| Ray | hyperlab tuner |
| --- | --- |
| ``BasicVariantGenerator`` (default) | ``VariantTuner``: grid x ``num_samples``, the rest random |
| ``OptunaSearch`` | ``tpe`` (hyperlab's multivariate TPE) |
| ``HyperOptSearch`` | ``tpe``, ``n_startup_trials=n_initial_points``, ``gamma`` |
| ``BayesOptSearch`` | ``gp``, ``n_startup_trials=random_search_steps``, its acquisition |
| ``ConcurrencyLimiter(searcher, n)`` | the searcher, at most ``n`` trials at once |

A searcher's ``metric``/``mode`` and seed become the experiment's. An argument with no hyperlab
equivalent is accepted at Ray's default value only; any other value raises
``NotImplementedError``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hyperlab.compat.ray.tune._refuse import check_mode, refuse

__all__ = [
    "BasicVariantGenerator",
    "BayesOptSearch",
    "ConcurrencyLimiter",
    "HyperOptSearch",
    "OptunaSearch",
    "SearchPlan",
    "Searcher",
]

_NO_POINTS = "run the points as trials of their own first (hyperlab's Experiment.add_trial)"
_OWN_SPACE = "give the search space as the Tuner's param_space"


@dataclass(frozen=True)
class SearchPlan:
    """A search algorithm in hyperlab's terms.

    Attributes:
        tuner: A tuner name, or None for Ray's default (``VariantTuner``).
        args: Its ``tuner_args``.
        seed: The experiment's seed, if the searcher fixes one.
        max_concurrent: At most this many trials at once, if limited.
    """

    tuner: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    max_concurrent: int | None = None


class Searcher:
    """The base of the search algorithms: the ``metric`` and ``mode`` they optimise (or the
    Tuner's)."""

    def __init__(self, metric: str | None = None, mode: str | None = None) -> None:
        self.metric = metric
        self.mode = check_mode(type(self).__name__, mode)

    def plan(self) -> SearchPlan:
        """The search algorithm in hyperlab's terms."""
        raise NotImplementedError(
            f"{type(self).__name__}: custom searchers have no hyperlab equivalent; write a "
            "hyperlab.tuners.Tuner and run it with hyperlab.run(tuner=...)"
        )


class BasicVariantGenerator(Searcher):
    """Ray's default: every ``grid_search`` point ``num_samples`` times, the other
    parameters drawn at random (seeded by ``random_state``)."""

    def __init__(
        self,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        max_concurrent: int = 0,
        constant_grid_search: bool = False,
        random_state: int | None = None,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        refuse(name, "points_to_evaluate", points_to_evaluate, None, _NO_POINTS)
        refuse(name, "constant_grid_search", constant_grid_search, False, "remove it")
        if random_state is not None and not isinstance(random_state, int):
            raise NotImplementedError(
                f"{name}(random_state={random_state!r}): only an int seed is mapped"
            )
        self.max_concurrent = max_concurrent
        self.random_state = random_state

    def plan(self) -> SearchPlan:
        return SearchPlan(None, {}, self.random_state, self.max_concurrent or None)


class OptunaSearch(Searcher):
    """Optuna's TPE: hyperlab's ``tpe`` tuner, seeded by ``seed``."""

    def __init__(
        self,
        space: Any = None,
        metric: str | list[str] | None = None,
        mode: str | list[str] | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        sampler: Any = None,
        seed: int | None = None,
        evaluated_rewards: list[Any] | None = None,
    ) -> None:
        name = type(self).__name__
        if isinstance(metric, list) or isinstance(mode, list):
            raise NotImplementedError(
                f"{name}(metric={metric!r}, mode={mode!r}): multi-objective search has no "
                "hyperlab equivalent; optimise one metric"
            )
        super().__init__(metric, mode)
        refuse(name, "space", space, None, _OWN_SPACE)
        refuse(name, "points_to_evaluate", points_to_evaluate, None, _NO_POINTS)
        refuse(name, "sampler", sampler, None, "hyperlab's tpe stands for Optuna's TPESampler")
        refuse(name, "evaluated_rewards", evaluated_rewards, None, _NO_POINTS)
        self.seed = seed

    def plan(self) -> SearchPlan:
        return SearchPlan("tpe", {}, self.seed)


class HyperOptSearch(Searcher):
    """HyperOpt's TPE: hyperlab's ``tpe`` tuner with ``n_startup_trials=n_initial_points``
    and ``gamma``, seeded by ``random_state_seed``."""

    def __init__(
        self,
        space: Any = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        n_initial_points: int = 20,
        random_state_seed: int | None = None,
        gamma: float = 0.25,
    ) -> None:
        super().__init__(metric, mode)
        name = type(self).__name__
        refuse(name, "space", space, None, _OWN_SPACE)
        refuse(name, "points_to_evaluate", points_to_evaluate, None, _NO_POINTS)
        self.n_initial_points = n_initial_points
        self.random_state_seed = random_state_seed
        self.gamma = gamma

    def plan(self) -> SearchPlan:
        args = {"n_startup_trials": self.n_initial_points, "gamma": self.gamma}
        return SearchPlan("tpe", args, self.random_state_seed)


class BayesOptSearch(Searcher):
    """Bayesian optimisation with a Gaussian process: hyperlab's ``gp`` tuner with
    ``n_startup_trials=random_search_steps``, seeded by ``random_state``, and the acquisition
    of ``utility_kwargs`` (Ray's default: ``{"kind": "ucb", "kappa": 2.576, "xi": 0.0}``):
    ``ucb`` is the gp's ``acquisition="ucb"`` with ``kappa``, ``ei`` its ``acquisition="ei"``
    with ``xi``; ``poi`` (probability of improvement) has no equivalent and is refused."""

    def __init__(
        self,
        space: Any = None,
        metric: str | None = None,
        mode: str | None = None,
        points_to_evaluate: list[dict[str, Any]] | None = None,
        utility_kwargs: dict[str, Any] | None = None,
        random_state: int = 42,
        random_search_steps: int = 10,
        verbose: int = 0,
        patience: int = 5,
        skip_duplicate: bool = True,
        analysis: Any = None,
    ) -> None:
        super().__init__(metric, mode)
        name = type(self).__name__
        refuse(name, "space", space, None, _OWN_SPACE)
        refuse(name, "points_to_evaluate", points_to_evaluate, None, _NO_POINTS)
        self.acquisition = _acquisition(utility_kwargs)
        refuse(name, "patience", patience, 5, "remove it")
        refuse(name, "skip_duplicate", skip_duplicate, True, "remove it")
        refuse(name, "analysis", analysis, None, _NO_POINTS)
        self.random_state = random_state
        self.random_search_steps = random_search_steps

    def plan(self) -> SearchPlan:
        args = {"n_startup_trials": self.random_search_steps, **self.acquisition}
        return SearchPlan("gp", args, self.random_state)


_UTILITY = {"kind": "ucb", "kappa": 2.576, "xi": 0.0}
"""Ray's default ``utility_kwargs``."""


def _acquisition(utility_kwargs: dict[str, Any] | None) -> dict[str, Any]:
    """The gp's ``acquisition`` arguments for BayesOptSearch's ``utility_kwargs``."""
    if utility_kwargs is None:
        utility_kwargs = _UTILITY
    if not isinstance(utility_kwargs, dict):
        raise TypeError(f"BayesOptSearch: utility_kwargs must be a dict, got {utility_kwargs!r}")
    unknown = sorted(set(utility_kwargs) - set(_UTILITY))
    if unknown:
        raise ValueError(
            f"BayesOptSearch(utility_kwargs={utility_kwargs!r}): unknown keys {unknown}; "
            "it takes 'kind', 'kappa' and 'xi'"
        )
    kind = utility_kwargs.get("kind", "ucb")
    if kind == "poi":
        raise NotImplementedError(
            f"BayesOptSearch(utility_kwargs={utility_kwargs!r}): the probability of "
            "improvement ('poi') has no hyperlab equivalent; use 'ei' (expected improvement, "
            "with xi) or 'ucb' (with kappa)"
        )
    if kind == "ucb":
        return {"acquisition": "ucb", "kappa": utility_kwargs.get("kappa", _UTILITY["kappa"])}
    if kind == "ei":
        return {"acquisition": "ei", "xi": utility_kwargs.get("xi", _UTILITY["xi"])}
    raise ValueError(
        f"BayesOptSearch(utility_kwargs={utility_kwargs!r}): kind must be 'ucb', 'ei' or "
        f"'poi', got {kind!r}"
    )


class ConcurrencyLimiter(Searcher):
    """``searcher`` with at most ``max_concurrent`` trials at once."""

    def __init__(self, searcher: Searcher, max_concurrent: int, batch: bool = False) -> None:
        if not isinstance(searcher, Searcher):
            raise TypeError(f"ConcurrencyLimiter: expected a searcher, got {searcher!r}")
        if isinstance(max_concurrent, bool) or not isinstance(max_concurrent, int):
            raise TypeError(
                f"ConcurrencyLimiter: max_concurrent must be an int, got {max_concurrent!r}"
            )
        if max_concurrent < 1:
            raise ValueError(
                f"ConcurrencyLimiter: max_concurrent must be >= 1, got {max_concurrent!r}"
            )
        refuse("ConcurrencyLimiter", "batch", batch, False, "remove it")
        super().__init__(searcher.metric, searcher.mode)
        self.searcher = searcher
        self.max_concurrent = max_concurrent

    def plan(self) -> SearchPlan:
        inner = self.searcher.plan()
        limit = min(self.max_concurrent, inner.max_concurrent or self.max_concurrent)
        return SearchPlan(inner.tuner, inner.args, inner.seed, limit)
