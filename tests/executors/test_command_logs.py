"""``max_log_bytes``: a command trial's stdout.log and stderr.log keep their head and tail."""

from __future__ import annotations

import os
import re
import shlex
import time
from pathlib import Path

import pytest

from hyperlab.config import ExperimentOptions, load_config, validate_options
from hyperlab.errors import ConfigError
from hyperlab.executors import CommandTrial, Failed, Finished, Reported, create_executor
from hyperlab.executors._logs import CappedLog, open_for_trial
from hyperlab.executors.base import DEFAULT_MAX_LOG_BYTES
from tests.executors.harness import PYTHON, Recorder, drive, spec

MiB = 1024 * 1024
MARKER = re.compile(
    rb"\[hyperlab: (\d+) bytes of this log dropped here; max_log_bytes=(\d+) [^\n]*\n"
)

# Prints `bursts` bursts of `lines` numbered lines of 100 bytes to stdout and to stderr,
# reporting after each, then sends a final result and exits with `code`. A "burst" is one
# write per stream, and before the next one the trial waits until the executor has trimmed
# both logs (so no write races a trim, and the test may expect every byte to be accounted
# for); "stream" writes line by line without waiting, racing the trims.
TRIAL = """
import json, os, sys, time
bursts, lines, code, cap = map(int, sys.argv[1:5])
stream = sys.argv[5] == "stream"
channel = open(os.environ["HYPERLAB_CHANNEL"], "a")
def send(tag, step, loss):
    channel.write(json.dumps({"tag": tag, "step": step, "metrics": {"loss": loss}}) + "\\n")
    channel.flush()
def trimmed():
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if all(cap // 2 + 200 < os.fstat(fd).st_size <= cap + 200 for fd in (1, 2)):
            return
        time.sleep(0.01)
    sys.exit("the logs were not trimmed in time")
for b in range(bursts):
    numbers = range(b * lines, (b + 1) * lines)
    out = [f"out {i:08d} " + "o" * 86 + "\\n" for i in numbers]
    err = [f"err {i:08d} " + "e" * 86 + "\\n" for i in numbers]
    if stream:
        for o, e in zip(out, err):
            sys.stdout.write(o)
            sys.stderr.write(e)
        sys.stdout.flush(); sys.stderr.flush()
    else:
        os.write(1, "".join(out).encode())
        os.write(2, "".join(err).encode())
    send("report", b, float(b))
    if cap and not stream and b < bursts - 1:
        trimmed()
send("final", None, 0.5)
sys.exit(code)
"""


def trial_command(
    bursts: int, lines: int, *, cap: int | None, code: int = 0, stream: bool = False
) -> str:
    words = [bursts, lines, code, cap or 0, "stream" if stream else "burst"]
    return " ".join([PYTHON, "-S", "-c", shlex.quote(TRIAL), *map(str, words)])


def expected(stream: str, count: int) -> bytes:
    """What the trial printed to ``stream`` (``out`` or ``err``): ``count`` lines of 100 bytes."""
    fill = "o" if stream == "out" else "e"
    return "".join(f"{stream} {i:08d} " + fill * 86 + "\n" for i in range(count)).encode()


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
        _opened.pop().close()


def split(log: bytes) -> tuple[bytes, int, bytes]:
    """``(head, dropped, tail)`` of a trimmed log; there is exactly one marker."""
    (match,) = list(MARKER.finditer(log))
    return log[: match.start()], int(match.group(1)), log[match.end() :]


def check_trimmed(path: Path, printed: bytes, cap: int) -> None:
    """The log holds the head and the tail of ``printed`` (whose lines are 100 bytes long),
    the count of the bytes between them, and nothing else."""
    log = path.read_bytes()
    head, dropped, tail = split(log)
    marker = len(log) - len(head) - len(tail)
    assert len(head) + len(tail) <= cap and len(log) <= cap + marker < cap + 100
    assert head == printed[: cap // 2 // 100 * 100]  # half the cap, ending at a line
    assert printed.endswith(tail) and len(tail) >= cap // 4 and tail[:4] == printed[:4]  # a line
    assert len(head) + dropped + len(tail) == len(printed)


# ---- through the executor ------------------------------------------------------------------


def test_a_trial_printing_8_mb_keeps_head_and_tail_within_the_cap(tmp_path):
    bursts, lines, cap = 3, 27_000, MiB  # 3 x 2.7 MB to each stream
    executor = command(trial_command(bursts, lines, cap=cap), max_log_bytes=cap)
    folder = tmp_path / "trials" / "0"
    largest = 0
    recorder = Recorder()
    executor.open(recorder)
    executor.submit(spec(0, tmp_path))
    deadline = time.monotonic() + 30
    while executor.running:
        executor.poll(0.05)
        if (folder / "stdout.log").exists():
            largest = max(largest, (folder / "stdout.log").stat().st_size)
        assert time.monotonic() < deadline
    end = recorder.end(0)
    assert isinstance(end, Finished) and end.metrics == {"loss": 0.5}
    assert [e.step for e in recorder.of(0, Reported)] == list(range(bursts))
    assert largest < 4 * MiB  # trimmed while it ran: at most the cap and a burst
    check_trimmed(folder / "stdout.log", expected("out", bursts * lines), cap)
    check_trimmed(folder / "stderr.log", expected("err", bursts * lines), cap)


def test_a_trial_that_prints_fast_and_exits_is_trimmed_at_its_end(tmp_path):
    cmd = trial_command(1, 80_000, cap=MiB)
    rec = drive(command(cmd, max_log_bytes=MiB), [spec(0, tmp_path)])
    assert isinstance(rec.end(0), Finished)
    folder = tmp_path / "trials" / "0"
    check_trimmed(folder / "stdout.log", expected("out", 80_000), MiB)
    check_trimmed(folder / "stderr.log", expected("err", 80_000), MiB)


def test_trims_racing_the_trials_writes_lose_at_most_a_few_of_them(tmp_path):
    cmd = trial_command(4, 15_000, cap=MiB, stream=True)
    rec = drive(command(cmd, max_log_bytes=MiB), [spec(0, tmp_path)])
    assert isinstance(rec.end(0), Finished) and len(rec.of(0, Reported)) == 4
    for name in ("out", "err"):
        printed = expected(name, 60_000)
        log = (tmp_path / "trials" / "0" / f"std{name}.log").read_bytes()
        head, dropped, tail = split(log)
        marker = len(log) - len(head) - len(tail)
        assert len(log) <= MiB + marker
        assert head.startswith(printed[: MiB // 4]) and printed.endswith(log[-1000:])
        assert 0 <= len(printed) - (len(head) + dropped + len(tail)) <= 256 * 1024


def test_without_a_cap_the_logs_keep_everything(tmp_path):
    cmd = trial_command(2, 15_000, cap=None)
    rec = drive(command(cmd, max_log_bytes=None), [spec(0, tmp_path)])
    assert isinstance(rec.end(0), Finished)
    folder = tmp_path / "trials" / "0"
    assert (folder / "stdout.log").read_bytes() == expected("out", 30_000)
    assert (folder / "stderr.log").read_bytes() == expected("err", 30_000)


def test_logs_within_the_cap_are_left_alone(tmp_path):
    drive(command(trial_command(1, 500, cap=MiB), max_log_bytes=MiB), [spec(0, tmp_path)])
    assert (tmp_path / "trials" / "0" / "stdout.log").read_bytes() == expected("out", 500)


def test_a_failed_trial_quotes_the_end_of_its_trimmed_stderr(tmp_path):
    cap = 64 * 1024
    cmd = trial_command(2, 20_000, cap=cap, code=3)
    rec = drive(command(cmd, max_log_bytes=cap), [spec(0, tmp_path)])
    end = rec.end(0)
    assert isinstance(end, Failed) and "exited with code 3" in end.error
    last = expected("err", 40_000).decode().splitlines()[-20:]
    assert end.error.splitlines()[-20:] == last
    check_trimmed(tmp_path / "trials" / "0" / "stderr.log", expected("err", 40_000), cap)


def test_run_caps_command_trials_logs_with_max_log_bytes(tmp_path):
    import hyperlab

    cmd = trial_command(1, 30_000, cap=MiB)
    space = {"x": {"_type": "uniform", "_value": [0, 1]}}
    db = tmp_path / "db.sqlite"
    with pytest.raises(ConfigError, match=r"max_log_bytes.*1000"):
        hyperlab.run(
            CommandTrial(cmd),
            space,
            max_trials=1,
            storage=f"sqlite:///{db}",
            executor_args={"max_log_bytes": 1000},
        )
    assert not db.exists()  # refused before anything was written
    result = hyperlab.run(
        CommandTrial(cmd),
        space,
        max_trials=1,
        executor="command",
        metric="loss",
        storage=":memory:",
        working_dir=tmp_path,
        executor_args={"max_log_bytes": MiB},
        progress=False,
    )
    (trial,) = result.trials
    assert trial.status.name == "SUCCEEDED"
    folder = tmp_path / result.experiment_id / "trials" / "0"
    check_trimmed(folder / "stdout.log", expected("out", 30_000), MiB)
    check_trimmed(folder / "stderr.log", expected("err", 30_000), MiB)


def test_a_retried_trial_starts_with_empty_logs(tmp_path):
    folder = tmp_path / "trials" / "0"
    folder.mkdir(parents=True)
    (folder / "stdout.log").write_bytes(b"x" * 5000)
    drive(command(trial_command(1, 3, cap=2048), max_log_bytes=2048), [spec(0, tmp_path)])
    assert (folder / "stdout.log").read_bytes() == expected("out", 3)


# ---- the trims themselves ------------------------------------------------------------------


def test_successive_trims_keep_one_marker_with_the_cumulative_count(tmp_path):
    path = tmp_path / "stdout.log"
    writer = open_for_trial(path)
    log = CappedLog(path, 4096)
    printed = b""
    trims = 0
    try:
        for n in range(1, 121):
            line = b"line %06d " % n + b"x" * 88 + b"\n"  # 100 bytes
            os.write(writer, line)
            printed += line
            if n <= 100:  # each call is past the previous one's CHECK_EVERY
                trims += log.check(now=float(n))
        assert trims >= 5
        assert log.finish()  # the last 20 lines took it past the cap again
    finally:
        log.close()
        os.close(writer)
    data = path.read_bytes()
    head, dropped, tail = split(data)
    assert printed.startswith(head) and printed.endswith(tail)
    assert len(head) + dropped + len(tail) == len(printed)  # nothing written during a trim
    assert len(head) + len(tail) <= 4096
    assert not log.finish()  # within the cap: left alone


def test_a_trim_keeps_the_head_written_before_it_and_counts_across_trims(tmp_path):
    path = tmp_path / "stderr.log"
    writer = open_for_trial(path)
    log = CappedLog(path, 1024)

    def parts() -> tuple[bytes, int, bytes]:
        head, dropped, tail = split(path.read_bytes())
        return head.removesuffix(b"\n"), dropped, tail  # no line breaks: the marker adds one

    try:
        os.write(writer, b"a" * 3000)  # no line breaks: cut at byte counts
        assert log.check(now=0.0)
        head, dropped, tail = parts()
        assert head == b"a" * 512 and tail == b"a" * 256 and dropped == 3000 - 512 - 256
        os.write(writer, b"b" * 3000)
        assert not log.check(now=0.1)  # looked at no more often than CHECK_EVERY
        assert log.check(now=1.0)
        head, dropped, tail = parts()
        assert head == b"a" * 512 and tail == b"b" * 256 and dropped == 6000 - 512 - 256
        assert not log.finish()  # within the cap
        os.write(writer, b"c" * 300)
        assert log.finish()  # the trial ended: as much tail as the cap allows
        head, dropped, tail = parts()
        assert head == b"a" * 512 and tail == b"b" * 212 + b"c" * 300
        assert dropped == 6300 - 1024
        assert path.read_bytes().count(b"[hyperlab:") == 1
    finally:
        log.close()
        os.close(writer)


# ---- the option ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 512, 1023, -1, True, 2048.5, "big"])
def test_a_bad_max_log_bytes_is_a_config_error_naming_it(value):
    with pytest.raises(ConfigError, match=r"max_log_bytes") as info:
        validate_options(max_log_bytes=value)
    assert repr(value) in str(info.value) or str(value) in str(info.value)
    with pytest.raises(ConfigError, match=r"max_log_bytes: .*" + re.escape(repr(value))):
        command("true", max_log_bytes=value)


def test_max_log_bytes_defaults_to_50_mib_and_reaches_every_executor():
    from hyperlab.experiment._setup import make_executor

    assert ExperimentOptions().max_log_bytes == DEFAULT_MAX_LOG_BYTES == 50 * MiB
    assert command("true").max_log_bytes == DEFAULT_MAX_LOG_BYTES
    for name in ("command", "inprocess", "threads"):
        objective = CommandTrial("true") if name == "command" else (lambda params: 0.0)
        for value in (4096, None):
            options = validate_options(executor=name, max_log_bytes=value)
            executor = make_executor(options, objective)
            try:
                assert executor.max_log_bytes == value
            finally:
                executor.close()


def test_config_files_take_max_log_bytes(tmp_path):
    (tmp_path / "space.json").write_text('{"x": {"_type": "uniform", "_value": [0, 1]}}')
    base = "search_space: space.json\ntrial: {command: 'true'}\nmax_trials: 1\n"
    (tmp_path / "a.yml").write_text(base + "max_log_bytes: 2097152\n")
    assert load_config(tmp_path / "a.yml").options().max_log_bytes == 2 * MiB
    (tmp_path / "b.yml").write_text(base + "max_log_bytes: null\n")
    assert load_config(tmp_path / "b.yml").options().max_log_bytes is None
    (tmp_path / "c.yml").write_text(base + "max_log_bytes: 100\n")
    with pytest.raises(ConfigError, match=r"max_log_bytes.*100"):
        load_config(tmp_path / "c.yml")
    nni = "searchSpaceFile: space.json\ntrialCommand: 'true'\nmaxTrialNumber: 1\n"
    (tmp_path / "nni.yml").write_text(nni)
    assert load_config(tmp_path / "nni.yml").options().max_log_bytes == DEFAULT_MAX_LOG_BYTES
