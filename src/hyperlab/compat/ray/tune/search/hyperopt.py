"""``ray.tune.search.hyperopt``: ``HyperOptSearch`` as a hyperlab tuner (no hyperopt needed)."""

from hyperlab.compat.ray.tune._searchers import HyperOptSearch

__all__ = ["HyperOptSearch"]
