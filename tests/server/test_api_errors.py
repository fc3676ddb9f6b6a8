"""Bad requests to the REST API's own routes get a 4xx with a JSON ``detail`` naming the field
and the value, never a 500: malformed and out-of-range query values, path values and bodies,
missing or wrong tokens, wrong methods and content types, bodies too large."""

from __future__ import annotations

import pytest

from hyperlab.server import create_app
from hyperlab.store import Store
from tests.server import SESSION_TOKEN, client_for
from tests.server.apidata import BACKENDS, module_storage, write_experiment

EXP = "err00001"
BASE = f"/api/v1/experiments/{EXP}"


@pytest.fixture(scope="module", params=BACKENDS)
def client(request, tmp_path_factory):
    with module_storage(request.param, tmp_path_factory.mktemp("errors"), request) as url:
        with Store.open(url) as store:
            write_experiment(store, EXP, 60)
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            yield client


BAD_QUERIES = [
    ("trials", {"status": "DONE"}, "status: unknown trial status 'DONE'"),
    ("trials", {"source": "human"}, "source: input should be 'tuner' or 'custom', got 'human'"),
    ("trials", {"value": "abc"}, "value: 'abc' in 'abc' is not a finite number"),
    ("trials", {"value": "2..1"}, "value: MIN <= MAX must hold, got '2..1'"),
    ("trials", {"value": "1..2..3"}, "value: expected MIN..MAX, got '1..2..3'"),
    ("trials", {"value": "nan.."}, "value: 'nan' in 'nan..' is not a finite number"),
    ("trials", {"value": "1e400"}, "value: '1e400' in '1e400' is not a finite number"),
    ("trials", {"duration": "..inf"}, "duration: 'inf' in '..inf' is not a finite number"),
    ("trials", {"param": "lr"}, "param: expected NAME:MIN..MAX or NAME:A,B,..., got 'lr'"),
    ("trials", {"param": ":1..2"}, "param: expected NAME:MIN..MAX"),
    ("trials", {"param": "size:1..2"}, "param: 'size' in 'size:1..2' is not a parameter"),
    ("trials", {"param": "opt:adagrad"}, "param: 'adagrad' in 'opt:adagrad' is not an option"),
    ("trials", {"param": "opt:[adam"}, "param: '[adam' in 'opt:[adam' is not a JSON list"),
    ("trials", {"param": "lr:fast"}, "param: 'fast' in 'lr:fast' is not a finite number"),
    ("trials", {"metric": 'a"b:1..2'}, "metric: a name with a double quote or NUL"),
    ("trials", {"metric": "a\x00b:1..2"}, "metric: a name with a double quote or NUL"),
    ("trials", {"sort": "size"}, "sort: unknown key 'size'; expected number, value"),
    ("trials", {"sort": "param.size"}, "sort: unknown key 'param.size'"),
    ("trials", {"sort": "metric."}, "sort: unknown key 'metric.'"),
    ("trials", {"limit": "0"}, "limit: input should be greater than or equal to 1, got '0'"),
    ("trials", {"limit": "10001"}, "limit: input should be less than or equal to 10000"),
    ("trials", {"limit": "ten"}, "limit: input should be a valid integer"),
    ("trials", {"offset": "-1"}, "offset: input should be greater than or equal to 0"),
    ("trials", {"offset": "9" * 30}, "offset: input should be less than or equal to"),
    ("trials", {"reports": "maybe"}, "reports: input should be a valid boolean"),
    ("trials", {"changed_after": "-5"}, "changed_after: input should be greater than or equal"),
    (
        "trials/abc",
        {},
        "number: input should be a valid integer, unable to parse string as an integer, got 'abc'",
    ),
    ("trials/-1", {}, "number: input should be greater than or equal to 0"),
    ("trials/99999999999", {}, "number: input should be less than or equal to 2147483647"),
    (
        "changes",
        {"after": "x"},
        "after: input should be a valid integer, unable to parse string as an integer, got 'x'",
    ),
    ("changes", {"after": "1e3"}, "after: input should be a valid integer"),
    ("changes", {"limit": "0"}, "limit: input should be greater than or equal to 1"),
    ("reports", {"after": "-1"}, "after: input should be greater than or equal to 0"),
    ("reports", {"trials": "1,x"}, "trials: 'x' is not a trial number"),
    ("reports", {"trials": "99999999999"}, "trials: '99999999999' is not a trial number"),
    ("reports", {"trials": ",".join(map(str, range(1001)))}, "trials: at most 1000 trials"),
    ("plots/curves", {"trials": "1;2"}, "trials: '1;2' is not a trial number"),
    ("plots/curves", {"top": "101"}, "top: input should be less than or equal to 100"),
    ("plots/curves", {"max_points": "3"}, "max_points: input should be greater than or equal"),
    ("plots/best", {"x": "step"}, "x: input should be 'number' or 'time', got 'step'"),
    ("plots/best", {"max_points": "1"}, "max_points: input should be greater than or equal"),
    ("plots/scatter", {}, "x: required"),
    ("plots/scatter", {"x": "param.size"}, "x: 'size' in 'param.size' is not a parameter"),
    ("plots/scatter", {"x": "value", "y": "status"}, "y: unknown key 'status'"),
    ("plots/scatter", {"x": "value", "max_points": "0"}, "max_points: input should be greater"),
    (
        "plots/scatter",
        {"x": "value", "param": "lr:..x"},
        "param: 'x' in 'lr:..x' is not a finite number",
    ),
    ("plots/parallel", {"params": "lr,size"}, "params: 'size' in 'param.size' is not a param"),
    ("plots/parallel", {"target": "param.lr"}, "target: unknown key 'param.lr'"),
    ("plots/importance", {"target": "duration"}, "target: unknown key 'duration'"),
    ("imported", {"after": "-1"}, "after: input should be greater than or equal to 0"),
    ("imported", {"limit": "0"}, "limit: input should be greater than or equal to 1"),
]


@pytest.mark.parametrize(("path", "params", "expected"), BAD_QUERIES)
def test_bad_query_and_path_values_are_422_naming_field_and_value(client, path, params, expected):
    response = client.get(f"{BASE}/{path}", params=params)
    assert response.status_code == 422, response.text
    assert expected in response.json()["detail"]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/v1/experiments/a%20b", "experiment_id: string should match pattern"),
        ("/api/v1/experiments/" + "x" * 40 + "/trials", "experiment_id: string should match"),
        ("/api/v1/controls/0", "control_id: input should be greater than or equal to 1"),
        ("/api/v1/controls/" + "9" * 25, "control_id: input should be less than or equal to"),
    ],
)
def test_bad_ids_are_422(client, path, expected):
    response = client.get(path)
    assert response.status_code == 422
    assert expected in response.json()["detail"]


@pytest.mark.parametrize(
    "path",
    [
        "",
        "/trials",
        "/trials/0",
        "/changes",
        "/reports",
        "/imported",
        "/plots/curves",
        "/plots/best",
        "/plots/scatter?x=value",
        "/plots/parallel",
        "/plots/importance",
    ],
)
def test_unknown_experiments_are_404(client, path):
    response = client.get(f"/api/v1/experiments/nope{path}")
    assert response.status_code == 404
    assert response.json()["detail"].startswith("no experiment 'nope'")


ODD_VALUES = [
    "",
    " ",
    "nan",
    "-inf",
    "1e400",
    "-0",
    "9" * 40,
    "..",
    "…",
    "é:1",
    "a:b:c",
    "[",
    "0x1",
]
QUERY_PARAMS = {
    "trials": ["status", "source", "value", "duration", "param", "metric", "sort", "limit",
               "offset", "changed_after", "reports"],
    "changes": ["after", "limit"],
    "reports": ["after", "trials", "limit"],
    "plots/curves": ["trials", "top", "metric", "max_points"],
    "plots/best": ["x", "max_points"],
    "plots/scatter": ["x", "y", "param", "max_points"],
    "plots/parallel": ["params", "target", "param", "max_points"],
    "plots/importance": ["target"],
    "imported": ["after", "limit"],
}  # fmt: skip


@pytest.mark.parametrize("route", list(QUERY_PARAMS))
def test_odd_query_values_never_fail_the_server(client, route):
    for name in QUERY_PARAMS[route]:
        for value in ODD_VALUES:
            params = {name: value}
            if route == "plots/scatter" and name != "x":
                params["x"] = "value"
            response = client.get(f"{BASE}/{route}", params=params)
            assert response.status_code in (200, 422), (name, value, response.text)
            if response.status_code == 422:
                assert name in response.json()["detail"], (name, value, response.text)


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("POST", "trials", {"params": "x"}, "params: input should be a valid dictionary"),
        ("POST", "trials", {}, "params: required"),
        ("POST", "trials", [], "body: input should be a valid dictionary"),
        ("POST", "trials", {"params": {"lr": 5.0}}, "params: lr"),
        ("POST", "trials", {"params": {"lr": 0.01, "size": 3}}, "params:"),
        ("PUT", "search-space", {"lr": {"_type": "uniform", "_value": [1]}}, "lr: "),
        ("PUT", "search-space", {"lr": {"_type": "loguniform", "_value": [0, 1]}}, "lr: "),
        ("PUT", "search-space", "space", "body: input should be a valid dictionary"),
        ("POST", "import", {"results": "x"}, "body: expected"),
        ("POST", "import", {"results": [{"params": {}, "value": "low"}]}, "results[0]"),
        ("POST", "import", [{"parameter": {"lr": 2.0}, "value": 1}], "results[0].params: lr"),
        ("PATCH", "", {"concurrency": -1}, "concurrency: input should be greater than or equal"),
    ],
)
def test_bad_bodies_are_422_before_anything_is_sent(client, method, path, body, expected):
    response = client.request(method, f"{BASE}/{path}".rstrip("/"), json=body)
    assert response.status_code == 422, response.text
    assert expected in response.json()["detail"]


@pytest.mark.parametrize(
    "content",
    [b"{", b'{"params": ', b"\xff\xfe", b'{"params": {"lr": NaN}}', b"[" * 5000],
)
def test_malformed_json_bodies_are_4xx_not_500(client, content):
    for method, path in (("POST", "trials"), ("PUT", "search-space"), ("POST", "import")):
        response = client.request(
            method, f"{BASE}/{path}", content=content, headers={"content-type": "application/json"}
        )
        assert 400 <= response.status_code < 500, (method, path, response.text)
        assert response.json()["detail"]


WRITES = [
    ("POST", "trials", {"params": {"lr": 0.01}}),
    ("PUT", "search-space", {"lr": {"_type": "uniform", "_value": [0, 1]}}),
    ("POST", "import", {"results": [{"params": {"lr": 0.01}, "value": 1.0}]}),
    ("POST", "stop", {}),
    ("POST", "trials/0/kill", {}),
    ("PATCH", "", {"concurrency": 2}),
]


@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_writes_need_a_token_and_json(client, tmp_path, method, path, body):
    url = f"{BASE}/{path}".rstrip("/")
    app = client.app
    with client_for(app, token=None) as anonymous:
        missing = anonymous.request(method, url, json=body)
        assert missing.status_code == 401 and "a token is needed" in missing.json()["detail"]
    with client_for(app, token="wrong") as stranger:
        wrong = stranger.request(method, url, json=body)
        assert wrong.status_code == 403 and "not valid" in wrong.json()["detail"]
    if method == "POST":
        form = client.request(method, url, content=b"a=1", headers={"content-type": "text/plain"})
        assert form.status_code == 415 and "expected a JSON body" in form.json()["detail"]
    huge = client.request(
        method,
        url,
        content=b" " * (16 * 1024 * 1024 + 1),
        headers={"content-type": "application/json"},
    )
    assert huge.status_code == 413 and "larger than" in huge.json()["detail"]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("DELETE", "trials"),
        ("PUT", "trials/0"),
        ("POST", "changes"),
        ("DELETE", "search-space"),
        ("GET", "import"),
        ("POST", "imported"),
        ("POST", "plots/best"),
    ],
)
def test_wrong_methods_are_405(client, method, path):
    response = client.request(method, f"{BASE}/{path}", json={})
    assert response.status_code == 405
    assert response.json()["detail"] == "Method Not Allowed"


def test_openapi_describes_every_route_parameter_and_error(client):
    doc = client.get("/openapi.json").json()
    paths = doc["paths"]
    ours = {p: ops for p, ops in paths.items() if not p.startswith("/api/v1/nni")}
    expected = {
        "/api/v1/experiments/{experiment_id}/trials": {"get", "post"},
        "/api/v1/experiments/{experiment_id}/changes": {"get"},
        "/api/v1/experiments/{experiment_id}/reports": {"get"},
        "/api/v1/experiments/{experiment_id}/search-space": {"put"},
        "/api/v1/experiments/{experiment_id}/import": {"post"},
        "/api/v1/experiments/{experiment_id}/imported": {"get"},
        "/api/v1/experiments/{experiment_id}/plots/curves": {"get"},
        "/api/v1/experiments/{experiment_id}/plots/best": {"get"},
        "/api/v1/experiments/{experiment_id}/plots/scatter": {"get"},
        "/api/v1/experiments/{experiment_id}/plots/parallel": {"get"},
        "/api/v1/experiments/{experiment_id}/plots/importance": {"get"},
    }
    for path, methods in expected.items():
        assert set(ours[path]) >= methods, path
    error = {"$ref": "#/components/schemas/ErrorOut"}
    for path, ops in ours.items():
        for method, op in ops.items():
            assert op.get("summary"), (method, path)
            for param in op.get("parameters", []):
                assert param.get("description"), (method, path, param["name"])
            for code, answer in op["responses"].items():
                assert answer.get("description"), (method, path, code)
                if code.startswith(("4", "5")):
                    assert answer["content"]["application/json"]["schema"] == error
    listed = {
        p["name"] for p in ours["/api/v1/experiments/{experiment_id}/trials"]["get"]["parameters"]
    }
    assert listed >= {"status", "source", "value", "duration", "param", "metric", "sort",
                      "limit", "offset", "changed_after", "reports"}  # fmt: skip
    post = ours["/api/v1/experiments/{experiment_id}/trials"]["post"]
    assert {"401", "403", "404", "409", "413", "415", "422"} <= set(post["responses"])
    assert "501" in ours["/api/v1/experiments/{experiment_id}/plots/importance"]["get"]["responses"]
    assert client.get("/docs").status_code == 200
