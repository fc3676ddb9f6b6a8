"""The pieces of ``benchmarks/quality.py``: problems, contenders, the report.

- :mod:`.spaces`: the library-neutral description of a search space (``Param``, ``Problem``) and
  its translation for hyperlab, Optuna and hyperopt.
- :mod:`.problems`: the classic test functions and the mixed and conditional spaces.
- :mod:`.external`: COCO's BBOB functions (``cocoex``) and the scikit-learn tuning problems.
- :mod:`.suite`: every problem by name, selections, the ``--quick`` subset.
- :mod:`.contenders`: every tuner under test, the ask/tell driver (with simulated concurrency)
  and one run as a JSON record.
- :mod:`.runner`: the results cache, the process pool and its progress, the problems' scales.
- :mod:`.report`: regret, targets and the tables.
"""
