"""Free GPU memory before a trial (gpus.memory_ratio, n_gpu_checks, gpu_check_delay) and leaks
after it, with a fake ``nvidia-smi`` that reads its figures from a JSON file."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

import hyperlab
from hyperlab.executors import (
    CommandTrial,
    DevicePool,
    Failed,
    Finished,
    Started,
    Stopped,
    create_executor,
)
from hyperlab.executors._gpu_memory import GpuMemoryError, nvidia_indices
from hyperlab.executors.devices import (
    GpuMemory,
    MemoryCheck,
    gpu_memory,
    leaked_memory,
    wait_for_free_memory,
)
from tests.executors.harness import drive, spec

LOCAL = ["processes", "threads", "inprocess"]
FAST = {"n_gpu_checks": 3, "gpu_check_delay": 0.05}

FAKE = """\
import json, os, sys
path = {path!r}
with open(path) as f:
    data = json.load(f)
if sys.argv[1:] != ["--query-gpu=index,memory.free,memory.total", "--format=csv,noheader,nounits"]:
    sys.exit(f"unexpected arguments {{sys.argv[1:]}}")
states = data["states"]
for index, free, total in states[0]:
    print(f"{{index}}, {{free}}, {{total}}")
if len(states) > 1:  # each call sees the next state; the last one stays
    data["states"] = states[1:]
data["calls"] = data.get("calls", 0) + 1
with open(path + ".tmp", "w") as f:  # then renamed: a reader never sees a half-written file
    json.dump(data, f)
os.replace(path + ".tmp", path)
"""


class FakeGpus:
    """``nvidia-smi`` on PATH answering from ``states``: a list of [index, free MiB, total MiB]
    per GPU, one list per call (the last one repeats)."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path = folder / "gpus.json"
        exe = folder / "nvidia-smi"
        exe.write_text(f"#!{sys.executable} -S\n" + FAKE.format(path=str(self.path)))
        exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
        monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")

    def states(self, *states: list[list[int]]) -> None:
        self.path.write_text(json.dumps({"states": list(states)}))

    @property
    def calls(self) -> int:
        return json.loads(self.path.read_text()).get("calls", 0)


BUSY = [[0, 1024, 8192], [1, 1024, 4096]]
FREE = [[0, 8000, 8192], [1, 4000, 4096]]


@pytest.fixture
def gpus(tmp_path, monkeypatch) -> FakeGpus:
    folder = tmp_path / "bin"
    folder.mkdir()
    return FakeGpus(folder, monkeypatch)


# ---- the check itself -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "match"),
    [
        ({"memory_ratio": 1.5}, r"memory_ratio: expected a number in \(0, 1\], got 1\.5"),
        ({"memory_ratio": 0}, r"memory_ratio: expected a number in \(0, 1\], got 0"),
        ({"memory_ratio": "0.5"}, r"memory_ratio: .* got '0\.5'"),
        (
            {"memory_ratio": 0.5, "n_gpu_checks": 0},
            r"n_gpu_checks: expected an integer >= 1, got 0",
        ),
        ({"memory_ratio": 0.5, "gpu_check_delay": -1}, r"gpu_check_delay: .* >= 0, got -1"),
    ],
)
def test_memory_check_rejects_values_out_of_range(fields, match):
    with pytest.raises(hyperlab.ConfigError, match=match):
        MemoryCheck(**fields)


def test_gpu_memory_reads_nvidia_smi(gpus):
    gpus.states(FREE)
    assert gpu_memory() == {0: GpuMemory(0, 8000, 8192), 1: GpuMemory(1, 4000, 4096)}
    assert gpu_memory([1]) == {1: GpuMemory(1, 4000, 4096)}
    with pytest.raises(GpuMemoryError, match=r"does not list GPU 5 \(it lists 0, 1\)"):
        gpu_memory([5])


def test_indices_are_mapped_through_cuda_visible_devices():
    assert nvidia_indices((0, 1), "3,2") == (3, 2)
    assert nvidia_indices((1,), None) == (1,)
    assert nvidia_indices((0,), "GPU-5d3c") == (0,)  # UUIDs: taken as they are


def test_the_wait_says_why_and_ends_when_memory_frees(gpus):
    gpus.states(BUSY, BUSY, FREE)
    lines: list[str] = []
    assert wait_for_free_memory((1,), MemoryCheck(0.5, **FAST), lines.append) is None
    assert lines == [
        "GPU 1: 1.0 GiB free of 2.0 GiB needed (check 1 of 3, next in 0.05s)",
        "GPU 1: 1.0 GiB free of 2.0 GiB needed (check 2 of 3, next in 0.05s)",
    ]


def test_the_wait_gives_up_after_the_last_check_with_the_reason(gpus):
    gpus.states(BUSY)
    lines: list[str] = []
    reason = wait_for_free_memory((0, 1), MemoryCheck(0.9, **FAST), lines.append)
    assert len(lines) == 2 and gpus.calls == 3
    assert reason == (
        "its GPUs did not have memory_ratio=0.9 of their memory free after 3 checks 0.05s "
        "apart: GPU 0: 1.0 GiB free of 7.2 GiB needed; GPU 1: 1.0 GiB free of 3.6 GiB needed"
    )


def test_a_failing_nvidia_smi_counts_as_a_check_that_found_too_little(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi at all
    reason = wait_for_free_memory((0,), MemoryCheck(0.5, n_gpu_checks=1), print)
    assert (
        reason is not None and "cannot read their free memory: nvidia-smi is not on PATH" in reason
    )


def test_leaked_memory_compares_with_before_within_the_tolerance(gpus):
    before = {0: GpuMemory(0, 8000, 8192)}
    check = MemoryCheck(0.5, leak_tolerance=256, leak_settle=0.1)
    gpus.states([[0, 7900, 8192]])
    assert leaked_memory(before, check) is None
    gpus.states([[0, 5000, 8192]], [[0, 8000, 8192]])  # it comes back while settling
    assert leaked_memory(before, check) is None
    gpus.states([[0, 5000, 8192]])
    assert leaked_memory(before, check) == (
        "GPU 0: 2.9 GiB less free than before the trial (7.8 GiB then, 4.9 GiB now)"
    )


# ---- in the executors -------------------------------------------------------------------------


def pool(check: MemoryCheck) -> DevicePool:
    return DevicePool([1], memory_check=check)


def hello(params):
    print("the trial ran")
    return 1.0


@pytest.mark.parametrize("name", LOCAL)
def test_a_trial_waits_for_its_gpu_saying_so_then_starts(name, gpus, tmp_path, capfd):
    gpus.states(BUSY, FREE)
    executor = create_executor(name, hello, devices=pool(MemoryCheck(0.5, **FAST)))
    recorder = drive(executor, [spec(3, tmp_path)])
    assert [type(e) for e in recorder.of(3)] == [Started, Finished]
    err = capfd.readouterr().err
    assert (
        "hyperlab: trial 3 waits for its GPUs: GPU 1: 1.0 GiB free of 2.0 GiB needed "
        "(check 1 of 3, next in 0.05s)\n"
    ) in err
    assert (tmp_path / "trials" / "3" / "stdout.log").read_text() == "the trial ran\n"


@pytest.mark.parametrize("name", LOCAL)
def test_a_trial_fails_with_the_reason_when_memory_never_frees(name, gpus, tmp_path, capfd):
    gpus.states(BUSY)
    executor = create_executor(name, hello, devices=pool(MemoryCheck(0.5, **FAST)))
    recorder = drive(executor, [spec(0, tmp_path)])
    (end,) = recorder.of(0)  # no Started: it never ran
    assert isinstance(end, Failed)
    assert end.error.startswith("its GPUs did not have memory_ratio=0.5 of their memory free")
    assert "GPU 1: 1.0 GiB free of 2.0 GiB needed" in end.error
    assert capfd.readouterr().err.count("hyperlab: trial 0 waits for its GPUs") == 2
    log = (tmp_path / "trials" / "0" / "stderr.log").read_text()
    assert log.count("hyperlab: trial 0 waits for its GPUs") == 2 and log.endswith(end.error + "\n")
    assert executor.devices is not None and executor.devices.load == {1: 0}  # released


@pytest.mark.parametrize("name", LOCAL)
def test_a_trial_that_keeps_gpu_memory_is_reported(name, gpus, tmp_path, capfd):
    gpus.states(FREE, FREE, [[1, 1000, 4096]])  # the check, the baseline, after the trial
    check = MemoryCheck(0.5, **FAST, leak_settle=0.05)
    recorder = drive(create_executor(name, hello, devices=pool(check)), [spec(2, tmp_path)])
    assert isinstance(recorder.end(2), Finished)
    warning = (
        "hyperlab: warning: trial 2 did not give back its GPU memory: GPU 1: 2.9 GiB less free "
        "than before the trial (3.9 GiB then, 1.0 GiB now)\n"
    )
    assert warning in capfd.readouterr().err
    assert (tmp_path / "trials" / "2" / "stderr.log").read_text() == warning


def test_leaks_are_not_looked_for_on_shared_devices(gpus, tmp_path, capfd):
    gpus.states(FREE, [[1, 1000, 4096]])
    shared = DevicePool([1], max_trials_per_gpu=2, memory_check=MemoryCheck(0.5, **FAST))
    drive(create_executor("inprocess", hello, devices=shared), [spec(0, tmp_path)])
    assert gpus.calls == 1  # the check only
    assert "did not give back" not in capfd.readouterr().err


def test_a_thread_trial_told_to_stop_while_it_waits_ends_stopped(gpus, tmp_path):
    gpus.states(BUSY)
    check = MemoryCheck(0.5, n_gpu_checks=100, gpu_check_delay=0.05)
    executor = create_executor("threads", hello, devices=pool(check))
    events: list = []
    executor.open(events.append)
    executor.submit(spec(0, tmp_path))
    while gpus.calls < 2:
        executor.poll(0.02)
    executor.stop(0)
    while executor.running:
        executor.poll(0.02)
    executor.close()
    assert [type(e) for e in events] == [Stopped]
    assert gpus.calls < 10


# ---- through hyperlab.run -----------------------------------------------------------------------


def test_run_fails_trials_whose_gpus_never_free(gpus, tmp_path):
    gpus.states(BUSY)
    with pytest.raises(hyperlab.TrialError) as caught:
        hyperlab.run(
            hello,
            {"x": hyperlab.uniform(0, 1)},
            max_trials=1,
            executor="threads",
            executor_args={"gpus": {"indices": [1], "memory_ratio": 0.5, **FAST}},
            storage=":memory:",
            progress=False,
        )
    (trial,) = caught.value.result.trials
    assert trial.status is hyperlab.TrialStatus.FAILED
    assert "GPU 1: 1.0 GiB free of 2.0 GiB needed" in (trial.error or "")


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (
            {"memory_ratio": 1.5},
            r"gpus\.memory_ratio: input should be less than or equal to 1, got 1\.5",
        ),
        ({"memory_ratio": -0.1}, r"gpus\.memory_ratio: input should be greater than 0, got -0\.1"),
        ({"memory_ratio": True}, r"gpus\.memory_ratio: expected a number, got True"),
        (
            {"n_gpu_checks": 0},
            r"gpus\.n_gpu_checks: input should be greater than or equal to 1, got 0",
        ),
        (
            {"gpu_check_delay": -5},
            r"gpus\.gpu_check_delay: input should be greater than or equal to 0, got -5",
        ),
    ],
)
def test_run_rejects_bad_memory_options_before_writing_anything(options, match, tmp_path):
    storage = tmp_path / "store.db"
    with pytest.raises(hyperlab.ConfigError, match=match):
        hyperlab.run(
            hello,
            {"x": hyperlab.uniform(0, 1)},
            max_trials=1,
            executor_args={"gpus": {"indices": [0], **options}},
            storage=str(storage),
            working_dir=tmp_path / "runs",
            progress=False,
        )
    assert not storage.exists() and not (tmp_path / "runs").exists()


def test_the_command_executor_refuses_memory_ratio(tmp_path):
    with pytest.raises(hyperlab.ConfigError, match=r"gpus\.memory_ratio: the 'command' executor"):
        hyperlab.run(
            CommandTrial("true"),
            {"x": hyperlab.uniform(0, 1)},
            max_trials=1,
            executor="command",
            executor_args={"gpus": {"indices": [0], "memory_ratio": 0.5}},
            storage=str(tmp_path / "store.db"),
            progress=False,
        )
    assert not (tmp_path / "store.db").exists()
