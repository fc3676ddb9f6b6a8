"""Ray Tune code on hyperlab: population based training of a ``tune.Trainable``.

The script is Ray Tune's, but for its imports (``from ray import tune`` became
``from hyperlab.compat.ray import tune``). Each trial fits a linear model by gradient descent;
PBT replaces the trials whose learning rate is poor by copies of good ones, continued from
their checkpoints with a perturbed rate. hyperlab records each copy as a new trial with its
``parent``, so the lineage shows in ``hyperlab trials ID`` (column ``from``).

    python examples/ray_tune/pbt_trainable.py      # about 5 s on 2 cores
"""

import json
import os
import time

import numpy as np

from hyperlab.compat.ray import tune
from hyperlab.compat.ray.tune.schedulers import PopulationBasedTraining


class LinearModel(tune.Trainable):
    def setup(self, config):
        rng = np.random.default_rng(0)
        self.x = rng.normal(size=(200, 5))
        self.y = self.x @ np.arange(1.0, 6.0)
        self.w = np.zeros(5)
        self.lr = config["lr"]

    def step(self):
        time.sleep(0.05)  # a slower step, as real training, so that the population overlaps
        gradient = self.x.T @ (self.x @ self.w - self.y) / len(self.y)
        self.w = self.w - self.lr * gradient
        return {"loss": float(np.mean((self.x @ self.w - self.y) ** 2))}

    def save_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "weights.json"), "w") as f:
            json.dump({"w": self.w.tolist()}, f)

    def load_checkpoint(self, checkpoint_dir):
        with open(os.path.join(checkpoint_dir, "weights.json")) as f:
            self.w = np.array(json.load(f)["w"])

    def reset_config(self, new_config):
        self.lr = new_config["lr"]
        return True


if __name__ == "__main__":
    scheduler = PopulationBasedTraining(
        time_attr="training_iteration",
        perturbation_interval=3,
        hyperparam_mutations={"lr": tune.loguniform(1e-3, 0.5)},
    )
    tuner = tune.Tuner(
        LinearModel,
        tune_config=tune.TuneConfig(
            metric="loss", mode="min", num_samples=4, scheduler=scheduler, reuse_actors=True
        ),
        run_config=tune.RunConfig(name="pbt-example", stop={"training_iteration": 12}),
    )
    results = tuner.fit()
    for result in results:
        trial = result.trial
        origin = "" if trial.parent is None else f" (from trial {trial.parent})"
        print(
            f"trial {trial.number}{origin}: lr={result.config['lr']:.4f}, "
            f"{result.metrics['training_iteration']} iterations, loss={result.metrics['loss']:.4g}"
        )
    best = results.get_best_result()
    print(f"best: lr={best.config['lr']:.4f}, loss={best.metrics['loss']:.4g}")
