"""The one channel protocol between a trial that runs in its own program and its driver.

A command trial (and any trial an executor starts as a program: NNI trial scripts, a Ray
actor's command) learns who it is from ``HYPERLAB_*`` environment variables, which
``trial_variables`` spells and ``context_from_environment`` reads, and talks to its driver
through a channel file of tagged JSON lines, one message a line, appended with one ``write``::

    {"tag": "report",  "time": t, "step": 3, "metrics": {...}}       an intermediate result
    {"tag": "final",   "time": t, "metrics": {...}}                  its final result
    {"tag": "request", "time": t, "index": 0, "kind": "parameter",   a request to the driver
     "name": "lr", "spec": {...}}

``ChannelWriter`` writes them (the trial's side) and ``parse_line``/``parse_request`` read them
(the executor's side). The driver answers request ``index`` of attempt ``a`` with the file
``answers/<a>-<index>.json`` in the trial's folder (``write_answer``, in one rename), which the
trial waits for. A report is followed by a ``verdict`` request when something listens to the
reports (``HYPERLAB_ROUND_TRIP=1``): the trial then goes on only once the driver has decided.

Only the standard library is imported by what a trial runs here, so that command trials start
fast and run under any interpreter that has hyperlab.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hyperlab.errors import HyperlabError
from hyperlab.reporting.checkpoints import CHECKPOINTS_DIR
from hyperlab.reporting.context import (
    PARAMS_FILE_VAR,
    REQUEST_KINDS,
    RequestKind,
    TrialContext,
)
from hyperlab.reporting.metrics import MetricsError, clean_metrics

__all__ = [
    "ANSWERS_DIR",
    "CHANNEL_FILE",
    "PARAMS_FILE",
    "PARAMS_FILE_VAR",
    "ChannelWriter",
    "answer_file",
    "context_from_environment",
    "json_default",
    "open_channel",
    "parse_line",
    "parse_request",
    "trial_variables",
    "write_answer",
]

CHANNEL_FILE = "metrics.jsonl"
"""The channel's name in the trial's folder."""
PARAMS_FILE = "parameter.json"
"""The trial's parameters in its folder: ``{"parameter_id", "parameter_source", "parameters"}``."""
ANSWERS_DIR = "answers"
"""The folder where the driver answers a trial's requests."""
ANSWER_POLL = 0.01
"""Longest pause, in seconds, between two looks for the driver's answer to a request."""
FIRST_POLL = 0.0002
"""First pause between two looks; it doubles up to ``ANSWER_POLL`` (a round trip is fast)."""


def trial_variables(
    *,
    number: int,
    trial_id: str,
    folder: Path,
    seed: int | None,
    attempt: int,
    devices: tuple[int, ...],
    checkpoint_keep: int,
    restore_from: str | None,
    round_trip: bool,
) -> dict[str, str]:
    """The ``HYPERLAB_*`` variables (and NNI's) of a trial run as a program in ``folder``.

    ``HYPERLAB_RESTORE_DIR`` is given only with ``restore_from`` (the folder of the trial it
    continues); a caller merging these into an inherited environment drops a stale one.
    """
    experiment_id = trial_id.rpartition("-")[0] or trial_id
    where = str(folder)
    variables = {
        "HYPERLAB_TRIAL_ID": trial_id,
        "HYPERLAB_TRIAL_NUMBER": str(number),
        "HYPERLAB_EXPERIMENT_ID": experiment_id,
        PARAMS_FILE_VAR: str(folder / PARAMS_FILE),
        "HYPERLAB_CHANNEL": str(folder / CHANNEL_FILE),
        "HYPERLAB_TRIAL_DIR": where,
        "HYPERLAB_SEED": "" if seed is None else str(seed),
        "HYPERLAB_ATTEMPT": str(attempt),
        "HYPERLAB_DEVICES": ",".join(map(str, devices)),
        "HYPERLAB_CHECKPOINT_DIR": str(folder / CHECKPOINTS_DIR),
        "HYPERLAB_CHECKPOINT_KEEP": str(checkpoint_keep),
        "HYPERLAB_ROUND_TRIP": "1" if round_trip else "",
        "NNI_PLATFORM": "local",
        "NNI_EXP_ID": experiment_id,
        "NNI_TRIAL_JOB_ID": trial_id,
        "NNI_SYS_DIR": where,
        "NNI_OUTPUT_DIR": where,
        "NNI_TRIAL_SEQ_ID": str(number),
    }
    if restore_from is not None:
        parent = os.path.abspath(restore_from)
        variables["HYPERLAB_RESTORE_DIR"] = os.path.join(parent, CHECKPOINTS_DIR)
    return variables


def context_from_environment(env: Mapping[str, str]) -> TrialContext:
    """The context of the command trial that ``env`` (its ``trial_variables``) describes.

    Raises:
        HyperlabError: The parameter file cannot be read or holds no parameters object.
    """
    path = env[PARAMS_FILE_VAR]
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (OSError, ValueError) as exc:
        raise HyperlabError(
            f"{PARAMS_FILE_VAR}: cannot read the trial's parameters from {path!r} "
            f"({type(exc).__name__}: {exc})"
        ) from None
    params = document.get("parameters", document) if isinstance(document, dict) else None
    if not isinstance(params, dict):
        raise HyperlabError(
            f"{PARAMS_FILE_VAR}: expected a JSON object with a 'parameters' object in "
            f"{path!r}, got {document!r}"
        )
    channel = ChannelWriter(env.get("HYPERLAB_CHANNEL"))
    seed = env.get("HYPERLAB_SEED", "")
    devices = env.get("HYPERLAB_DEVICES", "")
    keep = env.get("HYPERLAB_CHECKPOINT_KEEP", "")
    attempt = env.get("HYPERLAB_ATTEMPT", "")
    trial_dir = env.get("HYPERLAB_TRIAL_DIR") or None
    can_ask = bool(channel.path and trial_dir)
    return TrialContext(
        int(env.get("HYPERLAB_TRIAL_NUMBER", "0")),
        env.get("HYPERLAB_TRIAL_ID", "?"),
        params,
        int(seed) if seed else None,
        trial_dir,
        channel.report,
        devices=tuple(int(d) for d in devices.split(",") if d),
        emit_final=channel.final,
        checkpoint_dir=env.get("HYPERLAB_CHECKPOINT_DIR") or None,
        restore_dir=env.get("HYPERLAB_RESTORE_DIR") or None,
        checkpoint_keep=int(keep) if keep.isdigit() and int(keep) > 0 else 1,
        attempt=int(attempt) if attempt.isdigit() else 1,
        command=True,
        ask=channel.ask if can_ask else None,
        round_trip=env.get("HYPERLAB_ROUND_TRIP") == "1",
    )


class ChannelWriter:
    """The writing end of a trial's channel file.

    Every line is appended with one ``write`` on an ``O_APPEND`` descriptor, so lines from
    several processes of one trial never interleave, and the driver sees each one at once.
    Without a channel path, messages are dropped.
    """

    __slots__ = ("fd", "path")

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.fd: int | None = None

    def report(self, step: int, metrics: dict) -> None:
        metrics = _sendable(metrics, "report()")
        self.write({"tag": "report", "time": time.time(), "step": step, "metrics": metrics})

    def final(self, metrics: dict) -> None:
        metrics = _sendable(metrics, "final result")
        self.write({"tag": "final", "time": time.time(), "metrics": metrics})

    def ask(self, ctx: TrialContext, index: int, kind: RequestKind, name: str, spec: dict) -> Any:
        """A ``request`` line on the channel, then a wait for the driver's answer file.

        Raises:
            ValueError: The driver refused the request (its message).
        """
        answer = answer_file(Path(ctx.trial_dir or "."), ctx.attempt, index)
        message = {"tag": "request", "time": time.time(), "index": index, "kind": kind}
        self.write({**message, "name": name, "spec": spec})
        pause = FIRST_POLL
        while True:
            try:
                with open(answer, encoding="utf-8") as f:
                    got = json.load(f)
                break
            except FileNotFoundError:
                time.sleep(pause)
                pause = min(pause * 2, ANSWER_POLL)
        if got.get("error") is not None:
            raise ValueError(got["error"])
        return got.get("value")

    def write(self, message: dict) -> None:
        if not self.path:
            return
        try:
            line = json.dumps(message, default=json_default, allow_nan=True) + "\n"
        except (TypeError, ValueError, RecursionError) as exc:
            raise HyperlabError(
                f"report(): metrics must be numbers, strings, lists or dicts, got "
                f"{_short(message.get('metrics', message))} ({exc})"
            ) from None
        if self.fd is None:
            self.fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(self.fd, line.encode("utf-8"))


def _sendable(metrics: dict, where: str) -> dict:
    """``metrics`` as the driver stores them (``clean_metrics``), checked here: JSON would
    turn an ``int`` key into a string, and a refused value need not cross the channel.

    Raises:
        HyperlabError: the driver would refuse them; the message names the metric and type.
    """
    try:
        return clean_metrics(metrics)
    except MetricsError as refused:
        raise HyperlabError(f"{where}: {refused}") from None


def _short(value: Any, limit: int = 200) -> str:
    """``repr(value)`` cut to ``limit`` characters (a rejected value may be huge)."""
    try:
        text = repr(value)
    except Exception:  # a repr that fails, or recurses too deep
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def open_channel(folder: Path) -> None:
    """Make ``folder`` ready for a new run of its trial: an empty channel and no answers.

    A paused trial resumed runs again with the same attempt and counts its requests from 0
    again: an earlier run's answers must not answer them.
    """
    (folder / CHANNEL_FILE).write_bytes(b"")
    answers = folder / ANSWERS_DIR
    if answers.is_dir():
        for stale in answers.iterdir():
            stale.unlink(missing_ok=True)


def answer_file(folder: Path, attempt: int, index: int) -> Path:
    """Where the driver answers request ``index`` of ``attempt`` of the trial in ``folder``."""
    return folder / ANSWERS_DIR / f"{attempt}-{index}.json"


def write_answer(folder: Path, attempt: int, index: int, value: Any, error: str | None) -> None:
    """Answer a trial's request: its ``answer_file``, written whole in one rename."""
    target = answer_file(folder, attempt, index)
    target.parent.mkdir(exist_ok=True)
    aside = target.parent / f".{target.name}.{os.getpid()}"
    aside.write_text(json.dumps({"value": value, "error": error}, default=json_default))
    os.replace(aside, target)


def parse_line(line: bytes) -> tuple[str, float, int | None, dict] | None:
    """``(tag, time, step, metrics)`` of one report or final line; None for any other."""
    try:
        message = json.loads(line)
        tag, metrics = message["tag"], message["metrics"]
        when = float(message.get("time") or time.time())
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if tag not in ("report", "final") or not isinstance(metrics, dict):
        return None
    step = message.get("step")
    if isinstance(step, bool) or not isinstance(step, int):
        step = None
    return tag, when, step, metrics


def parse_request(line: bytes) -> tuple[float, int, RequestKind, str, dict] | None:
    """``(time, index, kind, name, spec)`` of a channel line asking the driver, or None."""
    try:
        message = json.loads(line)
        if message["tag"] != "request":
            return None
        when = float(message.get("time") or time.time())
        index, name, spec = message["index"], message["name"], message["spec"]
        kind = message.get("kind", "parameter")
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None
    if isinstance(index, bool) or not isinstance(index, int) or not isinstance(name, str):
        return None
    if kind not in REQUEST_KINDS or not isinstance(spec, dict):
        return None
    return when, index, kind, name, spec


def json_default(value: Any) -> Any:
    """JSON fallback: numpy/torch scalars and arrays as Python numbers and lists."""
    for method in ("item", "tolist"):
        convert = getattr(value, method, None)
        if callable(convert):
            try:
                return convert()
            except (TypeError, ValueError):
                continue
    raise TypeError(f"{type(value).__name__} {_short(value, 80)} is not JSON serializable")
