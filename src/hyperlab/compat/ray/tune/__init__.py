"""Ray Tune's common API on hyperlab (``from hyperlab.compat.ray import tune``).

```python
from hyperlab.compat.ray import tune
from hyperlab.compat.ray.tune.schedulers import ASHAScheduler

def train(config):
    for epoch in range(10):
        tune.report({"loss": (config["lr"] - 0.01) ** 2 / (epoch + 1)})

tuner = tune.Tuner(
    train,
    param_space={"lr": tune.loguniform(1e-4, 1e-1)},
    tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=8,
                                scheduler=ASHAScheduler(max_t=10)),
)
print(tuner.fit().get_best_result().config)
```

Ray's older function API runs too: ``f(config, reporter)``, ``tune.track.log(**metrics)``,
``f(config, checkpoint_dir=None)`` with ``tune.checkpoint_dir(step)``.

A name of Ray Tune's with no hyperlab equivalent raises ``NotImplementedError`` saying what
to use instead, as do arguments that cannot be honoured. Mapped, approximated and refused:
``docs/migrating.md``.
"""

from typing import NoReturn as _NoReturn

from hyperlab.compat.ray.tune import schedulers, search, stopper, track
from hyperlab.compat.ray.tune._analysis import ExperimentAnalysis, run
from hyperlab.compat.ray.tune._checkpoint import Checkpoint
from hyperlab.compat.ray.tune._config import CheckpointConfig, FailureConfig, RunConfig, TuneConfig
from hyperlab.compat.ray.tune._primitives import (
    choice,
    grid_search,
    lograndint,
    loguniform,
    qlograndint,
    qloguniform,
    qrandint,
    qrandn,
    quniform,
    randint,
    randn,
    sample_from,
    uniform,
)
from hyperlab.compat.ray.tune._results import Result, ResultGrid, TuneError
from hyperlab.compat.ray.tune._session import (
    TuneContext,
    checkpoint_dir,
    get_checkpoint,
    get_context,
    get_trial_dir,
    get_trial_id,
    get_trial_name,
    report,
)
from hyperlab.compat.ray.tune._trainable import (
    PlacementGroupFactory,
    Trainable,
    with_parameters,
    with_resources,
)
from hyperlab.compat.ray.tune._tuner import Tuner
from hyperlab.compat.ray.tune.stopper import Stopper

__all__ = [
    "Checkpoint",
    "CheckpointConfig",
    "ExperimentAnalysis",
    "FailureConfig",
    "PlacementGroupFactory",
    "Result",
    "ResultGrid",
    "RunConfig",
    "Stopper",
    "Trainable",
    "TuneConfig",
    "TuneContext",
    "TuneError",
    "Tuner",
    "checkpoint_dir",
    "choice",
    "get_checkpoint",
    "get_context",
    "get_trial_dir",
    "get_trial_id",
    "get_trial_name",
    "grid_search",
    "lograndint",
    "loguniform",
    "qlograndint",
    "qloguniform",
    "qrandint",
    "qrandn",
    "quniform",
    "randint",
    "randn",
    "report",
    "run",
    "sample_from",
    "schedulers",
    "search",
    "stopper",
    "track",
    "uniform",
    "with_parameters",
    "with_resources",
]

_REFUSED = {
    "CLIReporter": "hyperlab shows its own progress (RunConfig(verbose=0) for none)",
    "JupyterNotebookReporter": "hyperlab shows its own progress (RunConfig(verbose=0) for none)",
    "ProgressReporter": "hyperlab shows its own progress (RunConfig(verbose=0) for none)",
    "Callback": "use hyperlab callbacks: hyperlab_options={'callbacks': [hyperlab.Callback()]}",
    "SyncConfig": "hyperlab keeps experiments locally; remove it",
    "ResumeConfig": "use Tuner.restore(path, trainable)",
    "Experiment": "pass the trainable and its arguments to tune.run or Tuner",
    "run_experiments": "run each experiment with tune.run or Tuner",
    "register_trainable": "pass the function or the Trainable class itself",
    "register_env": "RLlib environments are not mapped",
    "create_scheduler": "build the scheduler: tune.schedulers.ASHAScheduler(...)",
    "create_searcher": "build the searcher: tune.search.optuna.OptunaSearch(...)",
}


def __getattr__(name: str) -> _NoReturn:
    if name in _REFUSED:
        raise NotImplementedError(f"tune.{name} has no hyperlab equivalent; {_REFUSED[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
