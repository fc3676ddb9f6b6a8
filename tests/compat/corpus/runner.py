"""Running the corpus's own scripts (``scripts/optuna``, ``scripts/nni``) twice: on hyperlab,
their import lines rewritten on the fly, and on the real library where it is installed. Each
script prints one ``RESULT {...}`` line (JSON), read here."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRIPTS = Path(__file__).parent / "scripts"
TIMEOUT = 180.0


def optuna_on_hyperlab(source: str) -> str:
    """``import optuna`` and ``from optuna.x import Y`` pointed at ``hyperlab.compat.optuna``."""
    changed = re.sub(
        r"^(\s*)import optuna$", r"\1import hyperlab.compat.optuna as optuna", source, flags=re.M
    )
    changed = re.sub(
        r"^(\s*)from optuna((?:\.\w+)*) import",
        r"\1from hyperlab.compat.optuna\2 import",
        changed,
        flags=re.M,
    )
    assert "optuna" not in re.findall(r"^\s*(?:from|import) (\w+)", changed, flags=re.M)
    return changed


@dataclass
class Run:
    """One run of a script: its exit status, its RESULT, its first error line, its output."""

    returncode: int
    result: dict[str, Any] | None
    error: str
    stdout: str
    stderr: str
    results: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ran(self) -> bool:
        return self.returncode == 0 and self.result is not None


def first_error(stderr: str) -> str:
    """The line that says what went wrong: the traceback's last exception line."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[\w.]+(Error|Exception|Exit)\b", line):
            return line[:300]
    return lines[-1][:300] if lines else ""


def _kill_started_in(folder: Path) -> None:
    """Kill every process whose command line names ``folder`` (what a timed-out run started
    outside its session: NNI's node manager, given its experiments directory there). The
    pipes are not read after a timeout, so a survivor holding them cannot hang the test."""
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, ValueError):
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            if str(folder) in command and int(entry.name) != os.getpid():
                os.kill(int(entry.name), signal.SIGKILL)


def run(
    args: list[str],
    cwd: Path,
    *,
    python: str = sys.executable,
    env: dict[str, str] | None = None,
    timeout: float = TIMEOUT,
) -> Run:
    """``python ARGS`` in ``cwd``; its RESULT lines (the last one as ``result``)."""
    environment = {**os.environ, "HYPERLAB_HOME": str(cwd / "hyperlab-home"), **(env or {})}
    # a session of its own, killed whole on a timeout: NNI's launcher starts a node manager
    # that would outlive it
    with subprocess.Popen(
        [python, *args],
        cwd=cwd,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            # NNI's node manager leaves the session; its home is beside the script's folder
            _kill_started_in(cwd.parent)
            proc.wait()
            return Run(-9, None, f"timed out after {timeout:g} s", "", "")
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    results = [
        json.loads(line.removeprefix("RESULT "))
        for line in done.stdout.splitlines()
        if line.startswith("RESULT ")
    ]
    error = "" if done.returncode == 0 else first_error(done.stderr)
    if done.returncode == 0 and not results:
        error = "no RESULT line"
    return Run(
        done.returncode,
        results[-1] if results else None,
        error,
        done.stdout,
        done.stderr,
        results,
    )


def optuna_script(name: str, folder: Path, *, real: bool, times: int = 1) -> Run:
    """Run ``scripts/optuna/NAME`` in ``folder`` (made here) ``times`` times, with Optuna
    itself (``real``) or with its imports rewritten to hyperlab's; every RESULT is kept."""
    source = (SCRIPTS / "optuna" / name).read_text()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(source if real else optuna_on_hyperlab(source))
    runs = [run([name], folder) for _ in range(times)]
    last = runs[-1]
    last.results = [r.result for r in runs if r.result is not None]
    failed = next((r for r in runs if not r.ran), None)
    return failed or last
