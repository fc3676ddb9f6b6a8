"""The dashboard in a real browser: Debian's chromium driven by the ``playwright`` package (no
browser download), one browser for these tests (closed after them, so no browser process is
around when other tests count their processes), a fresh context (cookies, cache) per test.

The ``lab`` of these tests is a real store with a running experiment of command trials (a small
stdlib-only training script: it logs, reports a loss and an accuracy, and sometimes fails), two
finished experiments, and one server for the whole store (``serve_in_background``), as
``hyperlab serve`` runs it. Screenshots go to ``test-artifacts/dashboard/`` at the repository's
root, named after what they show. Without chromium or the playwright package, the tests that
drive the browser skip saying which is missing (and fail in CI: ``tests/services.py``).
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import hyperlab
from hyperlab.server import BackgroundServer, serve_in_background
from hyperlab.store import Store
from hyperlab.trial import TrialStatus
from tests.services import missing

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "dashboard"
VIEWPORT = {"width": 1440, "height": 900}
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

TRIAL_SCRIPT = '''\
"""A training run in miniature (stdlib only): logs, reports loss and accuracy, sometimes fails."""
import json, math, os, random, sys, time

params = json.load(open(os.environ["HYPERLAB_PARAMS_FILE"]))["parameters"]
channel = os.environ["HYPERLAB_CHANNEL"]
steps, pause = int(os.environ.get("STEPS", "24")), float(os.environ.get("PAUSE", "0.2"))
rng = random.Random(int(os.environ.get("HYPERLAB_SEED", "0")))
floor = abs(math.log10(params["lr"]) + 2.5) * 0.6 + params["dropout"] * 0.6
floor += rng.random() * 0.05


def send(tag, metrics, step=None):
    line = {"tag": tag, "time": time.time(), "step": step, "metrics": metrics}
    with open(channel, "a") as f:
        f.write(json.dumps(line) + "\\n")


print(f"training {params}", flush=True)
for step in range(steps):
    time.sleep(pause)
    loss = floor + 1.5 / (step + 1.5)
    print(f"epoch {step:3d}  loss={loss:.4f}  acc={1 / (1 + loss):.4f}", flush=True)
    if step == 2:
        print("warning: no learning-rate schedule given", file=sys.stderr, flush=True)
    if params["lr"] > 0.07 and step == 6:
        print("FloatingPointError: the loss diverged (lr too high)", file=sys.stderr, flush=True)
        sys.exit(3)
    send("report", {"loss": loss, "acc": 1 / (1 + loss)}, step)
send("final", {"loss": loss, "acc": 1 / (1 + loss)})
'''

LIVE_SPACE = {
    "lr": hyperlab.loguniform(1e-4, 1e-1),
    "batch": hyperlab.choice(32, 64, 128),
    "layers": hyperlab.randint(1, 6),
    "dropout": hyperlab.uniform(0.0, 0.5),
    "optimizer": hyperlab.choice("adam", "sgd", "rmsprop"),
}


def quick_objective(params: dict[str, Any]) -> dict[str, float]:
    """A finished experiment's trials: a few reports each, then loss and accuracy."""
    loss = (params["x"] - 0.3) ** 2 + (0.1 if params["opt"] == "sgd" else 0.0)
    for step in range(6):
        hyperlab.report(loss=loss + 1.0 / (step + 1))
    return {"loss": loss, "acc": 1.0 / (1.0 + loss)}


def failing_objective(params: dict[str, Any]) -> float:
    """Fails (with a traceback) for x above 0.2."""
    for step in range(4):
        hyperlab.report(loss=params["x"] ** 2 + 1.0 / (step + 1))
    if params["x"] > 0.2:
        raise FloatingPointError(f"the loss diverged at x={params['x']:.3f}")
    return params["x"] ** 2


def slow_objective(params: dict[str, Any]) -> float:
    """A thread trial that reports for up to 30 s (stopped by the tests before that)."""
    for step in range(300):
        hyperlab.report(loss=params["x"] + 1.0 / (step + 1))
        time.sleep(0.1)
    return params["x"]


@dataclass
class Lab:
    """A store with experiments in it, and a server over it."""

    folder: Path
    url: str
    store: Store
    server: BackgroundServer
    live: hyperlab.Experiment
    done_id: str
    spare_id: str

    def link(self, experiment_id: str | None = None) -> str:
        """The dashboard link with the token (it sets the cookie, then redirects)."""
        return self.server.link(experiment_id)

    def page_url(self, fragment: str = "") -> str:
        """The dashboard's address with a route: ``#/experiments/ID``..."""
        return f"{self.server.url}/{fragment}"

    def trials(self) -> list[Any]:
        return self.store.get_trials(self.live.id, reports=False)

    def wait_for(self, predicate: Callable[[], Any], timeout: float = 15.0, what: str = "") -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout}s waiting for {what}")

    def fresh_running_trial(self, younger_than: float = 0.6) -> int:
        """The number of a trial that started running less than ``younger_than`` s ago."""

        def fresh() -> int | None:
            now = time.time()
            for trial in self.trials():
                started = trial.started_at
                if trial.status is TrialStatus.RUNNING and started and now - started < younger_than:
                    return trial.number
            return None

        return self.wait_for(fresh, 20.0, "a trial that just started")


@pytest.fixture(scope="package")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    folder = tmp_path_factory.mktemp("dashboard")
    url = f"sqlite:///{folder / 'runs.db'}"
    work = folder / "work"
    common: dict[str, Any] = {"storage": url, "working_dir": work, "progress": False}
    space = {"x": hyperlab.uniform(-1.0, 1.0), "opt": hyperlab.choice("adam", "sgd")}
    spare = hyperlab.run(
        failing_objective,
        space,
        metric="loss",
        max_trials=8,
        name="flaky-run",
        seed=2,
        fail_fast=False,
        **common,
    )
    done = hyperlab.run(
        quick_objective,
        space,
        metric="loss",
        max_trials=40,
        name="mnist-baseline",
        tuner="tpe",
        executor="threads",
        concurrency=4,
        seed=1,
        **common,
    )
    script = folder / "train.py"
    script.write_text(TRIAL_SCRIPT)
    live = hyperlab.Experiment(
        hyperlab.CommandTrial(f"{sys.executable} {script}"),
        LIVE_SPACE,
        metric="loss",
        executor="command",
        concurrency=2,
        max_trials=400,
        max_duration="1h",
        assessor="median",
        assessor_args={"start_step": 10},
        tuner="tpe",
        name="cifar-resnet",
        seed=3,
        **common,
    ).start()
    server = serve_in_background(url, 0)
    store = Store.open(url)
    try:
        yield Lab(folder, url, store, server, live, done.experiment_id, spare.experiment_id)
    finally:
        live.stop()
        live.wait(timeout=30)
        server.stop()
        store.close()


@pytest.fixture(scope="package")
def chromium_browser() -> Iterator[Any]:
    """One chromium for the session: Debian's, never one playwright would download."""
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        missing(
            "the dashboard tests need Debian's chromium, which is not on the PATH: "
            "`apt-get install chromium` (.ci/run does it)"
        )
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("the dashboard tests need the playwright package: pip install -e '.[test]'")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


class Dash:
    """A browser tab on the dashboard, with what a test needs around it."""

    def __init__(self, context: Any, page: Any) -> None:
        self.context = context
        self.page = page
        self.errors: list[str] = []
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        page.set_default_timeout(15_000)

    def shot(self, name: str, *, full_page: bool = True) -> Path:
        """Save a screenshot as ``test-artifacts/dashboard/<name>.png``."""
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=full_page)
        return path

    def wait_ready(self) -> float:
        """Wait until the experiment page marked itself ready; the mark's time (ms)."""
        self.page.wait_for_function(
            "performance.getEntriesByName('hyperlab:ready').length > 0", timeout=20_000
        )
        return float(
            self.page.evaluate("performance.getEntriesByName('hyperlab:ready')[0].startTime")
        )

    def settle(self) -> None:
        """Let charts finish drawing (plotly redraws asynchronously)."""
        self.page.wait_for_timeout(400)


@pytest.fixture
def new_dash(chromium_browser: Any) -> Iterator[Callable[..., Dash]]:
    """``new_dash()``: a new browser context and tab (no cookie: log in with a token link)."""
    made: list[Dash] = []

    def make(**options: Any) -> Dash:
        context = chromium_browser.new_context(viewport=VIEWPORT, **options)
        dash = Dash(context, context.new_page())
        made.append(dash)
        return dash

    yield make
    for dash in made:
        dash.context.close()
    errors = [e for dash in made for e in dash.errors]
    assert not errors, f"the page threw: {errors}"


@pytest.fixture
def dash(new_dash: Callable[..., Dash]) -> Dash:
    return new_dash()
