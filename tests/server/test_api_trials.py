"""The trial table (filters, sorts, pages) and the incremental reads (changes after a cursor,
reports after an id), against a Python reference, on SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from hyperlab.server import create_app
from hyperlab.store import Store
from hyperlab.trial import Mode, Report, Trial, TrialStatus
from tests.server import SESSION_TOKEN, client_for
from tests.server.apidata import (
    BACKENDS,
    Ref,
    duration,
    everything,
    finish,
    module_storage,
    number_of,
    option_index,
    record,
    write_experiment,
)

N_TRIALS = 400
EXP = "tbl00001"


@pytest.fixture(scope="module", params=BACKENDS)
def served(request, tmp_path_factory):
    """(client, store, trials written) over one experiment of 400 trials; the store stays
    open so that tests can write more, as a driver would."""
    with module_storage(request.param, tmp_path_factory.mktemp("trials"), request) as url:
        store = Store.open(url)
        trials = write_experiment(store, EXP, N_TRIALS)
        with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
            yield client, store, trials
        store.close()


def _get(client, **params: Any) -> tuple[list[int], int]:
    response = client.get(f"/api/v1/experiments/{EXP}/trials", params={"limit": 10_000, **params})
    assert response.status_code == 200, response.text
    return [t["number"] for t in response.json()], int(response.headers["x-total-count"])


def _lr(t):
    return number_of(t.params["lr"])


def _number(t):
    return t.number


CASES = {
    "all by number": ({}, Ref(everything, _number)),
    "newest first": ({"sort": "-number"}, Ref(everything, _number, descending=True)),
    "statuses": (
        {"status": "succeeded,Early_Stopped"},
        Ref(
            lambda t: t.status in (TrialStatus.SUCCEEDED, TrialStatus.EARLY_STOPPED),
            _number,
        ),
    ),
    "added by hand": ({"source": "custom"}, Ref(lambda t: t.source == "custom", _number)),
    "from the tuner": ({"source": "tuner"}, Ref(lambda t: t.source is None, _number)),
    "value range, best first": (
        {"value": "1.5..2.5", "sort": "value"},
        Ref(lambda t: t.value is not None and 1.5 <= t.value <= 2.5, lambda t: t.value),
    ),
    "worst first, missing last": ({"sort": "-value"}, Ref(everything, lambda t: t.value, True)),
    "duration": (
        {"duration": "..50", "sort": "-duration"},
        Ref(lambda t: (duration(t) or 99) <= 50, duration, descending=True),
    ),
    "lr range by lr": (
        {"param": "lr:1e-4..1e-2", "sort": "param.lr"},
        Ref(lambda t: 1e-4 <= t.params["lr"] <= 1e-2, _lr),
    ),
    "one lr bound, descending": (
        {"param": "lr:0.001..", "sort": "-param.lr"},
        Ref(lambda t: t.params["lr"] >= 0.001, _lr, descending=True),
    ),
    "exact integer": ({"param": "layers:4"}, Ref(lambda t: t.params["layers"] == 4, _number)),
    "choices incl. null": (
        {"param": "opt:adam,null", "sort": "param.dropout"},
        Ref(lambda t: t.params["opt"] in ("adam", None), lambda t: t.params["dropout"]),
    ),
    "choices as JSON": (
        {"param": 'opt:["sgd", null]'},
        Ref(lambda t: t.params["opt"] in ("sgd", None), _number),
    ),
    "sorted in the space's option order": (
        {"sort": "-param.opt"},
        Ref(everything, lambda t: option_index(t.params["opt"]), descending=True),
    ),
    "nested option by name": (
        {"param": "block:skip", "sort": "param.block"},
        Ref(lambda t: t.params["block"]["_name"] == "skip", lambda t: 1),
    ),
    "metric range skips NaN and strings": (
        {"metric": "acc:0.3..", "sort": "-metric.acc"},
        Ref(
            lambda t: (number_of(t.metrics.get("acc")) or 0) >= 0.3,
            lambda t: number_of(t.metrics.get("acc")),
            descending=True,
        ),
    ),
    "a metric that is text sorts as missing": (
        {"sort": "metric.note"},
        Ref(everything, lambda t: None),
    ),
    "everything at once": (
        {
            "status": "SUCCEEDED",
            "param": ["lr:..0.01", "opt:sgd,adam,rmsprop"],
            "metric": "loss:1..",
            "sort": "finished",
        },
        Ref(
            lambda t: (
                t.status is TrialStatus.SUCCEEDED
                and t.params["lr"] <= 0.01
                and t.params["opt"] is not None
                and t.metrics["loss"] >= 1
            ),
            lambda t: t.finished_at,
        ),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_filters_and_sorts_match_the_reference(served, case):
    client, _, trials = served
    params, ref = CASES[case]
    expected = ref.numbers(trials)
    numbers, total = _get(client, **params)
    assert total == len(expected)
    assert numbers == expected


@pytest.mark.parametrize("case", ["all by number", "worst first, missing last", "lr range by lr"])
def test_pages_are_slices_of_the_whole_table(served, case):
    client, _, trials = served
    params, ref = CASES[case]
    expected = ref.numbers(trials)
    pages = [
        _get(client, **params, limit=37, offset=offset)[0] for offset in range(0, N_TRIALS, 37)
    ]
    assert [n for page in pages for n in page] == expected
    assert _get(client, **params, offset=10_000) == ([], len(expected))


def test_a_page_holds_whole_trials_and_the_change_cursor(served):
    client, store, trials = served
    response = client.get(
        f"/api/v1/experiments/{EXP}/trials",
        params={"limit": 2, "offset": 13, "reports": "true"},
    )
    assert response.headers["x-change-cursor"] == str(store.change_cursor(EXP))
    first = response.json()[0]
    trial = trials[13]
    assert first["params"] == trial.params and first["status"] == trial.status.value
    assert first["source"] == "custom" and first["attempt"] == 2
    assert {(r["attempt"], r["step"]) for r in first["reports"]} == {
        (a, s) for a in (1, 2) for s in range(3)
    }
    assert client.get(f"/api/v1/experiments/{EXP}/trials").json()[4]["source"] == "custom"
    assert len(client.get(f"/api/v1/experiments/{EXP}/trials").json()) == 100  # the default


def test_experiment_counts_best_and_cursor_come_from_sql(served):
    client, store, trials = served
    body = client.get(f"/api/v1/experiments/{EXP}").json()
    succeeded = [t for t in trials if t.status is TrialStatus.SUCCEEDED]
    best = Mode.MIN.best(succeeded)
    assert body["n_trials"] == N_TRIALS
    assert body["counts"]["SUCCEEDED"] == len(succeeded)
    assert body["best"]["number"] == best.number
    assert body["best"]["value"] == pytest.approx(best.value)
    assert body["change_cursor"] == store.change_cursor(EXP)


def test_a_snapshot_table_follows_later_changes(served):
    """A table read from a snapshot (sorted by a parameter) is read again only for the
    trials changed since, and merged: the answer is the same as a fresh read."""
    client, store, trials = served
    params = {"param": "lr:..0.01", "sort": "-param.lr", "status": "SUCCEEDED"}
    before, _ = _get(client, **params)
    waiting = [t for t in trials if t.status is TrialStatus.WAITING and t.params["lr"] <= 0.01]
    done = [finish(store, t, 0.5) for t in waiting[:3]]
    after, total = _get(client, **params)
    assert set(after) == set(before) | {t.number for t in done}
    for trial in done:
        trials[trial.number] = trial
    ref = Ref(lambda t: t.status is TrialStatus.SUCCEEDED and t.params["lr"] <= 0.01, _lr, True)
    assert after == ref.numbers(trials) and total == len(after)
    with client_for(create_app(store, session_token=SESSION_TOKEN)) as fresh:  # no snapshot
        assert _get(fresh, **params) == (after, total)


def test_changes_after_a_cursor_hold_every_changed_trial(served):
    client, store, trials = served
    base = f"/api/v1/experiments/{EXP}/changes"
    start = client.get(base, params={"after": 0, "limit": 50}).json()
    assert start["more"] is True and len(start["trials"]) == 50
    cursor = client.get(f"/api/v1/experiments/{EXP}").json()["change_cursor"]
    quiet = client.get(base, params={"after": cursor}).json()
    assert (quiet["trials"], quiet["cursor"], quiet["more"]) == ([], cursor, False)

    running = [t for t in trials if t.status is TrialStatus.RUNNING][:4]
    for trial in running:
        trials[trial.number] = finish(store, trial, -1.0)  # the new best
    changed = client.get(base, params={"after": cursor}).json()
    assert [t["number"] for t in changed["trials"]] == [t.number for t in running]
    assert all(t["status"] == "SUCCEEDED" for t in changed["trials"])
    assert changed["cursor"] == store.change_cursor(EXP) and changed["more"] is False
    assert changed["best"]["value"] == -1.0
    assert changed["counts"]["SUCCEEDED"] == sum(t.status is TrialStatus.SUCCEEDED for t in trials)
    first = client.get(base, params={"after": cursor, "limit": 1}).json()
    assert [t["number"] for t in first["trials"]] == [running[0].number] and first["more"]
    rest = client.get(base, params={"after": first["cursor"]}).json()
    assert [t["number"] for t in rest["trials"]] == [t.number for t in running[1:]]
    listed, _ = _get(client, changed_after=cursor)
    assert listed == sorted(t.number for t in running)


def test_reports_after_an_id(served):
    client, store, trials = served
    base = f"/api/v1/experiments/{EXP}/reports"
    first = client.get(base, params={"limit": 5}).json()
    assert first["more"] is True and len(first["reports"]) == 5
    ids = [r["id"] for r in first["reports"]]
    assert ids == sorted(ids) and first["cursor"] == ids[-1]
    following = client.get(base, params={"after": first["cursor"], "limit": 5}).json()
    assert following["reports"][0]["id"] > first["cursor"]

    latest = client.get(base, params={"after": 0, "limit": 10_000}).json()
    while latest["more"]:
        latest = client.get(base, params={"after": latest["cursor"], "limit": 10_000}).json()
    cursor = latest["cursor"]
    running = next(t for t in trials if t.status is TrialStatus.PAUSED)
    store.add_report(EXP, running.number, Report(99, {"loss": 0.25}, 1.0, running.attempt))
    store.add_report(EXP, 0, Report(98, {"loss": 0.5}, 1.0, 1))
    store.flush()
    new = client.get(base, params={"after": cursor}).json()
    assert [(r["number"], r["step"], r["metrics"]) for r in new["reports"]] == [
        (running.number, 99, {"loss": 0.25}),
        (0, 98, {"loss": 0.5}),
    ]
    only = client.get(base, params={"after": cursor, "trials": f"{running.number}"}).json()
    assert [r["number"] for r in only["reports"]] == [running.number]
    assert only["cursor"] == only["reports"][-1]["id"]
    assert client.get(base, params={"after": new["cursor"]}).json() == {
        "experiment_id": EXP,
        "cursor": new["cursor"],
        "more": False,
        "reports": [],
    }


ODD_SPACE = {
    "shape": {"_type": "choice", "_value": [[1, 2], [3, 4], {"a": 1}]},
    "flag": {"_type": "choice", "_value": [True, False]},
    "width": {"_type": "choice", "_value": [16, 32.5, "wide", "NaN"]},
}


@pytest.mark.parametrize("backend", BACKENDS)
def test_choices_of_lists_bools_numbers_and_odd_strings(backend, new_storage):
    url = new_storage(backend)
    store = Store.open(url)
    rec = dataclasses.replace(record("odd00001"), space=ODD_SPACE)
    store.create_experiment(rec)
    options = [(s, f, w) for s in ([1, 2], [3, 4], {"a": 1}) for f in (True, False)
               for w in (16, 32.5, "wide", "NaN")]  # fmt: skip
    for number, (shape, flag, width) in enumerate(options):
        params = {"shape": shape, "flag": flag, "width": width}
        store.put_trial(Trial("odd00001", number, params, TrialStatus.SUCCEEDED, value=number))
    store.flush()
    base = "/api/v1/experiments/odd00001/trials"
    with client_for(create_app(store, session_token=SESSION_TOKEN)) as client:

        def numbers(**params):
            response = client.get(base, params={"limit": 1000, **params})
            assert response.status_code == 200, response.text
            return [t["number"] for t in response.json()]

        def where(test):
            return [n for n, o in enumerate(options) if test(*o)]

        assert numbers(param="shape:[[3,4]]") == where(lambda s, f, w: s == [3, 4])
        assert numbers(param='shape:[[1,2],{"a":1}]') == where(lambda s, f, w: s != [3, 4])
        assert numbers(param="flag:false") == where(lambda s, f, w: f is False)
        assert numbers(param="width:32.5,NaN") == where(lambda s, f, w: w in (32.5, "NaN"))
        assert numbers(param="width:16..40") == where(lambda s, f, w: w in (16, 32.5))
        by_width = numbers(sort="-param.width")
        assert [options[n][2] for n in by_width] == sorted(
            (o[2] for o in options), key=lambda w: -[16, 32.5, "wide", "NaN"].index(w)
        )
        assert numbers(sort="param.shape", param="flag:true")[:4] == where(
            lambda s, f, w: s == [1, 2] and f
        )
    store.close()
