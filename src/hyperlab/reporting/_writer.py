"""The trial's end of its channel: ``ChannelWriter`` appends the tagged JSON lines that
``hyperlab.reporting.channel`` describes, and waits for the driver's answers to its requests.

It imports nothing of the trial's context, so ``context`` can build a command trial's context
on it (``context_from_environment``) and ``channel`` can re-export both.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Protocol

from hyperlab.errors import HyperlabError
from hyperlab.reporting.metrics import MetricsError, clean_metrics

__all__ = [
    "ANSWERS_DIR",
    "ANSWER_POLL",
    "FIRST_POLL",
    "ChannelWriter",
    "answer_file",
    "json_default",
]

ANSWERS_DIR = "answers"
"""The folder where the driver answers a trial's requests."""
ANSWER_POLL = 0.01
"""Longest pause, in seconds, between two looks for the driver's answer to a request."""
FIRST_POLL = 0.0002
"""First pause between two looks; it doubles up to ``ANSWER_POLL`` (a round trip is fast)."""


class Asking(Protocol):
    """What ``ChannelWriter.ask`` reads of the asking trial's context."""

    trial_dir: str | None
    attempt: int


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

    def ask(self, ctx: Asking, index: int, kind: str, name: str, spec: dict) -> Any:
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


def answer_file(folder: Path, attempt: int, index: int) -> Path:
    """Where the driver answers request ``index`` of ``attempt`` of the trial in ``folder``."""
    return folder / ANSWERS_DIR / f"{attempt}-{index}.json"


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
