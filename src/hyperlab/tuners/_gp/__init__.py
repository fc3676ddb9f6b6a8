"""The ``gp`` tuner: Bayesian optimisation with Gaussian processes and expected improvement (of
the hypervolume, with several objectives; times the probability of feasibility, with
constraints)."""

from hyperlab.tuners._gp._tuner import GPTuner

__all__ = ["GPTuner"]
