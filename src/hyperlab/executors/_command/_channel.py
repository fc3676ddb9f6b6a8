"""Reading a command trial's channel: its reports, its final result and its requests.

The trial appends one tagged JSON line per message to its channel file
(``hyperlab.reporting.channel``); the driver reads the complete lines it appended since the
last read and keeps an incomplete last line for the next.
"""

from __future__ import annotations

from collections.abc import Callable

from hyperlab._interrupts import critical
from hyperlab.executors._command._run import CommandRun
from hyperlab.executors.base import Event, Reported, Requested
from hyperlab.reporting.channel import parse_line, parse_request

__all__ = ["read_channel", "skip_stored"]


def read_channel(run: CommandRun, deliver: Callable[[Event], None]) -> int:
    """Deliver the complete lines the trial appended since the last read; how many events.

    A final result is kept on the run (``run.final``), not delivered: the trial's end carries
    it. A request for a verdict is remembered (``run.verdicts``) until it is answered.
    """
    with critical():  # what is read off the file is kept, whatever Ctrl-C cuts
        chunks = [run.buffer]
        while chunk := run.reader.read(65536):
            chunks.append(chunk)
        lines = b"".join(chunks).split(b"\n")
        run.buffer = lines.pop()  # an incomplete last line waits for the rest
    delivered = 0
    for line in lines:
        message = parse_line(line)
        if message is None:
            request = parse_request(line)
            if request is not None:
                if request[2] == "verdict":
                    run.verdicts.add(request[1])
                deliver(Requested(run.spec.number, *request))
                delivered += 1
            continue
        tag, when, step, metrics = message
        if tag == "final":
            run.final = metrics
        else:
            run.last = metrics
            step = run.reports if step is None else step
            run.reports += 1
            deliver(Reported(run.spec.number, when, step, metrics))
            delivered += 1
    return delivered


def skip_stored(run: CommandRun, reports: int) -> bool:
    """Read past the first ``reports`` reports of the channel (the store has them).

    Their metrics still count (the last one, a final result among them). False when the
    channel holds fewer: it is not the channel those reports came from.
    """
    if reports <= 0:
        return True
    data = run.reader.read() or b""
    offset = 0
    while run.reports < reports:
        end = data.find(b"\n", offset)
        if end < 0:
            return False
        message = parse_line(data[offset:end])
        offset = end + 1
        if message is None:
            continue
        tag, _, _, metrics = message
        if tag == "final":
            run.final = metrics
        else:
            run.last = metrics
            run.reports += 1
    run.reader.seek(offset)
    return True
