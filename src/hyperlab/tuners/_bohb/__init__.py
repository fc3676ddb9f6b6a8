"""The ``bohb`` tuner (NNI's ``BOHB`` advisor): Hyperband brackets filled by Parzen densities."""

from hyperlab.tuners._bohb._tuner import BOHB

__all__ = ["BOHB"]
