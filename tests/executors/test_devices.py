"""GPU placement: the device pool, ``detect_gpus``, and what trials see in each executor."""

from __future__ import annotations

import json
import os
import stat
import time
from collections import Counter
from pathlib import Path

import pytest

import hyperlab
from hyperlab import TrialStatus
from hyperlab import space as hs
from hyperlab.executors import (
    CommandTrial,
    DevicePool,
    Finished,
    create_executor,
    detect_gpus,
)
from tests.executors.harness import drive, script, spec

# ---- the pool --------------------------------------------------------------------------------


def test_acquire_takes_the_least_loaded_devices_in_a_fixed_order():
    pool = DevicePool([2, 0, 1], max_trials_per_gpu=2)
    taken = [pool.acquire() for _ in range(6)]
    assert taken == [(2,), (0,), (1,), (2,), (0,), (1,)]
    assert pool.acquire() is None
    pool.release((0,))
    assert pool.load == {2: 2, 0: 1, 1: 2}
    assert pool.acquire() == (0,)


def test_a_trial_can_hold_several_devices():
    pool = DevicePool([0, 1, 2], per_trial=2)
    assert pool.acquire() == (0, 1)
    assert pool.free_trials() == 0 and pool.acquire() is None  # one device left: not enough
    pool.release((0, 1))
    assert pool.acquire() == (0, 1)  # deterministic: the same ones again
    shared = DevicePool([0, 1, 2], per_trial=2, max_trials_per_gpu=2)
    assert [shared.acquire() for _ in range(4)] == [(0, 1), (2, 0), (1, 2), None]
    assert max(shared.load.values()) == 2


def test_free_trials_counts_what_acquire_would_place():
    pool = DevicePool([0, 1, 2, 3], per_trial=2, max_trials_per_gpu=3)
    assert pool.free_trials() == 6
    pool.acquire()
    assert pool.free_trials() == 5
    assert pool.load == {0: 1, 1: 1, 2: 0, 3: 0}  # free_trials changed nothing


def test_releasing_a_device_that_is_not_held_is_an_error():
    pool = DevicePool([0, 1])
    held = pool.acquire()
    with pytest.raises(ValueError, match=r"cannot release device 1"):
        pool.release((1,))
    with pytest.raises(ValueError, match=r"cannot release device 7"):
        pool.release((7,))
    pool.release(held)
    with pytest.raises(ValueError):
        pool.release(held)
    assert pool.load == {0: 0, 1: 0}


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (([0, -1],), {}, r"gpus\.indices: expected non-negative integers, got -1 in \[0, -1\]"),
        (([0, True],), {}, r"gpus\.indices: expected non-negative integers, got True"),
        (([0, 1.0],), {}, r"gpus\.indices: .* got 1\.0"),
        ((["0"],), {}, r"gpus\.indices: .* got '0'"),
        (("01",), {}, r"gpus\.indices: expected a list of device indices, got '01'"),
        (([1, 1],), {}, r"gpus\.indices: device 1 appears twice in \[1, 1\]"),
        (([],), {}, r"gpus\.indices: expected at least one device index, got \[\]"),
        (([0, 1],), {"per_trial": 3}, r"gpus\.per_trial: 3 devices per trial is more than the 2"),
        (([0],), {"per_trial": 0}, r"gpus\.per_trial: expected an integer >= 1, got 0"),
        (([0],), {"per_trial": True}, r"gpus\.per_trial: expected an integer >= 1, got True"),
        (([0],), {"max_trials_per_gpu": 0}, r"gpus\.max_trials_per_gpu: .* got 0"),
    ],
)
def test_invalid_pools_name_the_field_and_the_value(args, kwargs, match):
    with pytest.raises(hyperlab.ConfigError, match=match):
        DevicePool(*args, **kwargs)


# ---- detect_gpus -----------------------------------------------------------------------------


def fake_nvidia_smi(folder: Path, body: str, monkeypatch) -> None:
    exe = folder / "nvidia-smi"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(folder))


def test_detect_gpus_reads_nvidia_smi(tmp_path, monkeypatch):
    fake_nvidia_smi(tmp_path, 'test "$1" = --query-gpu=index && printf "0\\n1\\n3\\n"', monkeypatch)
    assert detect_gpus() == [0, 1, 3]


@pytest.mark.parametrize("body", ["exit 9", "echo 'No devices were found'", "exit 0"])
def test_detect_gpus_is_empty_when_nvidia_smi_fails_or_lists_nothing(tmp_path, monkeypatch, body):
    fake_nvidia_smi(tmp_path, body, monkeypatch)
    assert detect_gpus() == []


def test_detect_gpus_is_empty_without_nvidia_smi(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert detect_gpus() == []


# ---- placement in the executors --------------------------------------------------------------


def spans_per_device(trials_dir: Path) -> tuple[dict[int, list[tuple[float, float]]], list]:
    """Each device's (start, end) spans as the trials recorded them, and every record."""
    per_device: dict[int, list[tuple[float, float]]] = {}
    records = []
    for path in sorted(trials_dir.glob("*/devices.json")):
        seen = json.loads(path.read_text())
        records.append(seen)
        for device in seen["devices"]:
            per_device.setdefault(device, []).append((seen["start"], seen["end"]))
    return per_device, records


def most_at_once(spans: list[tuple[float, float]]) -> int:
    return max(sum(s <= t < e for s, e in spans) for t, _ in spans)


@pytest.mark.parametrize(
    ("gpus", "most_trials"),
    [
        ({"indices": [0, 1], "per_trial": 1, "max_trials_per_gpu": 1}, 2),
        ({"indices": [3, 5, 7], "per_trial": 2, "max_trials_per_gpu": 2}, 3),
    ],
)
def test_command_trials_get_their_devices_and_wait_for_a_free_one(tmp_path, gpus, most_trials):
    result = hyperlab.run(
        CommandTrial(script("record_devices.py", 0.3)),
        {"x": hs.uniform(0, 1)},
        max_trials=6,
        executor="command",
        concurrency=4,
        executor_args={"gpus": gpus},
        storage=f"sqlite:///{tmp_path / 'db.sqlite'}",
        progress=False,
    )
    assert [t.status for t in result.trials] == [TrialStatus.SUCCEEDED] * 6
    trials_dir = Path(os.environ["HYPERLAB_HOME"], "experiments", result.experiment_id, "trials")
    per_device, records = spans_per_device(trials_dir)
    assert len(records) == 6
    for seen in records:
        assert len(seen["devices"]) == gpus["per_trial"]
        assert set(seen["devices"]) <= set(gpus["indices"])
        assert seen["cuda"] == ",".join(map(str, seen["devices"]))
    for device, spans in per_device.items():
        assert most_at_once(spans) <= gpus["max_trials_per_gpu"], (device, spans)
    every = [(r["start"], r["end"]) for r in records]
    assert 2 <= most_at_once(every) <= most_trials  # concurrency 4: trials waited for devices


def test_process_workers_are_started_with_their_devices_and_reused_per_device_set(tmp_path):
    def objective(params):
        return {
            "default": 0.0,
            "cuda": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "devices": list(hyperlab.trial_devices()),
            "pid": os.getpid(),
        }

    executor = create_executor("processes", objective, concurrency=2, devices=DevicePool([0, 1]))
    rec = drive(executor, [spec(n, tmp_path) for n in range(6)])
    results = [rec.end(n).metrics for n in range(6)]
    assert all(isinstance(rec.end(n), Finished) for n in range(6))
    pids_of: dict[str, set[int]] = {}
    for metrics in results:
        assert metrics["cuda"] == ",".join(map(str, metrics["devices"]))
        pids_of.setdefault(metrics["cuda"], set()).add(metrics["pid"])
    assert set(pids_of) == {"0", "1"}
    assert all(len(pids) == 1 for pids in pids_of.values()), pids_of  # one worker per device
    assert pids_of["0"] != pids_of["1"]


def test_thread_trials_see_their_devices_and_leave_the_environment_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "untouched")
    seen = []

    def objective(params):
        start = time.time()
        time.sleep(0.1)
        seen.append((hyperlab.trial_devices(), os.environ["CUDA_VISIBLE_DEVICES"], start))
        return 1.0

    pool = DevicePool([4, 6], per_trial=1)
    executor = create_executor("threads", objective, concurrency=3, devices=pool)
    assert executor.free_slots == 2  # three slots, but two devices
    rec = drive(executor, [spec(n, tmp_path) for n in range(4)])
    assert all(isinstance(rec.end(n), Finished) for n in range(4))
    assert len(seen) == 4 and {env for _, env, _ in seen} == {"untouched"}
    assert Counter(devices for devices, _, _ in seen) == {(4,): 2, (6,): 2}
    for device in ((4,), (6,)):
        starts = sorted(start for devices, _, start in seen if devices == device)
        assert starts[1] - starts[0] >= 0.09  # the second trial on a device waited for the first
    assert pool.load == {4: 0, 6: 0}


def test_a_trial_waits_while_no_device_is_free(tmp_path):
    pool = DevicePool([0])
    executor = create_executor("command", CommandTrial("sleep 0.2; echo"), devices=pool)
    executor.concurrency = 3
    executor.open(lambda event: None)
    try:
        assert executor.free_slots == 1
        executor.submit(spec(0, tmp_path))
        assert executor.free_slots == 0 and pool.load == {0: 1}
        with pytest.raises(hyperlab.HyperlabError, match=r"no free device.*free_slots"):
            executor.submit(spec(1, tmp_path))
        while executor.running:
            executor.poll(0.05)
        assert executor.free_slots == 1 and pool.load == {0: 0}  # released by the FAILED end
    finally:
        executor.close()
