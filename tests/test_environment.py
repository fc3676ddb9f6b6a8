"""The environment an experiment is created in: captured from real git repositories, the
installed packages and a fake ``nvidia-smi``; stored with the experiment, shown by ``hyperlab
show``, exported, and returned by the REST API."""

from __future__ import annotations

import importlib
import json
import os
import socket
import stat
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hyperlab
from hyperlab import environment
from hyperlab.cli import main
from hyperlab.environment import capture_environment, describe_environment
from hyperlab.server import create_app
from hyperlab.store import Store
from tests.server import SESSION_TOKEN, client_for
from tests.store.test_store import record

SPACE = {"x": {"_type": "uniform", "_value": [0, 1]}}
OBJECTIVE = "def objective(params):\n    return (params['x'] - 0.3) ** 2\n"


def git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    command += ["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
    done = subprocess.run([*command, *args], cwd=repo, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository with one commit (train.py, data.txt), then train.py changed and
    notes.txt added but not tracked."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # never a repo above it
    folder = tmp_path / "project"
    folder.mkdir()
    git(folder, "init", "-q")
    (folder / "train.py").write_text("lr = 0.1\n")
    (folder / "data.txt").write_text("kept\n")
    git(folder, "add", ".")
    git(folder, "commit", "-q", "-m", "first")
    (folder / "train.py").write_text("lr = 0.01\n")
    (folder / "notes.txt").write_text("not tracked\n")
    return folder


def fake_nvidia_smi(folder: Path, body: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """An ``nvidia-smi`` running ``body`` first on PATH (git and the rest stay reachable)."""
    exe = folder / "nvidia-smi"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")


# ---- capture ---------------------------------------------------------------------------------


def test_git_commit_branch_status_and_diff_of_a_dirty_repository(repo: Path) -> None:
    env = capture_environment(repo)
    found = env["git"]
    assert found["root"] == str(repo.resolve())
    assert found["commit"] == git(repo, "rev-parse", "HEAD").strip() and len(found["commit"]) == 40
    assert found["branch"] == "main"
    assert found["status"] == git(repo, "status", "--porcelain")
    assert found["status"].splitlines() == [" M train.py", "?? notes.txt"]
    assert "-lr = 0.1\n+lr = 0.01\n" in found["diff"] and "notes.txt" not in found["diff"]
    assert found["diff_truncated"] is False
    assert env["code_dir"] == str(repo)
    json.dumps(env)  # JSON types only


def test_a_subfolder_reports_its_repository(repo: Path) -> None:
    (repo / "src").mkdir()
    found = capture_environment(repo / "src")["git"]
    assert found["root"] == str(repo.resolve()) and found["branch"] == "main"
    assert " M train.py" in found["status"].splitlines()  # paths from the root


def test_staged_changes_are_in_the_diff_and_a_clean_tree_has_none(repo: Path) -> None:
    git(repo, "add", "train.py")
    assert "+lr = 0.01" in capture_environment(repo)["git"]["diff"]
    git(repo, "commit", "-q", "-m", "second")
    (repo / "notes.txt").unlink()
    found = capture_environment(repo)["git"]
    assert (found["status"], found["diff"]) == ("", "")


def test_detached_head_has_no_branch(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    found = capture_environment(repo)["git"]
    assert found["branch"] is None and found["commit"] == git(repo, "rev-parse", "HEAD").strip()


def test_a_repository_without_commits_has_its_branch_but_no_commit(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    found = capture_environment(tmp_path)["git"]
    assert (found["commit"], found["branch"], found["diff"]) == (None, "main", None)
    assert found["status"] == "?? a.py\n"


def test_a_long_diff_is_cut_and_says_so(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment, "DIFF_LIMIT", 100)
    (repo / "data.txt").write_text("changed line\n" * 1000)
    found = capture_environment(repo)["git"]
    assert found["diff_truncated"] is True and len(found["diff"]) == 100
    assert found["diff"].startswith("diff --git a/data.txt b/data.txt")


def test_outside_a_repository_there_is_no_git_section(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    env = capture_environment(tmp_path)
    assert env["git"] is None and env["packages"]  # the rest is captured


def test_without_a_git_executable_there_is_no_git_section(repo: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(repo / "nothing-here"))
    assert capture_environment(repo)["git"] is None


def test_a_missing_code_folder_has_no_git_section(tmp_path: Path) -> None:
    assert capture_environment(tmp_path / "gone")["git"] is None


def test_a_deleted_current_directory_has_no_git_section(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "gone").mkdir()
    monkeypatch.chdir(tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    env = capture_environment()
    assert (env["code_dir"], env["git"]) == (None, None) and env["packages"]


def test_packages_python_and_machine(tmp_path: Path) -> None:
    env = capture_environment(tmp_path)
    packages = env["packages"]
    assert f"numpy=={np.__version__}" in packages
    names = [p.split("==")[0].lower().replace("_", "-") for p in packages]
    assert names == sorted(names) and len(set(names)) == len(names)
    assert all(p.count("==") == 1 for p in packages)
    assert env["python"]["version"] == sys.version
    assert env["python"]["executable"] == sys.executable
    assert env["hyperlab"] == hyperlab.__version__
    assert (env["hostname"], env["cpu_count"]) == (socket.gethostname(), os.cpu_count())
    assert env["platform"] and env["captured_at"] > 1.6e9


def test_current_directory_by_default(repo: Path, monkeypatch) -> None:
    monkeypatch.chdir(repo)
    assert capture_environment()["git"]["root"] == str(repo.resolve())


# ---- GPUs --------------------------------------------------------------------------------------

NVIDIA_ANSWER = (
    'test "$1" = --query-gpu=index,name,driver_version,memory.total && '
    'test "$2" = --format=csv,noheader,nounits && '
    'printf "0, NVIDIA A100-SXM4-40GB, 535.104.05, 40960\\n1, NVIDIA A100-SXM4-40GB, '
    '535.104.05, 40960\\n"'
)


def test_gpus_from_nvidia_smi(tmp_path: Path, monkeypatch) -> None:
    fake_nvidia_smi(tmp_path, NVIDIA_ANSWER, monkeypatch)
    env = capture_environment(tmp_path)
    gpu = {"name": "NVIDIA A100-SXM4-40GB", "driver_version": "535.104.05"}
    assert env["gpus"] == [
        {"index": 0, **gpu, "memory_total_mib": 40960},
        {"index": 1, **gpu, "memory_total_mib": 40960},
    ]
    (line,) = [line for line in describe_environment(env) if line.startswith("gpus")]
    assert line == "gpus      2x NVIDIA A100-SXM4-40GB (40960 MiB), driver 535.104.05"


@pytest.mark.parametrize("body", ["exit 9", "echo 'No devices were found'", "exit 0"])
def test_no_gpu_section_when_nvidia_smi_fails_or_lists_nothing(tmp_path, monkeypatch, body):
    fake_nvidia_smi(tmp_path, body, monkeypatch)
    assert capture_environment(tmp_path)["gpus"] is None


def test_a_hanging_nvidia_smi_is_killed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(environment, "NVIDIA_SMI_TIMEOUT", 0.2)
    fake_nvidia_smi(tmp_path, "sleep 30", monkeypatch)  # its child holds the pipe too
    assert capture_environment(tmp_path)["gpus"] is None


def test_no_gpu_section_without_nvidia_smi(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert capture_environment(tmp_path)["gpus"] is None


# ---- describing ------------------------------------------------------------------------------


def test_short_and_full_descriptions(repo: Path) -> None:
    env = capture_environment(repo)
    short = describe_environment(env)
    commit = env["git"]["commit"]
    assert short[0] == f"git       {commit[:8]} on main, dirty (2 changed)"
    assert [line.split()[0] for line in short] == [
        "git",
        "python",
        "platform",
        "host",
        "gpus",
        "hyperlab",
        "packages",
    ]
    assert f"packages  {len(env['packages'])} installed" in short
    full = describe_environment(env, full=True)
    assert f"commit    {commit}" in full and "   M train.py" in full
    assert f"  numpy=={np.__version__}" in full
    assert "+lr = 0.01" in full and full.index("+lr = 0.01") > full.index("  ?? notes.txt")


def test_describing_an_environment_without_git_or_gpus() -> None:
    env = capture_environment(Path("/"))  # no repository at the root of the file system
    env["git"], env["gpus"] = None, None
    short = describe_environment(env)
    assert short[0] == "git       none (not in a git repository)" and "gpus      none" in short


# ---- an experiment records it ----------------------------------------------------------------


def import_objective(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``objective`` from a module in ``repo`` (imported from there, as a user's code is)."""
    name = f"envtest_{uuid.uuid4().hex[:8]}"
    (repo / f"{name}.py").write_text(OBJECTIVE)
    monkeypatch.syspath_prepend(str(repo))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return importlib.import_module(name).objective


@pytest.fixture
def recorded(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """(storage, id) of a finished experiment whose objective lives in ``repo``."""
    storage = str(tmp_path / "runs.db")
    objective = import_objective(repo, monkeypatch)
    result = hyperlab.run(objective, SPACE, max_trials=2, tuner="random", storage=storage, seed=1)
    return storage, result.experiment_id


def test_run_records_the_environment_of_the_objectives_folder(recorded, repo: Path) -> None:
    storage, experiment_id = recorded
    with Store.open(storage) as store:
        env = store.get_experiment(experiment_id).environment
    assert env is not None
    assert env["code_dir"] == str(repo.resolve())
    assert env["git"]["root"] == str(repo.resolve()) and env["git"]["branch"] == "main"
    assert " M train.py" in env["git"]["status"].splitlines()
    assert f"numpy=={np.__version__}" in env["packages"]


def test_a_command_trial_records_its_code_dir(repo: Path, tmp_path: Path) -> None:
    (repo / "sub").mkdir()
    trial = hyperlab.CommandTrial(f"{sys.executable} train.py", code_dir=repo / "sub")
    exp = hyperlab.Experiment(
        trial, SPACE, executor="command", max_trials=1, storage=str(tmp_path / "c.db")
    )
    exp.save()
    env = exp.store.get_experiment(exp.id).environment
    assert env is not None and env["code_dir"] == str(repo / "sub")
    assert env["git"]["root"] == str(repo.resolve())


def test_a_command_trial_from_a_config_records_its_code_dir(repo: Path, tmp_path: Path) -> None:
    (repo / "config.yml").write_text(
        json.dumps(
            {
                "search_space": SPACE,
                "trial": {"command": f"{sys.executable} train.py", "code_dir": "."},
                "max_trials": 1,
            }
        )
    )
    exp = hyperlab.Experiment.from_config(repo / "config.yml", storage=str(tmp_path / "c.db"))
    exp.save()
    env = exp.store.get_experiment(exp.id).environment
    assert env is not None and env["code_dir"] == str(repo.resolve())
    assert env["git"]["root"] == str(repo.resolve())


def test_hyperlab_show_prints_the_environment(recorded, capsys) -> None:
    storage, experiment_id = recorded
    assert main(["--storage", storage, "show", experiment_id]) == 0
    out = capsys.readouterr().out
    with Store.open(storage) as store:
        env = store.get_experiment(experiment_id).environment
    assert "  environment\n" in out
    for line in describe_environment(env):
        assert f"    {line}\n" in out
    assert ", dirty (" in out  # train.py, notes.txt, the objective's module
    assert f"numpy=={np.__version__}" not in out and "+lr = 0.01" not in out

    assert main(["--storage", storage, "show", experiment_id, "--env"]) == 0
    full = capsys.readouterr().out
    assert f"\n  numpy=={np.__version__}\n" in full and "\n+lr = 0.01\n" in full
    assert full.count(env["git"]["commit"]) == 1


def test_hyperlab_show_of_an_experiment_without_environment(tmp_path: Path, capsys) -> None:
    storage = str(tmp_path / "old.db")
    with Store.open(storage) as store:
        store.create_experiment(record())  # environment=None: as before hyperlab recorded it
    assert main(["--storage", storage, "show", "exp00001"]) == 0
    assert "environment\n    not recorded" in capsys.readouterr().out


def test_export_with_env_wraps_the_trials(recorded, tmp_path: Path, capsys) -> None:
    storage, experiment_id = recorded
    assert main(["--storage", storage, "export", experiment_id, "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert isinstance(plain, list) and len(plain) == 2  # unchanged without the flag
    path = tmp_path / "out.json"
    args = ["--storage", storage, "export", experiment_id, "--format", "json", "--with-env"]
    assert main([*args, "-o", str(path)]) == 0
    exported = json.loads(path.read_text())
    with Store.open(storage) as store:
        record = store.get_experiment(experiment_id)
    assert exported == {
        "id": experiment_id,
        "name": None,
        "environment": record.environment,
        "trials": plain,
    }


def test_export_with_env_as_csv_is_refused(recorded, capsys) -> None:
    storage, experiment_id = recorded
    assert main(["--storage", storage, "export", experiment_id, "--with-env"]) == 2
    err = capsys.readouterr().err
    assert "--with-env" in err and "--format json" in err and "got --format csv" in err


def test_the_rest_api_returns_the_environment(recorded) -> None:
    storage, experiment_id = recorded
    with Store.open(storage) as store:
        env = store.get_experiment(experiment_id).environment
    with client_for(create_app(storage, session_token=SESSION_TOKEN)) as client:
        body = client.get(f"/api/v1/experiments/{experiment_id}").json()
    assert body["environment"] == env and body["environment"]["git"]["branch"] == "main"


def test_a_distribution_installed_since_the_last_capture_is_listed(tmp_path, monkeypatch):
    def install(name: str, version: str) -> None:
        info = tmp_path / f"{name}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")

    monkeypatch.syspath_prepend(str(tmp_path))
    install("hyperlab-probe-one", "1.0")
    first = capture_environment(tmp_path)["packages"]
    assert "hyperlab-probe-one==1.0" in first
    install("hyperlab-probe-two", "2.0")
    second = capture_environment(tmp_path)["packages"]
    assert {"hyperlab-probe-one==1.0", "hyperlab-probe-two==2.0"} <= set(second)
