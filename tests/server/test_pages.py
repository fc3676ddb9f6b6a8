"""What the dashboard asks the server besides the data: its page and assets, plotly.js from the
installed package, whether this browser may steer, trials' logs, checks before sending, and
removing an experiment."""

from __future__ import annotations

import pytest

from hyperlab.server import create_app
from tests.server import SESSION_TOKEN, client_for, populate, start_live


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    url = f"sqlite:///{folder / 'runs.db'}"
    return url, populate(url, folder / "work")


def test_the_page_its_assets_and_plotly_are_served(finished):
    url, exp_id = finished
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
        page = client.get("/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert page.headers["cache-control"] == "no-cache"
        plotly = client.get("/static/vendor/plotly.min.js")
        assert plotly.status_code == 200 and len(plotly.content) > 1_000_000
        assert "immutable" in plotly.headers["cache-control"]
        assert client.get("/static/../_app.py").status_code == 404  # nothing outside static/
        assert client.get("/static/nope.js").status_code == 404
        link = client.get(f"/experiments/{exp_id}", follow_redirects=False)
        assert link.status_code == 307 and link.headers["location"] == f"/#/experiments/{exp_id}"


def test_the_session_says_whether_this_browser_may_steer(finished):
    url, exp_id = finished
    app = create_app(url, session_token=SESSION_TOKEN)
    with client_for(app) as client:
        assert client.get("/api/v1/session").json()["can_write"] is True
    with client_for(app, token=None) as anonymous:
        body = anonymous.get(f"/api/v1/session?experiment_id={exp_id}").json()
        assert body["can_write"] is False and body["loopback"] is True
        assert f"hyperlab show {exp_id}" in body["how"]


def test_a_function_trials_log_says_where_its_output_went_and_unknown_trials_are_404(finished):
    url, exp_id = finished
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
        body = client.get(f"/api/v1/experiments/{exp_id}/trials/0/log").json()
        assert body["exists"] is False and body["done"] is True
        assert "function trial has no log file" in body["note"]
        assert client.get(f"/api/v1/experiments/{exp_id}/trials/99/log").status_code == 404
        bad = client.get(f"/api/v1/experiments/{exp_id}/trials/0/log?stream=both")
        assert bad.status_code == 422 and "stream" in bad.json()["detail"]


def test_a_command_trials_log_is_read_as_a_tail_then_followed(tmp_path):
    from hyperlab.store import Store

    url = f"sqlite:///{tmp_path / 'runs.db'}"
    exp_id = populate(url, tmp_path / "work")
    store = Store.open(url)
    folder = store.experiment_folder(store.get_experiment(exp_id)) / "trials" / "1"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "stdout.log").write_bytes(b"".join(b"line %d\n" % i for i in range(1000)))
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
        tail = client.get(f"/api/v1/experiments/{exp_id}/trials/1/log?tail=16").json()
        assert tail["text"] == "ne 998\nline 999\n" and tail["next_offset"] == tail["size"]
        with open(folder / "stdout.log", "ab") as f:
            f.write(b"more\n")
        more = client.get(
            f"/api/v1/experiments/{exp_id}/trials/1/log?offset={tail['next_offset']}"
        ).json()
        assert more["text"] == "more\n" and more["done"] is True


def test_checks_answer_without_sending_anything(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    exp = start_live(url, tmp_path / "work")
    try:
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            base = f"/api/v1/experiments/{exp.id}"
            good = client.post(
                f"{base}/search-space/check", json={"x": {"_type": "uniform", "_value": [0, 2]}}
            )
            assert good.status_code == 200 and good.json()["ok"] is True
            bad = client.post(
                f"{base}/search-space/check", json={"x": {"_type": "uniform", "_value": [2, 0]}}
            )
            assert bad.status_code == 422 and "x: uniform needs low < high" in bad.json()["detail"]
            params = client.post(f"{base}/trials/check", json={"params": {"x": 7}})
            assert (
                params.status_code == 422
                and "x: 7 is above the upper bound 1" in params.json()["detail"]
            )
            assert exp.store.pending_controls(exp.id) == []
            assert exp.store.get_experiment(exp.id).space["x"]["_value"] == [0, 1]
    finally:
        exp.stop()
        exp.wait()


def test_an_experiment_is_removed_only_when_no_driver_runs_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    exp = start_live(url, tmp_path / "work")
    app = create_app(url, session_token=SESSION_TOKEN)
    with client_for(app) as client:
        running = client.delete(f"/api/v1/experiments/{exp.id}")
        assert (
            running.status_code == 409 and "stop it before removing it" in running.json()["detail"]
        )
        exp.stop()
        exp.wait()
        anonymous = client_for(app, token=None)  # no `with`: it would close the app's store
        assert anonymous.delete(f"/api/v1/experiments/{exp.id}").status_code == 401
        assert client.delete(f"/api/v1/experiments/{exp.id}").status_code == 204
        assert client.get(f"/api/v1/experiments/{exp.id}").status_code == 404
        assert not exp.folder.exists()
