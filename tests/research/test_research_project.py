"""A research records its user's project (the folder of the script that built it, else the
working directory): the git state of that folder's repository, not hyperlab's, and
``hyperlab show ID --env`` prints it as it does an experiment's."""

from __future__ import annotations

import runpy
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from hyperlab.cli import main
from hyperlab.store import Store

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git executable")

STUDY = """
from hyperlab.research import Domain, Research

def square(x):
    return x * x

research = Research(name="project-study", domain=Domain(x=[1, 2]), storage={storage!r})
research.add_callable(square, save_to="y")
research.run(n_iters=1, executor="inprocess", progress=False)
"""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A git repository with one commit on branch ``study`` and an uncommitted change."""
    repo = tmp_path / "project"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "study")
    _git(repo, "config", "user.email", "me@example.com")
    _git(repo, "config", "user.name", "Me")
    (repo / "notes.txt").write_text("first\n")
    _git(repo, "add", "notes.txt")
    _git(repo, "commit", "-q", "-m", "first")
    (repo / "notes.txt").write_text("first\nsecond, not committed\n")
    return repo


def test_a_script_records_its_own_repository_and_show_env_prints_it(
    project, tmp_path, capsys
) -> None:
    storage = f"sqlite:///{tmp_path / 'r.db'}"
    script = project / "study.py"
    script.write_text(textwrap.dedent(STUDY.format(storage=storage)))
    research = runpy.run_path(str(script))["research"]

    record = Store.open(storage).get_experiment(research.id)
    git = record.environment["git"]
    assert Path(git["root"]).resolve() == project.resolve()  # not hyperlab's repository
    assert git["commit"] == _git(project, "rev-parse", "HEAD")
    assert git["branch"] == "study"
    assert "+second, not committed" in git["diff"]
    assert record.options.research.project_dir == str(project.resolve())

    assert main(["--storage", storage, "show", research.id, "--env"]) == 0
    out = capsys.readouterr().out
    assert f"commit    {git['commit']}" in out
    assert "branch    study" in out
    assert "+second, not committed" in out  # the diff, in full
    assert f"project    {project.resolve()}" in out

    assert main(["--storage", storage, "show", research.id]) == 0
    short = capsys.readouterr().out
    # notes.txt changed, study.py untracked
    assert f"git       {git['commit'][:8]} on study, dirty (2 changed)" in short
    assert "+second, not committed" not in short


def test_code_without_a_file_records_the_working_directory(project, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(project)
    storage = f"sqlite:///{tmp_path / 'r.db'}"
    namespace: dict = {}
    exec(compile(STUDY.format(storage=storage), "<stdin>", "exec"), namespace)
    research = namespace["research"]
    git = Store.open(storage).get_experiment(research.id).environment["git"]
    assert Path(git["root"]).resolve() == project.resolve()
    assert git["commit"] == _git(project, "rev-parse", "HEAD")


def test_a_project_outside_git_records_no_git_state(tmp_path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    storage = f"sqlite:///{tmp_path / 'r.db'}"
    script = folder / "study.py"
    script.write_text(textwrap.dedent(STUDY.format(storage=storage)))
    research = runpy.run_path(str(script))["research"]
    record = Store.open(storage).get_experiment(research.id)
    assert record.environment["code_dir"] == str(folder.resolve())
    assert record.environment["git"] is None  # tmp_path is in no repository: not hyperlab's
