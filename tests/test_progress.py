"""The live progress bar: shown on a terminal, absent otherwise or with progress=False."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import sys, time, hyperlab
progress = {"auto": None, "off": False}[sys.argv[1]]
def objective(params):
    time.sleep(0.01)
    return params["x"]
hyperlab.run(objective, {"x": hyperlab.uniform(0, 1)}, max_trials=40, storage=":memory:",
             progress=progress, executor="threads", concurrency=2)
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
    assert "best 0." in screen


def test_progress_false_draws_nothing_even_on_a_terminal():
    assert run_in_terminal("off").strip() == ""


def test_no_bar_when_not_a_terminal():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, "auto"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0 and out.stdout == "" and out.stderr == ""
