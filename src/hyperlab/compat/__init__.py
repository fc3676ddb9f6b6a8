"""Compatibility layers that let trial code written for other tools run under hyperlab.

``compat/nni`` is a small ``nni`` package: the ``command`` executor puts it first on a command
trial's ``PYTHONPATH``, so an NNI trial script (``nni.get_next_parameter()``,
``nni.report_intermediate_result()``, ``nni.report_final_result()``) runs unchanged. It is also
importable here as ``hyperlab.compat.nni``.
"""
