"""The detached actors of a driver that died, found by the driver that resumes its experiment.

On a cluster hyperlab did not start, each actor is detached and named after its experiment
(``actor_prefix``) in the ``NAMESPACE`` namespace, so that it outlives its driver and a
resumed driver finds the trials still running there (``find_orphans``).
"""

from __future__ import annotations

import contextlib
from typing import Any

from hyperlab.executors.base import TrialSpec

__all__ = ["NAMESPACE", "Orphans", "actor_prefix", "find_orphans"]

Orphans = dict[tuple[str, int], tuple[Any, float | None]]
"""Detached actors found on adoption: (trial id, attempt) to (actor, trial's start time)."""
NAMESPACE = "hyperlab"
"""The Ray namespace of the detached actors a resumed driver looks for."""


def actor_prefix(trial_id: str) -> str:
    """How the names of the actors of the trial's experiment begin."""
    experiment = trial_id.rpartition("-")[0] or trial_id
    return f"hyperlab-{experiment}-"


def find_orphans(ray: Any, spec: TrialSpec) -> Orphans:
    """The detached actors a dead driver of this experiment left, by the trial they hold
    (idle ones are killed: a new pool is made as needed)."""
    prefix = actor_prefix(spec.trial_id)
    found: Orphans = {}
    try:
        names = ray.util.list_named_actors(all_namespaces=True)
    except Exception:
        return found
    for entry in names:
        if entry.get("namespace") != NAMESPACE or not entry.get("name", "").startswith(prefix):
            continue
        try:
            actor = ray.get_actor(entry["name"], namespace=NAMESPACE)
            holds = ray.get(actor.current.remote(), timeout=10)
        except Exception:
            continue
        if holds is None:
            with contextlib.suppress(Exception):
                ray.kill(actor, no_restart=True)
            continue
        trial_id, attempt, started = holds
        found[(trial_id, attempt)] = (actor, started)
    return found
