"""Tuners: algorithms that propose parameter sets. Pick one with ``tuner=``: a name
(``"tpe"``, NNI's ``"TPE"``...), a ``Tuner`` subclass or an instance.

The classes are imported when first used, so ``import hyperlab.tuners`` stays cheap (the
model-based ones need SciPy).

Example:
    >>> from hyperlab.tuners import TPETuner
    >>> hyperlab.run(objective, space, tuner=TPETuner, tuner_args={"n_startup_trials": 5}, ...)
"""

import importlib as _importlib
import typing as _typing

from hyperlab.tuners.base import (
    TUNERS,
    Tuner,
    create_tuner,
    register_tuner,
    tuner_class,
    tuner_name,
    tuner_names,
)

_CLASSES = {
    "AutoTuner": "hyperlab.tuners._auto",
    "BOHB": "hyperlab.tuners._bohb",
    "AnnealTuner": "hyperlab.tuners._anneal",
    "CMAESTuner": "hyperlab.tuners._cmaes",
    "EvolutionTuner": "hyperlab.tuners._evolution",
    "GPTuner": "hyperlab.tuners._gp",
    "GridTuner": "hyperlab.tuners._grid",
    "NoTuner": "hyperlab.tuners._none",
    "RandomTuner": "hyperlab.tuners._random",
    "TPETuner": "hyperlab.tuners._tpe",
}

__all__ = [
    "BOHB",
    "TUNERS",
    "AnnealTuner",
    "AutoTuner",
    "CMAESTuner",
    "EvolutionTuner",
    "GPTuner",
    "GridTuner",
    "NoTuner",
    "RandomTuner",
    "TPETuner",
    "Tuner",
    "create_tuner",
    "register_tuner",
    "tuner_class",
    "tuner_name",
    "tuner_names",
]


def __getattr__(name: str) -> _typing.Any:
    module = _CLASSES.get(name)
    if module is None:
        raise AttributeError(f"module 'hyperlab.tuners' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if _typing.TYPE_CHECKING:
    from hyperlab.tuners._anneal import AnnealTuner
    from hyperlab.tuners._auto import AutoTuner
    from hyperlab.tuners._bohb import BOHB
    from hyperlab.tuners._cmaes import CMAESTuner
    from hyperlab.tuners._evolution import EvolutionTuner
    from hyperlab.tuners._gp import GPTuner
    from hyperlab.tuners._grid import GridTuner
    from hyperlab.tuners._none import NoTuner
    from hyperlab.tuners._random import RandomTuner
    from hyperlab.tuners._tpe import TPETuner
