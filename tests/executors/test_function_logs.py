"""Function trials' stdout.log and stderr.log: what the processes, threads and inprocess
executors capture, how they cap it, and echo_output."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

import hyperlab
from hyperlab.cli import main as cli_main
from hyperlab.executors import Finished, TrialSpec, create_executor
from tests.executors.harness import drive, spec

LOCAL = ["processes", "threads", "inprocess"]
MARKER = "bytes of this log dropped here; max_log_bytes=1024 caps it]"


def logs(folder, number):
    trial = folder / "trials" / str(number)
    return (trial / "stdout.log").read_text(), (trial / "stderr.log").read_text()


def talk(params):
    print(f"hello from {params['x']}")
    print(f"trouble in {params['x']}", file=sys.stderr)
    return params["x"]


def talk_below_python(params):
    talk(params)
    sys.stdout.flush()
    os.write(1, b"written to descriptor 1\n")
    os.write(2, b"written to descriptor 2\n")
    subprocess.run(["echo", "from a child process"], check=True)
    return params["x"]


def flood(params):
    for i in range(2000):
        print(f"line {i:05d} of a long output")
        print(f"error {i:05d} of a long output", file=sys.stderr)
    return 1.0


@pytest.mark.parametrize("name", LOCAL)
def test_a_function_trial_prints_to_its_own_logs_not_to_the_driver(name, tmp_path, capfd):
    recorder = drive(
        create_executor(name, talk, concurrency=2), [spec(0, tmp_path), spec(1, tmp_path)]
    )
    assert [type(recorder.end(n)) for n in (0, 1)] == [Finished, Finished]
    for number in (0, 1):
        out, err = logs(tmp_path, number)
        assert out == f"hello from {float(number)}\n"
        assert err == f"trouble in {float(number)}\n"
    seen = capfd.readouterr()
    assert "hello from" not in seen.out and "trouble in" not in seen.err


@pytest.mark.parametrize("name", LOCAL)
def test_a_failed_trials_error_ends_its_stderr_log(name, tmp_path):
    def broken(params):
        print("about to fail", file=sys.stderr)
        raise ValueError("no good")

    recorder = drive(create_executor(name, broken), [spec(0, tmp_path)])
    error = recorder.end(0).error
    assert "Traceback" in error and "ValueError: no good" in error
    assert logs(tmp_path, 0) == ("", f"about to fail\n{error}\n")


def test_a_process_trial_captures_descriptors_and_child_processes(tmp_path, capfd):
    recorder = drive(create_executor("processes", talk_below_python), [spec(0, tmp_path)])
    assert isinstance(recorder.end(0), Finished)
    out, err = logs(tmp_path, 0)
    assert out == "hello from 0.0\nwritten to descriptor 1\nfrom a child process\n"
    assert err == "trouble in 0.0\nwritten to descriptor 2\n"
    assert "descriptor" not in "".join(capfd.readouterr())


def test_a_reused_worker_gives_each_trial_its_own_logs_and_the_driver_its_streams(tmp_path, capfd):
    executor = create_executor("processes", talk_below_python)  # one worker, reused
    drive(executor, [spec(n, tmp_path) for n in range(3)])
    for number in range(3):
        out, _ = logs(tmp_path, number)
        assert out.splitlines()[0] == f"hello from {float(number)}"
        assert out.count("from a child process") == 1


def test_two_thread_trials_running_at_once_do_not_mix_their_output(tmp_path):
    both_running = threading.Barrier(2, timeout=10)

    def chatty(params):
        tag = int(params["x"])
        for i in range(200):
            print(f"trial-{tag} line {i}")
            print(f"trial-{tag} problem {i}", file=sys.stderr)
            if i == 0:
                both_running.wait()  # from here on, both print at the same time
        return 0.0

    drive(create_executor("threads", chatty, concurrency=2), [spec(0, tmp_path), spec(1, tmp_path)])
    for number in (0, 1):
        out, err = logs(tmp_path, number)
        assert out.splitlines() == [f"trial-{number} line {i}" for i in range(200)]
        assert err.splitlines() == [f"trial-{number} problem {i}" for i in range(200)]


@pytest.mark.parametrize("name", LOCAL)
def test_max_log_bytes_caps_both_logs_keeping_head_and_tail(name, tmp_path):
    recorder = drive(create_executor(name, flood, max_log_bytes=1024), [spec(0, tmp_path)])
    assert isinstance(recorder.end(0), Finished)
    for text, word in zip(logs(tmp_path, 0), ("line", "error"), strict=True):
        head, _, tail = text.partition("[hyperlab: ")
        assert MARKER in text
        assert len((head + tail.split("\n", 1)[1]).encode()) <= 1024
        assert head.startswith(f"{word} 00000 of a long output\n")
        assert tail.endswith(f"{word} 01999 of a long output\n")


@pytest.mark.parametrize("name", LOCAL)
def test_echo_output_also_writes_prefixed_lines_to_the_driver(name, tmp_path, capfd):
    executor = create_executor(name, talk, echo_output=True)
    drive(executor, [spec(3, tmp_path)])
    seen = capfd.readouterr()
    assert "[trial 3] hello from 3.0\n" in seen.out
    assert "[trial 3] trouble in 3.0\n" in seen.err
    assert logs(tmp_path, 3) == ("hello from 3.0\n", "trouble in 3.0\n")


def test_echo_output_echoes_a_command_trial_too(tmp_path, capfd):
    command = "echo hello from the shell; echo trouble in the shell >&2"
    drive(create_executor("command", command, echo_output=True), [spec(4, tmp_path)])
    seen = capfd.readouterr()
    assert "[trial 4] hello from the shell\n" in seen.out
    assert "[trial 4] trouble in the shell\n" in seen.err
    assert logs(tmp_path, 4) == ("hello from the shell\n", "trouble in the shell\n")


def test_run_passes_echo_output_to_its_executor(capfd):
    hyperlab.run(
        talk,
        {"x": hyperlab.choice(5)},
        max_trials=1,
        executor="threads",
        executor_args={"echo_output": True},
        storage=":memory:",
        progress=False,
    )
    assert "[trial 0] hello from 5\n" in capfd.readouterr().out


def test_the_driver_keeps_its_own_output_while_thread_trials_run(tmp_path, capfd):
    started, go_on = threading.Event(), threading.Event()

    def waits(params):
        print("the trial speaks")
        started.set()
        go_on.wait(10)
        return 0.0

    original = sys.stdout
    executor = create_executor("threads", waits)
    events = []
    executor.open(events.append)
    executor.submit(spec(0, tmp_path))
    assert started.wait(10)
    print("the driver speaks")  # while the trial runs
    print("the driver complains", file=sys.stderr)
    go_on.set()
    while executor.running:
        executor.poll(0.05)
    executor.close()
    assert isinstance(events[-1], Finished)
    assert sys.stdout is original  # restored when the executor closed
    seen = capfd.readouterr()
    assert "the driver speaks\n" in seen.out and "the driver complains\n" in seen.err
    assert "the trial speaks" not in seen.out
    assert logs(tmp_path, 0) == ("the trial speaks\n", "")


def test_a_trial_without_a_folder_prints_to_the_driver_as_before(tmp_path, capfd):
    no_folder = TrialSpec(0, "exp12345-0", {"x": 0.0}, 1, None)
    drive(create_executor("threads", talk), [no_folder])
    seen = capfd.readouterr()
    assert "hello from 0.0\n" in seen.out and "trouble in 0.0\n" in seen.err
    assert not (tmp_path / "trials").exists()


def test_a_resumed_paused_trial_appends_and_a_rerun_starts_afresh(tmp_path):
    executor = create_executor("inprocess", talk)
    drive(executor, [spec(0, tmp_path)])
    drive(executor, [spec(0, tmp_path, ran_before=True)])  # a paused trial resumed
    assert logs(tmp_path, 0)[0] == "hello from 0.0\n" * 2
    drive(executor, [spec(0, tmp_path, attempt=2)])  # run again after a crash
    assert logs(tmp_path, 0)[0] == "hello from 0.0\n"


@pytest.mark.parametrize("name", ["threads", "inprocess"])
def test_a_silent_thread_trial_makes_no_files_and_a_silent_rerun_empties_old_logs(name, tmp_path):
    executor = create_executor(name, lambda params: 0.0)
    drive(executor, [spec(0, tmp_path)])
    assert not (tmp_path / "trials" / "0").exists()
    drive(create_executor(name, talk), [spec(1, tmp_path)])
    drive(executor, [spec(1, tmp_path, attempt=2)])  # run again, silently
    assert logs(tmp_path, 1) == ("", "")


def test_hyperlab_logs_shows_a_function_trials_output(tmp_path, capsys):
    result = hyperlab.run(
        talk,
        {"x": hyperlab.choice(7)},
        max_trials=1,
        executor="processes",
        storage=str(tmp_path / "db.sqlite"),
        progress=False,
    )
    capsys.readouterr()
    args = ["--storage", str(tmp_path / "db.sqlite"), "logs", result.experiment_id, "0"]
    assert cli_main(args) == 0
    assert capsys.readouterr().out == "hello from 7\n"
    assert cli_main([*args, "--stderr"]) == 0
    assert capsys.readouterr().out == "trouble in 7\n"
