"""The ``dask`` executor: trials on a Dask cluster (``pip install 'hyperlab[dask]'``)."""

from hyperlab.executors._dask._executor import DaskExecutor

__all__ = ["DaskExecutor"]
