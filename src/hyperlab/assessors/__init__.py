"""Assessors: early stopping and schedulers that act on trials' intermediate reports. Pick one
with ``assessor=`` (``"median"``, ``"curvefit"``, ``"asha"``, ``"moasha"``, ``"hyperband"``,
``"pbt"``, NNI's ``"Medianstop"``, ``"Curvefitting"``...) and ``assessor_args``.

The classes are imported when first used, so ``import hyperlab.assessors`` stays cheap.
"""

import importlib as _importlib
import typing as _typing

from hyperlab.assessors.base import (
    ASSESSORS,
    Action,
    Assessor,
    Branch,
    Decision,
    Resume,
    Stop,
    assessor_class,
    assessor_name,
    assessor_names,
    create_assessor,
    register_assessor,
)

_CLASSES = {
    "ASHA": "hyperlab.assessors._asha",
    "CurveFittingAssessor": "hyperlab.assessors._curvefit",
    "Hyperband": "hyperlab.assessors._hyperband",
    "MOASHA": "hyperlab.assessors._moasha",
    "MedianAssessor": "hyperlab.assessors._median",
    "PopulationBasedTraining": "hyperlab.assessors._pbt",
}

__all__ = [
    "ASHA",
    "ASSESSORS",
    "MOASHA",
    "Action",
    "Assessor",
    "Branch",
    "CurveFittingAssessor",
    "Decision",
    "Hyperband",
    "MedianAssessor",
    "PopulationBasedTraining",
    "Resume",
    "Stop",
    "assessor_class",
    "assessor_name",
    "assessor_names",
    "create_assessor",
    "register_assessor",
]


def __getattr__(name: str) -> _typing.Any:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module 'hyperlab.assessors' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
