"""Starting a command trial: its folder made ready, its environment, its shell started.

The trial's folder gets its ``parameter.json``, an empty channel and its ``stdout.log`` and
``stderr.log`` (appended to when the run resumes the attempt that ran there last); its shell
starts through ``/bin/sh -c`` as the leader of a new process group, with ``HYPERLAB_*`` and
NNI's variables, a mark for the processes that leave its group, and the ``nni`` shim first on
``PYTHONPATH``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hyperlab.executors._command._orphans import EXIT_FILE, stop_leftover_group, with_exit_status
from hyperlab.executors._command._run import signal_marked
from hyperlab.executors._command._trial import CommandTrial
from hyperlab.executors._logs import CappedLog, open_for_trial
from hyperlab.executors._output import LogTail, echo_tails, finish_logs
from hyperlab.executors._reaper import add_mark, new_mark
from hyperlab.executors.base import TrialSpec
from hyperlab.reporting.channel import PARAMS_FILE, json_default, open_channel, trial_variables
from hyperlab.reporting.checkpoints import CHECKPOINTS_DIR

__all__ = [
    "ATTEMPT_FILE",
    "STDERR_FILE",
    "STDOUT_FILE",
    "Launched",
    "launch",
    "make_python_path",
    "trial_folder",
]

STDOUT_FILE = "stdout.log"
STDERR_FILE = "stderr.log"
ATTEMPT_FILE = "attempt"


@dataclass(slots=True)
class Launched:
    """A trial's shell just started, and what watches its output.

    Attributes:
        process: The shell, the leader of the trial's process group.
        mark: The mark in its processes' environment (``hyperlab.executors._reaper``).
        logs: Its ``stdout.log`` and ``stderr.log``, when ``max_log_bytes`` caps them.
        echoes: With ``echo_output``, what echoes its logs to the driver's streams.
    """

    process: subprocess.Popen
    mark: str
    logs: list[CappedLog]
    echoes: list[LogTail]

    def abandon(self) -> None:
        """Undo the start: stop watching the logs and kill every process of the trial."""
        finish_logs([], self.echoes)
        for log in self.logs:
            log.close()
        with contextlib.suppress(OSError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        signal_marked(self.mark, signal.SIGKILL)


def make_python_path() -> tuple[str, str | None]:
    """A ``PYTHONPATH`` entry holding exactly ``nni`` (the shim) and ``hyperlab``, and the
    folder made for it (for the caller to remove), if any.

    A folder of two symlinks, so that a trial run by another interpreter does not see the
    driver's site-packages; without symlinks, the shim's folder and hyperlab's parent.
    """
    package = Path(__file__).resolve().parents[2]
    shim = package / "compat" / "nni"
    try:
        links = tempfile.mkdtemp(prefix="hyperlab-pythonpath-")
        os.symlink(package, os.path.join(links, "hyperlab"), target_is_directory=True)
        os.symlink(shim, os.path.join(links, "nni"), target_is_directory=True)
    except OSError:
        return os.pathsep.join([str(shim.parent), str(package.parent)]), None
    return links, links


def trial_folder(spec: TrialSpec, stop_grace: float) -> Path:
    """The trial's folder, made if missing (a temporary one without ``spec.trial_dir``).

    Whatever is left there of a dead driver's attempt is stopped first.
    """
    if spec.trial_dir is None:
        return Path(tempfile.mkdtemp(prefix=f"hyperlab-trial-{spec.number}-"))
    folder = Path(os.path.abspath(spec.trial_dir))
    folder.mkdir(parents=True, exist_ok=True)
    stop_leftover_group(folder, stop_grace)  # a dead driver's attempt, if any
    return folder


def launch(
    spec: TrialSpec,
    folder: Path,
    trial: CommandTrial,
    *,
    python_path: str,
    max_log_bytes: int | None,
    echo_output: bool,
) -> Launched:
    """Write the trial's parameters, reset its channel and start its shell in ``folder``.

    Raises:
        OSError: A file could not be written or the shell could not be started; nothing is
            left running or watched then.
    """
    document = {
        "parameter_id": spec.number,
        "parameter_source": "algorithm",
        "parameters": spec.params,
        "parameter_index": 0,
    }
    (folder / PARAMS_FILE).write_text(json.dumps(document, default=json_default))
    open_channel(folder)  # a retried or resumed trial starts with an empty channel
    (folder / EXIT_FILE).unlink(missing_ok=True)  # the previous attempt's
    mark = new_mark()
    env = add_mark(_environment(spec, folder, trial, python_path), mark)
    resumed = _resumes(spec, folder)  # a resumed paused trial keeps its earlier output
    outputs: list[int] = []  # the trial's stdout and stderr, appended to (see _logs)
    logs: list[CappedLog] = []
    echoes: list[LogTail] = []
    try:
        for name in (STDOUT_FILE, STDERR_FILE):
            outputs.append((_open_to_append if resumed else open_for_trial)(folder / name))
            if max_log_bytes is not None:
                logs.append(CappedLog(folder / name, max_log_bytes))
        if echo_output:
            echoes = echo_tails([folder / STDOUT_FILE, folder / STDERR_FILE], spec.number)
        process = subprocess.Popen(
            with_exit_status(trial.command, folder, spec.attempt),
            shell=True,
            cwd=trial.code_dir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=outputs[0],
            stderr=outputs[1],
            start_new_session=True,
        )
    except BaseException:
        finish_logs([], echoes)
        for log in logs:
            log.close()
        raise
    finally:
        for fd in outputs:
            os.close(fd)
    return Launched(process, mark, logs, echoes)


def _environment(
    spec: TrialSpec, folder: Path, trial: CommandTrial, python_path: str
) -> dict[str, str]:
    env = dict(os.environ)
    env.update(trial.env)
    (folder / CHECKPOINTS_DIR).mkdir(exist_ok=True)  # hyperlab.checkpoint()'s, or any program's
    env.pop("HYPERLAB_RESTORE_DIR", None)
    env.update(
        trial_variables(
            number=spec.number,
            trial_id=spec.trial_id,
            folder=folder,
            seed=spec.seed,
            attempt=spec.attempt,
            devices=spec.devices,
            checkpoint_keep=spec.checkpoint_keep,
            restore_from=spec.restore_from,
            checkpoint_score=spec.checkpoint_score,
            round_trip=spec.round_trip,
        )
    )
    if spec.devices:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, spec.devices))
    paths = [python_path, env.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    return env


def _resumes(spec: TrialSpec, folder: Path) -> bool:
    """Whether this run resumes the attempt that ran last in ``folder`` (a paused trial
    resumed, same attempt), whose logs it then appends to; records this run's attempt.

    A re-run after a crash (``attempt + 1``) and a first run start with empty logs.
    """
    path = folder / ATTEMPT_FILE
    try:
        before = path.read_text().strip()
    except OSError:
        before = ""
    path.write_text(f"{spec.attempt}\n")
    return before == str(spec.attempt)


def _open_to_append(path: Path) -> int:
    """``path`` opened for a resumed trial to append to, its earlier output kept."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o666)
