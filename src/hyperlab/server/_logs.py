"""A trial's log files, read in pieces: the dashboard shows their tail and follows them.

A command trial writes ``stdout.log`` and ``stderr.log`` in its folder. A function trial has
none: its output goes to its driver's (the terminal, or ``driver.log`` of a detached run); the
answer then says so, and the page shows the trial's error instead.
"""

from __future__ import annotations

import os
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
    exists: bool = Field(description="Whether the trial has this log file (yet).")
    offset: int = Field(description="Where the text starts, in bytes.")
    next_offset: int = Field(description="Where to read on from (the offset of the next call).")
    size: int = Field(description="The file's size now, in bytes.")
    text: str = Field(description="The bytes read, decoded as UTF-8 (bad bytes replaced).")
    done: bool = Field(description="The trial has ended and everything was read.")
    note: str | None = Field(description="Why there is no file, when there is none.")


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
    path = store.experiment_folder(record) / "trials" / str(number) / f"{stream}.log"
    ended = trial.status.is_finished()
    try:
        size = os.path.getsize(path)
    except OSError:
        command = record.options.executor == "command"
        note = (
            f"no {stream}.log yet"
            if command
            else f"this function trial has no log file: it wrote no {stream} "
            + ("so far" if not ended else "(or it ran before hyperlab kept its output)")
        )
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
    start = max(0, size - tail) if offset is None else min(offset, size)
    with open(path, "rb") as f:
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
