"""Ray Tune's common surface on hyperlab: change ``from ray import tune`` into
``from hyperlab.compat.ray import tune`` (and ``ray.tune.schedulers``... into
``hyperlab.compat.ray.tune.schedulers``...), and ``import ray`` into
``from hyperlab.compat import ray``; a Ray Tune script then runs as an ordinary hyperlab
experiment: stored, listed by ``hyperlab ls``, resumable. Ray itself is not needed (it is
imported only by ``executor="ray"``). ``python -m hyperlab.compat.ray script.py`` runs a
script with no line changed.

``tune`` holds the Tuner, ``tune.run``, the search primitives, the trial-side calls and the
Trainable class; ``train`` holds what Ray 2.x examples take from ``ray.train`` (``RunConfig``,
``Checkpoint``, ``report``...). ``init``, ``shutdown``, ``is_initialized``, ``put`` and
``get`` stand for Ray's own (``init`` starts nothing: see ``_core``); ``remote`` and the rest
of Ray's core API are refused with ``NotImplementedError``. Once this module is imported, a
script that dies of a missing ``ray`` (Ray not installed) gets a note naming this replacement.
What is mapped, approximated and refused: ``docs/migrating.md``.
"""

import importlib as _importlib
from typing import Any as _Any

from hyperlab.compat.ray._alias import hint as _hint
from hyperlab.compat.ray._core import (
    ObjectRef,
    RayContext,
    get,
    init,
    is_initialized,
    put,
    remote,
    shutdown,
)

__all__ = [
    "ObjectRef",
    "RayContext",
    "get",
    "init",
    "is_initialized",
    "put",
    "remote",
    "shutdown",
    "train",
    "tune",
]

_hint()

_REFUSED = (
    "wait",
    "kill",
    "cancel",
    "get_actor",
    "method",
    "nodes",
    "cluster_resources",
    "available_resources",
    "get_gpu_ids",
    "get_runtime_context",
    "timeline",
)


def __getattr__(name: str) -> _Any:
    if name in ("tune", "train"):  # ``ray.tune.Tuner`` without importing ray.tune first
        return _importlib.import_module(f"{__name__}.{name}")
    if name in _REFUSED:
        raise NotImplementedError(
            f"ray.{name} has no hyperlab equivalent: hyperlab runs Tune trials, not Ray tasks "
            "or actors; use the real ray package for them"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
