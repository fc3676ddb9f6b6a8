"""``hyperlab replay``, run as a user would (a subprocess) on experiments stored in SQLite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hyperlab

ROOT = Path(__file__).resolve().parents[2]
ARGS = {"min_resource": 1, "max_resource": 6, "reduction_factor": 3, "variant": "stop"}
KV = "min_resource=1,max_resource=6,reduction_factor=3,variant=stop"


def train(params):
    for epoch in range(6):
        hyperlab.report(loss=params["x"] + 1.0 / (epoch + 1) * params["y"])
    return params["x"]


def cli(*args, storage):
    return subprocess.run(
        [sys.executable, "-m", "hyperlab", "--storage", storage, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
        timeout=120,
        cwd=ROOT,
    )


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replay")
    storage = str(folder / "store.db")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HYPERLAB_HOME", str(folder / "home"))
        result = hyperlab.run(
            train,
            {"x": hyperlab.uniform(0, 1), "y": hyperlab.uniform(0, 3)},
            metric="loss",
            tuner="random",
            seed=7,
            max_trials=9,
            storage=storage,
            name="curves",
            progress=False,
        )
        silent = hyperlab.run(
            lambda p: p["x"],
            {"x": hyperlab.uniform(0, 1)},
            max_trials=2,
            storage=storage,
            name="silent",
            progress=False,
        )
    return storage, result, silent.experiment_id


def test_the_table_says_what_would_be_stopped_and_saved(stored):
    storage, result, _ = stored
    done = cli("replay", "curves", "--assessor", "asha", "--assessor-args", KV, storage=storage)
    assert done.returncode == 0, done.stderr
    replay = result.replay("asha", ARGS)
    out = done.stdout
    assert f"experiment {result.experiment_id} replayed with ASHA(" in out
    for t in replay.stopped:
        assert f"stopped at step {t.stopped_at}" in out
    assert (
        f"stopped: {len(replay.stopped)} of 9 trials "
        f"({', '.join(str(t.number) for t in replay.stopped)})"
    ) in out
    assert f"epochs:  {replay.kept_resource:g} of 54 ({replay.saved:g} saved" in out
    assert f"best without it: trial {result.best_trial.number}, " in out
    assert "best with it:" in out
    assert "Traceback" not in done.stderr


def test_json_is_the_python_replay_and_both_argument_forms_agree(stored):
    storage, result, _ = stored
    for given in (KV, json.dumps(ARGS)):
        done = cli(
            "replay",
            result.experiment_id,
            "--assessor",
            "asha",
            "--assessor-args",
            given,
            "--order",
            "sequential",
            "--json",
            storage=storage,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == result.replay("asha", ARGS, order="sequential").as_dict()


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["replay", "nope", "--assessor", "asha"], "'nope'"),
        (["replay", "curves", "--assessor", "ashaa"], "'ashaa'"),
        (["replay", "curves", "--assessor", "asha", "--assessor-args", "min_resource=x"], "'x'"),
        (["replay", "curves", "--assessor", "asha", "--assessor-args", "bogus=1"], "'bogus'"),
        (["replay", "curves", "--assessor", "asha", "--assessor-args", "{bad"], "'{bad'"),
        (["replay", "curves", "--assessor", "asha", "--assessor-args", "lonely"], "'lonely'"),
        (["replay", "silent", "--assessor", "median"], "no intermediate reports"),
        (["replay", "curves", "--assessor", "asha", "--order", "random"], "'random'"),
    ],
)
def test_bad_input_is_one_line_naming_the_value(stored, args, named):
    storage, _, _ = stored
    done = cli(*args, storage=storage)
    assert done.returncode == 2
    assert named in done.stderr
    assert "Traceback" not in done.stderr
