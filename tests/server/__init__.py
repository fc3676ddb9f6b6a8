"""Helpers shared by the server's tests: a real experiment in a SQLite file, live experiments
driven through the API, and FastAPI's TestClient."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hyperlab
from hyperlab import space as hs
from tests import objectives

with warnings.catch_warnings():  # newer Starlette prefers httpx2; httpx still works
    warnings.filterwarnings("ignore", message=r"Using `httpx` with `starlette.testclient`")
    from fastapi.testclient import TestClient

__all__ = [
    "BASE_URL",
    "SESSION_TOKEN",
    "SPACE",
    "TestClient",
    "client_for",
    "populate",
    "start_live",
    "wait_for",
    "wait_for_control",
]

BASE_URL = "http://127.0.0.1:8000"
"""Where the test client says it talks to (its Host header must name the server)."""
SESSION_TOKEN = "session-token-for-tests"


def client_for(app: Any, *, token: str | None = SESSION_TOKEN) -> TestClient:
    """A TestClient of ``app`` (made by ``create_app(..., session_token=SESSION_TOKEN)``) that
    names the server in its Host header and sends ``token`` with every request."""
    headers = {} if token is None else {"X-Hyperlab-Token": token}
    return TestClient(app, base_url=BASE_URL, headers=headers)


SPACE = {"x": hs.choice(0.1, 0.5, 0.9), "fail": hs.choice(0, 1)}
"""Six grid points; the three with ``fail=1`` fail after reporting."""


def reporting_objective(params: dict[str, Any]) -> dict[str, float]:
    """Reports a loss three times, then fails when ``fail`` is set, else returns loss and acc."""
    x = params["x"]
    for step in range(3):
        hyperlab.report(loss=x + 1.0 / (step + 1))
    if params["fail"]:
        raise ValueError(f"fail={params['fail']}")
    return {"loss": x, "acc": 1.0 - x}


def populate(storage: str, working_dir: Path, name: str = "grid") -> str:
    """Run the six-trial grid experiment to its end in ``storage``; return its id."""
    result = hyperlab.run(
        reporting_objective,
        SPACE,
        metric="loss",
        tuner="grid",
        storage=storage,
        working_dir=working_dir,
        name=name,
        seed=7,
        progress=False,
    )
    return result.experiment_id


def start_live(storage: str, working_dir: Path, **options: Any) -> hyperlab.Experiment:
    """Start, in the background, an experiment of slow thread trials (each up to 10 s)."""
    options = {"max_trials": 50, "concurrency": 1, **options}
    return hyperlab.Experiment(
        objectives.report_slowly,
        {"x": hs.uniform(0, 1)},
        metric="loss",
        executor="threads",
        storage=storage,
        working_dir=working_dir,
        progress=False,
        **options,
    ).start()


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll ``predicate`` until it returns something truthy; return that."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.03)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def wait_for_control(client: TestClient, control_id: int) -> dict[str, Any]:
    """The control request once the driver has applied it."""

    def applied() -> dict[str, Any] | None:
        body = client.get(f"/api/v1/controls/{control_id}").json()
        return body if body["state"] != "pending" else None

    return wait_for(applied, what=f"control {control_id} to be applied")
