"""A trial's page: params, final metrics, status history, its curve and reports, its log (followed
while it runs) or, for a function trial, its error; and pages for what does not exist."""

from __future__ import annotations

from hyperlab.trial import TrialStatus
from tests.dashboard.conftest import Dash, Lab


def test_a_finished_trial_shows_params_metrics_history_curve_reports_and_log(dash: Dash, lab: Lab):
    trial = lab.wait_for(
        lambda: next((t for t in lab.trials() if t.status is TrialStatus.SUCCEEDED), None),
        30.0,
        "a succeeded trial",
    )
    full = lab.store.get_trial(lab.live.id, trial.number)
    page = dash.page
    page.goto(lab.link(lab.live.id))
    page.goto(lab.page_url(f"#/experiments/{lab.live.id}/trials/{trial.number}"))
    page.get_by_test_id("trial-page").wait_for()
    assert page.get_by_test_id("trial-title").inner_text() == f"Trial #{trial.number}"
    assert page.get_by_test_id("trial-status").inner_text() == "succeeded"
    params = page.get_by_test_id("param-table").inner_text()
    for name in ("lr", "batch", "layers", "dropout", "optimizer"):
        assert name in params
    assert str(full.params["optimizer"]) in params
    assert "acc" in page.get_by_test_id("metric-table").inner_text()
    history = page.get_by_test_id("status-history").inner_text()
    assert "waiting" in history and "running" in history and "succeeded" in history
    page.get_by_test_id("trial-curve").locator(".scatterlayer .trace").first.wait_for()
    rows = page.get_by_test_id("reports-table").locator("tbody tr")
    assert rows.count() == len(full.reports)
    page.get_by_test_id("report-metric").select_option("acc")  # any reported metric
    page.wait_for_function(
        "document.querySelector('[data-testid=trial-curve] .ytitle').textContent == 'acc'"
    )
    log = page.get_by_test_id("log-text")
    page.wait_for_function(
        "document.querySelector('[data-testid=log-text]').textContent.includes('epoch')"
    )
    assert "training {" in log.inner_text()
    assert "The trial has ended" in page.get_by_test_id("log-info").inner_text()
    dash.settle()
    dash.shot("trial-detail")
    page.get_by_test_id("log-stderr").click()
    page.wait_for_function(
        "document.querySelector('[data-testid=log-text]').textContent.includes('warning')"
    )


def test_a_running_trials_log_is_followed(dash: Dash, lab: Lab):
    page = dash.page
    page.goto(lab.link(lab.live.id))
    number = lab.fresh_running_trial(younger_than=0.8)
    page.goto(lab.page_url(f"#/experiments/{lab.live.id}/trials/{number}"))
    page.get_by_test_id("trial-page").wait_for()
    assert page.get_by_test_id("log-follow").is_checked()
    page.get_by_test_id("kill-trial").wait_for()  # it can be killed while it runs
    page.wait_for_function(
        "document.querySelector('[data-testid=log-text]').textContent.includes('epoch   1')"
    )
    page.wait_for_function(  # the log keeps growing, without reloading
        "document.querySelector('[data-testid=log-text]').textContent.includes('epoch   4')",
        timeout=10_000,
    )
    page.get_by_test_id("trial-curve").locator(".scatterlayer .trace").first.wait_for()
    dash.shot("trial-running-log")


def test_a_failed_function_trial_shows_its_error_where_its_log_would_be(dash: Dash, lab: Lab):
    failed = [
        t
        for t in lab.store.get_trials(lab.spare_id, reports=False)
        if t.status is TrialStatus.FAILED
    ]
    assert failed, "the fixture's flaky run should have failed trials"
    page = dash.page
    page.goto(lab.page_url(f"#/experiments/{lab.spare_id}/trials/{failed[0].number}"))
    error = page.get_by_test_id("trial-error")
    error.wait_for()
    assert "FloatingPointError" in error.inner_text()
    assert "the loss diverged" in error.inner_text()
    assert page.get_by_test_id("kill-trial").count() == 0  # finished: nothing to kill
    dash.settle()
    dash.shot("trial-failed-error")


def test_unknown_experiments_trials_and_pages_say_so_with_a_way_back(dash: Dash, lab: Lab):
    page = dash.page
    page.goto(lab.page_url("#/experiments/nope0000"))
    missing = page.get_by_test_id("not-found")
    missing.wait_for()
    assert 'No experiment "nope0000"' in missing.inner_text()
    assert "no experiment 'nope0000'" in missing.inner_text()  # the server's detail
    dash.shot("error-unknown-experiment")
    page.get_by_test_id("back-to-overview").click()
    page.get_by_test_id("experiments-table").wait_for()

    page.goto(lab.page_url(f"#/experiments/{lab.done_id}/trials/9999"))
    missing.wait_for()
    assert "No trial #9999" in missing.inner_text()

    page.goto(lab.page_url("#/nowhere/at/all"))
    page.get_by_text("No such page").wait_for()
