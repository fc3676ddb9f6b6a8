"""``tune.search``: Ray Tune's search algorithms, run as hyperlab tuners (the mapping is in
``hyperlab.compat.ray.tune._searchers``). ``tune.search.optuna``, ``.hyperopt`` and
``.bayesopt`` hold ``OptunaSearch``, ``HyperOptSearch`` and ``BayesOptSearch``; Ray's other
integrations are modules whose every name raises ``NotImplementedError``."""

import sys as _sys
from typing import NoReturn as _NoReturn

from hyperlab.compat.ray.tune._primitives import grid_search
from hyperlab.compat.ray.tune._refuse import UnsupportedModule as _UnsupportedModule
from hyperlab.compat.ray.tune._searchers import (
    BasicVariantGenerator,
    ConcurrencyLimiter,
    Searcher,
)

__all__ = ["BasicVariantGenerator", "ConcurrencyLimiter", "Searcher", "grid_search"]

_INSTEAD = (
    "use tune.search.optuna.OptunaSearch (hyperlab's tpe), HyperOptSearch, BayesOptSearch (gp) "
    "or the default search"
)
for _name in ("ax", "bohb", "hebo", "nevergrad", "skopt", "zoopt", "zoopt_search", "flaml"):
    _sys.modules[f"{__name__}.{_name}"] = _UnsupportedModule(
        f"{__name__}.{_name}", f"ray.tune.search.{_name}", _INSTEAD
    )

_REFUSED = {
    "Repeater": "run each config several times with grid_search and num_samples",
    "SearchAlgorithm": "custom search algorithms are hyperlab tuners (hyperlab.tuners.Tuner)",
    "SearchGenerator": "custom search algorithms are hyperlab tuners (hyperlab.tuners.Tuner)",
    "create_searcher": "build the searcher: tune.search.optuna.OptunaSearch(...)",
}


def __getattr__(name: str) -> _NoReturn:
    if name in _REFUSED:
        raise NotImplementedError(
            f"tune.search.{name} has no hyperlab equivalent; {_REFUSED[name]}"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
