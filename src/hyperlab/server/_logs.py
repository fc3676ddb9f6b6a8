"""A trial's log files, read in pieces: the dashboard shows their tail and follows them.

A command trial writes ``stdout.log`` and ``stderr.log`` in its folder. A function trial has
none: its output goes to its driver's (the terminal, or ``driver.log`` of a detached run); the
answer then says so, and the page shows the trial's error instead.

A log is read only as a regular file inside the experiment's folder: no symbolic link is
followed below that folder (``trials``, the trial's folder, the log itself), and a FIFO or
device is not opened for reading. A log that is one of those is answered as no log
(``exists: false``) with a ``note`` saying why, and nothing of what it points to.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from hyperlab.server._context import READ_ERRORS, ExperimentId, TrialNumber, context

__all__ = ["router"]

MAX_CHUNK = 1 << 20
"""Bytes one request reads at most."""

router = APIRouter(tags=["trials"])


class LogOut(BaseModel):
    """A piece of a trial's log."""

    stream: Literal["stdout", "stderr"]
    exists: bool = Field(
        description="Whether the trial has this log file (yet): a regular file inside its "
        "folder (a symbolic link or a FIFO there is not served: false, with a note)."
    )
    offset: int = Field(description="Where the text starts, in bytes.")
    next_offset: int = Field(description="Where to read on from (the offset of the next call).")
    size: int = Field(description="The file's size now, in bytes.")
    text: str = Field(description="The bytes read, decoded as UTF-8 (bad bytes replaced).")
    done: bool = Field(description="The trial has ended and everything was read.")
    note: str | None = Field(description="Why there is no file (or why it is not served).")


@router.get(
    "/experiments/{experiment_id}/trials/{number}/log",
    response_model=LogOut,
    responses=READ_ERRORS,
    summary="A piece of a trial's stdout or stderr: its tail, or what follows an offset",
)
def trial_log(
    request: Request,
    experiment_id: ExperimentId,
    number: TrialNumber,
    stream: Annotated[Literal["stdout", "stderr"], Query(description="Which log.")] = "stdout",
    offset: Annotated[
        int | None, Query(ge=0, description="Read from this byte on (to follow the log).")
    ] = None,
    tail: Annotated[
        int, Query(ge=0, le=MAX_CHUNK, description="Without offset: the last bytes to read.")
    ] = 16384,
) -> LogOut:
    store = context(request).store
    record = store.get_experiment(experiment_id)
    trial = store.get_trial(experiment_id, number)  # 404 naming the trial
    ended = trial.status.is_finished()
    name = f"{stream}.log"
    try:
        fd = _open_inside(store.experiment_folder(record), ("trials", str(number), name))
    except (OSError, _NotServed) as exc:
        if isinstance(exc, _NotServed):
            note = f"{name} of trial {number} is not served: {exc}"
        elif isinstance(exc, FileNotFoundError):
            note = _missing(name, command=record.options.executor == "command", ended=ended)
        else:
            note = f"{name} of trial {number} cannot be read: {exc.strerror}"
        return LogOut(
            stream=stream,
            exists=False,
            offset=0,
            next_offset=0,
            size=0,
            text="",
            done=ended,
            note=note,
        )
    with os.fdopen(fd, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        start = max(0, size - tail) if offset is None else min(offset, size)
        f.seek(start)
        data = f.read(min(size - start, MAX_CHUNK))
    end = start + len(data)
    return LogOut(
        stream=stream,
        exists=True,
        offset=start,
        next_offset=end,
        size=size,
        text=data.decode("utf-8", errors="replace"),
        done=ended and end >= size,
        note=None,
    )


def _missing(name: str, *, command: bool, ended: bool) -> str:
    """Why a trial has no log file."""
    if command:
        return f"no {name} yet"
    stream = name.removesuffix(".log")
    return f"this function trial has no log file: it wrote no {stream} " + (
        "so far" if not ended else "(or it ran before hyperlab kept its output)"
    )


class _NotServed(Exception):
    """A path inside the experiment's folder that is a symbolic link or not a regular file."""


_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # a FIFO opens at once


def _open_inside(folder: Path, parts: tuple[str, ...]) -> int:
    """A descriptor of the regular file ``folder/parts...``, opened one part at a time
    relative to the last, never following a symbolic link (so no rename in between can lead
    outside ``folder`` either).

    Raises:
        FileNotFoundError: when a part does not exist.
        _NotServed: when a part is a symbolic link, or the file is not a regular file.
        OSError: when a part cannot be opened for another reason (permissions...).
    """
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            try:
                inner = os.open(part, _FILE if last else _DIRECTORY, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    what = "file" if last else "folder"
                    shown = "/".join(parts[: i + 1])
                    raise _NotServed(
                        f"{shown} is a symbolic link or not a {what}; only regular files "
                        "inside the experiment's folder are served"
                    ) from None
                raise
            os.close(fd)
            fd = inner
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _NotServed(
                f"{'/'.join(parts)} is not a regular file (a FIFO, socket or device); only "
                "regular files inside the experiment's folder are served"
            )
    except BaseException:
        os.close(fd)
        raise
    return fd
