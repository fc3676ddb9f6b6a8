"""The ``tpe`` tuner: a multivariate Tree-structured Parzen Estimator."""

from hyperlab.tuners._tpe._tuner import TPETuner

__all__ = ["TPETuner"]
