"""The evolutionary multi-objective tuners: NSGA-II (``"nsga2"``) and NSGA-III (``"nsga3"``)."""

from hyperlab.tuners._nsga._nsga2 import NSGAIITuner
from hyperlab.tuners._nsga._nsga3 import NSGAIIITuner, das_dennis

__all__ = ["NSGAIIITuner", "NSGAIITuner", "das_dennis"]
