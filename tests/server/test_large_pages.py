"""Trial tables of a large experiment (issue 31): pages sorted by anything but the number, and
deep pages by number, come from a snapshot, in the order the database gives; the count of a
page by number is read again only when the change cursor moved."""

from __future__ import annotations

import pytest

from hyperlab.server import create_app
from hyperlab.server._listing import Snapshots, needs_snapshot
from hyperlab.server._overview import best_numbers, overview
from hyperlab.store import Key, Store, TrialFilter, TrialOrder
from hyperlab.trial import Mode, TrialStatus
from tests.server import SESSION_TOKEN, client_for
from tests.server.apidata import finish, write_experiment

N_TRIALS = 2500
EXP = "pages001"
BASE = f"/api/v1/experiments/{EXP}"


@pytest.fixture
def served(tmp_path):
    url = f"sqlite:///{tmp_path / 'pages.db'}"
    store = Store.open(url)
    trials = write_experiment(store, EXP, N_TRIALS, reports=1)
    with client_for(create_app(url, session_token=SESSION_TOKEN)) as client:
        yield client, store, trials
    store.close()


def _page(client, **params):
    response = client.get(f"{BASE}/trials", params=params)
    assert response.status_code == 200, response.text
    return [t["number"] for t in response.json()], int(response.headers["x-total-count"])


def test_which_pages_come_from_a_snapshot():
    every = TrialFilter()
    assert not needs_snapshot(every, TrialOrder(), 0)
    assert not needs_snapshot(every, TrialOrder(descending=True), 999)
    assert needs_snapshot(every, TrialOrder(), 1000)  # deep: the database would step over them
    assert needs_snapshot(every, TrialOrder(Key("value")), 0)  # a sort of every trial
    assert needs_snapshot(every, TrialOrder(Key("duration"), descending=True), 0)
    assert not needs_snapshot(TrialFilter(changed_after=3), TrialOrder(Key("value")), 0)


@pytest.mark.parametrize(
    ("sort", "key", "descending"),
    [
        ("value", Key("value"), False),
        ("-duration", Key("duration"), True),
        ("finished", Key("finished"), False),
        ("-number", Key("number"), True),
        ("number", Key("number"), False),
    ],
)
@pytest.mark.parametrize("offset", [0, 40, 1200, N_TRIALS - 30])
@pytest.mark.parametrize("status", [None, "SUCCEEDED"])
def test_a_snapshot_page_is_the_database_page(served, sort, key, descending, offset, status):
    client, store, _ = served
    where = TrialFilter(statuses=None if status is None else frozenset({TrialStatus(status)}))
    order = TrialOrder(key, descending=descending)
    sql = store.page_trials(EXP, where, order, limit=50, offset=offset)
    params = {"sort": sort, "limit": 50, "offset": offset}
    if status is not None:
        params["status"] = status
    assert _page(client, **params) == (sql.numbers, sql.total)


def test_the_count_of_a_page_by_number_follows_the_cursor(served):
    client, store, trials = served
    every = TrialFilter()
    cursor = store.change_cursor(EXP)
    assert store.page_trials(EXP, every, TrialOrder(), limit=5, counted=(cursor, 7)).total == 7
    assert store.page_trials(EXP, every, TrialOrder(), limit=5, counted=(cursor - 1, 7)).total == (
        N_TRIALS
    )
    succeeded = {"status": "SUCCEEDED", "limit": 10}
    _, before = _page(client, **succeeded)
    assert _page(client, **succeeded)[1] == before  # from the memo
    waiting = next(t for t in trials if t.status is TrialStatus.WAITING)
    finish(store, waiting, 0.5)  # the cursor moves: counted again
    numbers, after = _page(client, **succeeded)
    assert after == before + 1
    assert after == store.count_trials(
        EXP, TrialFilter(statuses=frozenset({TrialStatus.SUCCEEDED}))
    )
    assert (
        numbers
        == store.page_trials(
            EXP, TrialFilter(statuses=frozenset({TrialStatus.SUCCEEDED})), TrialOrder(), limit=10
        ).numbers
    )


@pytest.mark.parametrize("mode", [Mode.MIN, Mode.MAX])
def test_the_best_trials_are_ranked_once_per_snapshot(served, mode):
    _, store, trials = served
    record = store.get_experiment(EXP)
    snapshot = overview(Snapshots(), store, record)
    done = [t for t in trials if t.status is TrialStatus.SUCCEEDED and t.value is not None]
    expected = [t.number for t in sorted(done, key=lambda t: (mode.sign * t.value, t.number))]
    assert best_numbers(snapshot, mode, 10) == expected[:10]
    assert best_numbers(snapshot, mode, 3) == expected[:3]
    assert best_numbers(snapshot, mode, len(expected) + 5) == expected
