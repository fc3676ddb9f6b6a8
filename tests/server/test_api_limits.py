"""One request on the largest experiment hyperlab allows does bounded work: every plot and
listing samples or pages, so it answers with a bounded payload, and says how it was bounded (the
time and memory goals, 2 s and 300 MB, are measured by ``benchmarks/api_limits.py``, not here).
The experiment's search space is at every limit of ``hyperlab.space`` and its trials are written
directly through the store (``tests.server.largest``); a space beyond a limit is a 422 from the
API. Before the limits, a 52 MB space was accepted and one request for its parallel-coordinates
plot took 70 s of CPU and 4.3 GB of memory."""

from __future__ import annotations

import pytest

from hyperlab.server import create_app
from hyperlab.server._plots import MAX_AXES
from hyperlab.server._trials import MAX_PAGE_VALUES
from hyperlab.server.importance import MAX_TRIALS
from hyperlab.store import Store
from tests.server import SESSION_TOKEN, client_for, start_live
from tests.server.largest import BIG, write_largest

EXP = "lim00001"
N_TRIALS = 1200
MAX_BYTES = 8_000_000

REQUESTS = [
    ("plots/scatter", {"x": f"param.{BIG}", "max_points": 20_000}),
    ("plots/scatter", {"x": "param.p0001", "y": "metric.acc", "max_points": 20_000}),
    ("plots/parallel", {"max_points": 20_000}),
    ("plots/parallel", {"target": "metric.acc"}),
    ("plots/importance", {}),
    ("plots/curves", {"top": 100}),
    ("plots/best", {"max_points": 20_000}),
    ("trials", {"limit": 10_000}),
    ("trials", {"limit": 10_000, "offset": 1000}),
    ("trials", {"sort": "-param.p0000", "limit": 100}),
    ("trials", {"param": f"{BIG}:option-00001,option-09999"}),
    ("changes", {"limit": 10_000}),
    ("reports", {"limit": 10_000}),
    ("", {}),
]


@pytest.fixture(scope="module")
def largest(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('largest') / 'largest.db'}"
    store = Store.open(url)
    write_largest(store, EXP, N_TRIALS)
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
        yield client
    store.close()


@pytest.mark.slow
@pytest.mark.parametrize(("path", "params"), REQUESTS)
def test_each_plot_and_listing_answers_with_a_bounded_payload(largest, path, params):
    response = largest.get(f"/api/v1/experiments/{EXP}/{path}".rstrip("/"), params=params)
    if response.status_code == 501:  # importance without scikit-learn
        pytest.skip(response.json()["detail"])
    assert response.status_code == 200, response.text
    assert len(response.content) < MAX_BYTES, f"{path} {params}: {len(response.content):,} B"


@pytest.mark.slow
def test_the_answers_say_how_they_were_bounded(largest):
    base = f"/api/v1/experiments/{EXP}"
    n_params = len(largest.get(base).json()["space"])
    page = largest.get(f"{base}/trials", params={"limit": 10_000})
    assert int(page.headers["x-total-count"]) == N_TRIALS
    assert len(page.json()) == MAX_PAGE_VALUES // n_params  # 202: go on from there
    changes = largest.get(f"{base}/changes", params={"limit": 10_000}).json()
    assert changes["more"] is True and len(changes["trials"]) == MAX_PAGE_VALUES // n_params
    parallel = largest.get(f"{base}/plots/parallel", params={"max_points": 20_000}).json()
    assert len(parallel["axes"]) == MAX_AXES + 1  # the first 50 parameters and the value
    assert parallel["sampled"] is True and len(parallel["numbers"]) <= parallel["max_points"]
    assert parallel["max_points"] < 20_000
    scatter = largest.get(f"{base}/plots/scatter", params={"x": f"param.{BIG}"}).json()
    (axis, _) = scatter["axes"]
    assert axis["kind"] == "choice" and len(axis["options"]) == 10_000
    assert all(value in axis["options"] for value in axis["values"])
    importance = largest.get(f"{base}/plots/importance")
    if importance.status_code == 200:
        assert 0 < importance.json()["n_used"] < MAX_TRIALS


def test_a_space_beyond_a_limit_is_a_422_naming_the_parameter(tmp_path):
    url = f"sqlite:///{tmp_path / 'live.db'}"
    exp = start_live(url, tmp_path / "work", max_trials=3)
    try:
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            huge = {"x": {"_type": "choice", "_value": list(range(1_000_000))}}
            response = client.put(f"/api/v1/experiments/{exp.id}/search-space", json=huge)
            assert response.status_code == 422, response.text
            assert (
                "x: a choice has at most 10,000 options, got 1,000,000"
                in (response.json()["detail"])
            )
            nni = client.put(
                "/api/v1/nni/experiment",
                params={"update_type": "SEARCH_SPACE", "experiment_id": exp.id},
                json={"params": {"searchSpace": huge}},
            )
            assert nni.status_code == 422, nni.text
            assert "x: a choice has at most 10,000 options" in nni.json()["error"]
    finally:
        exp.stop()
        exp.wait(timeout=30)


@pytest.mark.slow
def test_nni_listings_stream_every_trial_a_batch_at_a_time(largest):
    # NNI's API has no paging: its listings are sent as the store's batches are read, so a
    # request holds one batch of parameters (benchmarks/api_limits.py measures the memory)
    query = {"experiment_id": EXP}
    jobs = largest.get("/api/v1/nni/trial-jobs", params=query)
    assert jobs.status_code == 200 and jobs.headers["content-type"] == "application/json"
    assert [job["sequenceId"] for job in jobs.json()] == list(range(N_TRIALS))
    failed = largest.get("/api/v1/nni/trial-jobs", params={**query, "status": "FAILED"}).json()
    assert [job["sequenceId"] for job in failed] == list(range(9, N_TRIALS, 10))
    exported = largest.get("/api/v1/nni/export-data", params=query).json()
    assert len(exported) == N_TRIALS - len(failed)
    statistics = largest.get("/api/v1/nni/job-statistics", params=query).json()
    assert {s["trialJobStatus"]: s["trialJobNumber"] for s in statistics} == {
        "SUCCEEDED": N_TRIALS - len(failed),
        "FAILED": len(failed),
    }
    records = largest.get("/api/v1/nni/metric-data", params=query).json()
    assert len(records) == 3 * N_TRIALS + N_TRIALS - len(failed)  # 3 reports, a final each
