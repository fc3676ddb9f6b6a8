"""Tuners: algorithms that propose parameter sets. Pick one by name with ``tuner=``."""

from hyperlab.tuners.base import Tuner, create_tuner, register_tuner, tuner_class, tuner_names

__all__ = ["Tuner", "create_tuner", "register_tuner", "tuner_class", "tuner_names"]
