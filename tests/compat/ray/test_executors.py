"""A Ray Tune run on every hyperlab executor, the ray executor included: reports, ASHA's early
stops and folder checkpoints come back the same."""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import pytest

from hyperlab.compat.ray import tune
from hyperlab.compat.ray.tune.schedulers import ASHAScheduler


@pytest.fixture
def own_ray():
    """Ray started by the ray executor in this process, shut down after the test."""
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    started = ray.is_initialized()
    yield
    if not started and ray.is_initialized():
        ray.shutdown()


@pytest.mark.parametrize(
    "executor",
    ["inprocess", "threads", "processes", pytest.param("ray", marks=pytest.mark.slow)],
)
def test_a_run_gives_the_same_results_on_every_executor(executor, request):
    if executor == "ray":
        request.getfixturevalue("own_ray")

    def epochs(config):
        """Nine epochs, a folder checkpoint each; the loss is ``lr`` throughout. Defined here
        so that it travels by value: Ray's workers need not import the tests."""
        for epoch in range(9):
            time.sleep(0.02)
            with tempfile.TemporaryDirectory() as folder:
                Path(folder, "epoch.json").write_text(json.dumps({"epoch": epoch}))
                checkpoint = tune.Checkpoint.from_directory(folder)
                tune.report({"loss": config["lr"]}, checkpoint=checkpoint)

    results = tune.Tuner(
        epochs,
        param_space={"lr": tune.grid_search([0.1, 0.2, 0.9, 0.8])},
        tune_config=tune.TuneConfig(
            metric="loss",
            mode="min",
            max_concurrent_trials=2,
            scheduler=ASHAScheduler(max_t=9, grace_period=1, reduction_factor=2),
        ),
        run_config=tune.RunConfig(verbose=0),
        hyperlab_options={"executor": executor},
    ).fit()
    assert len(results) == 4 and results.num_errors == 0
    best = results.get_best_result()
    assert best.config == {"lr": 0.1} and best.metrics["training_iteration"] == 9
    with best.checkpoint.as_directory() as folder:
        assert json.loads(Path(folder, "epoch.json").read_text()) == {"epoch": 8}
    assert min(r.metrics["training_iteration"] for r in results) < 9  # stopped early
