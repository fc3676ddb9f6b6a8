"""The one channel protocol between a trial that runs in its own program and its driver.

A command trial (and any trial an executor starts as a program: NNI trial scripts, a Ray
actor's command) learns who it is from ``HYPERLAB_*`` environment variables, which
``trial_variables`` spells and ``context_from_environment`` reads, and talks to its driver
through a channel file of tagged JSON lines, one message a line, appended with one ``write``::

    {"tag": "report",  "time": t, "step": 3, "metrics": {...}}       an intermediate result
    {"tag": "final",   "time": t, "metrics": {...}}                  its final result
    {"tag": "request", "time": t, "index": 0, "kind": "parameter",   a request to the driver
     "name": "lr", "spec": {...}}

``ChannelWriter`` (from ``_writer``, re-exported here) writes them (the trial's side) and
``parse_line``/``parse_request`` read them (the executor's side). The driver answers request
``index`` of attempt ``a`` with the file ``answers/<a>-<index>.json`` in the trial's folder
(``write_answer``, in one rename), which the trial waits for. A report is followed by a
``verdict`` request when something listens to the reports (``HYPERLAB_ROUND_TRIP=1``): the trial
then goes on only once the driver has decided.

Only the standard library is imported by what a trial runs here, so that command trials start
fast and run under any interpreter that has hyperlab.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from hyperlab.reporting._writer import (
    ANSWERS_DIR,
    ChannelWriter,
    answer_file,
    json_default,
)
from hyperlab.reporting.checkpoints import CHECKPOINTS_DIR
from hyperlab.reporting.context import (
    PARAMS_FILE_VAR,
    REQUEST_KINDS,
    RequestKind,
    context_from_environment,
)

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
    checkpoint_score: tuple[str, str] | None = None,
    round_trip: bool,
) -> dict[str, str]:
    """The ``HYPERLAB_*`` variables (and NNI's) of a trial run as a program in ``folder``.

    ``HYPERLAB_RESTORE_DIR`` is given only with ``restore_from`` (the folder of the trial it
    continues); a caller merging these into an inherited environment drops a stale one.
    ``HYPERLAB_CHECKPOINT_SCORE`` is ``<min|max>:<metric>`` with ``checkpoint_score``, else
    empty.
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
        "HYPERLAB_CHECKPOINT_SCORE": _score_variable(checkpoint_score),
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


def _score_variable(score: tuple[str, str] | None) -> str:
    """``HYPERLAB_CHECKPOINT_SCORE``: ``<min|max>:<metric>``, or empty without a score."""
    return "" if score is None else f"{score[1]}:{score[0]}"


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
