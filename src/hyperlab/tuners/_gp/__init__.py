"""The ``gp`` tuner: Bayesian optimisation with a Gaussian process and expected improvement."""

from hyperlab.tuners._gp._tuner import GPTuner

__all__ = ["GPTuner"]
