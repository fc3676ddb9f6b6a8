"""Progress: a live bar on a terminal, plain lines elsewhere (nohup, batch logs), nothing with
progress=False."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import hyperlab
from hyperlab.config import MAX_TRIALS
from hyperlab.experiment._progress import ProgressLines

ROOT = Path(__file__).resolve().parents[2]
LINE = r"hyperlab \w{8}: \d+/40 trials, \d running, 0 failed, best (-|\d[\d.]*(e-\d+)?), 0m0\ds"
SCRIPT = """
import sys, time, hyperlab
progress = {"auto": None, "off": False}[sys.argv[1]]
def objective(params):
    time.sleep(0.01)
    return params["x"]
hyperlab.run(objective, {"x": hyperlab.uniform(0, 1)}, max_trials=40, storage=":memory:",
             progress=progress, executor="threads", concurrency=2, tuner="random", seed=1)
"""


def run_in_terminal(mode: str) -> str:
    """Run the script with a pseudo-terminal as stdout/stderr; return what it drew."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", SCRIPT, mode],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "160", "TERM": "xterm"},
    )
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=30)
    os.close(master)
    assert proc.returncode == 0
    return b"".join(chunks).decode(errors="replace")


def test_terminal_shows_a_live_bar_with_counts_and_best():
    screen = run_in_terminal("auto")
    assert "40/40" in screen
    assert "running" in screen and "failed 0" in screen
    assert re.search(r"best \d[\d.]*(e-\d+)? ", screen)  # a number, whatever its format


def test_progress_false_draws_nothing_even_on_a_terminal():
    assert run_in_terminal("off").strip() == ""


def run_piped(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, cwd=ROOT, timeout=60
    )


def test_plain_lines_when_not_a_terminal_each_tenth_of_the_trials():
    out = run_piped("auto")
    assert out.returncode == 0 and out.stdout == ""
    where, *lines = out.stderr.splitlines()
    assert re.fullmatch(r"hyperlab \w{8}: kept in memory, files in .*hyperlab-\w{8}", where)
    assert "\x1b" not in out.stderr  # no terminal codes in a log file
    assert 9 <= len(lines) <= 11, lines  # one per tenth of the 40 trials
    finished = [int(line.split(": ")[1].split("/")[0]) for line in lines]
    assert finished == sorted(finished) and finished[-1] >= 36
    assert all(re.fullmatch(LINE, line) for line in lines), lines


def test_progress_lines_come_every_interval_and_each_tenth(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(time, "monotonic", lambda: now[0])
    out = io.StringIO()
    lines = ProgressLines("abcd1234", 100, interval=30.0, out=out)
    driver = SimpleNamespace(
        counts={"finished": 0, "failed": 0},
        active={1: None},
        best=None,
        max_trials=100,
        elapsed=lambda: now[0],
    )
    for second in range(0, 121):  # 0.2 trials a second: a tenth every 50 s
        now[0] = float(second)
        driver.counts["finished"] = second // 5
        lines.update(driver)
    printed = out.getvalue().splitlines()
    assert [line.split(", ")[0] for line in printed] == [
        "hyperlab abcd1234: 6/100 trials",  # 30 s
        "hyperlab abcd1234: 10/100 trials",  # a tenth done, at 50 s
        "hyperlab abcd1234: 16/100 trials",  # 30 s later
        "hyperlab abcd1234: 20/100 trials",  # the second tenth, at 100 s
    ]
    assert printed[-1] == "hyperlab abcd1234: 20/100 trials, 1 running, 0 failed, best -, 1m40s"


def test_progress_false_prints_nothing_when_not_a_terminal_either():
    out = run_piped("off")
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""


def test_progress_lines_count_the_trials_started_in_place_of_those_that_ended(capsys):
    """At concurrency 2, a line shows 2 running while two run: it is printed after the driver
    starts the trials that take the finished ones' places, not between."""
    both_running = threading.Barrier(2, timeout=20)

    def objective(params):
        both_running.wait()  # every pair of trials runs at once
        return params["x"]

    hyperlab.run(
        objective,
        {"x": hyperlab.uniform(0, 1)},
        max_trials=8,
        storage=":memory:",
        progress=1e-9,  # a line at every turn of the driver's loop
        executor="threads",
        concurrency=2,
        tuner="random",
    )
    lines = capsys.readouterr().err.splitlines()
    counts = [re.search(r": (\d+)/8 trials, (\d) running", line) for line in lines]
    shown = [(int(m.group(1)), int(m.group(2))) for m in counts if m is not None]
    assert shown and all(running == 2 for finished, running in shown if finished <= 6), shown


@pytest.mark.parametrize(
    ("cap", "shown"), [(MAX_TRIALS, "12 trials"), (None, "12 trials"), (40, "12/40 trials")]
)
def test_a_progress_line_shows_no_cap_without_one(cap, shown, capsys):
    driver = SimpleNamespace(
        counts={"finished": 12, "failed": 0},
        active={},
        best=None,
        max_trials=cap,
        elapsed=lambda: 1.0,
    )
    ProgressLines("abcd1234", cap, interval=0.0).update(driver)
    assert capsys.readouterr().err.startswith(f"hyperlab abcd1234: {shown}, 0 running")
