"""Plot data computed on the server: curves, best so far, scatter, parallel coordinates and
parameter importance, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

from hyperlab.server import create_app
from hyperlab.store import Store
from hyperlab.trial import Mode, Report, TrialStatus
from tests.server import SESSION_TOKEN, client_for
from tests.server.apidata import (
    BACKENDS,
    OPTIONS,
    T0,
    finish,
    make_trial,
    module_storage,
    record,
    write_experiment,
)

N_TRIALS = 300
EXP = "plt00001"
MAXIMISED = "plt00002"


@pytest.fixture(scope="module", params=BACKENDS)
def served(request, tmp_path_factory):
    """(client, store, trials) of a minimised experiment; a maximised one beside it."""
    with module_storage(request.param, tmp_path_factory.mktemp("plots"), request) as url:
        store = Store.open(url)
        trials = write_experiment(store, EXP, N_TRIALS)
        write_experiment(store, MAXIMISED, 60, mode=Mode.MAX, seed=2)
        long = next(t for t in trials if t.status is TrialStatus.SUCCEEDED and t.number > 100)
        for step in range(3, 1003):  # a long, wavy curve
            store.add_report(EXP, long.number, Report(step, {"loss": np.sin(step / 50)}, T0, 1))
        store.flush()
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            yield client, store, trials, long
        store.close()


def _plot(client, name: str, experiment: str = EXP, **params):
    response = client.get(f"/api/v1/experiments/{experiment}/plots/{name}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_curves_of_chosen_trials_keep_the_current_attempt_and_mark_stops(served):
    client, _, trials, _ = served
    stopped = next(t for t in trials if t.status is TrialStatus.EARLY_STOPPED and t.attempt == 2)
    paused = next(t for t in trials if t.status is TrialStatus.PAUSED)
    body = _plot(client, "curves", trials=f"{stopped.number},{paused.number},0")
    assert body["metric"] == "loss" and body["mode"] == "min"
    curves = {c["number"]: c for c in body["curves"]}
    assert list(curves) == [stopped.number, paused.number, 0]
    first = curves[stopped.number]
    assert first["status"] == "EARLY_STOPPED" and first["attempt"] == 2
    assert first["steps"] == [0, 1, 2] and first["stopped_at_step"] == 2
    expected = [stopped.value + 1.0 / (s + 1) + 1 for s in range(3)]  # attempt 2's reports
    assert first["values"] == pytest.approx(expected)
    assert curves[paused.number]["stopped_at_step"] == 2
    assert curves[0]["stopped_at_step"] is None and not curves[0]["downsampled"]


def test_long_curves_are_decimated_keeping_their_shape(served):
    client, _, _, long = served
    body = _plot(client, "curves", trials=str(long.number), max_points=40)
    (curve,) = body["curves"]
    assert curve["downsampled"] is True and curve["n_points"] == 1003
    assert len(curve["steps"]) <= 40
    assert curve["steps"][0] == 0 and curve["steps"][-1] == 1002
    assert curve["steps"] == sorted(curve["steps"])
    (whole,) = _plot(client, "curves", trials=str(long.number), max_points=10_000)["curves"]
    assert whole["downsampled"] is False and len(whole["values"]) == 1003
    assert min(curve["values"]) == min(whole["values"])
    assert max(curve["values"]) == max(whole["values"])
    kept = list(zip(curve["steps"], curve["values"], strict=True))
    assert set(kept) <= set(zip(whole["steps"], whole["values"], strict=True))
    troughs = [s for s, v in kept if v < -0.99]
    assert len(troughs) >= 3  # each trough of the wave is kept


def test_top_curves_are_the_best_succeeded_trials(served):
    client, _, trials, _ = served
    succeeded = Mode.MIN.ranked([t for t in trials if t.status is TrialStatus.SUCCEEDED])
    body = _plot(client, "curves", top=3)
    assert [c["number"] for c in body["curves"]] == [t.number for t in succeeded[:3]]
    assert len(_plot(client, "curves")["curves"]) == 10  # the default
    both = _plot(client, "curves", trials="5", top=2)
    assert [c["number"] for c in both["curves"]] == [5] + [t.number for t in succeeded[:2]]
    maxed = _plot(client, "curves", MAXIMISED, top=1)
    assert maxed["mode"] == "max" and maxed["curves"][0]["value"] == max(
        c["value"] for c in _plot(client, "curves", MAXIMISED, top=100)["curves"]
    )
    assert _plot(client, "curves", metric="nope", top=1)["curves"][0]["steps"] == []


@pytest.mark.parametrize("x", ["number", "time"])
def test_best_so_far_lists_each_improvement(served, x):
    client, _, trials, _ = served
    body = _plot(client, "best", x=x)
    succeeded = [t for t in trials if t.status is TrialStatus.SUCCEEDED]
    order = sorted(succeeded, key=lambda t: t.number if x == "number" else t.finished_at)
    best, expected = None, []
    for trial in order:
        if best is None or trial.value < best:
            best = trial.value
            expected.append(trial.number)
    assert [p["number"] for p in body["points"]] == expected
    assert body["n_trials"] == len(succeeded) and body["downsampled"] is False
    last = order[-1].number if x == "number" else order[-1].finished_at
    assert body["last_x"] == pytest.approx(last)
    thinned = _plot(client, "best", x=x, max_points=2)
    assert [p["number"] for p in thinned["points"]] == [expected[0], expected[-1]]
    assert thinned["downsampled"] is (len(expected) > 2)


def test_best_so_far_follows_new_trials(served):
    client, store, trials, _ = served
    before = _plot(client, "best")
    waiting = next(t for t in trials if t.status is TrialStatus.WAITING)
    trials[waiting.number] = finish(store, waiting, -5.0)
    after = _plot(client, "best")
    assert after["points"][-1] == {"x": waiting.number, "value": -5.0, "number": waiting.number}
    assert after["n_trials"] == before["n_trials"] + 1


def test_scatter_gives_two_quantities_of_the_filtered_trials(served):
    client, _, trials, _ = served
    body = _plot(client, "scatter", x="param.lr", status="SUCCEEDED", param="opt:adam")
    kept = [t for t in trials if t.status is TrialStatus.SUCCEEDED and t.params["opt"] == "adam"]
    assert body["total"] == len(kept) and body["sampled"] is False
    assert body["numbers"] == [t.number for t in kept]
    lr, value = body["axes"]
    assert (lr["key"], lr["kind"], lr["scale"]) == ("param.lr", "number", "log")
    assert lr["values"] == pytest.approx([t.params["lr"] for t in kept])
    assert value["key"] == "value" and value["values"] == pytest.approx([t.value for t in kept])

    choice = _plot(client, "scatter", x="param.opt", y="metric.acc")["axes"][0]
    assert choice["kind"] == "choice" and choice["options"] == list(OPTIONS)
    assert set(choice["values"]) <= set(OPTIONS)


def test_scatter_and_parallel_sample_evenly_beyond_max_points(served):
    client, _, _, _ = served
    body = _plot(client, "scatter", x="number", y="param.dropout", max_points=50)
    assert body["total"] == N_TRIALS and body["sampled"] is True
    assert 40 <= len(body["numbers"]) <= 50
    assert body == _plot(client, "scatter", x="number", y="param.dropout", max_points=50)
    assert np.ptp(body["numbers"]) > 0.8 * N_TRIALS  # spread over the whole run


def test_parallel_has_an_axis_per_parameter_then_the_target(served):
    client, _, trials, _ = served
    body = _plot(client, "parallel", status="SUCCEEDED")
    assert [a["key"] for a in body["axes"]] == [
        "param.lr",
        "param.layers",
        "param.opt",
        "param.block",
        "param.dropout",
        "value",
    ]
    block = body["axes"][3]
    assert block["kind"] == "choice" and block["options"] == ["conv", "skip"]
    by_number = {t.number: t for t in trials}
    assert block["values"] == [by_number[n].params["block"]["_name"] for n in body["numbers"]]
    some = _plot(client, "parallel", params="dropout,opt", target="metric.acc", max_points=20)
    assert [a["key"] for a in some["axes"]] == ["param.dropout", "param.opt", "metric.acc"]
    assert some["sampled"] is True and len(some["numbers"]) <= 20
    assert None not in some["axes"][-1]["values"]  # trials without the target are left out


def test_importance_finds_the_parameter_that_drives_the_objective(served):
    pytest.importorskip("sklearn", reason="importance needs the importance extra, not installed")
    client, _, _, _ = served
    body = _plot(client, "importance")
    assert body["method"] == "random_forest" and body["target"] == "value"
    names = [p["name"] for p in body["params"]]
    assert names[0] == "lr" and set(names) == {"lr", "layers", "opt", "block", "dropout"}
    assert sum(p["importance"] for p in body["params"]) == pytest.approx(1.0)
    assert body["n_used"] == body["n_finished"] and body["sampled"] is False
    assert _plot(client, "importance") == body  # cached by the number of succeeded trials
    acc = _plot(client, "importance", target="metric.acc")
    assert acc["target"] == "metric.acc" and acc["params"][0]["name"] == "lr"


def test_importance_without_scikit_learn_names_the_extra(served, monkeypatch):
    client, store, _, _ = served
    monkeypatch.setitem(sys.modules, "sklearn.ensemble", None)
    store.create_experiment(record("plt00003"))
    store.put_trial(make_trial("plt00003", 0, random.Random(0)))
    store.flush()
    response = client.get("/api/v1/experiments/plt00003/plots/importance")
    assert response.status_code == 501
    assert "pip install 'hyperlab[importance]'" in response.json()["detail"]


def test_importance_of_huge_targets_is_that_of_the_same_targets_scaled_down():
    pytest.importorskip("sklearn")
    from hyperlab.server.importance import fanova_importances, importances
    from hyperlab.space import SearchSpace

    space = SearchSpace.from_nni(
        {"x": {"_type": "uniform", "_value": [0, 1]}, "y": {"_type": "uniform", "_value": [0, 1]}}
    )
    rng = random.Random(3)
    params = [{"x": rng.random(), "y": rng.random()} for _ in range(40)]
    targets = [p["x"] + 0.2 * p["y"] for p in params]
    for measure in (importances, fanova_importances):
        plain, _ = measure(space, params, targets, seed=1)
        huge, _ = measure(space, params, [-1e308 + 1e307 * t for t in targets], seed=1)
        assert all(np.isfinite(v) for v in huge.values()), huge
        assert huge == pytest.approx(plain, abs=0.05) and huge["x"] > huge["y"]
