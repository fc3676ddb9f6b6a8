"""Ray Tune's function trainables that yield their results and return a last one, run by
``tune.run`` over a grid.

Usage: python generator_run.py STORAGE_PATH  (prints a ``SUMMARY {...}`` line at the end)
"""

import json
import sys

from ray import tune


def climb(config):
    for step in range(3):
        yield {"score": config["rate"] * (step + 1)}
    return {"score": config["rate"] * 4, "last": True}


if __name__ == "__main__":
    analysis = tune.run(
        climb,
        config={"rate": tune.grid_search([0.5, 2.0, 1.0])},
        metric="score",
        mode="max",
        name="generators",
        storage_path=sys.argv[1],
        verbose=0,
    )
    summary = {
        "trials": len(analysis.trials),
        "best_config": analysis.best_config,
        "best_metric": analysis.best_result["score"],
        "iterations": sorted(t.last_result["training_iteration"] for t in analysis.trials),
        "scores": sorted(list(frame["score"]) for frame in analysis.trial_dataframes.values()),
        "statuses": sorted(t.status for t in analysis.trials),
    }
    print("SUMMARY " + json.dumps(summary))
