"""The ``processes`` executor: a pool of worker processes, one trial at a time each."""

from hyperlab.executors._processes._executor import ProcessExecutor, pickle_objective

__all__ = ["ProcessExecutor", "pickle_objective"]
