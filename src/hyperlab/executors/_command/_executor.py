"""Run each trial as a shell command in its own process group (NNI's local mode).

A trial's folder holds what it needs and what it leaves::

    trials/<number>/
      parameter.json   its params, in NNI's format ({"parameter_id", "parameters", ...})
      metrics.jsonl    its channel: one tagged JSON line per report ("report" or "final")
      stdout.log       what the command printed (its head and tail past ``max_log_bytes``)
      stderr.log       its errors (the last lines become the error of a failed trial), capped
                       likewise
      group.json       its process group, attempt and mark, so a resumed experiment can adopt
                       it (or stop it before the trial runs again)
      exit_status      the shell's exit status and attempt, written as it exits (an EXIT trap)

Inside the command, ``hyperlab.get_params()``, ``report()``, ``trial_dir()``, ``trial_seed()``
and ``trial_devices()`` work as in function trials (they read the ``HYPERLAB_*`` environment
variables), and so does an NNI trial script: a small ``nni`` package comes first on
``PYTHONPATH``.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import time
from pathlib import Path
from typing import Any

from hyperlab.errors import ConfigError, HyperlabError
from hyperlab.executors._command._channel import read_channel, skip_stored
from hyperlab.executors._command._launch import (
    STDERR_FILE,
    STDOUT_FILE,
    launch,
    make_python_path,
    trial_folder,
)
from hyperlab.executors._command._orphans import (
    GROUP_FILE,
    Group,
    find_group,
    leader_state,
    read_exit_status,
    record_group,
)
from hyperlab.executors._command._outcome import outcome
from hyperlab.executors._command._run import CommandRun, Ending, signal_marked
from hyperlab.executors._command._trial import CommandTrial
from hyperlab.executors._logs import CappedLog
from hyperlab.executors._output import LogTail, check_logs, echo_tails, finish_logs
from hyperlab.executors.base import Executor, Failed, Started, TrialSpec
from hyperlab.reporting.channel import write_answer

# CommandTrial stays importable from here: objectives pickled into stores before name this module
__all__ = ["CommandExecutor", "CommandTrial"]

TICK = 0.02
"""Longest pause between reads of the channels while ``poll`` waits (exits wake it at once)."""
FIRST_TICK = 0.0005
"""Pause after a channel said something: it doubles while they are quiet, up to ``TICK``. A
trial waiting for an answer (a round-trip report) writes again at once, so it is read soon."""
KILL_WAIT = 10.0
"""Seconds to wait for a SIGKILLed trial's processes to go before it is ended regardless."""


class CommandExecutor(Executor):
    """Up to ``concurrency`` shell commands at once, one per trial, each in its own session.

    The objective is a ``CommandTrial`` (or a command string). Each trial's command runs
    through ``/bin/sh -c`` in ``code_dir``, as the leader of a new process group, with
    ``HYPERLAB_*`` and NNI's environment variables, ``CUDA_VISIBLE_DEVICES`` when it holds
    devices, and ``stdout.log``/``stderr.log`` in its folder. Reports reach the driver while
    the trial runs: ``poll`` reads the new lines of every trial's channel file.

    A trial that exits 0 ends FINISHED with its final result (NNI's ``report_final_result``),
    or else its last intermediate one; with no result at all, or a non-zero exit, it is
    FAILED, the error quoting the exit status and the last lines of its stderr. ``stop`` and
    ``trial_timeout`` send SIGTERM to the trial's group, then SIGKILL after ``stop_grace``;
    the trial ends (and its devices are freed) when no process of its group is left, so a
    program that catches SIGTERM gets its grace even when the shell above it dies at once.
    When the shell exits by itself, whatever is left of its group is killed; ``close`` leaves
    no process of any trial.

    A trial's processes that left its group (a ``setsid`` daemon, a double fork, a nested
    driver's own command trials) are found on Linux by a random mark in their environment
    (``HYPERLAB_TRIAL_MARKS``, see ``hyperlab.executors._reaper``): they get the group's
    SIGTERM, and are killed when the trial ends, before its end is reported.

    The command writes its logs itself (appending; its output never passes through the
    driver). With ``max_log_bytes``, a log that grows past it is trimmed to its first and
    its last bytes, with a line between them saying how many were dropped: while the trial
    runs (its size is looked at twice a second) and once more when it ends, so the final file
    holds at most ``max_log_bytes`` of output plus that line. A few bytes written while a
    trim copies the tail may be lost; see ``hyperlab.executors._logs``. With
    ``echo_output``, the driver also echoes the lines the command appends to its logs to its
    own stdout and stderr, each prefixed with ``[trial N] ``.

    A driver killed by SIGKILL cannot clean up: its command trials then run on to their end,
    and the driver that resumes the experiment ``adopt``s those still running (or ended with
    their exit status recorded): it reads their channel from where the store stops, waits for
    their end and records it, with the same attempt. Stopping, timeouts and log caps work on
    adopted trials as on the others.
    """

    name = "command"
    runs_outside = True

    def __init__(self, objective: CommandTrial | str, **options: Any) -> None:
        if isinstance(objective, str):
            objective = CommandTrial(objective)
        super().__init__(objective, **options)
        self.objective: CommandTrial
        self._runs: dict[int, CommandRun] = {}
        self._pending: list[Started | Failed] = []  # started, or failed to: delivered by poll
        self._tick = TICK  # the next pause of a waiting poll
        self._pythonpath: str | None = None
        self._links: str | None = None  # the folder of symlinks we made, removed by close
        self._echoes: dict[int, list[LogTail]] = {}  # with echo_output: each run's two logs

    @classmethod
    def check_objective(cls, objective: Any) -> None:
        if isinstance(objective, str):
            objective = CommandTrial(objective)
        if not isinstance(objective, CommandTrial):
            raise ConfigError(
                "objective: the 'command' executor runs a CommandTrial(command, code_dir=..., "
                f"env=...) or a command string, got {objective!r}"
            )
        if objective.code_dir is not None and not os.path.isdir(objective.code_dir):
            raise ConfigError(
                f"trial.code_dir: expected an existing folder, got {objective.code_dir!r}"
            )

    @property
    def running(self) -> int:
        pending_ends = sum(isinstance(e, Failed) for e in self._pending)
        return len(self._runs) + pending_ends

    # ---- starting ------------------------------------------------------------------------

    def submit(self, spec: TrialSpec) -> None:
        spec = self.place(spec)
        try:
            run = self._start(spec)
        except OSError as exc:
            self._pending.append(
                Failed(spec.number, time.time(), f"the trial's command could not be started: {exc}")
            )
            return
        if self.trial_timeout is not None:
            run.deadline = time.monotonic() + self.trial_timeout
        self._runs[spec.number] = run

    def _start(self, spec: TrialSpec) -> CommandRun:
        folder = trial_folder(spec, self.stop_grace)
        launched = launch(
            spec,
            folder,
            self.objective,
            python_path=self._python_path(),
            max_log_bytes=self.max_log_bytes,
            echo_output=self.echo_output,
        )
        if launched.echoes:
            self._echoes[spec.number] = launched.echoes
        record_group(folder, launched.process.pid, attempt=spec.attempt, mark=launched.mark)
        self._pending.append(Started(spec.number, time.time()))
        try:
            return CommandRun(spec, folder, launched.process, launched.logs, mark=launched.mark)
        except OSError:
            self._echoes.pop(spec.number, None)
            launched.abandon()
            raise

    def _python_path(self) -> str:
        """The ``PYTHONPATH`` entry of the trials' ``nni`` shim and ``hyperlab``, made once."""
        if self._pythonpath is None:
            self._pythonpath, self._links = make_python_path()
        return self._pythonpath

    # ---- adopting ---------------------------------------------------------------------------

    def adopt(self, spec: TrialSpec, *, reports: int) -> float | None:
        """Watch a trial started by a driver that died, if its process group is still there.

        It is adopted when its folder's ``group.json`` names ``spec.attempt``, this machine
        and boot, and a leader that is still the same process (or that exited by itself,
        recording its status), and its channel holds at least the ``reports`` reports the
        store has. Its later reports, then its end, reach the listener like any trial's.
        """
        if spec.trial_dir is None:
            return None
        folder = Path(os.path.abspath(spec.trial_dir))
        group = find_group(folder, spec.attempt)
        if group is None:
            return None
        try:
            spec = self.place(spec)
        except HyperlabError:  # no device left for it: it runs again when one is
            return None
        try:
            run = self._attach(spec, folder, group)
        except OSError:
            run = None
        if run is not None and not skip_stored(run, reports):
            run.close()
            run = None
        if run is None:
            held = self._held.pop(spec.number, None)
            if held is not None and self.devices is not None:
                self.devices.release(held)
            return None
        if run.reaped and run.group_alive():  # its shell ended while no driver watched:
            run.signal(signal.SIGKILL)  # what is left of its group goes, as after an exit
        if self.trial_timeout is not None:
            run.deadline = time.monotonic() + self.trial_timeout - (time.time() - group.started_at)
        self._runs[spec.number] = run
        if self.echo_output:  # from where the logs are now
            paths = [folder / STDOUT_FILE, folder / STDERR_FILE]
            self._echoes[spec.number] = echo_tails(paths, spec.number)
        return group.started_at

    def _attach(self, spec: TrialSpec, folder: Path, group: Group) -> CommandRun | None:
        """A run watching the group an earlier driver started; None if it just went."""
        pgid, leader_start = group.pgid, group.leader_start
        logs: list[CappedLog] = []
        try:
            if self.max_log_bytes is not None:
                for name in (STDOUT_FILE, STDERR_FILE):
                    if (folder / name).exists():
                        logs.append(CappedLog.reopen(folder / name, self.max_log_bytes))
            run = CommandRun(
                spec,
                folder,
                None,
                logs,
                pid=pgid,
                leader_start=leader_start,
                exit_status=lambda: read_exit_status(folder, spec.attempt),
                mark=group.mark,
            )
        except BaseException:
            for log in logs:
                log.close()
            raise
        state = leader_state(pgid)  # checked again with the pidfd open: the same process?
        if state is None or state[0] != leader_start or state[1] == b"Z":
            if read_exit_status(folder, spec.attempt) is None:
                run.close()
                return None
            run.reap()  # the shell is gone, its status recorded (its pidfd may be another's)
        return run

    # ---- watching --------------------------------------------------------------------------

    def poll(self, timeout: float) -> None:
        end = time.monotonic() + max(0.0, timeout)
        while True:
            delivered = self._deliver_pending()
            for run in list(self._runs.values()):
                delivered += read_channel(run, self.listener)
                if self._check_end(run):
                    delivered += 1
            if delivered:
                self._tick = FIRST_TICK
            self._enforce_limits()
            self._cap_logs()
            remaining = end - time.monotonic()
            if delivered or remaining <= 0:
                return
            pause = min(remaining, self._tick)
            self._tick = min(self._tick * 2, TICK)
            pidfds = [run.pidfd for run in self._runs.values() if run.pidfd is not None]
            if pidfds:
                select.select(pidfds, [], [], pause)
            else:
                time.sleep(pause)

    def _deliver_pending(self) -> int:
        pending, self._pending = self._pending, []
        for event in pending:
            self.listener(event)
        return len(pending)

    def _check_end(self, run: CommandRun) -> bool:
        """End the trial if it is over; True if it was.

        A trial is over when its shell exits by itself (what is left of its group is killed
        then), or, once SIGTERM was sent, when its whole group is gone: the shell often dies of
        SIGTERM at once, while the program it started still uses its grace to save its work.
        Its processes that left the group are killed then.
        """
        stuck = run.give_up_at is not None and time.monotonic() >= run.give_up_at
        if not run.reaped:
            if not run.exited():
                if not stuck:
                    return False
            else:
                if run.ending is None:
                    run.signal(signal.SIGKILL)  # before reaping: the group id is still ours
                run.reap()
        if run.ending is not None and not stuck and run.group_alive():
            return False
        signal_marked(run.mark, signal.SIGKILL)
        read_channel(run, self.listener)
        # within the cap now, before the error quotes stderr's end
        finish_logs(run.logs, self._echoes.pop(run.spec.number, ()))
        run.close()
        if not stuck:  # its end is seen and its group gone: nothing to adopt or stop later
            (run.folder / GROUP_FILE).unlink(missing_ok=True)
        del self._runs[run.spec.number]
        self.listener(outcome(run, self.trial_timeout))
        return True

    def _enforce_limits(self) -> None:
        now = time.monotonic()
        for run in self._runs.values():
            if run.ending is None and run.deadline is not None and run.deadline <= now:
                self._terminate(run, Ending.TIMEOUT)
            elif run.kill_at is not None and run.kill_at <= now:
                self._kill(run)

    def _cap_logs(self) -> None:
        """Trim the logs grown past ``max_log_bytes`` (each looks at its size twice a second)."""
        now = time.monotonic()
        for run in self._runs.values():
            check_logs(run.logs, self._echoes.get(run.spec.number, ()), now)

    def _kill(self, run: CommandRun) -> None:
        run.signal(signal.SIGKILL)
        run.kill_at = None
        run.give_up_at = time.monotonic() + KILL_WAIT

    def _terminate(self, run: CommandRun, ending: Ending) -> None:
        run.ending = ending
        run.signal(signal.SIGTERM)
        signal_marked(run.mark, signal.SIGTERM)
        run.kill_at = time.monotonic() + self.stop_grace

    # ---- stopping ----------------------------------------------------------------------------

    def answer(self, number: int, index: int, value: Any, error: str | None = None) -> None:
        """Write the answer where the trial waits for it (``reporting.channel.write_answer``).

        A verdict that tells the trial to stop counts as a stop asked for: the trial raises
        ``TrialStopped``, which may end its program with an error, and it ended ``Stopped``
        even where the executor's own ``stop`` comes later (a Ray actor's).
        """
        run = self._runs.get(number)
        if run is None:
            return
        if index in run.verdicts:
            run.verdicts.discard(index)
            if value and run.ending is None:  # it stops itself: however it exits, it stopped
                run.ending = Ending.STOP
        write_answer(run.folder, run.spec.attempt, index, value, error)

    def stop(self, number: int) -> None:
        run = self._runs.get(number)
        if run is not None and not _signalled(run) and not run.exited():
            self._terminate(run, Ending.STOP)

    def detach(self) -> None:
        """Leave every trial running, for the driver that took the experiment over to adopt.

        The ``PYTHONPATH`` folder of symlinks stays: the trials may still import through it.
        """
        for run in self._runs.values():
            run.close()
            finish_logs([], self._echoes.pop(run.spec.number, ()))
        self._runs.clear()
        self._pending.clear()

    def close(self) -> None:
        for run in self._runs.values():
            if not _signalled(run):
                self._terminate(run, Ending.STOP)
        end = time.monotonic() + self.stop_grace
        while self._runs and time.monotonic() < end:
            self.poll(min(TICK, max(0.0, end - time.monotonic())))
        for run in self._runs.values():
            if run.give_up_at is None:
                self._kill(run)
        while self._runs:  # SIGKILL cannot be ignored; a process stuck in the kernel is
            self.poll(TICK)  # abandoned KILL_WAIT seconds after it
        self._deliver_pending()
        if self._links is not None:
            shutil.rmtree(self._links, ignore_errors=True)
            self._links = self._pythonpath = None


def _signalled(run: CommandRun) -> bool:
    """Whether the executor sent the run SIGTERM (or SIGKILL) already."""
    return run.kill_at is not None or run.give_up_at is not None
