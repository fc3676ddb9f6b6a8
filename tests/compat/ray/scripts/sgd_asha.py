"""Ray Tune's function API on a scikit-learn model: an SGD classifier trained epoch by epoch
with ``partial_fit``, a checkpoint after each epoch (``Checkpoint.from_directory``), resumed
from ``tune.get_checkpoint()``, and ASHA stopping the bad learners early.

Usage: python sgd_asha.py STORAGE_PATH  (prints a ``SUMMARY {...}`` line at the end)
"""

import json
import os
import pickle
import sys
import tempfile
from pathlib import Path

import numpy as np
from ray import tune
from ray.tune.schedulers import ASHAScheduler
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier
from sklearn.model_selection import train_test_split

MAX_EPOCHS = 9
ALPHAS = [1e-4, 1e-3, 1.0, 3.0, 10.0, 30.0]  # the good ones first, so they lead the rungs


def train_sgd(config):
    features, labels = load_digits(return_X_y=True)
    x_train, x_val, y_train, y_val = train_test_split(
        features / 16.0, labels, test_size=0.25, random_state=0
    )
    model = SGDClassifier(
        alpha=config["alpha"], learning_rate="constant", eta0=0.01, random_state=0
    )
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as folder:
            state = pickle.loads(Path(folder, "model.pkl").read_bytes())
        model, start = state["model"], state["epoch"] + 1
    for epoch in range(start, MAX_EPOCHS):
        model.partial_fit(x_train, y_train, classes=np.arange(10))
        accuracy = float(model.score(x_val, y_val))
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "model.pkl"), "wb") as f:
                pickle.dump({"model": model, "epoch": epoch}, f)
            tune.report(
                {"mean_accuracy": accuracy}, checkpoint=tune.Checkpoint.from_directory(folder)
            )


if __name__ == "__main__":
    tuner = tune.Tuner(
        train_sgd,
        param_space={"alpha": tune.grid_search(ALPHAS), "loss": "hinge"},
        tune_config=tune.TuneConfig(
            metric="mean_accuracy",
            mode="max",
            max_concurrent_trials=2,
            scheduler=ASHAScheduler(max_t=MAX_EPOCHS, grace_period=1, reduction_factor=3),
        ),
        run_config=tune.RunConfig(name="sgd_asha", storage_path=sys.argv[1], verbose=0),
    )
    results = tuner.fit()
    best = results.get_best_result()
    with best.checkpoint.as_directory() as folder:
        saved = sorted(os.listdir(folder))
    summary = {
        "trials": len(results),
        "errors": results.num_errors,
        "best_config": best.config,
        "best_metric": best.metrics["mean_accuracy"],
        "iterations": [r.metrics["training_iteration"] for r in results],
        "best_checkpoint": saved,
    }
    print("SUMMARY " + json.dumps(summary))
