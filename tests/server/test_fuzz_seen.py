"""What an adversarial campaign on the server found (issue 26), each as the request it sent:
trial job ids beyond 64 bits and a NUL byte under ``/static/`` answered 500, and a trial's
log that is a symbolic link served the file it points to (``/etc/passwd``). Then a Hypothesis
search for any other 5xx where the OpenAPI document (fuzzed by ``test_fuzz_api``) does not
reach: the dashboard's page and files, and odd ``Host`` headers, sent as raw bytes.

A log that is a symbolic link (or lies under one, or is a FIFO) is answered as no log
(``exists: false``) with a note saying it is not served, and nothing of its target.
"""

from __future__ import annotations

import collections
import json
import os
import socket
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hyperlab.config import ExperimentOptions
from hyperlab.server import serve_in_background
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Trial, TrialStatus

EXP = "seen"
LINKED = "seen-linked"  # its `trials` folder is a symbolic link
SESSION = "seen-session-token"
SECRET = "the target of a symbolic link: never served"
HUGE = "99999999999999999999"  # beyond 64 bits
PASSWD = Path("/etc/passwd")
EXAMPLES = int(os.environ.get("HYPERLAB_FUZZ_EXAMPLES", "150"))
SENT: collections.Counter[str] = collections.Counter()


def _experiment(store: Store, experiment_id: str, working_dir: Path, trials: int) -> Path:
    """A finished experiment of command trials; its folder."""
    options = ExperimentOptions(metric="loss", executor="command", working_dir=str(working_dir))
    record = ExperimentRecord(
        experiment_id, None, ExperimentStatus.DONE, options, {}, 1, None, 1_700_000_000.0
    )
    store.create_experiment(record)
    for number in range(trials):
        store.put_trial(
            Trial(
                experiment_id,
                number,
                {},
                TrialStatus.SUCCEEDED,
                1,
                0.5,
                {"loss": 0.5},
                (),
                None,
                number,
                1_700_000_000.0,
                1_700_000_001.0,
                1_700_000_002.0,
                None,
                None,
            )
        )
    store.flush()
    return store.experiment_folder(record)


@pytest.fixture(scope="module")
def served(tmp_path_factory, request):
    """A server over two experiments whose trials' logs are: a real file (trial 0), a symbolic
    link to /etc/passwd (1), a folder that is a symbolic link out (2), a FIFO (3); and an
    experiment whose ``trials`` folder is a symbolic link out."""
    root = tmp_path_factory.mktemp("seen")
    outside = root / "outside"
    (outside / "trials" / "0").mkdir(parents=True)
    for path in (outside / "stdout.log", outside / "trials" / "0" / "stdout.log"):
        path.write_text(SECRET)
    store = Store.open(f"sqlite:///{root / 'seen.db'}")
    trials = _experiment(store, EXP, root / "work", 4) / "trials"
    for number in range(4):
        (trials / str(number)).mkdir(parents=True, exist_ok=number != 2)
    (trials / "0" / "stdout.log").write_text("hello from trial 0\n")
    (trials / "1" / "stdout.log").symlink_to(PASSWD)
    (trials / "2").rmdir()
    (trials / "2").symlink_to(outside, target_is_directory=True)
    os.mkfifo(trials / "3" / "stderr.log")
    linked = _experiment(store, LINKED, root / "work", 1)
    linked.mkdir(parents=True)
    (linked / "trials").symlink_to(outside / "trials", target_is_directory=True)
    with serve_in_background(store, 0, token=SESSION) as server:
        yield server
    store.close()
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if capture is not None and reporter is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\nraw-address fuzz: {SENT['requests']} requests")


def send(server, method: str, target: bytes, headers: dict[bytes, bytes] | None = None):
    """One raw HTTP/1.1 request (the target and headers as bytes, unchecked): the status and
    the body."""
    sent = {b"Host": f"127.0.0.1:{server.port}".encode(), b"Connection": b"close"}
    sent.update(headers or {})
    lines = [f"{method} ".encode() + target + b" HTTP/1.1"]
    lines += [name + b": " + value for name, value in sent.items()]
    with socket.create_connection((server.host, server.port), timeout=10) as conn:
        conn.sendall(b"\r\n".join(lines) + b"\r\n\r\n")
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    SENT["requests"] += 1
    return int(head.split(b" ", 2)[1]), body


def get_json(server, path: str, *, method: str = "GET") -> tuple[int, dict]:
    token = {b"X-Hyperlab-Token": SESSION.encode()}
    status, body = send(server, method, quote(path, safe="/?=&").encode(), token)
    return status, json.loads(body)


# ---- what was seen ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "route"),
    [("GET", "trial-jobs"), ("DELETE", "trial-jobs"), ("GET", "metric-data")],
)
@pytest.mark.parametrize(
    "number",
    [HUGE, "9" * 5000, "²", "٣", "-1", "01"],
    ids=["beyond 64 bits", "5000 digits", "superscript 2", "arabic 3", "negative", "leading 0"],
)
def test_a_trial_job_id_that_is_no_trial_number_is_404_not_500(served, method, route, number):
    status, body = get_json(
        served, f"/api/v1/nni/{route}/{EXP}-{number}?experiment_id={EXP}", method=method
    )
    assert status == 404, body
    assert "no trial job" in body["detail"] and body["error"] == body["detail"]


@pytest.mark.parametrize(
    "trials", ["9" * 5000, "²", HUGE], ids=["5000 digits", "superscript 2", "beyond 64 bits"]
)
def test_a_trial_list_of_no_trial_numbers_is_422_not_500(served, trials):
    status, body = get_json(served, f"/api/v1/experiments/{EXP}/reports?trials=1,{trials}")
    assert status == 422, body
    assert body["detail"].startswith("trials: ") and "is not a trial number" in body["detail"]


def test_the_trial_job_id_of_a_trial_still_reads_it(served):
    status, body = get_json(served, f"/api/v1/nni/trial-jobs/{EXP}-3?experiment_id={EXP}")
    assert status == 200 and body["sequenceId"] == 3


@pytest.mark.parametrize(
    "name",
    ["x%00", "%00", "a" * 5000, "%ff", "..%2f..%2f..%2fetc%2fpasswd", "js/%2e%2e/%2e%2e"],
    ids=["x NUL", "NUL", "5000 letters", "not UTF-8", "dot dot", "dot dot in js"],
)
def test_an_odd_name_under_static_is_404_not_500(served, name):
    status, body = send(served, "GET", f"/static/{name}".encode())
    assert status == 404, body
    assert "no dashboard file" in json.loads(body)["detail"]


def test_the_dashboards_files_are_still_served(served):
    status, body = send(served, "GET", b"/static/style.css")
    assert status == 200 and body


@pytest.mark.parametrize(
    "port",
    [b"\xb2", b"9" * 5000, HUGE.encode(), b"-1", b""],
    ids=["superscript 2", "5000 digits", "beyond 64 bits", "negative", "empty"],
)
def test_a_host_header_whose_port_is_no_port_is_421_not_500(served, port):
    status, body = send(served, "GET", b"/api/v1/experiments", {b"Host": b"127.0.0.1:" + port})
    assert status == 421, body
    assert "does not name this server" in json.loads(body)["detail"]


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_a_real_log_is_served(served, stream):
    status, body = get_json(
        served, f"/api/v1/experiments/{EXP}/trials/0/log?stream={stream}&offset=0"
    )
    assert status == 200
    if stream == "stdout":
        assert body["exists"] and body["text"] == "hello from trial 0\n"
    else:
        assert not body["exists"] and body["note"] == "no stderr.log yet"


@pytest.mark.parametrize(
    ("experiment", "number", "what"),
    [
        (EXP, 1, "trials/1/stdout.log is a symbolic link"),
        (EXP, 2, "trials/2 is a symbolic link"),
        (LINKED, 0, "trials is a symbolic link"),
    ],
    ids=["the log", "the trial's folder", "the trials folder"],
)
@pytest.mark.parametrize("query", ["", "?offset=0", "?tail=1048576"])
def test_a_log_behind_a_symbolic_link_is_not_served(served, experiment, number, what, query):
    status, body = get_json(served, f"/api/v1/experiments/{experiment}/trials/{number}/log{query}")
    assert status == 200
    assert body["exists"] is False and body["text"] == "" and body["size"] == 0
    assert what in body["note"] and "not served" in body["note"], body["note"]
    text = json.dumps(body)
    assert SECRET not in text and "root:" not in text


def test_a_fifo_log_answers_at_once_and_is_not_read(served):
    started = time.monotonic()
    status, body = get_json(served, f"/api/v1/experiments/{EXP}/trials/3/log?stream=stderr")
    assert status == 200 and time.monotonic() - started < 5  # opening it did not block
    assert body["exists"] is False and "not a regular file" in body["note"]


# ---- a search where the OpenAPI document does not reach ---------------------------------------

PREFIXES = ["/static/", "/static/js/", "/experiments/", "/", "/?token=", "/api/v1/nni/"]
ODD_TEXT = st.text(st.characters(codec="utf-8"), max_size=300) | st.sampled_from(
    ["\x00", "..", "../" * 20 + "etc/passwd", "%00", "a" * 5000, "²", HUGE]
)


@given(
    prefix=st.sampled_from(PREFIXES),
    rest=ODD_TEXT,
    raw=st.booleans(),
    host=st.none() | st.binary(max_size=40).filter(lambda b: b"\r" not in b and b"\n" not in b),
)
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_no_address_outside_the_api_document_gets_a_server_error(served, prefix, rest, raw, host):
    quoted = quote(rest, safe="/?=&") if raw else quote(rest, safe="")
    headers = {} if host is None else {b"Host": host}
    status, body = send(served, "GET", (prefix + quoted).encode("ascii"), headers)
    assert status < 500, (prefix + quoted, host, body[:300])
    assert SECRET.encode() not in body and b"root:x:" not in body
