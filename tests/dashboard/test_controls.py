"""Steering from the page, checked in the store: kill a trial, change the concurrency, edit the
search space (an invalid edit is marked and sends nothing), add a trial, stop an experiment;
and what a browser without the token sees."""

from __future__ import annotations

import json
from typing import Any

import hyperlab
from hyperlab.trial import ExperimentStatus, TrialStatus
from tests.dashboard.conftest import Dash, Lab, slow_objective


def _writes(dash: Dash) -> list[str]:
    """Record the page's writes: ``["PUT /api/v1/...", ...]``."""
    seen: list[str] = []

    def record(request: Any) -> None:
        if request.method != "GET":
            seen.append(f"{request.method} {request.url.split('/', 3)[3]}")

    dash.page.on("request", record)
    return seen


def test_kill_a_running_trial_from_its_page(dash: Dash, lab: Lab):
    page = dash.page
    page.goto(lab.link(lab.live.id))
    dash.wait_ready()
    for _ in range(3):  # a trial may end on its own just before the kill reaches it: try another
        number = lab.fresh_running_trial()
        page.goto(lab.page_url(f"#/experiments/{lab.live.id}/trials/{number}"))
        page.get_by_test_id("kill-trial").click()
        page.get_by_test_id("confirm-dialog").wait_for()
        dash.shot("controls-kill-confirm", full_page=False)
        page.get_by_test_id("confirm-ok").click()
        ended = lab.wait_for(
            lambda n=number: (t := lab.store.get_trial(lab.live.id, n)).status.is_finished() and t,
            10.0,
            f"trial {number} to end",
        )
        if ended.status is TrialStatus.USER_CANCELED:
            break
    assert ended.status is TrialStatus.USER_CANCELED
    page.wait_for_function(
        "document.querySelector('[data-testid=trial-status]').dataset.status == 'USER_CANCELED'"
    )
    assert page.get_by_test_id("kill-trial").count() == 0


def test_change_the_concurrency_from_the_page(dash: Dash, lab: Lab):
    page = dash.page
    page.goto(lab.link(lab.live.id))
    dash.wait_ready()
    page.get_by_test_id("control-budget").click()
    page.get_by_test_id("budget-concurrency").fill("3")
    dash.shot("controls-budget", full_page=False)
    page.get_by_test_id("budget-apply").click()
    lab.wait_for(
        lambda: lab.store.get_experiment(lab.live.id).options.concurrency == 3,
        10.0,
        "concurrency 3 in the store",
    )
    page.get_by_test_id("toast").filter(has_text="Budget: done").wait_for()
    page.get_by_test_id("elapsed").filter(has_text="concurrency 3").wait_for()
    page.get_by_test_id("control-budget").click()  # and back, to keep the machine calm
    page.get_by_test_id("budget-concurrency").fill("2")
    page.get_by_test_id("budget-apply").click()
    lab.wait_for(lambda: lab.store.get_experiment(lab.live.id).options.concurrency == 2)


def test_an_invalid_search_space_is_marked_and_sends_nothing_a_valid_one_is_applied(
    dash: Dash, lab: Lab
):
    page = dash.page
    writes = _writes(dash)
    page.goto(lab.link(lab.live.id))
    dash.wait_ready()
    before = lab.store.get_experiment(lab.live.id).space
    page.get_by_test_id("control-space").click()
    editor = page.get_by_test_id("space-editor")
    space = json.loads(editor.input_value())
    assert space == before

    editor.fill("{")
    error = page.get_by_test_id("space-error")
    error.filter(has_text="Not valid JSON").wait_for()
    assert editor.get_attribute("aria-invalid") == "true"

    space["dropout"]["_value"] = [0.5, 0.0]  # low > high
    editor.fill(json.dumps(space, indent=2))
    error.filter(has_text="dropout").wait_for()  # the server's message names the parameter
    page.get_by_test_id("space-apply").click()
    page.wait_for_timeout(600)
    assert editor.get_attribute("aria-invalid") == "true"
    assert "dropout" in error.inner_text()
    dash.shot("controls-search-space-invalid", full_page=False)
    assert not [w for w in writes if "search-space/check" not in w], writes
    assert lab.store.get_experiment(lab.live.id).space == before
    assert lab.store.pending_controls(lab.live.id) == []

    space["dropout"]["_value"] = [0.0, 0.6]
    editor.fill(json.dumps(space, indent=2))
    page.get_by_test_id("space-ok").wait_for()
    with page.expect_request(lambda r: r.method == "PUT" and r.url.endswith("/search-space")):
        page.get_by_test_id("space-apply").click()
    lab.wait_for(
        lambda: lab.store.get_experiment(lab.live.id).space["dropout"]["_value"] == [0.0, 0.6],
        10.0,
        "the new space in the store",
    )
    page.get_by_test_id("space-dialog").wait_for(state="detached")
    page.get_by_test_id("tab-config").click()
    page.get_by_test_id("config-space").filter(has_text="0 … 0.6").wait_for()


def test_add_a_trial_from_the_page(dash: Dash, lab: Lab):
    page = dash.page
    writes = _writes(dash)
    page.goto(lab.link(lab.live.id))
    dash.wait_ready()
    page.get_by_test_id("control-add-trial").click()
    form = page.get_by_test_id("add-trial-form")
    form.wait_for()
    page.get_by_test_id("param-lr").fill("5")  # above the upper bound 0.1
    page.get_by_test_id("param-batch").select_option(label="64")
    page.get_by_test_id("param-layers").fill("2")
    page.get_by_test_id("param-dropout").fill("0.125")
    page.get_by_test_id("param-optimizer").select_option(label="adam")
    page.get_by_test_id("trial-submit").click()
    problem = page.get_by_test_id("error-lr")  # under the field, in the server's words
    problem.filter(has_text="lr: 5 is above the upper bound 0.1").wait_for()
    assert page.get_by_test_id("param-lr").get_attribute("aria-invalid") == "true"
    assert not [w for w in writes if not w.endswith("/trials/check")], writes

    dash.shot("controls-add-trial", full_page=False)
    page.get_by_test_id("param-lr").fill("0.003")
    assert problem.is_hidden()  # editing the field clears its mark
    page.get_by_test_id("trial-submit").click()
    toast = page.get_by_test_id("toast").filter(has_text="added")
    toast.wait_for()
    number = int(toast.inner_text().split("#")[1].split()[0])
    added = lab.store.get_trial(lab.live.id, number)
    assert added.source == "custom"
    assert added.params == {
        "lr": 0.003,
        "batch": 64,
        "layers": 2,
        "dropout": 0.125,
        "optimizer": "adam",
    }


def test_without_the_token_controls_are_disabled_and_say_how_to_get_it(new_dash, lab: Lab):
    anonymous = new_dash()
    page = anonymous.page
    page.goto(lab.page_url(f"#/experiments/{lab.live.id}"))
    anonymous.wait_ready()
    how = page.get_by_test_id("auth-how")
    how.wait_for()
    assert f"hyperlab show {lab.live.id}" in how.inner_text()
    for control in ("control-stop", "control-budget", "control-space", "control-add-trial"):
        assert page.get_by_test_id(control).is_disabled()
    anonymous.shot("controls-without-token", full_page=False)

    lapsed = new_dash()  # had the token, then lost the cookie: the write's 401 says how
    page = lapsed.page
    page.goto(lab.link(lab.live.id))
    lapsed.wait_ready()
    lapsed.context.clear_cookies()
    page.get_by_test_id("control-stop").click()
    page.get_by_test_id("confirm-ok").click()
    refused = page.get_by_test_id("auth-error")
    refused.wait_for()
    page.wait_for_timeout(300)  # the toast's entrance
    assert "token" in refused.inner_text()
    assert f"hyperlab show {lab.live.id}" in refused.inner_text()
    lapsed.shot("controls-refused-without-token", full_page=False)
    assert lab.store.get_experiment(lab.live.id).status is ExperimentStatus.RUNNING


def test_stop_an_experiment_from_the_page(dash: Dash, lab: Lab):
    exp = hyperlab.Experiment(
        slow_objective,
        {"x": hyperlab.uniform(0, 1)},
        metric="loss",
        executor="threads",
        max_trials=5,
        name="to-stop",
        storage=lab.url,
        working_dir=lab.folder / "work",
        progress=False,
    ).start()
    try:
        page = dash.page
        page.goto(lab.link(exp.id))
        dash.wait_ready()
        page.get_by_test_id("control-stop").click()
        page.get_by_test_id("confirm-ok").click()
        lab.wait_for(
            lambda: lab.store.get_experiment(exp.id).status is ExperimentStatus.STOPPED,
            15.0,
            "the experiment to stop",
        )
        page.get_by_test_id("read-only").wait_for(timeout=15_000)
        assert page.get_by_test_id("control-stop").count() == 0
        assert page.get_by_test_id("experiment-status").inner_text() == "stopped"
    finally:
        exp.stop()
        exp.wait(timeout=30)
