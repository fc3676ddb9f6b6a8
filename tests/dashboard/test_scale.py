"""The page over 100,000 trials (written directly through the store, once for the module): it
draws its first view, pages, sorts and filters without ever asking for more than a page. The
times of its steps are measured, not asserted (a loaded machine is slower, not wrong): they go to
``test-artifacts/dashboard/speed-100k.json``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from hyperlab.server import BackgroundServer, serve_in_background
from hyperlab.store import Store
from hyperlab.trial import TrialStatus
from tests.dashboard.conftest import ARTIFACTS, Dash
from tests.server.apidata import write_experiment

N_TRIALS = 100_000
EXP = "big00001"
HANG = 60.0  # seconds after which a step of the page counts as hung, not slow


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BackgroundServer, dict]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('big') / 'big.db'}"
    store = Store.open(url)
    trials = write_experiment(store, EXP, N_TRIALS, reports=1)
    reference = {
        "failed": sum(t.status is TrialStatus.FAILED for t in trials),
        "adam_low_lr": sum(t.params["opt"] == "adam" and t.params["lr"] <= 1e-3 for t in trials),
    }
    del trials
    store.close()
    with serve_in_background(url, 0) as server:
        yield server, reference


def _wait_total(dash: Dash, total: int) -> None:
    dash.page.wait_for_function(
        f"document.querySelector('[data-testid=trials-table]').dataset.total == {total} && "
        "!document.querySelector('.trials-table.loading')",
        timeout=HANG * 1000,
    )


def _column(dash: Dash, key: str) -> list[float]:
    cells = dash.page.get_by_test_id("trials-table").locator(f'tbody td[data-col="{key}"]')
    return [float(text.replace(",", "")) for text in cells.all_inner_texts()]


def test_a_100k_trial_experiment_pages_sorts_and_filters_without_hanging(
    new_dash: Any, big: tuple[BackgroundServer, dict]
):
    server, reference = big
    dash = new_dash()
    page = dash.page
    asked: list[int] = []

    def record(request: Any) -> None:
        parts = urlsplit(request.url)
        if parts.path.endswith(f"/{EXP}/trials"):
            asked.append(int(parse_qs(parts.query)["limit"][0]))

    page.on("request", record)
    times: dict[str, float] = {}

    def step(name: str, action: Any) -> None:
        start = time.monotonic()
        action()
        times[name] = round(time.monotonic() - start, 3)

    page.goto(server.link(EXP))
    times["ready_mark_ms"] = round(dash.wait_ready())
    dash.page.get_by_test_id("best-chart").locator(".main-svg").first.wait_for()

    page.goto(f"{server.url}/#/experiments/{EXP}/trials")
    step("first page", lambda: _wait_total(dash, N_TRIALS))
    assert page.get_by_test_id("page-range").inner_text() == "1\u201350 of 100,000"
    page.get_by_test_id("page-size").select_option("250")
    step("250 rows", lambda: page.wait_for_selector("[data-testid=trial-row] >> nth=249"))

    def last_page() -> None:
        page.get_by_test_id("page-last").click()
        page.get_by_test_id("page-range").filter(has_text="99,751\u2013100,000").wait_for()

    step("last page", last_page)

    def sort_by_lr() -> None:
        page.get_by_test_id("sort-param.lr").click()
        page.wait_for_selector("th[aria-sort=ascending][data-sort='param.lr']")
        _wait_total(dash, N_TRIALS)

    step("sort by a parameter", sort_by_lr)
    assert (
        page.get_by_test_id("page-range").inner_text() == "1\u2013250 of 100,000"
    )  # back to page 1
    lrs = _column(dash, "param.lr")
    assert lrs == sorted(lrs) and len(lrs) == 250

    def sort_by_value() -> None:
        page.get_by_test_id("sort-value").click()
        page.wait_for_selector("th[aria-sort=ascending][data-sort=value]")
        _wait_total(dash, N_TRIALS)

    step("sort by value", sort_by_value)
    values = _column(dash, "value")
    assert values == sorted(values)

    def failed_only() -> None:
        page.get_by_test_id("chip-FAILED").click()
        _wait_total(dash, reference["failed"])

    step("status filter", failed_only)
    page.get_by_test_id("chip-FAILED").click()
    _wait_total(dash, N_TRIALS)

    def adam_low_lr() -> None:
        page.get_by_test_id("add-filter").select_option("param:opt")
        page.get_by_test_id("filter-param-opt").get_by_text("adam").click()
        page.get_by_test_id("add-filter").select_option("param:lr")
        page.get_by_test_id("filter-param-lr-max").fill("1e-3")
        _wait_total(dash, reference["adam_low_lr"])

    step("parameter filters", adam_low_lr)
    dash.shot("trials-100k")
    assert max(asked) <= 500, "the page must never ask for more than a page"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "speed-100k.json").write_text(json.dumps(times, indent=2))
    print(f"\n100,000 trials: {times}")
