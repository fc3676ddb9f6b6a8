"""Defect 10, a database restart ended the run: ``pg_ctl restart`` (about 2 s) mid-run made the
driver exit 1 ("cannot write 6 pending rows (kept for the next flush)": there was no next
flush) and its trials were killed; so did a SQLite lock held past the busy timeout.

The driver rides such an outage out for ``store_outage`` seconds: its trials run on, what they
send waits in memory, the group commit is tried again with backoff, and the experiment ends
DONE with every trial once, each with all its reports. Past the window the driver stops with
``StoreUnavailable``, whose message gives the command that continues the experiment.

PostgreSQL is a server of the test's own (``throwaway_postgres``), restarted or stopped under
the running experiment; SQLite's lock is another connection's ``BEGIN EXCLUSIVE``, held for 40 s
(past the 30 s busy timeout).
"""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
import time
from collections import Counter
from collections.abc import Iterator

import pytest

import hyperlab
from hyperlab import ExperimentStatus, TrialStatus
from hyperlab.cli import main
from hyperlab.errors import StoreError, StoreUnavailable
from hyperlab.store import Store
from tests.faults import objectives
from tests.faults.harness import (
    check_attempts,
    check_no_worker_left,
    spawn,
    trials_or_none,
    wait_for,
)
from tests.faults.throwaway_postgres import ThrowawayPostgres
from tests.services import missing

pytestmark = pytest.mark.faults

TRIALS = 6
REPORTS = 20  # objectives.one_second: twenty reports 50 ms apart, then its result
SPACE = {"x": hyperlab.uniform(0, 1)}


@pytest.fixture(scope="module")
def postgres_server() -> Iterator[ThrowawayPostgres]:
    """A PostgreSQL server of this module's own, which its tests stop and restart."""
    bin_dir, user, why = ThrowawayPostgres.find()
    if bin_dir is None or why:
        missing(f"cannot run a throw-away PostgreSQL server: {why}")
    server = ThrowawayPostgres(bin_dir, user)
    try:
        server.start()
        yield server
    finally:
        server.remove()


@pytest.fixture
def postgres(postgres_server: ThrowawayPostgres) -> tuple[ThrowawayPostgres, str]:
    """(the server, running, and the URL of a new database on it)."""
    if not postgres_server.running():  # a test that failed with it stopped
        postgres_server.start()
    return postgres_server, postgres_server.new_database()


def _start(storage: str, executor: str, **options: object) -> hyperlab.Experiment:
    return hyperlab.Experiment(
        objectives.one_second,
        SPACE,
        metric="loss",
        max_trials=TRIALS,
        concurrency=2,
        executor=executor,
        storage=storage,
        seed=7,
        progress=False,
        **options,  # type: ignore[arg-type]
    ).start()


def _some_ended_some_running(store: Store, experiment_id: str) -> bool:
    statuses = Counter(t.status for t in trials_or_none(store, experiment_id))
    return statuses[TrialStatus.SUCCEEDED] >= 1 and statuses[TrialStatus.RUNNING] >= 1


def _check_every_trial_once(store: Store, experiment_id: str) -> None:
    """DONE; trials 0..TRIALS-1 each SUCCEEDED at its first attempt with all its reports, none
    twice; each status change stored once."""
    assert store.get_experiment(experiment_id).status is ExperimentStatus.DONE
    trials = store.get_trials(experiment_id)
    assert [t.number for t in trials] == list(range(TRIALS))
    for trial in trials:
        assert (trial.status, trial.attempt) == (TrialStatus.SUCCEEDED, 1), trial
        steps = [r.step for r in trial.reports]
        assert steps == list(range(REPORTS)), f"trial {trial.number}'s reports: {steps}"
    events = store.get_trial_events(experiment_id)
    check_attempts(events)
    changes = Counter((e.number, e.status) for e in events)
    assert set(changes.values()) == {1}, f"status changes stored twice: {changes}"
    for number in range(TRIALS):
        assert [e.status for e in events if e.number == number] == [
            TrialStatus.WAITING,
            TrialStatus.RUNNING,
            TrialStatus.SUCCEEDED,
        ]


@pytest.mark.parametrize("outage", ["restart", "down 2s"])
@pytest.mark.parametrize("executor", ["processes", "threads"])
def test_a_postgresql_restart_mid_run_is_ridden_out(postgres, executor, outage, capfd):
    server, url = postgres
    exp = _start(url, executor)
    store = Store.open(url)
    wait_for(lambda: _some_ended_some_running(store, exp.id), "a trial ended, others running")
    if outage == "restart":
        server.restart()  # pg_ctl restart -m fast
    else:
        server.stop()
        time.sleep(2)
        server.start()

    result = exp.wait(timeout=120)

    assert result.status is ExperimentStatus.DONE
    _check_every_trial_once(store, exp.id)
    err = capfd.readouterr().err
    assert f"experiment {exp.id}: the store does not answer (" in err
    assert f"experiment {exp.id}: the store answers again after " in err
    if executor == "processes":
        check_no_worker_left(store, exp.id)


@pytest.mark.slow
def test_a_sqlite_lock_held_past_the_busy_timeout_is_ridden_out(tmp_path, capfd):
    path = tmp_path / "locked.db"
    exp = _start(str(path), "processes")
    store = Store.open(str(path))
    wait_for(lambda: _some_ended_some_running(store, exp.id), "a trial ended, others running")
    holder = sqlite3.connect(path, isolation_level=None, timeout=30)
    holder.execute("BEGIN EXCLUSIVE")  # every writer waits; readers still read (WAL)
    locked = {t.number for t in store.get_trials(exp.id) if t.status is TrialStatus.RUNNING}
    time.sleep(40)  # past the driver's 30 s busy timeout
    holder.execute("ROLLBACK")
    holder.close()

    result = exp.wait(timeout=120)

    assert result.status is ExperimentStatus.DONE
    _check_every_trial_once(store, exp.id)
    err = capfd.readouterr().err
    assert f"experiment {exp.id}: the store does not answer (OperationalError: database is " in err
    assert f"experiment {exp.id}: the store answers again after " in err
    assert locked, "no trial ran while the store was locked"


DRIVER = """
try:
    hyperlab.run(objectives.one_second, {"x": hyperlab.uniform(0, 1)}, metric="loss",
                 max_trials=6, concurrency=2, executor="processes", storage=sys.argv[1], seed=5,
                 store_outage=2, progress=False)
    outcome = {"returned": True}
except hyperlab.HyperlabError as exc:
    outcome = {"error": type(exc).__name__, "message": str(exc)}
print(json.dumps(outcome), flush=True)
"""


def test_past_store_outage_the_driver_stops_saying_how_to_continue(postgres, processes, capsys):
    server, url = postgres
    driver = spawn(DRIVER, url)
    processes.append(driver)
    store = Store.open(url)
    (summary,) = wait_for(store.list_experiments, "the experiment")
    wait_for(lambda: _some_ended_some_running(store, summary.id), "a trial ended, others running")
    server.stop()
    stopped = time.monotonic()

    out, err = driver.communicate(timeout=60)

    took = time.monotonic() - stopped
    assert driver.returncode == 0, err
    outcome = json.loads(out)
    assert outcome.get("error") == "StoreUnavailable", outcome
    message = outcome["message"]
    lasted = re.search(r"has not answered for ([\d.]+)s, past store_outage=2s", message)
    assert lasted is not None, message
    assert 2 <= float(lasted.group(1)) < 2 + 2, message  # retries are 1 s apart at most
    assert took < 20, f"the driver gave up {took:.1f}s after the server stopped"
    assert "the store does not answer (" in err
    command = re.search(r"continue it with `(hyperlab [^`]+)`", message)
    assert command is not None, message
    assert command.group(1).endswith(f" resume {summary.id}")

    server.start()
    check_no_worker_left(store, summary.id)  # the driver stopped its trials
    assert main([*shlex.split(command.group(1))[1:], "--quiet"]) == 0, capsys.readouterr().err

    assert store.get_experiment(summary.id).status is ExperimentStatus.DONE
    trials = store.get_trials(summary.id)
    assert [t.number for t in trials] == list(range(TRIALS))
    assert all(t.status is TrialStatus.SUCCEEDED for t in trials), trials
    for trial in trials:  # the last attempt's reports, all of them, once
        steps = [r.step for r in trial.reports if r.attempt == trial.attempt]
        assert steps == list(range(REPORTS)), f"trial {trial.number}'s reports: {steps}"
    check_attempts(store.get_trial_events(summary.id))


def test_a_lease_that_expired_while_the_database_was_down_is_still_held(postgres):
    server, url = postgres
    store = Store.open(url)
    exp = hyperlab.Experiment(objectives.twenty_ms, SPACE, max_trials=1, storage=url)
    exp.save()
    lease = store.acquire_lease(exp.id, owner="first", ttl=0.5, elapsed=lambda: 1.0)
    store.update_experiment(exp.id, name="written after the outage")
    server.stop()
    with pytest.raises(StoreUnavailable, match="kept for the next flush"):
        store.flush()
    assert store.pending == 1  # kept
    time.sleep(1.0)  # the lease expires meanwhile
    server.start()

    store.flush()  # no other driver took it: still this one's
    assert store.renew_lease(lease, elapsed=2.0)
    record = store.get_experiment(exp.id)
    assert record.name == "written after the outage"
    assert record.elapsed == 2.0


def test_a_takeover_while_the_database_was_down_is_still_found(postgres):
    server, url = postgres
    first = Store.open(url)
    exp = hyperlab.Experiment(objectives.twenty_ms, SPACE, max_trials=1, storage=url)
    exp.save()
    lease = first.acquire_lease(exp.id, owner="first", pid=2**22 + 1, ttl=0.5, elapsed=lambda: 1.0)
    first.update_experiment(exp.id, name="never written")
    server.stop()
    with pytest.raises(StoreUnavailable):
        first.flush()
    time.sleep(1.0)
    server.start()
    second = Store.open(url)
    second.acquire_lease(exp.id, owner="second")  # the first one's lease expired

    with pytest.raises(hyperlab.LeaseLost, match=exp.id):
        first.flush()
    assert not first.renew_lease(lease, elapsed=3.0)
    assert second.get_experiment(exp.id).name is None


def test_a_schema_error_is_not_ridden_out(tmp_path):
    """A store that answers with an error that would come again (here a table dropped under the
    run) ends the run at once, not after ``store_outage``."""
    path = tmp_path / "broken.db"
    exp = _start(str(path), "threads")
    store = Store.open(str(path))
    wait_for(lambda: _some_ended_some_running(store, exp.id), "a trial ended, others running")
    with sqlite3.connect(path, isolation_level=None, timeout=30) as conn:
        conn.execute("DROP TABLE reports")
    dropped = time.monotonic()

    with pytest.raises(StoreError, match="no such table: reports") as raised:
        exp.wait(timeout=60)

    assert not isinstance(raised.value, StoreUnavailable)
    assert time.monotonic() - dropped < 10
