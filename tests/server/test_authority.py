"""Per-experiment authority: a token writes to its own experiment only.

An experiment's token (``<folder>/token``), and the token of a server started for one experiment
(``run --port``, ``view``), are good for that experiment alone; ``hyperlab serve``'s own token is
good for every experiment it serves. The experiment a request acts on is read once, for the
token check and the route alike, and a request that names it ambiguously (twice, empty, or
differently in the path and the query) is a 400. Each attack below went through before.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import fastapi.routing
import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

import hyperlab
from hyperlab import space as hs
from hyperlab.server import create_app
from hyperlab.server._security import AmbiguousExperiment, experiment_of
from hyperlab.store import Store
from hyperlab.store.tokens import ensure_token
from tests import objectives
from tests.cli.test_cli import ROOT
from tests.server import client_for, populate, start_live

SERVER_TOKEN = "the-serve-command-token"
READS = {"GET", "HEAD", "OPTIONS"}


@pytest.fixture(scope="module")
def store_of_three(tmp_path_factory) -> Iterator[dict[str, Any]]:
    """A store with A and B running (B newer than A) and C ended; every experiment's token."""
    folder = tmp_path_factory.mktemp("authority")
    url = f"sqlite:///{folder / 'runs.db'}"
    c = populate(url, folder / "work-c", name="ended")
    a = start_live(url, folder / "work-a", max_trials=200)
    time.sleep(0.01)  # B is newer: what a request naming no experiment on `serve` acts on
    b = start_live(url, folder / "work-b", max_trials=200)
    store = Store.open(url)
    tokens = {
        name: ensure_token(store.experiment_folder(store.get_experiment(experiment_id)))
        for name, experiment_id in (("A", a.id), ("B", b.id), ("C", c))
    }
    yield {"url": url, "store": store, "A": a.id, "B": b.id, "C": c, "tokens": tokens}
    for exp in (a, b):
        exp.stop()
        exp.wait()
    store.close()


def untouched(world: dict[str, Any], name: str) -> None:
    """The experiment still exists, and no control request waits for it."""
    store = world["store"]
    experiment_id = world[name]
    record = store.get_experiment(experiment_id)  # not deleted
    assert store.pending_controls(experiment_id) == [], name
    if name != "C":
        assert not record.status.is_finished(), (name, record.status)


def json_write(client: Any, method: str, path: str, token: str) -> httpx.Response:
    return client.request(
        method,
        path,
        content=b"{}",
        headers={"Content-Type": "application/json", "X-Hyperlab-Token": token},
    )


# ---- what was seen ---------------------------------------------------------------------------


def test_an_empty_experiment_id_no_longer_steers_the_newest_experiment(store_of_three):
    """`serve --host 0.0.0.0` holding only A's token: `?experiment_id=A&experiment_id=` was
    checked against A and acted on B (the newest), stopping it, reading its profile and trial
    jobs and setting its concurrency."""
    world = store_of_three
    a, ta = world["A"], world["tokens"]["A"]
    app = create_app(world["url"], host="0.0.0.0", session_token=SERVER_TOKEN)
    trick = f"experiment_id={a}&experiment_id="
    with client_for(app, token=ta) as client:
        for method, path in (
            ("DELETE", f"/api/v1/nni/experiment?{trick}"),
            ("PUT", f"/api/v1/nni/experiment?{trick}&update_type=TRIAL_CONCURRENCY"),
            ("GET", f"/api/v1/nni/experiment?{trick}"),
            ("GET", f"/api/v1/nni/trial-jobs?{trick}"),
            ("GET", "/api/v1/nni/experiment?experiment_id="),
        ):
            body = b'{"params": {"trialConcurrency": 9}}' if method == "PUT" else b""
            response = client.request(
                method, path, content=body or None, headers={"Content-Type": "application/json"}
            )
            assert response.status_code == 400, (method, path, response.text)
            assert "experiment_id" in response.json()["error"]
        # naming B outright: beyond loopback even reads need B's token
        assert client.get(f"/api/v1/nni/experiment?experiment_id={world['B']}").status_code == 403
        assert client.get(f"/api/v1/nni/experiment?experiment_id={a}").json()["id"] == a
    untouched(world, "B")
    assert world["store"].get_experiment(world["B"]).options.concurrency == 1


def test_a_run_port_token_cannot_delete_or_stop_another_experiment(store_of_three, tmp_path):
    """The token `run --port` printed for one experiment deleted another through its server."""
    world = store_of_three
    exp = hyperlab.Experiment(
        objectives.report_slowly,
        {"x": hs.uniform(0, 1)},
        metric="loss",
        executor="threads",
        storage=world["url"],
        working_dir=tmp_path,
        progress=False,
        max_trials=50,
    ).start(port=0)
    try:
        server = exp.server
        assert server is not None and server.token == ensure_token(exp.folder)
        with httpx.Client(base_url=server.url, timeout=10) as client:
            for method, path in (
                ("DELETE", f"/api/v1/experiments/{world['C']}"),
                ("POST", f"/api/v1/experiments/{world['B']}/stop"),
                ("DELETE", f"/api/v1/nni/experiment?experiment_id={world['B']}"),
            ):
                response = json_write(client, method, path, server.token)
                assert response.status_code == 403, (method, path, response.text)
            own = client.patch(
                f"/api/v1/experiments/{exp.id}",
                json={"concurrency": 1},
                headers={"X-Hyperlab-Token": server.token},
            )
            assert own.status_code == 202, own.text  # its own experiment: allowed
            nni_default = client.get(  # naming none: the server's own experiment
                "/api/v1/nni/experiment", headers={"X-Hyperlab-Token": server.token}
            )
            assert nni_default.json()["id"] == exp.id
    finally:
        exp.stop()
        exp.wait()
    untouched(world, "B")
    untouched(world, "C")


def test_the_view_commands_token_is_good_for_its_experiment_only(store_of_three):
    world = store_of_three
    command = ["view", world["C"], "--port", "0"]
    view = subprocess.Popen(
        [sys.executable, "-m", "hyperlab", "--storage", world["url"], *command],
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert view.stderr is not None
        deadline = time.monotonic() + 30
        found = None
        while found is None and time.monotonic() < deadline:
            line = view.stderr.readline()
            found = re.search(r"(http://127\.0\.0\.1:\d+)/experiments/\S+\?token=(\S+)", line)
        assert found, "no dashboard link"
        url, token = found.groups()
        assert token == world["tokens"]["C"]
        with httpx.Client(base_url=url, timeout=10) as client:
            stop_b = json_write(client, "POST", f"/api/v1/experiments/{world['B']}/stop", token)
            assert stop_b.status_code == 403, stop_b.text
            assert world["B"] in stop_b.json()["detail"]
            own = json_write(client, "POST", f"/api/v1/experiments/{world['C']}/stop", token)
            assert own.status_code == 409  # past the token check: C has ended
    finally:
        view.send_signal(signal.SIGINT)
        view.wait(30)
    untouched(world, "B")


# ---- every write route -----------------------------------------------------------------------


def write_routes(app: Any) -> list[tuple[str, str]]:
    """Every (method, path template) of the app that is not a read, from its route table."""
    if hasattr(fastapi.routing, "iter_route_contexts"):  # FastAPI >= 0.165 nests routers
        routes: Any = fastapi.routing.iter_route_contexts(app.routes)
    else:
        routes = app.routes
    found = set()
    for route in routes:
        for method in getattr(route, "methods", None) or ():
            if method not in READS:
                found.add((method, route.path))
    return sorted(found)


def filled(path: str, experiment_id: str) -> str:
    """A path template with every parameter set: the experiment, trial 0, control 1."""
    path = path.replace("{experiment_id}", experiment_id)
    path = path.replace("{trial_job_id}", f"{experiment_id}-0")
    return re.sub(r"\{[^}]+\}", "1", path)


def test_every_write_route_of_both_apis_refuses_another_experiments_token(store_of_three):
    world = store_of_three
    a, b, ta = world["A"], world["B"], world["tokens"]["A"]
    apps = {
        "serve beyond loopback": create_app(
            world["url"], host="0.0.0.0", session_token=SERVER_TOKEN
        ),
        "serve on loopback": create_app(world["url"], session_token=SERVER_TOKEN),
        "A's own server": create_app(world["url"], experiment_id=a, session_token=ta),
    }
    for where, app in apps.items():
        routes = write_routes(app)
        hyperlabs = [r for r in routes if r[1].startswith("/api/v1/experiments/")]
        nnis = [r for r in routes if r[1].startswith("/api/v1/nni/")]
        assert len(hyperlabs) >= 9 and len(nnis) >= 5, routes  # the table was read
        with client_for(app, token=ta) as client:
            for method, template in routes:
                path = filled(template, b)
                if "{experiment_id}" not in template:
                    path += f"?experiment_id={b}"
                response = json_write(client, method, path, ta)
                assert response.status_code == 403, (where, method, path, response.text)
                assert repr(b) in response.json()["detail"], (where, method, path)
            # NNI's routes acting on the server's experiment, naming none: only A's server's
            if where != "A's own server":
                for method, template in nnis:
                    response = json_write(client, method, filled(template, b), ta)
                    assert response.status_code == 403, (where, method, template)
    for name in ("B", "C"):
        untouched(world, name)


def test_the_serve_commands_token_writes_to_every_experiment(store_of_three):
    world = store_of_three
    app = create_app(world["url"], host="0.0.0.0", session_token=SERVER_TOKEN)
    with client_for(app, token=SERVER_TOKEN) as client:
        for name in ("A", "B"):
            path = f"/api/v1/experiments/{world[name]}/search-space/check"
            response = client.post(path, json={"x": {"_type": "uniform", "_value": [0, 1]}})
            assert response.status_code == 200, response.text
        default = client.get("/api/v1/nni/experiment")  # naming none: the newest
        assert default.json()["id"] == world["store"].list_experiments()[0].id


def test_the_dashboards_session_says_which_experiments_the_token_steers(store_of_three):
    world = store_of_three
    a, b, ta = world["A"], world["B"], world["tokens"]["A"]
    own_app = create_app(world["url"], experiment_id=a, session_token=ta)
    with client_for(own_app, token=ta) as own:
        session = own.get("/api/v1/session").json()
        assert session["can_write"] is True and session["server_experiment"] == a
        assert own.get(f"/api/v1/session?experiment_id={b}").json()["can_write"] is False
    serve_app = create_app(world["url"], session_token=SERVER_TOKEN)
    with client_for(serve_app, token=SERVER_TOKEN) as serve:
        session = serve.get(f"/api/v1/session?experiment_id={b}").json()
        assert session["can_write"] is True and session["server_experiment"] is None


# ---- naming the experiment ambiguously -------------------------------------------------------


def test_a_duplicate_empty_or_conflicting_experiment_id_is_a_400(store_of_three):
    world = store_of_three
    a, b = world["A"], world["B"]
    app = create_app(world["url"], session_token=SERVER_TOKEN)
    with client_for(app) as client:
        for method, path, why in (
            ("GET", f"/api/v1/nni/experiment?experiment_id={a}&experiment_id={a}", "2 times"),
            ("GET", f"/api/v1/nni/trial-jobs?experiment_id={a}&experiment_id={b}", "2 times"),
            ("GET", "/api/v1/nni/trial-jobs?experiment_id=", "empty"),
            ("DELETE", f"/api/v1/nni/experiment?experiment_id={a}&experiment_id=", "2 times"),
            ("GET", f"/api/v1/experiments/{a}?experiment_id={b}", "conflicts"),
            ("POST", f"/api/v1/experiments/{a}/stop?experiment_id={b}", "conflicts"),
            ("POST", f"/api/v1/experiments/{a}/stop?experiment_id=", "empty"),
            ("GET", f"/api/v1/experiments/{a}/trials?experiment%5Fid={b}", "conflicts"),
        ):
            response = json_write(client, method, path, SERVER_TOKEN)
            assert response.status_code == 400, (method, path, response.text)
            detail = response.json()["detail"]
            assert "experiment_id" in detail and why in detail, (path, detail)
        same = client.get(f"/api/v1/experiments/{a}?experiment_id={a}")
        assert same.status_code == 200  # the same experiment twice over: no conflict
    for name in ("A", "B"):
        untouched(world, name)


IDS = st.sampled_from(["A", "B", "", "a.b-1", " ", "%41"])


@given(
    path_id=st.one_of(st.none(), st.sampled_from(["A", "B", "a.b-1"])),
    queried=st.lists(IDS, max_size=3),
    default=st.one_of(st.none(), st.sampled_from(["A", "D"])),
    other_keys=st.lists(st.sampled_from(["token=x", "status=RUNNING", "experiment=B"])),
)
def test_the_experiment_of_a_request_is_named_once_or_refused(
    path_id, queried, default, other_keys
):
    path = "/api/v1/nni/trial-jobs" if path_id is None else f"/api/v1/experiments/{path_id}/x"
    query = "&".join([*(f"experiment_id={v}" for v in queried), *other_keys])
    scope: dict[str, Any] = {"path": path, "query_string": query.encode()}
    values = [v.replace("%41", "A") for v in queried]
    named = {v for v in [*values, path_id] if v is not None}
    ambiguous = len(queried) > 1 or "" in values or len(named) > 1
    try:
        acting = experiment_of(scope, default)
    except AmbiguousExperiment as exc:
        assert ambiguous, (path, query, exc)
        assert "experiment_id" in str(exc)
        return
    assert not ambiguous, (path, query, acting)
    assert acting == (named.pop() if named else default)
    assert experiment_of(scope, "another default") == acting  # read once, then kept
