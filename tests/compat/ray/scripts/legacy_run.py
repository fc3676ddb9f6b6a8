"""Ray Tune's legacy entry point: ``tune.run`` over a grid of one parameter crossed with
random ones, ``num_samples`` times, read back through ``ExperimentAnalysis``.

Usage: python legacy_run.py STORAGE_PATH  (prints a ``SUMMARY {...}`` line at the end)
"""

import json
import sys

from ray import tune


def objective(config):
    for step in range(4):
        score = config["width"] * (step + 1) / 4 - (config["x"] - 0.5) ** 2 + config["depth"] / 10
        tune.report({"score": score})


if __name__ == "__main__":
    analysis = tune.run(
        objective,
        config={
            "width": tune.grid_search([1, 2, 3]),
            "x": tune.uniform(0, 1),
            "depth": tune.randint(0, 3),
            "activation": tune.choice(["relu", "tanh"]),
            "dataset": "digits",
        },
        num_samples=2,
        metric="score",
        mode="max",
        name="legacy",
        storage_path=sys.argv[1],
        verbose=0,
    )
    frame = analysis.results_df
    summary = {
        "trials": len(analysis.trials),
        "best_config": analysis.best_config,
        "best_metric": analysis.best_result["score"],
        "iterations": [t.last_result["training_iteration"] for t in analysis.trials],
        "widths": sorted(int(w) for w in frame["config/width"]),
        "depths": sorted(int(d) for d in frame["config/depth"]),
        "statuses": sorted(t.status for t in analysis.trials),
    }
    print("SUMMARY " + json.dumps(summary))
