"""The REST API over 100,000 trials (a SQLite store written directly, once per module): pages
deep into every order, JSON filters, incremental reads, and plots that sample and say so.
Speed is measured by ``benchmarks/api_speed.py``, not asserted here."""

from __future__ import annotations

import random
import time

import pytest

from hyperlab.server import create_app
from hyperlab.store import Store
from hyperlab.trial import TrialStatus
from tests.server import SESSION_TOKEN, client_for
from tests.server.apidata import STATUSES, finish, make_trial, write_experiment

N_TRIALS = 100_000
EXP = "big00001"
BASE = f"/api/v1/experiments/{EXP}"


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """(client, store, reference) over 100,000 trials; the reference holds per-trial facts
    the tests check against (the trials themselves are not kept: they would weigh 100 MB)."""
    url = f"sqlite:///{tmp_path_factory.mktemp('big') / 'big.db'}"
    store = Store.open(url)
    trials = write_experiment(store, EXP, N_TRIALS, reports=1)
    reference = {
        "succeeded": sum(t.status is TrialStatus.SUCCEEDED for t in trials),
        "adam_low_lr": sorted(
            t.number for t in trials if t.params["opt"] == "adam" and t.params["lr"] <= 1e-3
        ),
        "waiting": [t for t in trials if t.status is TrialStatus.WAITING][:5],
    }
    del trials
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
        yield client, store, reference
    store.close()


def _page(client, **params):
    response = client.get(f"{BASE}/trials", params=params)
    assert response.status_code == 200, response.text
    return [t["number"] for t in response.json()], int(response.headers["x-total-count"])


@pytest.mark.parametrize("sort", ["value", "-value", "-duration", "finished", "param.lr"])
def test_deep_pages_continue_shallow_ones(big, sort):
    """Shallow pages come from SQL, deep ones (and JSON sorts) from a snapshot sorted by
    NumPy: both give the same order."""
    client, _, _ = big
    shallow, total = _page(client, sort=sort, offset=990, limit=20)
    deep, deep_total = _page(client, sort=sort, offset=1000, limit=10)
    assert total == deep_total == N_TRIALS
    assert deep == shallow[10:]
    last, _ = _page(client, sort=sort, offset=N_TRIALS - 5, limit=10)
    assert len(last) == 5


def test_json_filters_at_scale(big):
    client, _, reference = big
    numbers, total = _page(client, param=["opt:adam", "lr:..1e-3"], limit=10_000)
    assert total == len(reference["adam_low_lr"])
    assert numbers == reference["adam_low_lr"][:10_000]


def test_new_trials_reach_a_json_table_and_the_changes(big):
    client, store, reference = big
    cursor = client.get(BASE).json()["change_cursor"]
    params = {"param": "lr:1e-5..1e-1", "sort": "-param.lr", "limit": 5}
    _, before = _page(client, **params)
    added = [make_trial(EXP, N_TRIALS + i, random.Random(i)) for i in range(3)]
    for trial in added:
        store.put_trial(trial)
    store.flush()
    done = [finish(store, t, 0.5, at=time.time()) for t in reference["waiting"]]
    _, after = _page(client, **params)
    assert after == before + len(added)
    changes = client.get(f"{BASE}/changes", params={"after": cursor}).json()
    assert [t["number"] for t in changes["trials"]] == [t.number for t in added + done]
    assert changes["n_trials"] == N_TRIALS + len(added)


def test_catching_up_on_changes_comes_in_batches(big):
    client, _, _ = big
    first = client.get(f"{BASE}/changes", params={"after": 0, "limit": 1000}).json()
    assert first["more"] is True and len(first["trials"]) == 1000
    second = client.get(f"{BASE}/changes", params={"after": first["cursor"], "limit": 1000})
    numbers = {t["number"] for t in first["trials"]} | {
        t["number"] for t in second.json()["trials"]
    }
    assert len(numbers) == 2000


def test_plots_sample_and_say_so(big):
    client, _, reference = big
    scatter = client.get(f"{BASE}/plots/scatter", params={"x": "param.lr"}).json()
    assert scatter["sampled"] is True and 1500 <= len(scatter["numbers"]) <= 2000
    assert scatter["total"] > 50_000
    parallel = client.get(f"{BASE}/plots/parallel", params={"max_points": 500}).json()
    assert parallel["sampled"] is True and len(parallel["numbers"]) <= 500
    assert len(parallel["axes"]) == 6
    best = client.get(f"{BASE}/plots/best").json()
    assert best["n_trials"] >= reference["succeeded"] and len(best["points"]) < 100
    curves = client.get(f"{BASE}/plots/curves", params={"top": 10}).json()["curves"]
    assert len(curves) == 10 and all(c["status"] == "SUCCEEDED" for c in curves)
    importance = client.get(f"{BASE}/plots/importance").json()
    assert importance["sampled"] is True and importance["n_used"] <= 2000
    assert importance["params"][0]["name"] == "lr"


def test_counts_at_scale(big):
    client, _, _ = big
    body = client.get(BASE).json()
    assert body["n_trials"] >= N_TRIALS
    share = STATUSES.count(TrialStatus.SUCCEEDED) / len(STATUSES)
    assert body["counts"]["SUCCEEDED"] == pytest.approx(N_TRIALS * share, rel=0.01)
