"""``tune.schedulers``: Ray Tune's trial schedulers, run as hyperlab assessors (the mapping
is in ``hyperlab.compat.ray.tune._schedulers``)."""

import sys as _sys
from typing import NoReturn as _NoReturn

from hyperlab.compat.ray.tune._refuse import UnsupportedModule as _UnsupportedModule
from hyperlab.compat.ray.tune._schedulers import (
    ASHAScheduler,
    AsyncHyperBandScheduler,
    FIFOScheduler,
    HyperBandScheduler,
    MedianStoppingRule,
    PopulationBasedTraining,
    TrialScheduler,
)

__all__ = [
    "ASHAScheduler",
    "AsyncHyperBandScheduler",
    "FIFOScheduler",
    "HyperBandScheduler",
    "MedianStoppingRule",
    "PopulationBasedTraining",
    "TrialScheduler",
]

_REFUSED = {
    "PB2": "use PopulationBasedTraining",
    "HyperBandForBOHB": "use HyperBandScheduler, or hyperlab's own bohb tuner (hyperlab.run)",
    "ResourceChangingScheduler": "every trial holds the same resources in hyperlab",
    "PopulationBasedTrainingReplay": "a branched trial's lineage is in its parent field",
}

_sys.modules[f"{__name__}.pb2"] = _UnsupportedModule(
    f"{__name__}.pb2", "ray.tune.schedulers.pb2", _REFUSED["PB2"]
)


def __getattr__(name: str) -> _NoReturn:
    if name in _REFUSED:
        raise NotImplementedError(
            f"tune.schedulers.{name} has no hyperlab equivalent; {_REFUSED[name]}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
