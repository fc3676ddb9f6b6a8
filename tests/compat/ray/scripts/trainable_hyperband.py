"""Ray Tune's class API: a ``tune.Trainable`` fitting a linear model by gradient descent, with
``save_checkpoint``/``load_checkpoint``, under the synchronous HyperBand scheduler, which
pauses trials at its rungs and resumes the best from their checkpoints.

Five trials: with ``max_t=3`` Ray's first bracket runs two trials to the end and its second
holds three, halved at the first rung (Ray waits for ever on a bracket never filled). The run
stops trials at ``MAX_T`` itself, as Ray's HyperBand examples do: without it Ray 2.60 now and
then pauses a trial that reached ``max_t`` and never resumes nor ends it (a run hangs).

Usage: python trainable_hyperband.py STORAGE_PATH  (prints a ``SUMMARY {...}`` line at the end)
"""

import json
import os
import sys
import time

import numpy as np
from ray import tune
from ray.tune.schedulers import HyperBandScheduler

MAX_T = 3


class LinearModel(tune.Trainable):
    def setup(self, config):
        rng = np.random.default_rng(0)
        self.x = rng.normal(size=(200, 5))
        self.y = self.x @ np.arange(1.0, 6.0)
        self.w = np.zeros(5)
        self.lr = config["lr"]
        self.restored = 0

    def step(self):
        time.sleep(0.1)  # a slower step, so that trials overlap as real training does
        gradient = self.x.T @ (self.x @ self.w - self.y) / len(self.y)
        self.w = self.w - self.lr * gradient
        loss = float(np.mean((self.x @ self.w - self.y) ** 2))
        return {"loss": loss, "restored": self.restored}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "weights.json"), "w") as f:
            json.dump({"w": self.w.tolist()}, f)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "weights.json")) as f:
            self.w = np.array(json.load(f)["w"])
        self.restored += 1


if __name__ == "__main__":
    tuner = tune.Tuner(
        LinearModel,
        param_space={"lr": tune.grid_search([0.3, 0.1, 0.03, 0.01, 0.001])},
        tune_config=tune.TuneConfig(
            metric="loss",
            mode="min",
            scheduler=HyperBandScheduler(max_t=MAX_T, reduction_factor=3),
        ),
        run_config=tune.RunConfig(
            name="hyperband",
            storage_path=sys.argv[1],
            stop={"training_iteration": MAX_T},
            verbose=0,
        ),
    )
    results = tuner.fit()
    best = results.get_best_result()
    summary = {
        "trials": len(results),
        "errors": results.num_errors,
        "best_config": best.config,
        "best_metric": best.metrics["loss"],
        "iterations": [r.metrics["training_iteration"] for r in results],
        "restored": max(r.metrics["restored"] for r in results),
    }
    print("SUMMARY " + json.dumps(summary))
