"""Fixtures of the fault suite: a new database per test (a SQLite file, or a PostgreSQL schema of
its own), and a registry of spawned processes that are killed if a test leaves them running."""

from __future__ import annotations

import subprocess

import pytest

from tests.faults.harness import kill

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture(params=BACKENDS)
def storage(request: pytest.FixtureRequest, new_storage) -> str:
    """The storage string of a new, empty database that other processes can open too."""
    return new_storage(request.param)


@pytest.fixture
def processes():
    """A list to put spawned processes in: any still running at teardown is killed."""
    spawned: list[subprocess.Popen] = []
    yield spawned
    for proc in spawned:
        kill(proc)
