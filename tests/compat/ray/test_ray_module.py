"""``from hyperlab.compat import ray``: Ray's own calls that Tune scripts make (``init``,
``shutdown``, ``is_initialized``, ``put``/``get``, ``remote`` refused), the message of a
missing ``ray``, and ``python -m hyperlab.compat.ray script.py`` (issue 28)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hyperlab.compat import ray
from hyperlab.compat.ray.tune._plan import make_plan
from tests.compat.ray import trainables

SRC = str(Path(ray.__file__).parents[3])


@pytest.fixture(autouse=True)
def _shut_down():
    ray.shutdown()
    yield
    ray.shutdown()


def test_init_records_and_starts_nothing():
    assert not ray.is_initialized()
    context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir="/x")
    assert ray.is_initialized()
    assert context.address_info == {"address": None}
    with pytest.raises(RuntimeError, match=r"ray\.init twice"):
        ray.init()
    assert ray.init(ignore_reinit_error=True) is context
    ray.shutdown()
    assert not ray.is_initialized()
    with ray.init():
        assert ray.is_initialized()
    assert not ray.is_initialized()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"num_cpu": 2}, TypeError, r"unexpected keyword arguments \['num_cpu'\]"),
        ({"num_cpus": 0}, ValueError, "num_cpus must be a positive integer, got 0"),
        ({"num_cpus": "2"}, ValueError, "num_cpus must be a positive integer, got '2'"),
    ],
)
def test_init_refuses_what_ray_refuses(kwargs, error, message):
    with pytest.raises(error, match=message):
        ray.init(**kwargs)
    assert not ray.is_initialized()


def test_num_cpus_caps_the_trials_at_once():
    ray.init(num_cpus=1)
    made = make_plan(trainables.context, {}, None, None, None)
    assert made.options["concurrency"] == 1


def test_an_address_sends_the_trials_to_that_cluster():
    ray.init(address="ray://head:10001")
    made = make_plan(trainables.context, {}, None, None, None)
    assert made.options["executor"] == "ray"
    assert made.options["ray_address"] == "ray://head:10001"
    own = make_plan(trainables.context, {}, None, None, {"executor": "threads"})
    assert own.options["executor"] == "threads" and "ray_address" not in own.options


def test_put_and_get_hand_back_the_object():
    data = {"rows": [1, 2, 3]}
    ref = ray.put(data)
    assert isinstance(ref, ray.ObjectRef)
    assert ray.get(ref) is data
    assert ray.get([ref, ray.put(5)]) == [data, 5]
    with pytest.raises(TypeError, match=r"not an ray\.ObjectRef"):
        ray.get(data)
    with pytest.raises(TypeError, match=r"Calling 'put' on an ray\.ObjectRef"):
        ray.put(ref)


def test_remote_and_the_rest_of_rays_core_are_refused_naming_the_alternative():
    with pytest.raises(NotImplementedError, match=r"ray\.remote has no hyperlab equivalent"):
        ray.remote(lambda: 1)
    with pytest.raises(NotImplementedError, match=r"ray\.wait has no hyperlab equivalent"):
        ray.wait  # noqa: B018
    with pytest.raises(AttributeError):
        ray.no_such_name  # noqa: B018


def test_tune_and_train_are_attributes():
    assert ray.tune.Tuner.__module__.startswith("hyperlab.compat.ray.tune")
    assert ray.train.RunConfig is ray.tune.RunConfig


def run_python(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SRC, "HYPERLAB_HOME": str(cwd / "home")}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_missing_ray_is_named_with_its_replacement(tmp_path):
    # -S: no site-packages, so no ray, as on a machine without it; hyperlab.compat.ray needs
    # only the standard library
    code = f"import sys; sys.path.insert(0, {SRC!r})\nfrom hyperlab.compat import ray\nimport ray"
    done = run_python(tmp_path, "-S", "-c", code)
    assert done.returncode == 1
    error, note = done.stderr.strip().splitlines()[-2:]
    assert error == "ModuleNotFoundError: No module named 'ray'"
    assert note.startswith("Ray is not installed; hyperlab replaces it")
    assert "from hyperlab.compat import ray" in note
    assert "python -m hyperlab.compat.ray script.py" in note


def test_the_note_leaves_imports_and_find_spec_alone(tmp_path):
    code = (
        f"import sys; sys.path.insert(0, {SRC!r})\n"
        "import importlib.util\n"
        "from hyperlab.compat import ray\n"
        "try:\n"
        "    import ray\n"
        "except ImportError as error:\n"
        "    print('caught', error.name, getattr(error, '__notes__', None))\n"
        "print('spec', importlib.util.find_spec('ray'))\n"
    )
    done = run_python(tmp_path, "-S", "-c", code)
    assert done.stdout.split("\n")[:2] == ["caught ray None", "spec None"], done.stderr


def test_the_runner_runs_a_script_with_its_ray_imports_unchanged(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        textwrap.dedent(
            """
            import ray
            from ray import tune
            from ray.tune.schedulers import ASHAScheduler

            def train(config):
                for step in range(3):
                    tune.report({"loss": config["x"] / (step + 1)})

            if __name__ == "__main__":
                ray.init(num_cpus=2)
                data = ray.get(ray.put([1, 2]))
                grid = tune.Tuner(
                    train,
                    param_space={"x": tune.uniform(0, 1)},
                    tune_config=tune.TuneConfig(
                        metric="loss", mode="min", num_samples=3,
                        scheduler=ASHAScheduler(max_t=3),
                    ),
                    run_config=tune.RunConfig(verbose=0),
                ).fit()
                print("RESULT", type(ray).__name__, ray.__name__, data, len(grid))
                import ray.rllib
            """
        )
    )
    done = run_python(tmp_path, "-m", "hyperlab.compat.ray", str(script))
    assert "RESULT module hyperlab.compat.ray [1, 2] 3" in done.stdout, done.stderr
    assert done.stderr.strip().splitlines()[-2:] == [
        "ModuleNotFoundError: No module named 'ray.rllib'",
        "hyperlab.compat.ray has no 'rllib' (docs/migrating.md, 'Ray Tune', lists what is mapped)",
    ]
