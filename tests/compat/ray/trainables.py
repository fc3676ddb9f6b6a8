"""Trainables of the tests, in a module of their own so that worker processes import them."""

from __future__ import annotations

import os
import time
from typing import ClassVar

from hyperlab.compat.ray import tune


def context(config):
    """Reports what the trial knows about itself."""
    ctx = tune.get_context()
    tune.report(
        {
            "loss": config["x"],
            "trial_id": ctx.get_trial_id(),
            "name": ctx.get_trial_name(),
            "dir": ctx.get_trial_dir(),
            "experiment": ctx.get_experiment_name(),
            "cwd": os.getcwd(),
        }
    )


def counting(config):
    """Counts to 9 from its checkpoint, reporting where it started; loss = lr."""
    checkpoint = tune.get_checkpoint()
    start = checkpoint.to_dict()["done"] if checkpoint else 0
    for i in range(start, 9):
        time.sleep(config.get("sleep", 0.0))
        tune.report(
            {"loss": config["lr"], "started_at": start},
            checkpoint=tune.Checkpoint.from_dict({"done": i + 1}),
        )


def climbing(config):
    """Climbs by ``lr`` a step, from its checkpoint's height, until stopped."""
    checkpoint = tune.get_checkpoint()
    height = checkpoint.to_dict()["height"] if checkpoint else 0.0
    restored = height
    while True:
        time.sleep(0.05)
        height += config["lr"]
        tune.report(
            {"height": height, "restored": restored, "const": config["const"]},
            checkpoint=tune.Checkpoint.from_dict({"height": height}),
        )


def failing(config):
    """Fails for ``x > 0.5``."""
    if config["x"] > 0.5:
        raise ValueError(f"x={config['x']} is too large")
    tune.report({"loss": config["x"]})


def series(config):
    """Reports the values of ``config["values"]`` in order."""
    for value in config["values"]:
        tune.report({"score": value})


class Recorder(tune.Trainable):
    """Records its calls in class lists (threads executor: one process)."""

    setups: ClassVar[list] = []
    resets: ClassVar[list] = []
    cleanups: ClassVar[list] = []
    accept_reset = True

    def setup(self, config):
        type(self).setups.append(config["v"])
        self.v = config["v"]

    def step(self):
        return {"v": self.v, "done": self.iteration + 1 >= 2}

    def reset_config(self, new_config):
        type(self).resets.append(new_config["v"])
        if self.accept_reset:
            self.v = new_config["v"]
        return self.accept_reset

    def cleanup(self):
        type(self).cleanups.append(self.v)


def echo(config):
    """Reports the config it got."""
    tune.report({"loss": 0.0, "seen": config})


ACCURACIES = (0.5, 0.9, 0.1, 0.7, 0.3)
"""What ``accuracies`` reports, each with a checkpoint."""


def accuracies(config):
    """Reports each of ``ACCURACIES`` with a checkpoint of its index (Ray 2.x's API)."""
    for index, acc in enumerate(ACCURACIES):
        tune.report({"acc": acc}, checkpoint=tune.Checkpoint.from_dict({"index": index}))
