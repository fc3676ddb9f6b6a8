"""The ``ray`` executor: trials on a Ray cluster (``pip install 'hyperlab[ray]'``)."""

from hyperlab.executors._ray._executor import RayExecutor

__all__ = ["RayExecutor"]
