"""Small slips a user notices on the dashboard (issue 28): a seed beyond 2^53 shown digit for
digit, the curves' metric named on a Plots tab opened first, an NNI experiment's objective
(``default``) shown once, and the sort arrow pointing the way the values go."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

import hyperlab
from hyperlab.compat import nni
from hyperlab.server import BackgroundServer, serve_in_background
from tests.dashboard.conftest import Dash

BIG_SEED = 4823208733845494653  # beyond 2^53: a double would read it as ...495000
SPACE = {"x": hyperlab.uniform(-1.0, 1.0), "opt": hyperlab.choice("adam", "sgd")}


def accuracy(params: dict[str, Any]) -> dict[str, float]:
    """A maximise experiment's trial: reports acc, ends with acc and loss."""
    for step in range(3):
        hyperlab.report(acc=params["x"] * step / 3)
    return {"acc": params["x"], "loss": 1.0 - params["x"]}


def nni_trial(params: dict[str, Any]) -> None:
    """A trial written as NNI's are: bare numbers, which NNI calls ``default``."""
    for step in range(3):
        nni.report_intermediate_result(params["x"] * step)
    nni.report_final_result(params["x"])


@dataclass
class Slips:
    server: BackgroundServer
    max_id: str
    nni_id: str


@pytest.fixture(scope="module")
def slips(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Slips]:
    folder = tmp_path_factory.mktemp("slips")
    common: dict[str, Any] = {
        "storage": f"sqlite:///{folder / 'runs.db'}",
        "working_dir": folder / "work",
        "progress": False,
    }
    best = hyperlab.run(
        accuracy, SPACE, metric="acc", mode="max", max_trials=8, seed=BIG_SEED, **common
    )
    nni_run = hyperlab.run(nni_trial, SPACE, max_trials=6, seed=5, **common)
    server = serve_in_background(common["storage"], 0)
    try:
        yield Slips(server, best.experiment_id, nni_run.experiment_id)
    finally:
        server.stop()


def _open(dash: Dash, slips: Slips, experiment_id: str, tab: str) -> None:
    """Open ``tab`` of the experiment as the first thing the page shows."""
    dash.page.goto(slips.server.link(experiment_id))
    dash.page.goto(f"{slips.server.url}/?fresh#/experiments/{experiment_id}/{tab}")
    dash.page.get_by_test_id(f"{tab}-tab").wait_for()


def test_a_seed_beyond_2_53_shows_every_digit_and_json_writes_it_back_exactly(
    dash: Dash, slips: Slips
):
    _open(dash, slips, slips.max_id, "config")
    options = dash.page.get_by_test_id("config-options")
    options.get_by_text("maximize").wait_for()
    assert str(BIG_SEED) in options.inner_text()
    dash.shot("config-big-seed")
    back = dash.page.evaluate(
        """async () => {
          const {parseExact} = await import("/static/js/json.js");
          const text = '{"seed":4823208733845494653,"x":0.5,"n":-9007199254740993,"e":1e+30}';
          return JSON.stringify(parseExact(text)) === text;
        }"""
    )
    assert back is True


def test_the_curves_metric_is_named_on_a_plots_tab_opened_first(dash: Dash, slips: Slips):
    for experiment_id, metric in [(slips.nni_id, "default"), (slips.max_id, "acc")]:
        _open(dash, slips, experiment_id, "plots")
        curves = dash.page.get_by_test_id("curves-chart")
        curves.locator(".scatterlayer .trace").first.wait_for()
        chosen = dash.page.get_by_test_id("curves-metric")
        assert chosen.input_value() == metric
        assert chosen.evaluate("s => s.options[s.selectedIndex].text") == metric
    dash.shot("plots-nni-metric")


def test_an_nni_experiments_objective_shows_once_in_the_trials_table_and_trial_page(
    dash: Dash, slips: Slips
):
    _open(dash, slips, slips.nni_id, "trials")
    table = dash.page.get_by_test_id("trials-table")
    table.locator("tbody tr").first.wait_for()
    headers = [h.strip().lower() for h in table.locator("thead th").all_inner_texts()]
    assert "default" not in headers
    assert sum(h.startswith("value") for h in headers) == 1
    dash.shot("trials-nni")
    table.locator("tbody tr").first.click()
    stats = dash.page.get_by_test_id("trial-page")
    stats.get_by_test_id("trial-value").wait_for()
    assert "value (value)" not in stats.inner_text().lower()


def test_the_sort_arrow_points_the_way_the_values_go_on_a_maximise_experiment(
    dash: Dash, slips: Slips
):
    _open(dash, slips, slips.max_id, "trials")
    page = dash.page
    page.get_by_test_id("sort-value").click()  # best first: the largest on top
    header = page.locator("th[data-sort=value].sorted")
    header.wait_for()
    page.wait_for_timeout(300)
    values = [float(v) for v in page.locator('tbody td[data-col="value"]').all_inner_texts()]
    assert values == sorted(values, reverse=True)
    assert header.get_attribute("aria-sort") == "descending"
    assert header.get_attribute("data-arrow") == "down"
    dash.shot("trials-max-best-first")
    page.get_by_test_id("sort-value").click()  # worst first: the smallest on top
    page.wait_for_selector("th[data-sort=value][aria-sort=ascending]")
    assert header.get_attribute("data-arrow") == "up"
