"""A research whose driver is killed with SIGKILL resumes with nothing lost and nothing run
twice: every config x repetition finishes exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab.store import Store

pytest.importorskip("pandas", reason="the research extra (pandas) is not installed")

SCRIPT = textwrap.dedent(
    """
    import sys, time
    import hyperlab
    from hyperlab.research import Domain

    LOG = sys.argv[2]

    def step(lr, repetition, iteration):
        time.sleep(0.05)
        if iteration == 3:
            with open(LOG, "a") as f:
                f.write(f"{lr} {repetition}\\n")
        return lr * (iteration + 1)

    research = hyperlab.Research(
        name="killed", domain=Domain(lr=[1, 2, 3, 4, 5]), n_reps=2, storage=sys.argv[1]
    ).add_callable(step, save_to="value")
    research.run(n_iters=4, workers=2, seed=1, progress=False)
    """
)


def test_sigkilled_research_resumes_without_losing_or_repeating(tmp_path):
    storage = f"sqlite:///{tmp_path / 'r.db'}"
    log = tmp_path / "finished.txt"
    script = tmp_path / "study.py"
    script.write_text(SCRIPT)
    driver = subprocess.Popen([sys.executable, str(script), storage, str(log)])
    try:
        deadline = time.monotonic() + 60
        finished_before = []
        while time.monotonic() < deadline:
            if Store.open(storage).list_experiments():
                store = Store.open(storage)
                (record,) = store.list_experiments()
                finished_before = [
                    t for t in store.get_trials(record.id) if t.status is TrialStatus.SUCCEEDED
                ]
                if len(finished_before) >= 3:
                    break
            time.sleep(0.05)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(10)
    finally:
        if driver.poll() is None:
            driver.kill()
    assert 3 <= len(finished_before) < 10, "the research should be killed half way"
    store = Store.open(storage)
    (record,) = store.list_experiments()
    before = {t.number: t for t in store.get_trials(record.id)}
    time.sleep(0.5)  # the workers die with their driver
    result = hyperlab.resume(record.id, storage=storage, progress=False)
    trials = Store.open(storage).get_trials(record.id, reports=True)
    assert result is not None
    assert len(trials) == 10
    assert all(t.status is TrialStatus.SUCCEEDED for t in trials)
    configs = Counter((t.params["lr"], t.params["repetition"]) for t in trials)
    assert set(configs.values()) == {1} and len(configs) == 10
    for trial in trials:  # finished ones kept as they were; the rest re-ran from iteration 0
        if trial.number in before and before[trial.number].status is TrialStatus.SUCCEEDED:
            assert trial.attempt == before[trial.number].attempt
        runs = [r for r in trial.reports if r.attempt == trial.attempt]
        assert [r.step for r in runs] == [0, 1, 2, 3]
    done = Counter(log.read_text().split("\n")[:-1])
    for trial in before.values():  # a config x repetition that had finished never ran again
        if trial.status is TrialStatus.SUCCEEDED:
            assert done[f"{trial.params['lr']} {trial.params['repetition']}"] == 1
    df = hyperlab.Research.load("killed", storage).results.df
    assert len(df) == 10 * 4  # one row per config x repetition x iteration: none twice
