"""Secrets stay private: after `hyperlab run --detach --port`, the token is in no file that
another user may read (a detached driver's ``driver.log`` used to hold the whole link, with
mode 0644), and the launcher, not the driver, prints the link that carries it."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import httpx
import pytest

from hyperlab.store import Store
from hyperlab.store.tokens import read_token
from tests.cli.test_cli import TRAIN, cli, config


@pytest.fixture
def project(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    return tmp_path


def readable_by_others(path: Path) -> bool:
    return bool(stat.S_IMODE(path.stat().st_mode) & 0o077)


def files_under(root: Path) -> list[Path]:
    return [Path(folder, name) for folder, _, names in os.walk(root) for name in names]


def test_a_detached_served_run_leaves_its_token_in_private_files_only(project, hyperlab_home):
    sleep = {"_type": "choice", "_value": [0.5]}
    space = {"x": {"_type": "uniform", "_value": [0, 1]}, "sleep": sleep}
    path = config(project, space, max_trials=40, concurrency=1)
    umask = os.umask(0o022)  # the usual one: files are world-readable unless made private
    try:
        done = cli("run", str(path), "--detach", "--port", "0", home=hyperlab_home)
    finally:
        os.umask(umask)
    assert done.returncode == 0, done.stderr
    experiment_id = done.stdout.strip()
    try:
        link = re.search(r"dashboard and REST API: (http://\S+)\?token=(\S+)", done.stderr)
        assert link, done.stderr  # the launcher printed it, from the token file it can read
        page, token = link.groups()
        store = Store.open(None)
        folder = store.experiment_folder(store.get_experiment(experiment_id))
        assert token == read_token(folder)
        with httpx.Client(timeout=10) as client:  # the link works
            assert client.get(f"{page}?token={token}").status_code in (200, 303, 307)
        log = folder / "driver.log"
        assert log.exists() and not readable_by_others(log)
        assert token not in log.read_text()
        holding = [
            p
            for p in files_under(project)  # the hyperlab home is in it
            if p.is_file() and token.encode() in p.read_bytes()
        ]
        assert holding == [folder / "token"], holding
        assert not [p for p in holding if readable_by_others(p)]
    finally:
        stopped = cli("stop", experiment_id, home=hyperlab_home)
        assert stopped.returncode == 0, stopped.stderr
    log_text = (folder / "driver.log").read_text()
    assert token not in log_text and f"{page}" in log_text  # it says where it was served
