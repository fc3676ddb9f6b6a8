"""``ray.tune.search.bayesopt``: ``BayesOptSearch`` as a hyperlab tuner (no bayesopt needed)."""

from hyperlab.compat.ray.tune._searchers import BayesOptSearch

__all__ = ["BayesOptSearch"]
