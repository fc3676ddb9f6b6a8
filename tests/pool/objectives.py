"""Objectives of the worker pool's tests, importable by worker processes (by reference)."""

from __future__ import annotations

import os
import time

import hyperlab


def quadratic(params: dict) -> dict:
    """Three reports, then the loss; each trial records the worker process that ran it."""
    for step in range(3):
        hyperlab.report({"loss": (params["x"] - 1) ** 2 + 1.0 / (step + 1), "pid": os.getpid()})
        time.sleep(0.05)
    return {"loss": (params["x"] - 1) ** 2, "pid": os.getpid()}


def slow(params: dict) -> dict:
    """Reports once a second for ``params["seconds"]`` seconds, with a checkpoint each time, so
    a re-run starts where the lost run stopped (each report says where its run started)."""
    start = hyperlab.load_checkpoint() or {"step": 0}
    for step in range(int(start["step"]), int(params["seconds"])):
        hyperlab.report({"loss": params["x"] + step, "resumed_at": start["step"]})
        hyperlab.checkpoint({"step": step + 1})
        time.sleep(1.0)
    return {"loss": params["x"]}
