"""Defect 7, a vanished store was silent data loss: when the SQLite file of a running experiment
is deleted, the run raises ``StoreError`` naming the file; it never reports DONE."""

from __future__ import annotations

import json
import time

import pytest

from hyperlab.store import Store
from tests.faults.harness import spawn, trials_or_none, wait_for

pytestmark = [pytest.mark.faults, pytest.mark.slow]

RUN = """
try:
    result = hyperlab.run(objectives.twenty_ms, {"x": hyperlab.uniform(0, 1)}, max_trials=200,
                          storage=sys.argv[1], progress=False)
    outcome = {"returned": str(result.status)}
except hyperlab.HyperlabError as exc:
    outcome = {"error": type(exc).__name__, "message": str(exc)}
print(json.dumps(outcome), flush=True)
"""


def test_deleting_the_store_file_mid_run_raises_store_error(tmp_path):
    path = tmp_path / "vanish.db"
    started = time.monotonic()
    run = spawn(RUN, path)
    with Store.open(str(path)) as store:
        (summary,) = wait_for(store.list_experiments, "the experiment")
        wait_for(lambda: trials_or_none(store, summary.id), "trials")
    time.sleep(max(0.0, 2.0 - (time.monotonic() - started)))
    for name in ("vanish.db", "vanish.db-wal", "vanish.db-shm"):
        (tmp_path / name).unlink()

    out, err = run.communicate(timeout=60)

    assert run.returncode == 0, err
    outcome = json.loads(out)
    assert outcome.get("error") == "StoreError", outcome  # not {"returned": "DONE"}
    assert str(path) in outcome["message"]
    assert "deleted" in outcome["message"]
    assert not path.exists(), "something wrote a new, empty store where the old one was"
