"""Property-based fuzzing of the REST API from its own OpenAPI document (schemathesis): every
operation of hyperlab's API (``/api/v1``) and of NNI's (``/api/v1/nni``), with values that fit
the schema and values that do not, sent over HTTP to a real server on loopback, over a real
SQLite store. No answer may be a 5xx, and every answer must match what the document says of
it (status code, content type, headers, body schema).

The store holds four experiments: one of odd names (parameter and metric names with ``/``, a
NUL byte, a newline, quotes, HTML and any Unicode; integers beyond 64 bits as parameter
values, metric values and choice options; NaN and infinities; logs that are symbolic links
out of the trial's folder), one of ordinary trials in every status (``tests.server.apidata``),
one with two objectives and a constraint whose values include NaN, infinities and huge
numbers, and one that a driver holds the lease of, so that hyperlab's write routes reach the
store's control queue. Generated cases are aimed at these experiments and their trials most of the
time (a random id answers 404 before anything else is read), and carry no token, the
session token, the experiment's own token, another experiment's, or a wrong one.

An experiment that a fuzzed ``DELETE`` removed is written again before the next case, so each
operation sees the same store.

The run is bounded and reproducible: ``derandomize`` with ``HYPERLAB_FUZZ_EXAMPLES`` examples
per operation (default ``EXAMPLES``); set it higher for a longer search
(``HYPERLAB_FUZZ_EXAMPLES=1000 python -m pytest tests/server/test_fuzz_api.py``). The module
prints how many requests it sent, by status code and token, when it ends.

Not fuzzed: NNI's write routes against the experiment a driver holds (they wait up to
``APPLY_WAIT`` seconds for a driver to apply the request, and none runs here); hyperlab's write
routes reach the same ``Store.send_control``.
"""

from __future__ import annotations

import collections
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from hyperlab.config import ExperimentOptions
from hyperlab.server import serve_in_background
from hyperlab.store import ExperimentRecord, Store
from hyperlab.store.tokens import ensure_token
from hyperlab.trial import ExperimentStatus, Mode, Report, Trial, TrialStatus
from tests.server.apidata import write_experiment

EXAMPLES = int(os.environ.get("HYPERLAB_FUZZ_EXAMPLES", "80"))
"""Examples per operation."""

SESSION = "fuzz-session-token"
ODD = "fz-odd"
PLAIN = "fz-plain"
MULTI = "fz-multi"
LIVE = "fz-live"
N_ODD = 12
N_PLAIN = 30
T0 = 1_700_000_000.0
BIG = 2**70  # beyond 64 bits
SECRET = "root:x:0:0:the target of a symbolic link, never served"

ODD_SPACE = {
    "a/b": {"_type": "uniform", "_value": [0, 1]},
    "ünï 名 😀": {"_type": "loguniform", "_value": [1e-5, 1]},
    "x\x00y": {"_type": "randint", "_value": [0, BIG]},
    "n\nl": {"_type": "choice", "_value": [BIG, -(2**100), "n\x00ul", "<b>x</b>", None, 1.5]},
    '"q"': {"_type": "normal", "_value": [0, 1]},
    "<a href='https://evil.example/x'>CLICK</a>": {"_type": "quniform", "_value": [0, 9, 1]},
}
ODD_METRIC = "m\x00ü"


def _odd_trial(number: int) -> Trial:
    status = (TrialStatus.SUCCEEDED, TrialStatus.FAILED, TrialStatus.RUNNING, TrialStatus.WAITING)[
        number % 4
    ]
    options = ODD_SPACE["n\nl"]["_value"]
    params = {
        "a/b": number / N_ODD,
        "ünï 名 😀": 10.0 ** -(number % 5),
        "x\x00y": BIG + number,
        "n\nl": options[number % len(options)],
        '"q"': (-1) ** number * number,
        "<a href='https://evil.example/x'>CLICK</a>": number % 9,
    }
    value: float | int | None = None
    metrics: dict[str, Any] = {}
    if status is TrialStatus.SUCCEEDED:
        value = (BIG, 0.5, -1e308, math.inf)[number // 4 % 4]
        metrics = {ODD_METRIC: value, "a/b": 2**80, "<i>x</i>": "text", "😀": math.nan}
    return Trial(
        ODD,
        number,
        params,
        status,
        1,
        value,
        metrics,
        (),
        "boom \x00 \x1b[2J" if status is TrialStatus.FAILED else None,
        number,
        T0 + number,
        None if status is TrialStatus.WAITING else T0 + number + 1,
        T0 + number + 100 if status.is_finished() else None,
        None,
        "custom" if number == 5 else None,
    )


def seed_odd(store: Store, working_dir: Path, outside: Path) -> None:
    """The experiment of odd names, with its trials' logs: trial 0 a real one, trial 1's a
    symbolic link to a file outside, trial 2's folder a symbolic link to a folder outside."""
    record = ExperimentRecord(
        ODD,
        "odd \x00 ünï <b>x</b> \x1b[2J",
        ExperimentStatus.DONE,
        ExperimentOptions(
            metric=ODD_METRIC, mode=Mode.MAX, executor="command", working_dir=str(working_dir)
        ),
        ODD_SPACE,
        2**63 - 1,
        None,
        T0 + 1,
    )
    store.create_experiment(record)
    for number in range(N_ODD):
        trial = _odd_trial(number)
        store.put_trial(trial)
        if trial.status is not TrialStatus.WAITING:
            for step in range(3):
                metrics = {ODD_METRIC: BIG + step, "a/b": step / 3, "😀": math.nan}
                store.add_report(ODD, number, Report(step, metrics, T0 + number + step))
    store.flush()
    trials = store.experiment_folder(record) / "trials"
    (trials / "0").mkdir(parents=True)
    (trials / "0" / "stdout.log").write_bytes(b"step 1\n\x00\xff\xfe \x1b[2J\n")
    (trials / "1").mkdir()
    (trials / "1" / "stdout.log").symlink_to(outside / "secret.txt")
    (trials / "2").symlink_to(outside, target_is_directory=True)


def seed_multi(store: Store) -> None:
    """An experiment with two objectives and a constraint, of odd objective and constraint
    values (NaN, infinities, huge numbers), in several statuses."""
    options = ExperimentOptions(
        metric=("lo", "hi 😀"), mode=(Mode.MIN, Mode.MAX), constraints=("lo <= 1",)
    )
    space = {"x": {"_type": "uniform", "_value": [0, 1]}}
    record = ExperimentRecord(MULTI, "multi", ExperimentStatus.DONE, options, space, 5, None, T0)
    store.create_experiment(record)
    odd = (0.5, -1e308, math.inf, -math.inf, math.nan, 2.0**70, 0.0)
    for number in range(14):
        status = (TrialStatus.SUCCEEDED, TrialStatus.SUCCEEDED, TrialStatus.FAILED)[number % 3]
        done = status is TrialStatus.SUCCEEDED
        values = (odd[number % 7], odd[(number * 3 + 1) % 7])
        store.put_trial(
            Trial(
                MULTI,
                number,
                {"x": number / 14},
                status,
                value=values[0] if done else None,
                metrics={"lo": values[0], "hi 😀": values[1]} if done else {},
                values=values if done else None,
                constraints=(odd[(number + 2) % 7] - 1.0,) if done else None,
                created_at=T0,
            )
        )
    store.flush()


def seed_live(store: Store, working_dir: Path) -> None:
    """An experiment whose lease a driver holds for the whole module (so the server sends it
    control requests), created first so that it is never the newest."""
    record = ExperimentRecord(
        LIVE,
        "live",
        ExperimentStatus.RUNNING,
        ExperimentOptions(metric="loss", max_trials=1000, working_dir=str(working_dir)),
        {"x": {"_type": "uniform", "_value": [0, 1]}, "c": {"_type": "choice", "_value": [1, "b"]}},
        3,
        None,
        T0,
    )
    store.create_experiment(record)
    store.acquire_lease(LIVE, owner="fuzz-driver", pid=os.getpid(), ttl=24 * 3600)
    for number in range(3):
        running = number == 2
        store.put_trial(
            Trial(
                LIVE,
                number,
                {"x": number / 3, "c": 1},
                TrialStatus.RUNNING if running else TrialStatus.SUCCEEDED,
                1,
                None if running else number / 3,
                {} if running else {"loss": number / 3},
                (),
                None,
                number,
                T0 + number,
                T0 + number,
                None if running else T0 + number + 1,
                None,
                None,
            )
        )
    store.flush()


@dataclass
class Served:
    """The server the cases are sent to, its store and the experiments' own tokens."""

    url: str
    session: requests.Session
    store: Store
    folder: Path
    tokens: dict[str, str]

    def token(self, kind: str, experiment_id: str) -> str | None:
        """The token a case aimed at ``experiment_id`` carries: none, the session's, the
        experiment's own (the odd one's for the one that has none), another experiment's, or
        a wrong one."""
        if kind == "own":
            return self.tokens.get(experiment_id, self.tokens[ODD])
        if kind == "other":
            return self.tokens[LIVE if experiment_id == ODD else ODD]
        return {"none": None, "session": SESSION, "wrong": "not-a-token"}[kind]

    def kind_of(self, token: str | None) -> str:
        """What a token sent is, for the count of requests."""
        if token is None or token == SESSION:
            return "none" if token is None else "session"
        return "experiment's" if token in self.tokens.values() else "wrong"

    def reseed(self, experiment_id: str) -> None:
        """Write an experiment a fuzzed DELETE removed again, with its token."""
        if experiment_id == ODD:
            seed_odd(self.store, self.folder / "work", self.folder / "outside")
            self.tokens[ODD] = ensure_token(
                self.store.experiment_folder(self.store.get_experiment(ODD))
            )
        elif experiment_id == PLAIN:
            write_experiment(self.store, PLAIN, N_PLAIN)


SENT: collections.Counter[str] = collections.Counter()
"""Requests sent, by status code and by the token they carried."""


@pytest.fixture(scope="module")
def served(tmp_path_factory, request):
    """The seeded store served on loopback; prints how many requests were sent at the end."""
    folder = tmp_path_factory.mktemp("fuzz")
    outside = folder / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "stdout.log").write_text(SECRET)
    url = f"sqlite:///{folder / 'fuzz.db'}"
    driver = Store.open(url)
    seed_live(driver, folder / "work")
    store = Store.open(url)
    seed_odd(store, folder / "work", outside)
    write_experiment(store, PLAIN, N_PLAIN)
    seed_multi(store)
    tokens = {
        experiment_id: ensure_token(store.experiment_folder(store.get_experiment(experiment_id)))
        for experiment_id in (ODD, LIVE)
    }
    with serve_in_background(store, 0, token=SESSION) as server, requests.Session() as session:
        yield Served(server.url, session, store, folder, tokens)
    store.close()
    driver.close()
    total = sum(n for key, n in SENT.items() if key.startswith("status "))
    summary = ", ".join(f"{key}: {n}" for key, n in sorted(SENT.items()))
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    if capture is not None and reporter is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(f"\nREST API fuzz: {total} requests ({summary})")


def _aimed(served: Served) -> Any:
    """A ``flatmap_case`` hook aiming a generated case at one of the seeded experiments and
    its trials (each part 7 times in 8) and giving it a token (or none)."""
    aim = st.integers(0, 7).map(bool)
    trial_numbers = st.integers(0, N_PLAIN + 1)
    odd_numbers = st.integers(0, 2**31 + 1) | st.just(BIG)
    numbers = st.integers(0, 3).flatmap(lambda k: trial_numbers if k else odd_numbers)
    tokens = st.sampled_from(["session", "session", "own", "own", "other", "none", "wrong"])

    @st.composite
    def aimed(draw: st.DrawFn, case: Any) -> Any:
        writes = case.method.upper() not in ("GET", "HEAD")
        nni = case.path.startswith("/api/v1/nni/")
        if writes and nni:  # these wait for the driver to apply them, and none runs here
            targets = [ODD, PLAIN]
        else:
            targets = [LIVE, LIVE, ODD, PLAIN] if writes else [ODD, PLAIN, LIVE, MULTI]
        target = draw(st.sampled_from(targets))
        path = dict(case.path_parameters or {})
        if "experiment_id" in path and draw(aim):
            path["experiment_id"] = target
        if "number" in path and draw(aim):
            path["number"] = draw(numbers)
        if "trial_job_id" in path and draw(aim):
            path["trial_job_id"] = f"{target}-{draw(numbers)}"
        case.path_parameters = path
        if nni and isinstance(case.query, dict) and draw(aim):
            case.query = {**case.query, "experiment_id": target}
        kind = draw(tokens)
        token = served.token(kind, target)
        if token is not None:
            case.headers = {**(case.headers or {}), "X-Hyperlab-Token": token}
        return case

    def flatmap_case(context: Any, case: Any) -> Any:
        return aimed(case)

    return flatmap_case


@pytest.fixture(scope="module")
def fuzz_schema(served):
    """The served app's own OpenAPI document, with the cases aimed at the seeded store."""
    loaded = schemathesis.openapi.from_url(f"{served.url}/openapi.json")
    loaded.hook(_aimed(served))
    return loaded


schema = schemathesis.pytest.from_fixture("fuzz_schema")

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
def test_no_request_gets_a_server_error_and_answers_match_the_schema(case, served):
    response = case.call(base_url=served.url, session=served.session, timeout=30)
    SENT[f"status {response.status_code}"] += 1
    SENT[f"token {served.kind_of((case.headers or {}).get('X-Hyperlab-Token'))}"] += 1
    if case.method.upper() == "DELETE" and response.status_code == 204:
        served.reseed(case.path_parameters["experiment_id"])
    case.validate_response(response, checks=CHECKS)
    assert SECRET not in response.text, "a file outside the trial's folder was served"
