"""Module-level objectives for the checkpoint tests: importable by worker processes."""

from __future__ import annotations

import time

import hyperlab


def count(params):
    """Steps ``first..steps-1``, each reported then checkpointed; ``first`` follows the
    checkpoint it loaded (0 without one)."""
    state = hyperlab.load_checkpoint()
    first = 0 if state is None else state["step"] + 1
    for step in range(first, params["steps"]):
        time.sleep(params.get("sleep", 0.0))
        hyperlab.report(loss=1.0 / (step + 1))
        hyperlab.checkpoint({"step": step})
    return {"loss": 1.0 / params["steps"], "first": float(first)}


def count_without_checkpoints(params):
    """Steps ``0..steps-1``, each reported; nothing saved."""
    for step in range(params["steps"]):
        time.sleep(params.get("sleep", 0.0))
        hyperlab.report(loss=1.0 / (step + 1))
    return {"loss": 1.0 / params["steps"]}


SCORES = (0.5, 0.9, 0.1, 0.7, 0.3)
"""What ``scored`` reports, one score before each checkpoint."""


def scored(params):
    """Reports each of ``SCORES`` as ``acc``, each followed by a checkpoint of its index."""
    for index, acc in enumerate(SCORES):
        hyperlab.report(acc=acc)
        hyperlab.checkpoint({"index": index})
    return {"acc": SCORES[-1]}
