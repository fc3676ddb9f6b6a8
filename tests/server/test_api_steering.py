"""Steering a running experiment through the REST API: a new search space, a trial added by
hand, results imported into the tuner; each checked first (422 naming the parameter and the
bound), queued as a control (202), applied by the live driver, and read back."""

from __future__ import annotations

import pytest

from hyperlab.server import create_app
from tests.server import SESSION_TOKEN, client_for, populate, start_live, wait_for_control


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """(client, experiment) of a running experiment of slow trials on x in [0, 1]."""
    folder = tmp_path_factory.mktemp("steering")
    url = f"sqlite:///{folder / 'live.db'}"
    exp = start_live(url, folder / "work", max_trials=40)
    try:
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            yield client, exp
    finally:
        exp.stop()
        exp.wait(timeout=20)


def _applied(client, response) -> dict:
    assert response.status_code == 202, response.text
    (control,) = response.json()["controls"]
    assert control["state"] == "pending" and control["trial"] is None
    return wait_for_control(client, control["id"])


def test_an_added_trial_runs_next_and_is_marked_custom(live):
    client, exp = live
    base = f"/api/v1/experiments/{exp.id}"
    control = _applied(client, client.post(f"{base}/trials", json={"params": {"x": 0.125}}))
    assert control["state"] == "applied" and control["kind"] == "add_trial"
    assert control["payload"] == {"params": {"x": 0.125}}
    number = control["trial"]
    assert isinstance(number, int)
    trial = client.get(f"{base}/trials/{number}").json()
    assert trial["params"] == {"x": 0.125} and trial["source"] == "custom"
    custom = client.get(f"{base}/trials", params={"source": "custom"}).json()
    assert [t["number"] for t in custom] == [number]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"params": {"x": 1.5}}, "params: x"),
        ({"params": {"y": 0.5}}, "params:"),
        ({"params": {}}, "params:"),
        ({"params": {"x": "high"}}, "params: x"),
        ({"params": [0.5]}, "params: input should be a valid dictionary, got [0.5]"),
        ({"x": 0.5}, "params: required"),
        ({"params": {"x": 0.5}, "extra": 1}, "extra: unknown field, got 1"),
    ],
)
def test_an_added_trial_outside_the_space_is_422(live, body, expected):
    client, exp = live
    response = client.post(f"/api/v1/experiments/{exp.id}/trials", json=body)
    assert response.status_code == 422
    assert expected in response.json()["detail"]


def test_out_of_range_params_name_the_bound(live):
    client, exp = live
    detail = client.post(
        f"/api/v1/experiments/{exp.id}/trials", json={"params": {"x": 1.5}}
    ).json()["detail"]
    assert "1.5" in detail and "1" in detail.replace("1.5", "")


def test_a_new_search_space_is_applied(live):
    client, exp = live
    base = f"/api/v1/experiments/{exp.id}"
    space = {"x": {"_type": "uniform", "_value": [0.25, 0.5]}}
    control = _applied(client, client.put(f"{base}/search-space", json=space))
    assert control["state"] == "applied" and control["kind"] == "update_search_space"
    assert client.get(base).json()["space"] == space
    rejected = client.post(f"{base}/trials", json={"params": {"x": 0.75}})
    assert rejected.status_code == 422 and "x" in rejected.json()["detail"]
    back = {"x": {"_type": "uniform", "_value": [0, 1]}}
    _applied(client, client.put(f"{base}/search-space", json=back))


@pytest.mark.parametrize(
    ("space", "expected"),
    [
        ({"x": {"_type": "uniform", "_value": [2, 1]}}, "x: "),
        ({"x": {"_type": "nope", "_value": [0, 1]}}, "x: "),
        ({"x": {"_value": [0, 1]}}, "x: "),
        ({"x": 3}, "x: "),
        ([1, 2], "body: input should be a valid dictionary, got [1, 2]"),
    ],
)
def test_a_bad_search_space_is_422_naming_the_parameter(live, space, expected):
    client, exp = live
    response = client.put(f"/api/v1/experiments/{exp.id}/search-space", json=space)
    assert response.status_code == 422
    assert expected in response.json()["detail"]


def test_imported_results_in_either_format_are_listed(live):
    client, exp = live
    base = f"/api/v1/experiments/{exp.id}"
    ours = {"results": [{"params": {"x": 0.5}, "value": 0.3, "metrics": {"acc": 0.9}}]}
    nni = [{"parameter": {"x": 0.75}, "value": {"default": 0.2, "acc": 0.8}}]
    for body in (ours, nni):
        assert _applied(client, client.post(f"{base}/import", json=body))["state"] == "applied"
    listed = client.get(f"{base}/imported")
    assert listed.headers["x-total-count"] == "2"
    rows = [(r["params"], r["value"], r["metrics"]) for r in listed.json()]
    assert rows == [({"x": 0.5}, 0.3, {"acc": 0.9}), ({"x": 0.75}, 0.2, {"acc": 0.8})]
    later = client.get(f"{base}/imported", params={"after": listed.json()[0]["id"]}).json()
    assert [r["value"] for r in later] == [0.2]
    assert client.get(f"{base}/imported", params={"limit": 1}).json()[0]["value"] == 0.3


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"results": []}, "results: nothing to import"),
        ([], "results: nothing to import"),
        ({"results": [{"params": {"x": 0.5}}]}, "results[0]: value: field required"),
        ({"results": [{"params": {"x": 2.0}, "value": 1}]}, "results[0].params: x"),
        ([{"parameter": {"x": 0.5}, "value": {"acc": 1}}], "results[0].value: a dict value"),
        ({"results": [5]}, "results[0]: expected an object"),
        ({"rows": []}, "rows: unknown field, got []"),
        ("x", "body: expected {\"results\": [...]} or a list of results, got 'x'"),
    ],
)
def test_bad_imports_are_422(live, body, expected):
    client, exp = live
    response = client.post(f"/api/v1/experiments/{exp.id}/import", json=body)
    assert response.status_code == 422, response.text
    assert expected in response.json()["detail"]


def test_steering_a_finished_or_unknown_experiment(tmp_path):
    url = f"sqlite:///{tmp_path / 'done.db'}"
    exp_id = populate(url, tmp_path / "work")
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
        base = f"/api/v1/experiments/{exp_id}"
        for method, path, body in (
            ("POST", "trials", {"params": {"x": 0.5, "fail": 0}}),
            ("PUT", "search-space", {"x": {"_type": "choice", "_value": [1, 2]}}),
            ("POST", "import", {"results": [{"params": {"x": 0.5, "fail": 0}, "value": 1}]}),
        ):
            response = client.request(method, f"{base}/{path}", json=body)
            assert response.status_code == 409, response.text
            assert "is not running (DONE)" in response.json()["detail"]
            missing = client.request(method, f"/api/v1/experiments/nope/{path}", json=body)
            assert missing.status_code == 404
        assert client.get(f"{base}/imported").json() == []
        assert client.get("/api/v1/experiments/nope/imported").status_code == 404
