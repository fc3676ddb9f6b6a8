"""The list of experiments: status, progress, best value; the filter; removing one that no
driver runs."""

from __future__ import annotations

import re

import pytest

import hyperlab
from hyperlab.errors import ExperimentNotFound
from tests.dashboard.conftest import Dash, Lab, quick_objective


def _ids(dash: Dash) -> list[str]:
    rows = dash.page.get_by_test_id("experiment-row")
    return rows.evaluate_all("rows => rows.map(r => r.dataset.id)")


def test_the_overview_lists_filters_and_removes_experiments(dash: Dash, lab: Lab):
    doomed = hyperlab.run(
        quick_objective,
        {"x": hyperlab.uniform(-1.0, 1.0), "opt": hyperlab.choice("adam", "sgd")},
        metric="loss",
        max_trials=3,
        name="old-attempt",
        storage=lab.url,
        working_dir=lab.folder / "work",
        progress=False,
    ).experiment_id
    page = dash.page
    page.goto(lab.link())
    table = page.get_by_test_id("experiments-table")
    table.wait_for()
    ids = _ids(dash)
    assert {lab.live.id, lab.done_id, lab.spare_id, doomed} <= set(ids)
    live = page.locator(f'[data-testid=experiment-row][data-id="{lab.live.id}"]')
    assert live.get_by_test_id("experiment-status").inner_text() == "running"
    assert "/ 400" in live.inner_text()  # trials done against max_trials
    assert live.get_by_test_id("remove-experiment").count() == 0  # a driver runs it
    done = page.locator(f'[data-testid=experiment-row][data-id="{lab.done_id}"]')
    assert "40 / 40" in done.inner_text()
    page.wait_for_timeout(300)
    dash.shot("overview")

    page.get_by_test_id("overview-filter").fill("mnist")
    page.wait_for_function("document.querySelectorAll('[data-testid=experiment-row]').length == 1")
    assert _ids(dash) == [lab.done_id]
    page.get_by_test_id("overview-filter").fill(lab.live.id[:5])  # ids match too
    page.wait_for_function(
        f"[...document.querySelectorAll('[data-testid=experiment-row]')]"
        f".map(r => r.dataset.id).join() == '{lab.live.id}'"
    )
    page.get_by_test_id("overview-filter").fill("")
    page.get_by_test_id("overview-status").select_option("live")
    page.wait_for_function(
        "[...document.querySelectorAll('[data-testid=experiment-row]')]"
        ".every(r => r.querySelector('[data-testid=experiment-status]')"
        ".dataset.status == 'RUNNING')"
    )
    assert lab.live.id in _ids(dash) and lab.done_id not in _ids(dash)
    page.get_by_test_id("overview-status").select_option("ERROR")
    page.get_by_test_id("empty").filter(has_text="No experiment matches").wait_for()
    page.get_by_test_id("empty").get_by_role("button").click()  # clear the filter
    page.wait_for_function(
        f"document.querySelectorAll('[data-testid=experiment-row]').length == {len(ids)}"
    )

    row = page.locator(f'[data-testid=experiment-row][data-id="{doomed}"]')
    row.get_by_test_id("remove-experiment").click()
    dialog = page.get_by_test_id("confirm-dialog")
    assert "cannot be undone" in dialog.inner_text()
    page.get_by_test_id("confirm-cancel").click()
    assert doomed in _ids(dash)
    row.get_by_test_id("remove-experiment").click()
    page.get_by_test_id("confirm-ok").click()
    row.wait_for(state="detached")
    with pytest.raises(ExperimentNotFound):
        lab.store.get_experiment(doomed)

    page.locator(f'[data-testid=experiment-row][data-id="{lab.done_id}"]').click()
    page.wait_for_url(re.compile(f"#/experiments/{lab.done_id}$"))
    page.get_by_test_id("experiment-header").wait_for()


def test_the_overview_of_an_empty_store_says_how_to_start(new_dash, tmp_path):
    from hyperlab.server import serve_in_background

    with serve_in_background(f"sqlite:///{tmp_path / 'empty.db'}", 0) as server:
        dash = new_dash()
        dash.page.goto(server.login_url)
        empty = dash.page.get_by_test_id("empty")
        empty.wait_for()
        assert "No experiments in this store yet" in empty.inner_text()
        assert "hyperlab run" in empty.inner_text()
        dash.shot("overview-empty", full_page=False)


def test_a_server_for_one_experiment_offers_to_remove_no_other(new_dash, lab: Lab):
    """The token of `run --port` or `view` steers its experiment only: the overview of its
    server shows the other experiments without a remove button that would be refused."""
    from hyperlab.server import serve_in_background
    from hyperlab.store.tokens import ensure_token

    token = ensure_token(lab.store.experiment_folder(lab.store.get_experiment(lab.spare_id)))
    with serve_in_background(lab.url, 0, experiment_id=lab.spare_id, token=token) as server:
        dash = new_dash()
        dash.page.goto(server.login_url)
        dash.page.get_by_test_id("experiments-table").wait_for()
        for experiment_id, allowed in ((lab.done_id, False), (lab.spare_id, True)):
            row = dash.page.locator(f'[data-testid=experiment-row][data-id="{experiment_id}"]')
            button = row.get_by_test_id("remove-experiment")
            assert button.is_enabled() is allowed, experiment_id
            if not allowed:
                assert button.get_attribute("title") == (
                    f"This server's token steers experiment {lab.spare_id} only"
                )
