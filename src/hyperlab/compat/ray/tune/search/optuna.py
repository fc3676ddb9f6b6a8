"""``ray.tune.search.optuna``: ``OptunaSearch``, run as a hyperlab tuner (no optuna needed)."""

from hyperlab.compat.ray.tune._searchers import OptunaSearch

__all__ = ["OptunaSearch"]
