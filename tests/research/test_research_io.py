"""A research's experiments write their output to their own logs, and wait for their GPUs'
memory (a fake ``nvidia-smi``) with a visible reason."""

from __future__ import annotations

import sys

import pytest

from hyperlab import TrialStatus
from hyperlab.research import Domain, Research
from tests.executors.test_gpu_memory import BUSY, FREE, FakeGpus


def talk(x):
    print(f"out of x={x}")
    print(f"err of x={x}", file=sys.stderr)
    return x


@pytest.mark.parametrize("executor", ["processes", "threads", "inprocess"])
def test_each_experiments_output_goes_to_its_own_logs(tmp_path, executor):
    research = Research(
        name="talk", domain=Domain(x=[1, 2]), storage=f"sqlite:///{tmp_path / 'r.db'}"
    ).add_callable(talk, save_to="y")
    branches = 1 if executor == "inprocess" else 2
    research.run(n_iters=2, executor=executor, branches=branches, progress=False)
    folder = research.experiment.folder / "trials"
    for trial in research.experiment.store.get_trials(research.id):
        logs = folder / str(trial.number)
        x = trial.params["x"]
        assert (logs / "stdout.log").read_text() == f"out of x={x}\n" * 2
        assert (logs / "stderr.log").read_text() == f"err of x={x}\n" * 2


@pytest.fixture
def gpus(tmp_path, monkeypatch) -> FakeGpus:
    folder = tmp_path / "bin"
    folder.mkdir()
    return FakeGpus(folder, monkeypatch)


def test_a_worker_waits_for_free_gpu_memory_and_says_why(tmp_path, gpus, capfd):
    gpus.states(BUSY, BUSY, FREE)
    research = Research(
        name="gpu", domain=Domain(x=[1]), storage=f"sqlite:///{tmp_path / 'r.db'}"
    ).add_callable(talk, save_to="y")
    research.run(
        n_iters=1,
        devices=[1],
        memory_ratio=0.5,
        n_gpu_checks=3,
        gpu_check_delay=0.05,
        executor="threads",
        progress=False,
    )
    err = capfd.readouterr().err
    assert "wait for their GPUs: GPU 1: 1.0 GiB free of 2.0 GiB needed" in err
    (trial,) = research.experiment.store.get_trials(research.id)
    assert trial.status is TrialStatus.SUCCEEDED


def test_experiments_fail_with_the_reason_when_memory_never_frees(tmp_path, gpus):
    gpus.states(BUSY)
    research = Research(
        name="gpu", domain=Domain(x=[1, 2]), storage=f"sqlite:///{tmp_path / 'r.db'}"
    ).add_callable(talk, save_to="y")
    with pytest.raises(Exception, match="GPU 0"):
        research.run(
            n_iters=1,
            devices=[0],
            memory_ratio=0.9,
            n_gpu_checks=2,
            gpu_check_delay=0.01,
            progress=False,
        )
    trials = research.experiment.store.get_trials(research.id)
    assert [t.status for t in trials] == [TrialStatus.FAILED] * 2
    assert all("GPU 0" in t.error and "needed" in t.error for t in trials)
