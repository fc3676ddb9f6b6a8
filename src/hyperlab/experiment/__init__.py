"""Running experiments: the Python API (``run``, ``Experiment`` and its strategy loop's
``TrialHandle``, ``resume``, ``load``, and
``Options`` / ``ExecutorArgs``, the types of their keyword options), the driver loop that
owns a running experiment, its set-up, and the ``Result`` read back.

Helpers for the layers above (compat, cli, pool): ``load_objective`` (a stored experiment's
objective), ``device_pool`` (the ``DevicePool`` of a ``gpus`` option, for a worker's GPUs),
``random_seed`` (a new experiment's default seed), ``check_id`` (a chosen id), and
``last_line`` / ``error_kind`` (how a failed trial's error is summed up), ``start_detached``
(a driver in a process of its own, for ``run --detach`` and NNI's ``Experiment``) and
``wait_for_driver`` (until a driver runs its experiment); for assessor tests,
``replay_to_assessor`` (history fed to a fresh assessor as a resumed driver feeds it).

```python
import hyperlab

def objective(params):
    return (params["x"] - 2) ** 2 + params["y"]

space = {"x": hyperlab.uniform(-5, 5), "y": hyperlab.choice(0, 1)}
result = hyperlab.run(objective, space, max_trials=50)
print(result.best_params, result.best_value)
```
"""

from hyperlab.experiment._api import load, resume, run
from hyperlab.experiment._callbacks import Callback
from hyperlab.experiment._detach import (
    DETACHED_STORAGE_VAR,
    DRIVER_START_WAIT,
    DetachedDriver,
    DriverNotStarted,
    start_detached,
    wait_for_driver,
)
from hyperlab.experiment._experiment import Experiment
from hyperlab.experiment._failures import error_kind, last_line
from hyperlab.experiment._ids import check_id
from hyperlab.experiment._keywords import ExecutorArgs, Options
from hyperlab.experiment._result import Result
from hyperlab.experiment._scheduling import replay_to_assessor
from hyperlab.experiment._setup import device_pool, load_objective, random_seed
from hyperlab.experiment._strategy import TrialHandle

__all__ = [
    "DETACHED_STORAGE_VAR",
    "DRIVER_START_WAIT",
    "Callback",
    "DetachedDriver",
    "DriverNotStarted",
    "ExecutorArgs",
    "Experiment",
    "Options",
    "Result",
    "TrialHandle",
    "check_id",
    "device_pool",
    "error_kind",
    "last_line",
    "load",
    "load_objective",
    "random_seed",
    "replay_to_assessor",
    "resume",
    "run",
    "start_detached",
    "wait_for_driver",
]
