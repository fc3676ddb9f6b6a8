"""What a trainable calls: ``report`` in its forms, checkpoints, ``with_parameters``, the
context; and a Trainable used on its own, as Ray allows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hyperlab.compat.ray import train, tune

THREADS = {"executor": "threads"}


def fit(trainable, space=None, **tune_config):
    return tune.Tuner(
        trainable,
        param_space=space or {},
        tune_config=tune.TuneConfig(**tune_config),
        run_config=tune.RunConfig(verbose=0),
        hyperlab_options=THREADS,
    ).fit()


def test_report_takes_ray_s_older_forms_too():
    def old_style(config):
        tune.report(loss=0.5, accuracy=0.9)
        tune.report(0.25)
        train.report({"loss": 0.1})

    (result,) = fit(old_style)
    reports = [r.metrics for r in result.trial.reports]
    assert reports[0]["loss"] == 0.5 and reports[0]["accuracy"] == 0.9
    assert reports[1]["_metric"] == 0.25
    assert [m["training_iteration"] for m in reports] == [1, 2, 3]
    assert all(m["time_total_s"] >= m["time_this_iter_s"] >= 0 for m in reports)


def test_a_returned_dict_is_the_last_result():
    (result,) = fit(lambda config: {"loss": config["x"] * 2}, {"x": 3})
    assert result.metrics["loss"] == 6 and result.metrics["training_iteration"] == 1


def test_a_folder_checkpoint_is_copied_and_read_back(tmp_path):
    def saving(config):
        folder = Path(config["folder"])
        (folder / "weights.json").write_text(json.dumps({"w": 3}))
        checkpoint = tune.Checkpoint.from_directory(folder)
        checkpoint.set_metadata({"epoch": 1})
        tune.report({"loss": 1.0}, checkpoint=checkpoint)
        (folder / "weights.json").write_text("changed after the report")

    source = tmp_path / "saved"
    source.mkdir()
    (result,) = fit(saving, {"folder": str(source)})
    checkpoint = result.checkpoint
    assert checkpoint.path.startswith(result.path)
    assert checkpoint.get_metadata() == {"epoch": 1}
    with checkpoint.as_directory() as folder:
        assert json.loads(Path(folder, "weights.json").read_text()) == {"w": 3}
    copy = Path(checkpoint.to_directory(tmp_path / "copy"))
    assert json.loads((copy / "weights.json").read_text()) == {"w": 3}


def test_a_dict_checkpoint_is_read_as_a_dict_only():
    checkpoint = tune.Checkpoint.from_dict({"step": 3})
    assert checkpoint.to_dict() == {"step": 3}
    with pytest.raises(ValueError, match="made by from_dict and has no folder"):
        checkpoint.to_directory()
    with pytest.raises(ValueError, match=r"Checkpoint\.from_directory: '/nowhere' is not a folder"):
        tune.Checkpoint.from_directory("/nowhere")


def test_with_parameters_passes_values_to_functions_and_classes():
    def function(config, data):
        tune.report({"total": sum(data) + config["x"]})

    class Model(tune.Trainable):
        def setup(self, config, data):
            self.total = sum(data) + config["x"]

        def step(self):
            return {"total": self.total, "done": True}

    for trainable in (function, Model):
        (result,) = fit(tune.with_parameters(trainable, data=[1, 2, 3]), {"x": 10})
        assert result.metrics["total"] == 16


def test_trial_side_calls_outside_a_trial_say_so():
    with pytest.raises(RuntimeError, match=r"tune\.report\(\) works only inside a trainable"):
        tune.report({"loss": 1.0})
    with pytest.raises(RuntimeError, match="get_checkpoint"):
        tune.get_checkpoint()


def test_context_calls_without_an_equivalent_are_refused():
    def distributed(config):
        tune.get_context().get_world_size()

    (result,) = fit(distributed)
    assert "NotImplementedError: TuneContext.get_world_size() has no" in str(result.error)


def test_a_trainable_runs_on_its_own_as_in_ray():
    class Doubling(tune.Trainable):
        def setup(self, config):
            self.value = config["start"]

        def step(self):
            self.value *= 2
            return {"value": self.value}

        def cleanup(self):
            self.value = None

    trainable = Doubling({"start": 1})
    assert [trainable.train()["value"] for _ in range(3)] == [2, 4, 8]
    assert trainable.iteration == 3 and trainable.train()["training_iteration"] == 4
    assert trainable.trial_id == "default"
    trainable.stop()
    assert trainable.value is None
