"""Writes no other web page can forge: each attack a page open in the user's browser could try
against a real server on loopback, refused before it reaches a route, with nothing queued in
the store; and the token rules (experiment and session tokens, header, bearer, cookie; beyond
loopback, reads need one too)."""

from __future__ import annotations

import http.client
import json
import os
import stat
from typing import Any

import pytest

from hyperlab.server import serve_in_background
from hyperlab.server._security import Policy
from hyperlab.store import Store
from hyperlab.store.tokens import ensure_token, read_token
from tests.server import start_live


def request(
    server: Any,
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any], dict[str, str]]:
    """One raw HTTP request (every header as given, Host included): status, JSON, headers."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        sent = {"Host": f"127.0.0.1:{server.port}", **(headers or {})}
        conn.request(method, path, body=body, headers=sent)
        response = conn.getresponse()
        data = response.read()
        payload = json.loads(data) if data else {}
        return response.status, payload, {k.lower(): v for k, v in response.getheaders()}
    finally:
        conn.close()


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    """A running experiment served by a real server on loopback; its token."""
    folder = tmp_path_factory.mktemp("security")
    url = f"sqlite:///{folder / 'runs.db'}"
    exp = start_live(url, folder / "work", max_trials=100)
    store = Store.open(url)
    token = ensure_token(exp.folder)
    with serve_in_background(store, 0, experiment_id=exp.id, token="session-token") as server:
        yield server, exp, store, token
    exp.stop()
    exp.wait()


def queued(store: Store, experiment_id: str) -> int:
    return len(store.pending_controls(experiment_id))


# ---- the attacks: each went through before the server checked requests ---------------------------


def test_a_cross_site_text_plain_post_cannot_stop_the_experiment(live):
    server, exp, store, token = live
    before = queued(store, exp.id)
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        status, body, _ = request(
            server,
            "POST",
            f"/api/v1/experiments/{exp.id}/stop",
            body=b"x=1",
            headers={"Content-Type": content_type, "Origin": "http://evil.example"},
        )
        assert status in (403, 415), (content_type, status, body)
    # even with the token (a page cannot know it, but the content type alone must be refused)
    status, body, _ = request(
        server,
        "POST",
        f"/api/v1/experiments/{exp.id}/trials/0/kill",
        body=b"{}",
        headers={"Content-Type": "text/plain", "X-Hyperlab-Token": token},
    )
    assert status == 415 and "application/json" in body["detail"]
    assert queued(store, exp.id) == before and exp.status.value == "RUNNING"


def test_a_write_without_a_token_is_401_and_with_a_wrong_one_403(live):
    server, exp, store, _ = live
    before = queued(store, exp.id)
    path = f"/api/v1/experiments/{exp.id}/stop"
    json_body = {"Content-Type": "application/json"}
    status, body, _ = request(server, "POST", path, body=b"{}", headers=json_body)
    assert status == 401 and "X-Hyperlab-Token" in body["detail"]
    wrong = {**json_body, "X-Hyperlab-Token": "not-the-token"}
    status, body, _ = request(server, "POST", path, body=b"{}", headers=wrong)
    assert status == 403 and exp.id in body["detail"]
    status, _, _ = request(
        server,
        "PATCH",
        f"/api/v1/experiments/{exp.id}",
        body=b'{"concurrency": 2}',
        headers=json_body,
    )
    assert status == 401
    assert queued(store, exp.id) == before


def test_a_forged_host_is_refused_even_for_reads(live):
    server, exp, _, token = live
    for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1.evil.example"):
        status, body, _ = request(
            server, "GET", f"/api/v1/experiments/{exp.id}", headers={"Host": host}
        )
        assert status == 421 and host in body["detail"], host
    status, _, _ = request(
        server,
        "POST",
        f"/api/v1/experiments/{exp.id}/stop",
        body=b"{}",
        headers={
            "Host": "evil.example",
            "Content-Type": "application/json",
            "X-Hyperlab-Token": token,
        },
    )
    assert status == 421
    for name in ("localhost", "127.0.0.1", "[::1]"):  # the loopback names are this server
        status, _, _ = request(
            server, "GET", "/api/v1/experiments", headers={"Host": f"{name}:{server.port}"}
        )
        assert status == 200, name


def test_a_write_from_another_origin_is_refused_even_with_json_and_the_token(live):
    server, exp, store, token = live
    before = queued(store, exp.id)
    headers = {"Content-Type": "application/json", "X-Hyperlab-Token": token}
    for extra in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
        status, _, _ = request(
            server,
            "POST",
            f"/api/v1/experiments/{exp.id}/stop",
            body=b"{}",
            headers={**headers, **extra},
        )
        assert status == 403, extra
    assert queued(store, exp.id) == before


def test_no_cors_headers_so_a_preflight_gets_no_permission(live):
    server, exp, _, _ = live
    status, _, headers = request(
        server,
        "OPTIONS",
        f"/api/v1/experiments/{exp.id}/stop",
        headers={
            "Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert status >= 400
    assert not any(name.startswith("access-control-") for name in headers)
    _, _, headers = request(
        server, "GET", "/api/v1/experiments", headers={"Origin": "http://evil.example"}
    )
    assert not any(name.startswith("access-control-") for name in headers)


def test_a_body_over_the_limit_is_413(live):
    server, exp, _, token = live
    big = b'{"concurrency": 1, "pad": "' + b"x" * (16 * 1024 * 1024) + b'"}'
    status, body, _ = request(
        server,
        "PATCH",
        f"/api/v1/experiments/{exp.id}",
        body=big,
        headers={"Content-Type": "application/json", "X-Hyperlab-Token": token},
    )
    assert status == 413 and "bytes" in body["detail"]


# ---- what is allowed --------------------------------------------------------------------------


def test_reads_are_open_on_loopback_and_writes_take_the_token_as_header_bearer_or_cookie(live):
    server, exp, _, token = live
    assert request(server, "GET", f"/api/v1/experiments/{exp.id}")[0] == 200
    path = f"/api/v1/experiments/{exp.id}"
    for credentials in (
        {"X-Hyperlab-Token": token},
        {"Authorization": f"Bearer {token}"},
        {"X-Hyperlab-Token": "session-token"},  # the server's own: good for every experiment
        {"Cookie": f"hyperlab_token_{server.port}=session-token"},
    ):
        status, body, _ = request(
            server,
            "PATCH",
            path,
            body=b'{"concurrency": 1}',
            headers={"Content-Type": "application/json", **credentials},
        )
        assert status == 202, (credentials, body)


def test_the_dashboard_link_sets_an_http_only_same_site_cookie_and_drops_the_token(live):
    server, _, _, _ = live
    status, _, headers = request(server, "GET", "/?token=session-token&view=trials")
    assert status == 303
    assert headers["location"] == "/?view=trials"
    cookie = headers["set-cookie"]
    assert cookie.startswith(f"hyperlab_token_{server.port}=session-token")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    status, _, _ = request(server, "GET", "/?token=guessed")
    assert status == 403


def test_nnis_routes_write_without_a_token_on_loopback_but_not_with_a_wrong_one(live):
    server, exp, _, _ = live
    path = f"/api/v1/nni/experiment?update_type=TRIAL_CONCURRENCY&experiment_id={exp.id}"
    body = json.dumps({"params": {"trialConcurrency": 1}}).encode()
    status, _, _ = request(
        server, "PUT", path, body=body, headers={"Content-Type": "application/json"}
    )
    assert status in (200, 202)
    status, _, _ = request(
        server,
        "PUT",
        path,
        body=body,
        headers={"Content-Type": "application/json", "X-Hyperlab-Token": "wrong"},
    )
    assert status == 403


def test_the_token_file_is_private_and_stable(tmp_path):
    first = ensure_token(tmp_path)
    assert ensure_token(tmp_path) == first == read_token(tmp_path)
    assert stat.S_IMODE(os.stat(tmp_path / "token").st_mode) == 0o600
    assert len(first) >= 32


def test_beyond_loopback_every_request_needs_a_token():
    policy = Policy(host="0.0.0.0", port=8080, session_token="s", experiment_token=lambda _: "e")
    assert not policy.loopback
    assert policy.host_allowed("any.name:8080")  # every interface: names unknown
    loopback = Policy(
        host="127.0.0.1", port=8080, session_token="s", experiment_token=lambda _: None
    )
    assert loopback.loopback and not loopback.host_allowed("10.0.0.5:8080")


def test_a_server_beyond_loopback_refuses_reads_without_a_token(tmp_path):
    store = Store.open(f"sqlite:///{tmp_path / 'runs.db'}")
    host = _non_loopback_address()
    if host is None:
        pytest.skip("this machine has no address beyond loopback")
    with serve_in_background(store, 0, host=host, token="t") as server:
        status, body, _ = request(
            server, "GET", "/api/v1/experiments", headers={"Host": f"{host}:{server.port}"}
        )
        assert status == 401 and "beyond loopback" in body["detail"]
        status, _, _ = request(
            server,
            "GET",
            "/api/v1/nni/check-status",
            headers={"Host": f"{host}:{server.port}", "X-Hyperlab-Token": "t"},
        )
        assert status in (200, 404)  # past the guard (no experiment in this store: 404)


def _non_loopback_address() -> str | None:
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))  # no packet is sent: it picks the interface
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


@pytest.mark.parametrize(
    "proxy",
    [
        {"X-Forwarded-For": "203.0.113.7"},
        {"Forwarded": "for=203.0.113.7"},
        {"X-Real-IP": "203.0.113.7"},
    ],
)
def test_a_request_through_a_reverse_proxy_needs_a_token_as_beyond_loopback(live, proxy):
    # a proxy in front of a loopback server exposes it to the network: what is open on
    # loopback (reads, NNI's writes) is not open to what came through one
    server, exp, store, token = live
    assert request(server, "GET", f"/api/v1/experiments/{exp.id}", headers=proxy)[0] == 401
    before = queued(store, exp.id)
    path = f"/api/v1/nni/experiment?update_type=TRIAL_CONCURRENCY&experiment_id={exp.id}"
    body = json.dumps({"params": {"trialConcurrency": 1}}).encode()
    headers = {"Content-Type": "application/json", **proxy}
    assert request(server, "PUT", path, body=body, headers=headers)[0] == 401
    assert queued(store, exp.id) == before
    with_token = {**proxy, "X-Hyperlab-Token": token}
    assert request(server, "GET", f"/api/v1/experiments/{exp.id}", headers=with_token)[0] == 200
