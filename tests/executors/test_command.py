"""The ``command`` executor: shell-command trials, their channel, their end, their processes."""

from __future__ import annotations

import json
import os
import shlex
import time
from pathlib import Path

import pytest

import hyperlab
from hyperlab import ExperimentStatus, TrialStatus
from hyperlab import space as hs
from hyperlab.executors import (
    CommandTrial,
    Failed,
    Finished,
    Reported,
    Started,
    Stopped,
    create_executor,
)
from tests.executors.harness import (
    PYTHON,
    SCRIPTS,
    drive,
    pid_alive,
    script,
    spec,
    wait_dead,
)

_opened: list = []


def command(cmd: str, **options):
    """A command executor that is closed after the test, even when the test fails."""
    options.setdefault("concurrency", 2)
    executor = create_executor("command", CommandTrial(cmd), **options)
    _opened.append(executor)
    return executor


@pytest.fixture(autouse=True)
def _close_executors():
    yield
    while _opened:
        _opened.pop().close()  # closing twice is harmless


def grandchild_command() -> str:
    """sh (records its pid) -> python (records its pid and its child's) -> sleep 60."""
    return 'echo $$ > "$HYPERLAB_TRIAL_DIR/sh.pid" && ' + script("spawn_and_hang.py")


def read_pids(folder: Path) -> list[int]:
    """The pids a ``grandchild_command`` trial recorded: its shell, python, and sleep."""
    pids = [int(w) for name in ("sh.pid", "pids.txt") for w in (folder / name).read_text().split()]
    assert len(pids) == 3
    return pids


def live_pids(folder: Path) -> list[int]:
    """``read_pids`` once the trial wrote them, checking they all run."""
    deadline = time.monotonic() + 10
    while not (folder / "pids.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    pids = read_pids(folder)
    assert all(pid_alive(p) for p in pids)
    return pids


# ---- results -------------------------------------------------------------------------------


def test_reports_reach_the_driver_while_the_trial_runs(tmp_path):
    cmd = script("report_steps.py", "--steps", 3, "--sleep", 0.4)
    rec = drive(command(cmd), [spec(0, tmp_path)])
    reports = rec.of(0, Reported)
    assert [e.step for e in reports] == [0, 1, 2]
    assert [e.metrics["loss"] for e in reports] == [0.0, 0.0, 0.0]
    end = rec.end(0)
    assert isinstance(end, Finished)
    # the first report was delivered to the driver long before the trial's end
    assert rec.received_at(end) - rec.received_at(reports[0]) > 0.6
    assert isinstance(rec.events[0], Started)


def test_a_final_result_wins_over_the_intermediate_ones(tmp_path):
    cmd = script("report_steps.py", "--steps", 2, "--final", 0.125)
    rec = drive(command(cmd), [spec(0, tmp_path)])
    end = rec.end(0)
    assert isinstance(end, Finished) and end.metrics == {"loss": 0.125}
    assert len(rec.of(0, Reported)) == 2


def test_exit_0_without_a_final_result_uses_the_last_intermediate_one(tmp_path):
    rec = drive(command(script("report_steps.py", "--steps", 4)), [spec(0, tmp_path, {"x": 2.0})])
    end = rec.end(0)
    assert isinstance(end, Finished) and end.metrics["loss"] == 0.5


def test_exit_0_without_any_result_fails(tmp_path):
    rec = drive(command("true"), [spec(0, tmp_path)])
    end = rec.end(0)
    assert isinstance(end, Failed)
    assert end.error == "the command exited 0 without reporting a result"


def test_a_non_zero_exit_fails_with_the_code_and_the_last_20_lines_of_stderr(tmp_path):
    lines = "|".join(f"problem {i}" for i in range(1, 26))
    cmd = script("report_steps.py", "--steps", 1, "--final", 1, "--exit", 3, "--stderr", lines)
    rec = drive(command(cmd), [spec(0, tmp_path)])
    end = rec.end(0)
    assert isinstance(end, Failed) and not hasattr(end, "metrics")
    assert "exited with code 3" in end.error
    assert end.error.splitlines()[-20:] == [f"problem {i}" for i in range(6, 26)]
    assert "problem 5\n" not in end.error
    assert (tmp_path / "trials" / "0" / "stderr.log").read_text().count("problem") == 25


def test_a_command_that_does_not_exist_fails_with_the_shells_message(tmp_path):
    rec = drive(command("no-such-command-hyperlab --x 1"), [spec(0, tmp_path)])
    end = rec.end(0)
    assert isinstance(end, Failed)
    assert "exited with code 127" in end.error
    assert "no-such-command-hyperlab" in end.error and "not found" in end.error


def test_any_program_can_report_by_appending_lines_to_the_channel(tmp_path):
    """The channel is a plain file: a shell command can write it; bad lines are skipped."""
    good = '{"tag": "report", "step": 7, "metrics": {"a": 1}}'
    cmd = (
        f"printf '%s\\n' 'not json' {shlex.quote(good)} >> \"$HYPERLAB_CHANNEL\" && "
        'printf \'{"tag": "rep\' >> "$HYPERLAB_CHANNEL"'
    )
    rec = drive(command(cmd), [spec(0, tmp_path)])
    (report,) = rec.of(0, Reported)
    assert report.step == 7 and report.metrics == {"a": 1}
    assert isinstance(rec.end(0), Finished) and rec.end(0).metrics == {"a": 1}


def test_the_trial_folder_holds_params_channel_and_logs(tmp_path):
    cmd = "echo to-stdout; echo to-stderr >&2; " + script("report_steps.py", "--steps", 1)
    drive(command(cmd), [spec(0, tmp_path, {"x": 0.5, "name": "a"})])
    folder = tmp_path / "trials" / "0"
    document = json.loads((folder / "parameter.json").read_text())
    assert document["parameters"] == {"x": 0.5, "name": "a"}
    assert document["parameter_id"] == 0
    assert (folder / "stdout.log").read_text() == "to-stdout\n"
    assert (folder / "stderr.log").read_text() == "to-stderr\n"
    (line,) = (folder / "metrics.jsonl").read_text().splitlines()
    assert json.loads(line)["metrics"]["loss"] == 0.5


# ---- ending trials and their processes ---------------------------------------------------


def test_timeout_kills_the_whole_group_including_a_grandchild(tmp_path):
    executor = command(grandchild_command(), trial_timeout=1.0)
    rec = drive(executor, [spec(0, tmp_path)], close=False)
    end = rec.end(0)
    assert isinstance(end, Failed) and "exceeded trial_timeout=1s" in end.error
    assert wait_dead(read_pids(tmp_path / "trials" / "0"), within=1.0) == []
    executor.close()


def test_stop_sends_sigterm_then_sigkill_after_the_grace(tmp_path):
    executor = command(grandchild_command() + " --ignore-term", stop_grace=0.3)
    rec = drive(executor, [], close=False)
    executor.submit(spec(0, tmp_path))
    pids = live_pids(tmp_path / "trials" / "0")
    while not rec.of(0, Reported):
        executor.poll(0.05)
    asked = time.monotonic()
    executor.stop(0)
    while executor.running:  # the trial ignores SIGTERM: only the SIGKILL after the grace ends it
        executor.poll(0.05)
    took = time.monotonic() - asked
    end = rec.end(0)
    assert isinstance(end, Stopped) and end.metrics == {"child": pids[2]}
    assert took >= 0.3, f"the trial ended {took:.2f}s after stop(): SIGKILL came before the grace"
    assert wait_dead(pids, within=1.0) == []
    executor.close()


def test_close_leaves_no_process_of_any_trial(tmp_path):
    executor = command(grandchild_command(), concurrency=2)
    rec = drive(executor, [], close=False)
    executor.submit(spec(0, tmp_path))
    executor.submit(spec(1, tmp_path))
    pids = live_pids(tmp_path / "trials" / "0") + live_pids(tmp_path / "trials" / "1")
    executor.close()
    assert wait_dead(pids, within=0.5) == []
    assert all(isinstance(rec.end(n), Stopped) for n in (0, 1))
    assert executor.running == 0


def test_concurrency_is_respected(tmp_path):
    executor = command(script("record_devices.py", 0.4), concurrency=2)
    rec = drive(executor, [spec(n, tmp_path) for n in range(4)])
    assert all(isinstance(rec.end(n), Finished) for n in range(4))
    spans = []
    for n in range(4):
        seen = json.loads((tmp_path / "trials" / str(n) / "devices.json").read_text())
        spans.append((seen["start"], seen["end"]))
    most = max(sum(s <= t < e for s, e in spans) for t, _ in spans)
    assert most == 2, spans


# ---- through the public API ----------------------------------------------------------------


def test_the_trial_sees_hyperlab_and_nni_variables_and_its_api_works(tmp_path):
    code_dir = tmp_path / "code"
    code_dir.mkdir()
    trial = CommandTrial(
        script("dump_env.py"), code_dir=str(code_dir), env={"MY_FLAG": "on", "PYTHONPATH": "/x"}
    )
    result = hyperlab.run(
        trial,
        {"x": hs.choice(1.5, 2.5)},
        tuner="grid",
        executor="command",
        concurrency=2,
        storage=f"sqlite:///{tmp_path / 'db.sqlite'}",
        seed=3,
        progress=False,
    )
    assert result.status is ExperimentStatus.DONE
    for trial_record in result.trials:
        assert trial_record.status is TrialStatus.SUCCEEDED, trial_record.error
        assert trial_record.value == trial_record.params["x"]
        number = trial_record.number
        folder = hyperlab_dir(result.experiment_id, number)
        seen = json.loads((folder / "seen.json").read_text())
        env = seen["env"]
        trial_id = f"{result.experiment_id}-{number}"
        assert env["HYPERLAB_TRIAL_ID"] == env["NNI_TRIAL_JOB_ID"] == trial_id
        assert env["HYPERLAB_TRIAL_NUMBER"] == env["NNI_TRIAL_SEQ_ID"] == str(number)
        assert env["HYPERLAB_EXPERIMENT_ID"] == env["NNI_EXP_ID"] == result.experiment_id
        assert env["HYPERLAB_PARAMS_FILE"] == str(folder / "parameter.json")
        assert env["HYPERLAB_CHANNEL"] == str(folder / "metrics.jsonl")
        assert env["HYPERLAB_TRIAL_DIR"] == env["NNI_SYS_DIR"] == env["NNI_OUTPUT_DIR"]
        assert env["HYPERLAB_TRIAL_DIR"] == str(folder)
        assert env["HYPERLAB_SEED"] == str(trial_record.seed)
        assert env["HYPERLAB_ATTEMPT"] == "1"
        assert env["NNI_PLATFORM"] == "local"
        assert env["MY_FLAG"] == "on"
        first, *rest = env["PYTHONPATH"].split(os.pathsep)
        assert seen["nni"] == os.path.join(first, "nni", "__init__.py") and rest == ["/x"]
        assert not os.path.exists(first), "close() removes the folder of the shim's links"
        assert "CUDA_VISIBLE_DEVICES" not in env or env["CUDA_VISIBLE_DEVICES"] == os.environ.get(
            "CUDA_VISIBLE_DEVICES"
        )
        assert seen["cwd"] == str(code_dir)
        assert seen["params"] == trial_record.params
        assert seen["seed"] == trial_record.seed
        assert seen["dir"] == str(folder)
        assert seen["devices"] == []
        assert seen["hyperlab"].startswith(first)


def hyperlab_dir(experiment_id: str, number: int) -> Path:
    home = Path(os.environ["HYPERLAB_HOME"])
    return home / "experiments" / experiment_id / "trials" / str(number)


def test_failures_timeouts_and_successes_recorded_through_run(tmp_path):
    read_kind = f"{PYTHON} -S -c \"import hyperlab; print(hyperlab.get_params()['kind'])\""
    cmd = (
        f"case $({read_kind}) in "
        f"ok) {script('report_steps.py', '--steps', 2)} ;; "
        "missing) no-such-command-hyperlab ;; "
        f"hang) {grandchild_command()} ;; "
        "esac"
    )
    result = hyperlab.run(
        CommandTrial(cmd),
        {"kind": hs.choice("ok", "missing", "hang")},
        tuner="grid",
        executor="command",
        concurrency=3,
        trial_timeout=1.5,
        metric="loss",
        storage=f"sqlite:///{tmp_path / 'db.sqlite'}",
        progress=False,
    )
    by_kind = {t.params["kind"]: t for t in result.trials}
    assert by_kind["ok"].status is TrialStatus.SUCCEEDED and by_kind["ok"].value == 0.5
    assert [r.metrics["loss"] for r in by_kind["ok"].reports] == [1.0, 0.5]
    assert by_kind["missing"].status is TrialStatus.FAILED
    assert "code 127" in by_kind["missing"].error and "not found" in by_kind["missing"].error
    assert by_kind["hang"].status is TrialStatus.FAILED
    assert "trial_timeout" in by_kind["hang"].error
    folder = hyperlab_dir(result.experiment_id, by_kind["hang"].number)
    assert wait_dead(read_pids(folder), within=1.0) == []


def test_stopping_an_experiment_stops_its_command_trials_and_keeps_their_reports(tmp_path):
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    exp = hyperlab.Experiment(
        CommandTrial(script("report_steps.py", "--steps", 200, "--sleep", 0.05)),
        {"x": hs.uniform(1, 2)},
        max_trials=10,
        executor="command",
        concurrency=2,
        metric="loss",
        storage=url,
        progress=False,
    )
    exp.start()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:  # the store shows reports of a still-running trial
        running = [t for t in exp.result().trials if t.status is TrialStatus.RUNNING]
        if any(t.reports for t in running):
            break
        time.sleep(0.05)
    else:
        pytest.fail("no report of a running trial reached the store")
    exp.stop()
    result = exp.wait(20)
    assert result.status is ExperimentStatus.STOPPED
    assert result.trials and all(t.status is TrialStatus.SYS_CANCELED for t in result.trials)
    assert all(t.reports for t in result.trials)


# ---- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"command": ""}, r"trial\.command: expected a non-empty shell command, got ''"),
        ({"command": None}, r"trial\.command: .* got None"),
        ({"command": "x", "env": {"A": 1}}, r"trial\.env: .*strings, got \{'A': 1\}"),
        ({"command": "x", "env": ["A"]}, r"trial\.env: "),
        ({"command": "x", "code_dir": 3}, r"trial\.code_dir: expected a folder path, got 3"),
    ],
)
def test_command_trial_validation_names_the_field(kwargs, match):
    with pytest.raises(hyperlab.ConfigError, match=match):
        CommandTrial(**kwargs)


def test_the_command_executor_needs_a_command_trial_and_an_existing_code_dir(tmp_path):
    with pytest.raises(hyperlab.ConfigError, match=r"objective: the 'command' executor runs"):
        create_executor("command", print)
    missing = tmp_path / "nowhere"
    with pytest.raises(hyperlab.ConfigError, match=r"trial\.code_dir: expected an existing"):
        create_executor("command", CommandTrial("true", code_dir=str(missing)))
    with pytest.raises(hyperlab.ConfigError, match=r"objective: expected a callable"):
        create_executor("threads", CommandTrial("true"))
    assert create_executor("command", "echo hi").objective == CommandTrial("echo hi")
    assert CommandTrial("x", code_dir=".").code_dir == os.getcwd()
    assert SCRIPTS.is_dir()


# ---- the trial side ------------------------------------------------------------------------


def test_inside_a_command_the_api_reads_the_environment_and_writes_the_channel(
    tmp_path, monkeypatch
):
    import numpy as np

    from hyperlab.reporting import context as reporting

    (tmp_path / "parameter.json").write_text(json.dumps({"parameters": {"x": 1.5, "k": "a"}}))
    channel = tmp_path / "metrics.jsonl"
    for name, value in {
        "HYPERLAB_PARAMS_FILE": str(tmp_path / "parameter.json"),
        "HYPERLAB_CHANNEL": str(channel),
        "HYPERLAB_TRIAL_ID": "abcd1234-7",
        "HYPERLAB_TRIAL_NUMBER": "7",
        "HYPERLAB_TRIAL_DIR": str(tmp_path / "out"),
        "HYPERLAB_SEED": "99",
        "HYPERLAB_DEVICES": "2,3",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(reporting, "_process_context", None)
    assert hyperlab.get_params() == {"x": 1.5, "k": "a"}
    assert hyperlab.trial_seed() == 99 and hyperlab.trial_devices() == (2, 3)
    assert hyperlab.trial_dir() == tmp_path / "out" and (tmp_path / "out").is_dir()
    hyperlab.report(0.5)
    hyperlab.report(loss=np.float32(0.25), acc=np.int64(3), step=5)
    reporting.current().set_final({"default": 0.125})
    assert reporting.current().experiment_id == "abcd1234"
    lines = [json.loads(line) for line in channel.read_text().splitlines()]
    assert [(m["tag"], m.get("step"), m["metrics"]) for m in lines] == [
        ("report", 0, {"default": 0.5}),
        ("report", 5, {"loss": 0.25, "acc": 3}),
        ("final", None, {"default": 0.125}),
    ]
    with pytest.raises(hyperlab.HyperlabError, match=r"report\(\): metric 'thing' of type object"):
        hyperlab.report(thing=object())
    monkeypatch.setattr(reporting, "_process_context", None)
    monkeypatch.setenv("HYPERLAB_PARAMS_FILE", str(tmp_path / "missing.json"))
    with pytest.raises(hyperlab.HyperlabError, match=r"HYPERLAB_PARAMS_FILE: cannot read"):
        hyperlab.get_params()
    monkeypatch.delenv("HYPERLAB_PARAMS_FILE")
    with pytest.raises(hyperlab.HyperlabError, match=r"no trial is running here"):
        hyperlab.get_params()
