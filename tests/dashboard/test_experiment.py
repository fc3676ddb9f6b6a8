"""An experiment's page: its header, charts and tables drawn from a running experiment, kept live
without reloading; the trials table sorted and filtered on the server; the plots."""

from __future__ import annotations

import re

from tests.dashboard.conftest import Dash, Lab


def _numbers(dash: Dash, testid: str = "trials-table") -> list[int]:
    rows = dash.page.get_by_test_id(testid).locator("tbody tr")
    return [int(n) for n in rows.evaluate_all("rows => rows.map(r => r.dataset.number)")]


def _column(dash: Dash, key: str) -> list[str]:
    cells = dash.page.get_by_test_id("trials-table").locator(f'tbody td[data-col="{key}"]')
    return cells.all_inner_texts()


def test_the_experiment_page_shows_a_running_experiment_and_follows_it_live(dash: Dash, lab: Lab):
    page = dash.page
    page.goto(lab.link(lab.live.id))  # sets the token's cookie, then lands on #/experiments/ID
    assert page.url.endswith(f"/#/experiments/{lab.live.id}")
    ready = dash.wait_ready()
    assert ready < 15_000
    header = page.get_by_test_id("experiment-header")
    assert header.get_by_test_id("experiment-name").inner_text() == "cifar-resnet"
    assert header.get_by_test_id("experiment-id").inner_text() == lab.live.id
    assert header.get_by_test_id("experiment-status").inner_text() == "running"
    page.evaluate("window.__notReloaded = true")
    total = page.get_by_test_id("trial-total")
    first = int(total.inner_text())
    lab.wait_for(lambda: len(lab.trials()) > first + 1, what="new trials in the store")
    page.wait_for_function(
        f"Number(document.querySelector('[data-testid=trial-total]').textContent) > {first + 1}",
        timeout=5_000,
    )  # the header follows the store within ~2 s, without reloading
    page.get_by_test_id("best-chart").locator(".main-svg").first.wait_for()
    page.get_by_test_id("curves-chart").locator(".scatterlayer .trace").first.wait_for()
    page.get_by_test_id("top-trials-table").locator("tbody tr").first.wait_for()
    assert page.evaluate("window.__notReloaded") is True
    dash.settle()
    dash.shot("experiment-overview")
    page.get_by_test_id("best-chart").get_by_role("button", name="over time").click()
    page.get_by_test_id("best-chart").locator(".xtitle").filter(has_text="finished").wait_for()

    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if "/changes?" in r.url else None)
    hide = (
        "hidden => { Object.defineProperty(document, 'hidden', "
        "{value: hidden, configurable: true}); "
        "document.dispatchEvent(new Event('visibilitychange')); }"
    )
    page.evaluate(hide, True)  # the tab goes to the background: polling pauses
    page.wait_for_timeout(400)
    polls.clear()
    page.wait_for_timeout(2500)
    assert polls == []
    page.evaluate(hide, False)  # and back: it polls at once
    page.wait_for_timeout(800)
    assert polls

    page.get_by_test_id("tab-plots").click()
    page.get_by_test_id("parallel-chart").locator(".parcoords").first.wait_for()
    page.get_by_test_id("curves-chart").locator(".scatterlayer .trace").first.wait_for()
    dash.settle()
    dash.shot("experiment-plots-live")

    page.get_by_test_id("tab-trials").click()
    page.wait_for_url(re.compile(r"/trials$"))
    table = page.get_by_test_id("trials-table")
    table.locator("tbody tr").first.wait_for()
    newest = max(_numbers(dash))
    lab.wait_for(lambda: len(lab.trials()) > newest + 2, what="more trials")
    page.wait_for_function(
        f"[...document.querySelectorAll('[data-testid=trials-table] tbody tr')]"
        f".some(r => Number(r.dataset.number) > {newest + 1})",
        timeout=5_000,
    )  # new trials reach the visible page without a reload
    assert page.evaluate("window.__notReloaded") is True
    dash.settle()
    dash.shot("trials-live")


def test_the_trials_table_sorts_and_filters_on_the_server(dash: Dash, lab: Lab):
    page = dash.page
    page.goto(lab.link(lab.done_id))
    page.goto(lab.page_url(f"#/experiments/{lab.done_id}/trials"))
    table = page.get_by_test_id("trials-table")
    table.locator("tbody tr").first.wait_for()
    assert _numbers(dash)[:3] == [39, 38, 37]  # newest first
    assert page.get_by_test_id("page-range").inner_text() == "1\u201340 of 40"

    page.get_by_test_id("sort-value").click()  # best first
    page.wait_for_function("document.querySelector('th[aria-sort=ascending][data-sort=value]')")
    page.wait_for_timeout(300)
    values = [float(v) for v in _column(dash, "value")]
    assert values == sorted(values)
    page.get_by_test_id("sort-value").click()  # worst first
    page.wait_for_selector("th[aria-sort=descending][data-sort=value]")
    page.wait_for_timeout(300)
    values = [float(v) for v in _column(dash, "value")]
    assert values == sorted(values, reverse=True)
    assert "sort=-value" in page.url  # the state is in the address

    page.get_by_test_id("add-filter").select_option("param:opt")
    page.get_by_test_id("filter-param-opt").get_by_text("adam").click()
    page.get_by_test_id("filter-value-max").fill("0.2")
    store_trials = lab.store.get_trials(lab.done_id, reports=False)
    expected = [
        t.number
        for t in store_trials
        if t.params["opt"] == "adam" and t.value is not None and t.value <= 0.2
    ]
    assert expected, "the fixture's experiment should have adam trials below 0.2"
    page.wait_for_function(
        f"document.querySelector('[data-testid=trials-table]').dataset.total == {len(expected)}"
    )
    page.wait_for_timeout(200)
    assert sorted(_numbers(dash)) == sorted(expected)
    assert all(cell == "adam" for cell in _column(dash, "param.opt"))
    dash.shot("trials-filtered")

    page.get_by_test_id("filter-value-min").fill("0.5")  # min > max: marked, not sent
    page.wait_for_timeout(500)
    assert "invalid" in (page.get_by_test_id("filter-value-min").get_attribute("class") or "")
    assert sorted(_numbers(dash)) == sorted(expected)

    page.get_by_test_id("clear-filters").click()
    page.wait_for_function(
        "document.querySelector('[data-testid=trials-table]').dataset.total == 40"
    )
    page.get_by_test_id("chip-SUCCEEDED").click()
    page.wait_for_selector("[data-testid=chip-SUCCEEDED][aria-pressed=true]")
    assert set(table.locator("tbody tr").evaluate_all("rs => rs.map(r => r.dataset.status)")) == {
        "SUCCEEDED"
    }

    page.get_by_test_id("page-size").select_option("25")
    page.get_by_test_id("clear-filters").click()
    page.wait_for_function("document.querySelectorAll('[data-testid=trial-row]').length == 25")
    page.get_by_test_id("page-next").click()
    page.wait_for_function("document.querySelectorAll('[data-testid=trial-row]').length == 15")
    assert page.get_by_test_id("page-range").inner_text() == "26\u201340 of 40"

    table.locator("tbody tr").first.click()  # a row opens its trial
    page.wait_for_url(re.compile(r"#/experiments/\w+/trials/\d+$"))
    page.get_by_test_id("trial-page").wait_for()


def test_the_plots_draw_curves_parallel_coordinates_importance_and_scatter(dash: Dash, lab: Lab):
    page = dash.page
    page.goto(lab.link(lab.done_id))
    page.goto(lab.page_url(f"#/experiments/{lab.done_id}/trials"))
    rows = page.get_by_test_id("trials-table").locator("tbody tr")
    rows.first.wait_for()
    for i in range(3):  # pick three trials for the curves
        rows.nth(i).get_by_test_id("select-trial").check()
    page.get_by_test_id("show-curves").click()
    page.wait_for_url(re.compile(r"/plots$"))
    curves = page.get_by_test_id("curves-chart")
    curves.locator(".scatterlayer .trace").first.wait_for()
    assert "3 picked" in curves.inner_text()
    page.get_by_test_id("parallel-chart").locator(".parcoords").first.wait_for()
    page.get_by_test_id("importance-chart").locator(".barlayer .point").first.wait_for()
    scatter = page.get_by_test_id("scatter-chart")
    scatter.locator(".scatterlayer .point, .gl-container").first.wait_for()
    page.get_by_test_id("scatter-x").select_option("param.opt")
    page.wait_for_timeout(300)
    assert "adam" in scatter.inner_text()
    dash.settle()
    dash.shot("experiment-plots")

    missing = "parameter importance needs scikit-learn: pip install 'hyperlab[importance]'"
    page.route(  # as a server without scikit-learn answers
        "**/plots/importance*",
        lambda route: route.fulfill(status=501, json={"detail": missing}),
    )
    page.reload()
    unavailable = page.get_by_test_id("importance-unavailable")
    unavailable.wait_for()
    assert "pip install 'hyperlab[importance]'" in unavailable.inner_text()

    page.get_by_test_id("tab-config").click()
    page.get_by_test_id("config-space").get_by_text("uniform").first.wait_for()
    assert "-1 … 1" in page.get_by_test_id("config-space").inner_text()
    assert "tpe" in page.get_by_test_id("config-options").inner_text()
    dash.shot("experiment-config")
