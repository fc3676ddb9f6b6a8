"""Charts show user strings as text, never as markup: plotly reads a subset of HTML in every
label it draws, and a metric named ``<a href="https://evil.example/x">CLICK</a>`` once became a
live link in a trial page's chart. Here that name is a metric, a parameter and a choice option
of a finished experiment (whose other parameter is named like a plotly template and HTML), and
every chart that draws them (the trial's reports, the best value so far, the curves, parallel
coordinates, importance, scatter and its hover text) shows them literally, with no link."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

import hyperlab
from hyperlab.server import BackgroundServer, serve_in_background
from tests.dashboard.conftest import Dash

LINK = '<a href="https://evil.example/x">CLICK</a>'
TEMPLATE = "%{x} & <b>bold</b>"
LINKS = """() => [...document.querySelectorAll('a')]
    .map((a) => a.getAttribute('href') || a.getAttributeNS('http://www.w3.org/1999/xlink', 'href')
          || '')
    .filter((href) => href.includes('evil.example'))"""


def objective(params: dict[str, Any]) -> dict[str, float]:
    """Reports the metric named LINK three times, then returns it."""
    loss = (params[LINK] - 0.3) ** 2 + (0.1 if params[TEMPLATE] == LINK else 0.0)
    for step in range(3):
        hyperlab.report(**{LINK: loss + 1.0 / (step + 1)})
    return {LINK: loss}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BackgroundServer, str]]:
    folder = tmp_path_factory.mktemp("chart-text")
    url = f"sqlite:///{folder / 'runs.db'}"
    result = hyperlab.run(
        objective,
        {LINK: hyperlab.uniform(0.0, 1.0), TEMPLATE: hyperlab.choice(LINK, "plain")},
        metric=LINK,
        max_trials=12,
        seed=4,
        storage=url,
        working_dir=folder / "work",
        progress=False,
    )
    server = serve_in_background(url, 0)
    try:
        yield server, result.experiment_id
    finally:
        server.stop()


def _texts(dash: Dash, selector: str) -> list[str]:
    return dash.page.eval_on_selector_all(selector, "nodes => nodes.map((n) => n.textContent)")


def test_a_trial_pages_chart_shows_a_metric_named_like_a_link_as_text(
    served: tuple[BackgroundServer, str], new_dash: Callable[..., Dash]
) -> None:
    server, experiment_id = served
    dash = new_dash()
    page = dash.page
    page.goto(server.link(experiment_id))
    page.goto(f"{server.url}/#/experiments/{experiment_id}/trials/0")
    page.wait_for_function(
        f"document.querySelector('[data-testid=trial-curve] .ytitle')?.textContent === {LINK!r}"
    )
    assert page.evaluate(LINKS) == []
    assert page.locator("[data-testid=trial-curve] svg a").count() == 0
    dash.settle()
    dash.shot("chart-text-trial")


def test_every_chart_of_the_experiment_shows_the_names_as_text(
    served: tuple[BackgroundServer, str], new_dash: Callable[..., Dash]
) -> None:
    server, experiment_id = served
    dash = new_dash()
    page = dash.page
    page.goto(server.link(experiment_id))
    page.goto(f"{server.url}/#/experiments/{experiment_id}")
    page.wait_for_function(  # the best value so far, once plotly drew it
        f"[...document.querySelectorAll('.ytitle')].some((t) => t.textContent.startsWith({LINK!r}))"
    )
    page.goto(f"{server.url}/#/experiments/{experiment_id}/plots")
    page.get_by_test_id("parallel-chart").locator(".parcoords").first.wait_for()
    importance = page.get_by_test_id("importance-chart")
    importance.locator(".barlayer .point").first.wait_for()
    scatter = page.get_by_test_id("scatter-chart")
    scatter.locator(".scatterlayer .point").first.wait_for()
    assert _texts(dash, "[data-testid=scatter-chart] .xtitle") == [LINK]
    page.get_by_test_id("scatter-x").select_option(f"param.{TEMPLATE}")
    page.wait_for_function(
        "document.querySelector('[data-testid=scatter-chart] .xtitle')?.textContent === "
        f"{TEMPLATE!r}"
    )
    dash.settle()
    scatter.locator(".scatterlayer .point").first.hover(force=True)
    hover = scatter.locator(".hoverlayer .hovertext").first
    hover.wait_for()
    assert f"{TEMPLATE}: " in hover.text_content()  # not read as a template, nor as HTML

    parallel = _texts(dash, "[data-testid=parallel-chart] .axis-title")
    assert LINK in parallel
    assert TEMPLATE in parallel
    ticks = _texts(dash, "[data-testid=parallel-chart] .axis .tick text")
    assert LINK in ticks  # the choice's option
    assert {LINK, TEMPLATE} <= set(_texts(dash, "[data-testid=importance-chart] .ytick text"))
    assert LINK in _texts(dash, "[data-testid=scatter-chart] .xtick text")
    assert LINK in _texts(dash, "[data-testid=curves-chart] .ytitle")
    assert page.evaluate(LINKS) == []
    for chart in ("parallel-chart", "importance-chart", "scatter-chart", "curves-chart"):
        drawn = page.get_by_test_id(chart).locator("svg")
        assert drawn.count() and drawn.locator("a").count() == 0, chart
        bold = drawn.locator("tspan[style*=bold]")  # what plotly makes of <b>
        assert bold.count() == 0, chart
    dash.shot("chart-text-plots")
