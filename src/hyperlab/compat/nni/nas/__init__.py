"""NNI's ``nni.nas``, the part a strategy loop of one's own needs: ``nni.nas.execution`` (its
``SequentialExecutionEngine``, on ``hyperlab.Experiment``'s strategy loop) and
``nni.nas.space`` (``ModelStatus``, ``Metrics``, and what a model must have).

NNI's model spaces, mutables and built-in strategies need PyTorch and are not here: a model
is any object with ``execute()`` and a ``sample`` mapping (``nni.nas.space.ExecutableModel``).
"""
