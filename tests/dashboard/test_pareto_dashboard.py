"""A multi-objective experiment's page: the Pareto front drawn over its trials (two objectives as
a scatter with the front as a step line, three as a 3-D scatter, more with the axes picked),
dominated trials dimmed, infeasible ones crossed, a click opening the trial; and the trials
table with a column per objective and the constraints met or missed. A single-objective
experiment shows none of it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from unittest.mock import ANY

import pytest

import hyperlab
from hyperlab.pareto import pareto_front
from hyperlab.server import BackgroundServer, serve_in_background
from hyperlab.store import Store
from hyperlab.trial import TrialStatus
from tests.dashboard.conftest import Dash

SPACE = {"x": hyperlab.uniform(0.0, 1.0), "y": hyperlab.uniform(0.0, 1.0)}
LINK = '<a href="https://evil.example/x">CLICK</a>'  # a metric's name, drawn as text
LINKS = """() => [...document.querySelectorAll('a')]
    .map((a) => a.getAttribute('href') || a.getAttributeNS('http://www.w3.org/1999/xlink', 'href')
          || '')
    .filter((href) => href.includes('evil.example'))"""
# the traces of trials (a legend's entry alone has no trial numbers)
TRACES = "el => el.data.filter((t) => t.customdata).map((t) => [t.type, t.name, t.x.length])"
PLOT = '[data-testid="pareto-chart-plot"]'


def objective(params: dict[str, Any]) -> dict[str, float]:
    """A trade-off between a and b (x moves along it, y only makes both worse), a third
    objective d, and c, which the constraint ``c <= 0.5`` bounds."""
    x, y = params["x"], params["y"]
    a = x + 0.3 * y
    return {"a": a, "b": (1.0 - x) ** 2 + 0.3 * y, "d": x * (1.0 - y), "e": y, "c": y, LINK: a}


@dataclass
class Served:
    """The server and the store over three multi-objective experiments and a single one."""

    server: BackgroundServer
    store: Store
    two: str
    three: str
    four: str
    single: str
    odd: str

    def groups(self, experiment_id: str) -> dict[str, list[int]]:
        """The trials of the front, the dominated ones and the infeasible ones, by number."""
        record = self.store.get_experiment(experiment_id)
        done = [
            t
            for t in self.store.get_trials(experiment_id, reports=False)
            if t.status is TrialStatus.SUCCEEDED and t.values is not None
        ]
        front = {t.number for t in pareto_front(done, record.options.modes)}
        infeasible = [t.number for t in done if not t.feasible]
        dominated = [t.number for t in done if t.feasible and t.number not in front]
        return {"Pareto front": sorted(front), "dominated": dominated, "infeasible": infeasible}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    folder = tmp_path_factory.mktemp("pareto")
    url = f"sqlite:///{folder / 'runs.db'}"
    common: dict[str, Any] = {
        "storage": url,
        "working_dir": folder / "work",
        "progress": False,
        "tuner": "random",
        "max_trials": 30,
    }
    constrained: dict[str, Any] = {"constraints": ["c <= 0.5"], **common}
    two = hyperlab.run(
        objective, SPACE, metric=["a", "b"], mode=["min", "min"], seed=5, **constrained
    )
    three = hyperlab.run(
        objective, SPACE, metric=["a", "b", "d"], mode=["min", "min", "max"], seed=6, **constrained
    )
    four = hyperlab.run(
        objective,
        SPACE,
        metric=["a", "b", "d", "e"],
        mode=["min", "min", "max", "min"],
        seed=7,
        **common,
    )
    single = hyperlab.run(objective, SPACE, metric="a", seed=8, **common)
    odd = hyperlab.run(objective, SPACE, metric=[LINK, "b"], mode="min", seed=9, **common)
    server = serve_in_background(url, 0)
    store = Store.open(url)
    try:
        yield Served(
            server,
            store,
            two.experiment_id,
            three.experiment_id,
            four.experiment_id,
            single.experiment_id,
            odd.experiment_id,
        )
    finally:
        server.stop()
        store.close()


def _drawn(dash: Dash, scope: str = "") -> Any:
    """The Pareto plot once plotly drew it (its legend is there)."""
    plot = dash.page.locator(f"{scope} {PLOT}".strip())
    plot.locator(".legend").first.wait_for()
    return plot


def _point(plot: Any, trace: str) -> tuple[float, float, int]:
    """Where the first point of a 2-D trace is on the page, and its trial's number."""
    x, y, number = plot.evaluate(
        """(el, name) => {
              const t = el.data.find((d) => d.name === name);
              const f = el._fullLayout;
              const box = el.getBoundingClientRect();
              return [box.left + f._size.l + f.xaxis.d2p(t.x[0]),
                      box.top + f._size.t + f.yaxis.d2p(t.y[0]), t.customdata[0]];
            }""",
        trace,
    )
    return float(x), float(y), int(number)


def _headers(table: Any) -> list[str]:
    return table.locator("thead th").evaluate_all("ths => ths.map((t) => t.textContent.trim())")


def _counts(plot: Any) -> dict[str, tuple[str, int]]:
    return {name: (kind, n) for kind, name, n in plot.evaluate(TRACES)}


def test_two_objectives_draw_the_front_dominated_and_infeasible_trials(
    dash: Dash, served: Served
) -> None:
    page = dash.page
    page.goto(served.server.link(served.two))
    dash.wait_ready()
    plot = _drawn(dash)
    expected = served.groups(served.two)
    assert expected["infeasible"] and expected["dominated"] and len(expected["Pareto front"]) > 1
    assert _counts(plot) == {name: ("scatter", len(n)) for name, n in expected.items()}
    front = plot.evaluate("el => el.data.find((t) => t.name === 'Pareto front')")
    assert front["mode"] == "lines+markers" and front["line"]["shape"] == "hv"
    assert front["x"] == sorted(front["x"])  # the step line runs along the front
    assert sorted(front["customdata"]) == expected["Pareto front"]
    assert plot.locator(".xtitle").text_content() == "a (min)"
    assert plot.locator(".ytitle").text_content() == "b (min)"
    legend = plot.locator(".legend .legendtext").all_text_contents()
    assert sorted(legend) == ["Pareto front", "dominated", "infeasible"]
    note = page.get_by_test_id("pareto-chart").locator(".plot-note").inner_text()
    assert note.startswith(f"{len(expected['Pareto front'])} of 30 trials on the front")
    assert f"{len(expected['infeasible'])} infeasible" in note
    assert page.get_by_test_id("best-chart").count() == 0
    assert "a min" in page.get_by_test_id("objectives").inner_text()
    heading = page.get_by_test_id("top-trials").locator("h2").inner_text()
    assert heading == "Top trials by a"  # no trial is best: it says what the table ranks by
    dash.settle()
    dash.shot("pareto-2d")

    # hovering an infeasible trial names it, its violation and parameters; a click opens it
    x, y, number = _point(plot, "infeasible")
    page.mouse.move(x, y)
    hover = plot.locator(".hoverlayer .hovertext").first
    hover.wait_for()
    text = hover.text_content() or ""
    assert "infeasible · violation" in text and "x = " in text and "a: " in text
    assert re.match(rf"#{number}(?!\d)", text)  # its lines run together in text_content
    assert number in expected["infeasible"]
    dash.shot("pareto-2d-hover", full_page=False)
    page.mouse.click(x, y)
    page.wait_for_url(f"**/#/experiments/{served.two}/trials/{number}")
    values = page.get_by_test_id("trial-values")
    values.wait_for()
    assert values.inner_text().split() == ["a", ANY, "b", ANY]
    assert "infeasible" in page.get_by_test_id("trial-feasible").inner_text()
    dash.shot("pareto-trial")


def test_three_objectives_draw_a_3d_scatter_with_each_axis_named(
    dash: Dash, served: Served
) -> None:
    page = dash.page
    page.goto(served.server.link(served.three))
    dash.wait_ready()
    plot = dash.page.locator(PLOT)
    page.wait_for_function(
        f"document.querySelector('{PLOT}').dataset.drawn === 'true'", timeout=20_000
    )
    expected = served.groups(served.three)
    assert _counts(plot) == {name: ("scatter3d", len(n)) for name, n in expected.items()}
    titles = plot.evaluate(
        "el => ['xaxis', 'yaxis', 'zaxis'].map((a) => el._fullLayout.scene[a].title.text)"
    )
    assert titles == ["a (min)", "b (min)", "d (max)"]
    dash.settle()
    dash.shot("pareto-3d")

    page.get_by_test_id("tab-plots").click()  # the Plots tab has it too, full width
    plots = page.get_by_test_id("plots-tab")
    page.wait_for_function(  # after the tab's other charts' requests, on a busy machine
        f"document.querySelector('[data-testid=plots-tab] {PLOT}')?.dataset.drawn === 'true'",
        timeout=30_000,
    )
    assert _counts(plots.locator(PLOT)) == {
        name: ("scatter3d", len(n)) for name, n in expected.items()
    }


def test_four_objectives_let_the_axes_be_picked(dash: Dash, served: Served) -> None:
    page = dash.page
    page.goto(served.server.link(served.four))
    dash.wait_ready()
    page.wait_for_function(f"document.querySelector('{PLOT}')?.dataset.axes === '0,1,2'")
    plot = page.locator(PLOT)
    assert {kind for kind, _ in _counts(plot).values()} == {"scatter3d"}
    card = page.get_by_test_id("pareto-chart")
    card.get_by_test_id("pareto-z").select_option("none")  # two of them: a 2-D scatter
    card.get_by_test_id("pareto-x").select_option(label="e")
    page.wait_for_function(f"document.querySelector('{PLOT}').dataset.axes === '3,1'")
    plot.locator(".legend").first.wait_for()
    counts = _counts(plot)
    expected = served.groups(served.four)
    assert expected["dominated"] and expected["Pareto front"] and not expected["infeasible"]
    assert counts == {name: ("scatter", len(n)) for name, n in expected.items()}
    assert plot.locator(".xtitle").text_content() == "e (min)"
    front = plot.evaluate("el => el.data.find((t) => t.name === 'Pareto front').mode")
    assert front == "markers"  # a front on four objectives is no step line on two of them
    card.get_by_test_id("pareto-z").select_option("all")  # every one: parallel coordinates
    page.wait_for_function(f"document.querySelector('{PLOT}').data?.[0]?.type === 'parcoords'")
    labels = plot.evaluate("el => el.data[0].dimensions.map((d) => d.label)")
    assert labels == ["a (min)", "b (min)", "d (max)", "e (min)"]
    dash.settle()
    dash.shot("pareto-4d-parallel")


def test_the_trials_table_shows_each_objective_and_the_constraints(
    dash: Dash, served: Served
) -> None:
    page = dash.page
    page.goto(served.server.link(served.two))
    page.get_by_test_id("tab-trials").click()
    table = page.get_by_test_id("trials-table")
    table.locator("tbody tr").first.wait_for()
    headers = _headers(table)
    assert headers[:6] == ["", "#", "Status", "a", "b", "Constraints"]
    assert "c" in headers and "Value (a)" not in headers
    trials = {t.number: t for t in served.store.get_trials(served.two, reports=False)}
    rows = table.locator("tbody tr")
    assert rows.count() == 30
    for row in rows.all():
        trial = trials[int(row.get_attribute("data-number") or "")]
        assert trial.values is not None
        a = float(row.locator('td[data-col="objective.a"]').inner_text())
        b = float(row.locator('td[data-col="objective.b"]').inner_text())
        assert a == pytest.approx(trial.values[0], rel=1e-3)
        assert b == pytest.approx(trial.values[1], rel=1e-3)
        shown = row.locator('td[data-col="violation"]').inner_text()
        if trial.feasible:
            assert shown == "feasible" and row.get_attribute("data-feasible") is None
        else:
            assert (
                shown.startswith("violated by ") and row.get_attribute("data-feasible") == "false"
            )
            assert float(shown.removeprefix("violated by ")) == pytest.approx(
                trial.violation, rel=1e-3
            )
    assert table.locator('tr[data-feasible="false"]').count() == len(
        served.groups(served.two)["infeasible"]
    )
    table.get_by_test_id("sort-metric.b").click()  # the second objective sorts as a metric
    page.wait_for_function(
        "document.querySelector('[data-testid=trials-table] th[data-sort=\"metric.b\"]')"
        "?.getAttribute('aria-sort') === 'ascending'"
    )
    first = int(table.locator("tbody tr").first.get_attribute("data-number") or "")
    assert first == min(trials, key=lambda n: trials[n].values[1])
    dash.shot("pareto-trials-table")


def test_a_single_objective_experiment_has_no_pareto_plot(dash: Dash, served: Served) -> None:
    page = dash.page
    page.goto(served.server.link(served.single))
    dash.wait_ready()
    page.get_by_test_id("best-chart").locator(".main-svg").first.wait_for()
    assert page.get_by_test_id("pareto-chart").count() == 0
    page.get_by_test_id("tab-plots").click()
    page.get_by_test_id("parallel-chart").locator(".main-svg").first.wait_for()
    assert page.get_by_test_id("pareto-chart").count() == 0
    page.get_by_test_id("tab-trials").click()
    table = page.get_by_test_id("trials-table")
    table.locator("tbody tr").first.wait_for()
    headers = _headers(table)
    assert "Value (a)" in headers and "a" not in headers and "Constraints" not in headers


def test_an_objective_named_like_a_link_is_drawn_as_text(dash: Dash, served: Served) -> None:
    page = dash.page
    page.goto(served.server.link(served.odd))
    dash.wait_ready()
    plot = _drawn(dash)
    assert plot.locator(".xtitle").text_content() == f"{LINK} (min)"  # one mode for both
    assert plot.locator(".ytitle").text_content() == "b (min)"
    x, y, _ = _point(plot, "Pareto front")
    page.mouse.move(x, y)
    hover = plot.locator(".hoverlayer .hovertext").first
    hover.wait_for()
    assert f"{LINK}: " in (hover.text_content() or "")
    assert page.evaluate(LINKS) == []
    assert plot.locator("svg a").count() == 0
