"""Compatibility layers: code written for other tools runs on hyperlab with its import changed.

- ``compat/nni`` is a small ``nni`` package: the ``command`` executor puts it first on a
  command trial's ``PYTHONPATH``, so an NNI trial script (``nni.get_next_parameter()``, called
  again for multi-phase trials, ``nni.report_intermediate_result()``,
  ``nni.report_final_result()``) runs unchanged; ``compat.nni.experiment`` is NNI's Python
  ``Experiment`` API.
- ``compat.optuna`` is Optuna's API (``import hyperlab.compat.optuna as optuna``).
- ``compat.ray.tune`` is Ray Tune's (``from hyperlab.compat.ray import tune``), without Ray.

docs/migrating.md says what maps to what, and what is refused.
"""
