"""``hyperlab.checkpoint`` and ``load_checkpoint``: the files, atomicity, and every executor."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import hyperlab
from hyperlab.errors import HyperlabError, TrialStopped
from hyperlab.executors import CommandTrial, Finished, Reported, create_executor
from hyperlab.reporting.context import TrialContext, activate, deactivate
from tests.checkpoints import objectives
from tests.executors.harness import PYTHON, drive, spec

SCRIPT = Path(__file__).parent / "scripts" / "count.py"


class _Context(TrialContext):
    """A TrialContext that can carry the test's list of reports."""

    __slots__ = ("reports",)


def make(tmp_path: Path, number: int = 0, *, emit=None, **options) -> _Context:
    reports: list[tuple[int, dict]] = []
    folder = options.pop("trial_dir", str(tmp_path / "trials" / str(number)))
    ctx = _Context(
        number,
        f"exp12345-{number}",
        {},
        None,
        folder,
        emit or (lambda step, metrics: reports.append((step, metrics))),
        **options,
    )
    ctx.reports = reports
    return ctx


@contextmanager
def inside(ctx: TrialContext) -> Iterator[TrialContext]:
    token = activate(ctx)
    try:
        yield ctx
    finally:
        deactivate(token)


def folder_of(tmp_path: Path, number: int = 0) -> Path:
    return tmp_path / "trials" / str(number) / "checkpoints"


def entries(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


# ---- the files -------------------------------------------------------------------------------


def test_a_checkpoint_round_trips_and_the_steps_go_on(tmp_path):
    with inside(make(tmp_path)):
        assert hyperlab.load_checkpoint() is None
        for _ in range(3):
            hyperlab.report(loss=1.0)
        path = hyperlab.checkpoint({"epoch": 2, "weights": [1.5, 2.5], "f": lambda x: x + 1})
    assert path == folder_of(tmp_path) / "checkpoint-000000"
    assert entries(path) == ["meta.json", "state.pkl"]
    meta = json.loads((path / "meta.json").read_text())
    assert (meta["format"], meta["kind"], meta["step"]) == (1, "state", 2)
    assert meta["bytes"] == (path / "state.pkl").stat().st_size
    with inside(make(tmp_path)) as again:
        state = hyperlab.load_checkpoint()
        assert state["epoch"] == 2 and state["weights"] == [1.5, 2.5] and state["f"](1) == 2
        hyperlab.report(loss=0.5)
    assert again.reports == [(3, {"loss": 0.5})]  # the next default step follows the saved one


def test_only_the_last_checkpoint_keep_are_kept(tmp_path):
    with inside(make(tmp_path, checkpoint_keep=2)):
        for step in range(5):
            hyperlab.report(loss=float(step))
            hyperlab.checkpoint({"step": step})
    assert entries(folder_of(tmp_path)) == ["checkpoint-000003", "checkpoint-000004"]
    with inside(make(tmp_path, checkpoint_keep=2)):
        assert hyperlab.load_checkpoint() == {"step": 4}
    with inside(make(tmp_path)):  # the default keeps one
        hyperlab.checkpoint({"step": 5})
    assert entries(folder_of(tmp_path)) == ["checkpoint-000005"]


def test_a_folder_is_copied_and_loaded_as_a_path(tmp_path):
    source = tmp_path / "model"
    (source / "sub").mkdir(parents=True)
    (source / "weights.bin").write_bytes(b"\x00\x01" * 1000)
    (source / "sub" / "config.txt").write_text("lr=0.1")
    with inside(make(tmp_path)):
        hyperlab.report(loss=1.0)
        path = hyperlab.checkpoint(source)
    (source / "weights.bin").write_bytes(b"changed later")
    meta = json.loads((path / "meta.json").read_text())
    assert meta["kind"] == "folder" and meta["files"] == {"sub/config.txt": 6, "weights.bin": 2000}
    with inside(make(tmp_path)) as ctx:
        loaded = hyperlab.load_checkpoint()
    assert isinstance(loaded, Path) and loaded == path / "files"
    assert (loaded / "weights.bin").read_bytes() == b"\x00\x01" * 1000
    assert (loaded / "sub" / "config.txt").read_text() == "lr=0.1"
    assert ctx.next_step == 1


def test_an_unpicklable_value_is_an_error_naming_its_key_and_type(tmp_path):
    with inside(make(tmp_path)):
        with pytest.raises(HyperlabError, match=r"value of 'lock' .*a _thread\.lock"):
            hyperlab.checkpoint({"fine": [1, 2], "lock": threading.Lock()})
        with pytest.raises(HyperlabError, match=r"expected a dict .* got int"):
            hyperlab.checkpoint(42)  # type: ignore[arg-type]
        with pytest.raises(HyperlabError, match="which is not a folder"):
            hyperlab.checkpoint(str(tmp_path / "nowhere"))
        with pytest.raises(HyperlabError, match="holds the trial's checkpoints folder"):
            hyperlab.checkpoint(tmp_path)
    assert not folder_of(tmp_path).exists() or entries(folder_of(tmp_path)) == []


def test_without_a_trial_folder_checkpoint_is_an_error(tmp_path):
    with inside(make(tmp_path, trial_dir=None)):
        with pytest.raises(HyperlabError, match="has no folder to keep checkpoints in"):
            hyperlab.checkpoint({"x": 1})
        assert hyperlab.load_checkpoint() is None
    with pytest.raises(HyperlabError, match="no trial is running here"):
        hyperlab.checkpoint({"x": 1})


# ---- atomicity and corruption ------------------------------------------------------------------


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_an_interrupted_write_is_never_loaded_and_is_cleaned_up(tmp_path):
    with inside(make(tmp_path)):
        hyperlab.report(loss=1.0)
        hyperlab.checkpoint({"step": 0})
    folder = folder_of(tmp_path)
    host = socket.gethostname()
    # a writer killed before its rename: a complete-looking checkpoint in a temporary folder
    dead = folder / f".tmp-{dead_pid()}-0badf00d-{host}"
    shutil.copytree(folder / "checkpoint-000000", dead)
    (dead / "state.pkl").write_bytes(pickle.dumps({"step": 99}))
    live = folder / f".tmp-{os.getppid()}-feedbeef-{host}"  # a writer still at work
    live.mkdir()
    with inside(make(tmp_path)):
        assert hyperlab.load_checkpoint() == {"step": 0}
        hyperlab.report(loss=1.0)
        hyperlab.checkpoint({"step": 1})
    assert entries(folder) == [live.name, "checkpoint-000001"]  # the dead writer's is gone


def test_a_corrupt_latest_checkpoint_warns_and_the_previous_one_loads(tmp_path):
    with inside(make(tmp_path, checkpoint_keep=3)):
        for step in range(3):
            hyperlab.report(loss=1.0)
            hyperlab.checkpoint({"step": step})
    folder = folder_of(tmp_path)
    truncated = folder / "checkpoint-000002" / "state.pkl"
    truncated.write_bytes(truncated.read_bytes()[:-5])  # as if the disk lost its end
    garbled = folder / "checkpoint-000001" / "meta.json"
    garbled.write_text("{not json")
    with inside(make(tmp_path)) as ctx, pytest.warns(RuntimeWarning) as caught:
        assert hyperlab.load_checkpoint() == {"step": 0}
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert str(truncated) in messages[0] and "do not match the size and checksum" in messages[0]
    assert str(garbled) in messages[1]
    assert all("continues from" in m and "checkpoint-000000" in m for m in messages)
    assert ctx.next_step == 1


def test_a_corrupt_only_checkpoint_warns_and_the_trial_starts_from_scratch(tmp_path):
    with inside(make(tmp_path)):
        hyperlab.checkpoint({"step": 0})
    meta = folder_of(tmp_path) / "checkpoint-000000" / "meta.json"
    meta.unlink()
    with inside(make(tmp_path)) as ctx, pytest.warns(RuntimeWarning, match="starts from scratch"):
        assert hyperlab.load_checkpoint() is None
    assert ctx.next_step == 0


def test_a_checkpoint_of_a_missing_class_is_a_clear_error(tmp_path):
    with inside(make(tmp_path)):
        hyperlab.checkpoint({"x": 1})
    path = folder_of(tmp_path) / "checkpoint-000000"
    data = pickle.dumps({"x": OrderedDict()}, protocol=2)
    data = data.replace(b"collections", b"nomodulexyz")  # intact, but not loadable here
    (path / "state.pkl").write_bytes(data)
    meta = json.loads((path / "meta.json").read_text())
    meta.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    (path / "meta.json").write_text(json.dumps(meta))
    with inside(make(tmp_path)), pytest.raises(HyperlabError, match="is intact but cannot be"):
        hyperlab.load_checkpoint()


# ---- branches (population based training) ---------------------------------------------------


def test_a_branch_starts_from_its_parents_latest_then_keeps_its_own(tmp_path):
    with inside(make(tmp_path, 0)):
        for _ in range(5):
            hyperlab.report(loss=1.0)
        hyperlab.checkpoint({"w": 1})
    parent = str(folder_of(tmp_path, 0))
    with inside(make(tmp_path, 1, restore_dir=parent)) as child:
        assert hyperlab.load_checkpoint() == {"w": 1}
        assert child.next_step == 5
    copy = folder_of(tmp_path, 1) / "checkpoint-000000"
    meta = json.loads((copy / "meta.json").read_text())
    assert meta["restored_from"] == f"{parent}/checkpoint-000000" and meta["step"] == 5 - 1
    with inside(make(tmp_path, 0)):  # the parent goes on: its checkpoint is replaced
        hyperlab.checkpoint({"w": 2})
    with inside(make(tmp_path, 1, restore_dir=parent)) as child:
        assert hyperlab.load_checkpoint() == {"w": 1}  # what it branched from, not the newer
        hyperlab.report(loss=0.5)
        hyperlab.checkpoint({"w": 10})
    assert child.reports == [(5, {"loss": 0.5})]
    assert entries(folder_of(tmp_path, 1)) == ["checkpoint-000001"]
    assert entries(folder_of(tmp_path, 0)) == ["checkpoint-000001"]


def test_a_branch_of_a_folder_checkpoint_links_its_files(tmp_path):
    source = tmp_path / "model"
    source.mkdir()
    (source / "weights.bin").write_bytes(b"w" * 100)
    with inside(make(tmp_path, 0)):
        parent_path = hyperlab.checkpoint(source)
    with inside(make(tmp_path, 1, restore_dir=str(folder_of(tmp_path, 0)))):
        loaded = hyperlab.load_checkpoint()
    assert loaded == folder_of(tmp_path, 1) / "checkpoint-000000" / "files"
    assert (loaded / "weights.bin").read_bytes() == b"w" * 100
    assert (loaded / "weights.bin").stat().st_ino == (
        parent_path / "files" / "weights.bin"
    ).stat().st_ino


def test_a_branch_of_a_trial_without_checkpoints_warns_and_starts_from_scratch(tmp_path):
    parent = str(folder_of(tmp_path, 0))
    warning = pytest.warns(RuntimeWarning, match="holds no checkpoint: it starts from scratch")
    with inside(make(tmp_path, 1, restore_dir=parent)), warning:
        assert hyperlab.load_checkpoint() is None


# ---- stopping around a checkpoint -----------------------------------------------------------


def test_a_stop_decided_during_a_report_lets_a_checkpointing_trial_save_that_step(tmp_path):
    def stop_at_once(step: int, metrics: dict) -> None:
        ctx.request_stop()  # an in-process assessor decides during the report

    ctx = make(tmp_path, emit=stop_at_once)
    with inside(ctx):
        assert hyperlab.load_checkpoint() is None  # a trial that checkpoints
        hyperlab.report(loss=1.0)  # goes on, to save this step
        with pytest.raises(TrialStopped):
            hyperlab.checkpoint({"step": 0})
    assert entries(folder_of(tmp_path)) == ["checkpoint-000000"]
    ctx = make(tmp_path, 1, emit=stop_at_once)
    with inside(ctx), pytest.raises(TrialStopped):
        hyperlab.report(loss=1.0)  # one that does not is stopped at once, as before


# ---- every executor --------------------------------------------------------------------------


@pytest.mark.parametrize("executor", ["inprocess", "threads", "processes"])
def test_a_function_trial_run_again_continues_from_its_checkpoint(tmp_path, executor):
    first = spec(0, tmp_path, {"steps": 3})
    rec = drive(create_executor(executor, objectives.count), [first])
    assert [e.step for e in rec.of(0, Reported)] == [0, 1, 2]
    again = spec(0, tmp_path, {"steps": 6})
    rec = drive(create_executor(executor, objectives.count), [again])
    assert [e.step for e in rec.of(0, Reported)] == [3, 4, 5]
    (end,) = rec.of(0, Finished)
    assert end.metrics["first"] == 3.0
    branch = spec(1, tmp_path, {"steps": 8}, restore_from=str(tmp_path / "trials" / "0"))
    rec = drive(create_executor(executor, objectives.count), [branch])
    assert [e.step for e in rec.of(1, Reported)] == [6, 7]
    assert entries(folder_of(tmp_path, 1)) == ["checkpoint-000002"]  # the copy, 6, 7


@pytest.mark.parametrize("executor", ["inprocess", "threads", "processes"])
def test_a_trial_run_again_after_an_interruption_reports_its_checkpoints_step_again(
    tmp_path, executor
):
    rec = drive(create_executor(executor, objectives.count), [spec(0, tmp_path, {"steps": 3})])
    assert [e.step for e in rec.of(0, Reported)] == [0, 1, 2]
    again = spec(0, tmp_path, {"steps": 5}, attempt=2)  # its driver died: the store may lack 2
    rec = drive(create_executor(executor, objectives.count), [again])
    reports = rec.of(0, Reported)
    assert [e.step for e in reports] == [2, 3, 4]
    assert reports[0].metrics == {"loss": 1.0 / 3}  # the report step 2's checkpoint followed
    assert rec.of(0, Finished)[0].metrics["first"] == 3.0  # trained on from step 3
    pause_resumed = spec(0, tmp_path, {"steps": 6}, attempt=2)  # the same run goes on
    rec = drive(create_executor(executor, objectives.count), [pause_resumed])
    assert [e.step for e in rec.of(0, Reported)] == [5]


def test_a_command_trial_run_again_continues_from_its_checkpoint(tmp_path):
    command = f"{PYTHON} {SCRIPT} $STEPS 0 save"

    def run(number: int, steps: int, **fields):
        executor = create_executor("command", CommandTrial(command, env={"STEPS": str(steps)}))
        return drive(executor, [spec(number, tmp_path, **fields)])

    assert [e.step for e in run(0, 3).of(0, Reported)] == [0, 1, 2]
    assert [e.step for e in run(0, 5).of(0, Reported)] == [3, 4]
    assert [e.step for e in run(0, 6, attempt=2).of(0, Reported)] == [4, 5]  # 4 sent again
    parent = str(tmp_path / "trials" / "0")
    assert [e.step for e in run(1, 8, restore_from=parent).of(1, Reported)] == [6, 7]
    assert entries(folder_of(tmp_path, 1)) == ["checkpoint-000002"]  # the copy, 6, 7


def test_a_command_trial_gets_its_checkpoint_folders_in_its_environment(tmp_path):
    command = (
        f"{PYTHON} -S -c 'import os, json; print(json.dumps({{k: v for k, v in os.environ.items()"
        ' if k.startswith("HYPERLAB_")}))\' > "$HYPERLAB_TRIAL_DIR/env.json"; '
        'echo any language > "$HYPERLAB_CHECKPOINT_DIR/saved.txt"; '
        'echo \'{"tag": "final", "metrics": {"default": 1}}\' >> "$HYPERLAB_CHANNEL"'
    )
    parent = str(tmp_path / "trials" / "0")
    specs = [spec(1, tmp_path, restore_from=parent, checkpoint_keep=3), spec(2, tmp_path)]
    drive(create_executor("command", CommandTrial(command)), specs)
    env = json.loads((tmp_path / "trials" / "1" / "env.json").read_text())
    assert env["HYPERLAB_CHECKPOINT_DIR"] == str(folder_of(tmp_path, 1))
    assert env["HYPERLAB_RESTORE_DIR"] == str(folder_of(tmp_path, 0))
    assert env["HYPERLAB_CHECKPOINT_KEEP"] == "3"
    assert (folder_of(tmp_path, 1) / "saved.txt").read_text() == "any language\n"
    assert "HYPERLAB_RESTORE_DIR" not in json.loads(
        (tmp_path / "trials" / "2" / "env.json").read_text()
    )


def test_a_command_trial_defers_sigterm_until_its_reported_step_is_saved(tmp_path):
    (tmp_path / "parameter.json").write_text('{"parameters": {}}')
    code = (
        "import os, signal, hyperlab\n"
        "hyperlab.load_checkpoint()\n"
        "hyperlab.report(loss=1.0)\n"
        "os.kill(os.getpid(), signal.SIGTERM)  # between a report and its checkpoint\n"
        "print('went on', flush=True)\n"
        "try:\n"
        "    hyperlab.checkpoint({'step': 0})\n"
        "except hyperlab.TrialStopped:\n"
        "    print('stopped once saved', flush=True)\n"
        "os.kill(os.getpid(), signal.SIGTERM)  # nothing unsaved: it acts at once\n"
        "print('never printed', flush=True)\n"
    )
    env = dict(
        os.environ,
        HYPERLAB_PARAMS_FILE=str(tmp_path / "parameter.json"),
        HYPERLAB_CHANNEL=str(tmp_path / "metrics.jsonl"),
        HYPERLAB_TRIAL_DIR=str(tmp_path / "trials" / "0"),
        HYPERLAB_CHECKPOINT_DIR=str(folder_of(tmp_path)),
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == -15, done.stderr
    assert done.stdout.splitlines() == ["went on", "stopped once saved"]
    assert entries(folder_of(tmp_path)) == ["checkpoint-000000"]


def test_a_stop_that_crossed_a_process_trials_end_does_not_stop_its_resumed_run(tmp_path):
    executor = create_executor("processes", objectives.count)
    rec = drive(executor, [], close=False)  # opened, nothing run yet
    executor.submit(spec(0, tmp_path, {"steps": 1}))
    deadline = time.monotonic() + 10
    while not (folder_of(tmp_path) / "checkpoint-000000").exists():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    time.sleep(0.1)  # it has ended, and the driver has not read that yet:
    executor.stop(0)  # a pause decided on its last report reaches the worker after its end
    try:
        while executor.running:
            executor.poll(0.05)
        executor.submit(spec(0, tmp_path, {"steps": 3}))  # resumed on the same worker
        while executor.running:
            executor.poll(0.05)
    finally:
        executor.close()
    assert [type(e).__name__ for e in rec.of(0)][-1] == "Finished"
    assert [e.step for e in rec.of(0, Reported)] == [0, 1, 2]


def test_a_trial_with_nothing_left_to_run_ends_with_the_value_it_resumed_at(tmp_path):
    from hyperlab.executors._run import run_trial
    from hyperlab.executors.base import Finished

    def steps(params):
        state = hyperlab.load_checkpoint()
        for step in range(0 if state is None else state["step"] + 1, 3):
            hyperlab.report(loss=1.0 / (step + 1))
            hyperlab.checkpoint({"step": step})

    def context() -> TrialContext:
        return TrialContext(0, "t-0", {}, None, str(tmp_path), lambda step, metrics: None)

    first = run_trial(steps, context())
    again = run_trial(steps, context())  # a pause resumed after its last step: nothing to run
    assert isinstance(first, Finished) and isinstance(again, Finished)
    assert again.metrics == first.metrics == {"loss": 1.0 / 3}
