"""Steering a really running experiment from the Python API and the CLI, serving it with
``Experiment.start(port=...)``, ``run --detach --port`` and ``hyperlab serve``."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

import hyperlab
from hyperlab import space as hs
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.store import Store
from hyperlab.store.tokens import read_token
from tests import objectives
from tests.cli.test_cli import ROOT, TRAIN, cli, config


def slow(tmp_path, **options):
    return hyperlab.Experiment(
        objectives.report_slowly,
        {"x": hs.uniform(0, 1), "n": hs.randint(1, 4)},
        metric="loss",
        executor="threads",
        storage=f"sqlite:///{tmp_path / 'runs.db'}",
        working_dir=tmp_path / "work",
        progress=False,
        **{"max_trials": 30, "concurrency": 1, **options},
    )


def get(url: str, token: str | None = None) -> dict:
    headers = {} if token is None else {"X-Hyperlab-Token": token}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as response:
        return json.loads(response.read())


def test_the_python_api_serves_and_steers_a_running_experiment(tmp_path):
    exp = slow(tmp_path).start(port=0)
    try:
        server = exp.server
        assert server is not None and server.token == read_token(exp.folder)
        assert server.login_url == f"{server.url}/?token={server.token}"
        record = exp.store.get_experiment(exp.id)
        assert record.server_url == server.url
        assert get(f"{server.url}/api/v1/experiments/{exp.id}")["id"] == exp.id
        number = exp.add_trial({"x": 0.25, "n": 2})
        assert exp.import_data([{"params": {"x": 0.5, "n": 1}, "value": 0.1}]) == 1
        exp.update_search_space({"x": hs.uniform(0.4, 0.6), "n": hs.randint(1, 4)})
        with pytest.raises(SearchSpaceError, match=r"params: x: 0.9 is above the upper bound 0.6"):
            exp.add_trial({"x": 0.9, "n": 1})  # outside the new space
        with pytest.raises(ConfigError, match=r"results\[0\]: value"):
            exp.import_data([{"params": {"x": 0.5, "n": 1}}])
        added = exp.store.get_trial(exp.id, number)
        assert added.params == {"x": 0.25, "n": 2} and added.source == "custom"
        assert [i.value for i in exp.store.get_imported(exp.id)] == [0.1]
        assert exp.store.get_experiment(exp.id).space["x"] == {
            "_type": "uniform",
            "_value": [0.4, 0.6],
        }
    finally:
        exp.stop()
        exp.wait()
    assert exp.server is None  # stopped with the experiment
    assert exp.store.get_experiment(exp.id).server_url is None
    with pytest.raises(ConfigError, match="is not running"):
        exp.add_trial({"x": 0.5, "n": 1})


def test_a_port_in_use_is_an_error_before_anything_is_written(tmp_path):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        exp = slow(tmp_path)
        with pytest.raises(ConfigError, match=f"port: {taken.getsockname()[1]} is already in use"):
            exp.start(port=taken.getsockname()[1])
    assert Store.open(f"sqlite:///{tmp_path / 'runs.db'}").list_experiments() == []


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def test_the_cli_serves_a_detached_run_and_steers_it(project, hyperlab_home):
    sleep = {"_type": "choice", "_value": [0.5]}  # each trial: 3 steps of 0.5 s
    space = {"x": {"_type": "uniform", "_value": [0, 1]}, "sleep": sleep}
    path = config(project, space, max_trials=40, concurrency=1)
    done = cli("run", str(path), "--detach", "--port", "0", home=hyperlab_home)
    assert done.returncode == 0, done.stderr
    experiment_id = done.stdout.strip()
    page = rf"(http://127\.0\.0\.1:\d+)/experiments/{experiment_id}\?token=(\S+)"
    link = re.search(rf"dashboard and REST API: {page}", done.stderr)
    assert link, done.stderr
    url, token = link.groups()
    try:
        assert get(f"{url}/api/v1/experiments/{experiment_id}")["status"] == "RUNNING"
        shown = cli("show", experiment_id, home=hyperlab_home)
        assert f"dashboard  {url}/experiments/{experiment_id}?token={token}" in shown.stdout
        added = cli("add-trial", experiment_id, '{"x": 0.3, "sleep": 0.5}', home=hyperlab_home)
        assert added.returncode == 0 and "runs next" in added.stdout, added.stderr
        bad = cli("add-trial", experiment_id, '{"x": 3, "sleep": 0.5}', home=hyperlab_home)
        assert bad.returncode == 2
        assert "x: 3 is above the upper bound 1 of uniform(0, 1)" in bad.stderr
        (project / "past.json").write_text(
            json.dumps([{"parameter": {"x": 0.31, "sleep": 0.5}, "value": 0.0}])
        )
        imported = cli("import", experiment_id, str(project / "past.json"), home=hyperlab_home)
        assert imported.returncode == 0 and "1 results imported" in imported.stdout
        (project / "space.json").write_text(
            json.dumps({"x": {"_type": "uniform", "_value": [0.2, 0.4]}, "sleep": sleep})
        )
        updated = cli(
            "update-space", experiment_id, str(project / "space.json"), home=hyperlab_home
        )
        assert updated.returncode == 0, updated.stderr
        (project / "bad.json").write_text("{not json")
        assert (
            cli("import", experiment_id, str(project / "bad.json"), home=hyperlab_home).returncode
            == 2
        )
    finally:
        stopped = cli("stop", experiment_id, home=hyperlab_home)
        assert stopped.returncode == 0, stopped.stderr
    after = cli("add-trial", experiment_id, '{"x": 0.3, "sleep": 0.5}', home=hyperlab_home)
    assert after.returncode == 2 and "is not running" in after.stderr


def test_hyperlab_serve_serves_every_experiment_until_interrupted(tmp_path, hyperlab_home):
    storage = f"sqlite:///{tmp_path / 'runs.db'}"
    hyperlab.run(
        lambda p: p["x"], {"x": hs.uniform(0, 1)}, max_trials=2, storage=storage, progress=False
    )
    serve = subprocess.Popen(
        [sys.executable, "-m", "hyperlab", "--storage", storage, "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        lines = []
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            lines.append(serve.stderr.readline())
            found = re.search(r"(http://127\.0\.0\.1:\d+)/\?token=(\S+)", lines[-1])
            if found:
                break
        else:
            raise AssertionError("".join(lines))
        url = found.group(1)
        assert len(get(f"{url}/api/v1/experiments")) == 1
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(30)
    assert serve.returncode == 0
