"""hyperlab: run, tune and track machine-learning experiments.

The public API is re-exported here and imported lazily, so that ``import hyperlab`` inside a
trial process costs almost nothing.
"""

import importlib as _importlib
import typing as _typing

from hyperlab._version import __version__

_EXPORTS = {
    # running experiments
    "run": "hyperlab.experiment",
    "resume": "hyperlab.experiment",
    "load": "hyperlab.experiment",
    "Experiment": "hyperlab.experiment",
    "Result": "hyperlab.experiment",
    "TrialHandle": "hyperlab.experiment",
    "Callback": "hyperlab.experiment",
    "CommandTrial": "hyperlab.executors",
    "worker": "hyperlab.pool",
    # researches
    "Research": "hyperlab.research",
    "Domain": "hyperlab.research",
    "Alias": "hyperlab.research",
    # records
    "Trial": "hyperlab.trial",
    "TrialStatus": "hyperlab.trial",
    "ExperimentStatus": "hyperlab.trial",
    "Mode": "hyperlab.trial",
    "Report": "hyperlab.trial",
    # search spaces
    "SearchSpace": "hyperlab.space",
    "choice": "hyperlab.space",
    "randint": "hyperlab.space",
    "uniform": "hyperlab.space",
    "quniform": "hyperlab.space",
    "loguniform": "hyperlab.space",
    "qloguniform": "hyperlab.space",
    "normal": "hyperlab.space",
    "qnormal": "hyperlab.space",
    "lognormal": "hyperlab.space",
    "qlognormal": "hyperlab.space",
    # inside a trial
    "get_params": "hyperlab.reporting",
    "report": "hyperlab.reporting",
    "suggest": "hyperlab.reporting",
    "should_stop": "hyperlab.reporting",
    "trial_dir": "hyperlab.reporting",
    "trial_seed": "hyperlab.reporting",
    "trial_devices": "hyperlab.reporting",
    "checkpoint": "hyperlab.reporting",
    "load_checkpoint": "hyperlab.reporting",
    # errors
    "HyperlabError": "hyperlab.errors",
    "ConfigError": "hyperlab.errors",
    "ExperimentBusy": "hyperlab.errors",
    "LeaseLost": "hyperlab.errors",
    "SearchSpaceError": "hyperlab.errors",
    "StoreError": "hyperlab.errors",
    "StoreUnavailable": "hyperlab.errors",
    "ExperimentNotFound": "hyperlab.errors",
    "TrialError": "hyperlab.errors",
    "TrialNotFound": "hyperlab.errors",
    "TrialStopped": "hyperlab.errors",
}

__all__ = [
    "Alias",
    "Callback",
    "CommandTrial",
    "ConfigError",
    "Domain",
    "Experiment",
    "ExperimentBusy",
    "ExperimentNotFound",
    "ExperimentStatus",
    "HyperlabError",
    "LeaseLost",
    "Mode",
    "Report",
    "Research",
    "Result",
    "SearchSpace",
    "SearchSpaceError",
    "StoreError",
    "StoreUnavailable",
    "Trial",
    "TrialError",
    "TrialHandle",
    "TrialNotFound",
    "TrialStatus",
    "TrialStopped",
    "__version__",
    "checkpoint",
    "choice",
    "get_params",
    "load",
    "load_checkpoint",
    "lognormal",
    "loguniform",
    "normal",
    "qlognormal",
    "qloguniform",
    "qnormal",
    "quniform",
    "randint",
    "report",
    "resume",
    "run",
    "should_stop",
    "suggest",
    "trial_devices",
    "trial_dir",
    "trial_seed",
    "uniform",
    "worker",
]


def __getattr__(name: str) -> _typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hyperlab' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if _typing.TYPE_CHECKING:
    from hyperlab.errors import (
        ConfigError,
        ExperimentBusy,
        ExperimentNotFound,
        HyperlabError,
        LeaseLost,
        SearchSpaceError,
        StoreError,
        StoreUnavailable,
        TrialError,
        TrialNotFound,
        TrialStopped,
    )
    from hyperlab.executors import CommandTrial
    from hyperlab.experiment import Callback, Experiment, Result, TrialHandle, load, resume, run
    from hyperlab.pool import worker
    from hyperlab.reporting import (
        checkpoint,
        get_params,
        load_checkpoint,
        report,
        suggest,
        trial_devices,
        trial_dir,
        trial_seed,
    )
    from hyperlab.research import Alias, Domain, Research
    from hyperlab.space import (
        SearchSpace,
        choice,
        lognormal,
        loguniform,
        normal,
        qlognormal,
        qloguniform,
        qnormal,
        quniform,
        randint,
        uniform,
    )
    from hyperlab.trial import ExperimentStatus, Mode, Report, Trial, TrialStatus
