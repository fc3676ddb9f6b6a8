"""A command trial's ``stdout.log`` and ``stderr.log``, kept within ``max_log_bytes``.

The trial writes its logs itself, through descriptors opened with ``O_APPEND``: its output
never passes through the driver, so a killed driver cannot break its pipe. The executor keeps
its own descriptor of each log and, as it polls, looks at the size (one ``fstat``, at most every
``CHECK_EVERY`` seconds). A log grown past the cap is rewritten in place as::

    head    the first bytes the trial wrote (about half the cap), kept once, never rewritten
    marker  one line: how many bytes were dropped in all, and that ``max_log_bytes`` caps it
    tail    the most recent bytes

by copying the tail aside, truncating the file to the head and appending the marker and the
tail in one write (logrotate's ``copytruncate``). A later trim rewrites the marker with the
cumulative count rather than adding another. While the trial runs, a trim keeps a quarter of the
cap less than the cap, so that each byte is copied about once however much the trial prints;
the trim done when the trial has ended keeps as much tail as the cap allows, so the final file
holds at most ``max_log_bytes`` of the trial's output plus the marker.

The trial keeps writing while a trim runs, and nothing stops it: what it writes in the instant
between the last read of the tail and the truncation is lost (and not counted; a write or two
of a trial printing flat out, nothing of one that prints now and then), and what it writes
while the file is being truncated (milliseconds, for tens of MB) lands just before the marker
rather than after it. A trim holds the tail (up to half the cap) in memory for a moment, and
takes the driver's thread for about as long as copying it takes.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections import deque
from pathlib import Path

__all__ = ["CHECK_EVERY", "CappedLog", "open_for_trial"]

CHECK_EVERY = 0.5
"""Seconds between two looks at the size of one log."""
CUT_SEARCH = 4096
"""Bytes searched for a line break where the head ends and where the tail starts."""
FOLLOW_ROUNDS = 4
"""How many times a trim reads on when the trial appended while it read the tail."""
READ_SIZE = 1 << 20
"""Bytes read at once when a trim copies the tail."""
IOV_MAX = 1024
"""Pieces ``writev`` takes at once (Linux's ``IOV_MAX``)."""
MARKER = re.compile(
    rb"\[hyperlab: (\d+) bytes of this log dropped here; max_log_bytes=\d+ caps it\]\n"
)
"""The line a trim leaves where it dropped bytes (see ``CappedLog.trim``)."""


def open_for_trial(path: Path) -> int:
    """An empty ``path`` opened for the trial to append to: a descriptor to give ``Popen``."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | os.O_CLOEXEC, 0o666)


class CappedLog:
    """One log file a trial appends to, trimmed to ``cap`` bytes plus a marker line.

    Args:
        path: The log, already opened by ``open_for_trial``.
        cap: At most how many bytes of the trial's output the file keeps (at least 1 KiB).
    """

    __slots__ = ("cap", "dropped", "fd", "head", "marker", "next_check", "path")

    def __init__(self, path: Path, cap: int) -> None:
        self.path = path
        self.cap = cap
        self.fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CLOEXEC)
        self.head: int | None = None  # bytes kept from the start, fixed by the first trim
        self.marker = 0  # length of the marker line in the file, after the head
        self.dropped = 0  # bytes dropped by every trim so far
        self.next_check = 0.0  # monotonic

    @classmethod
    def reopen(cls, path: Path, cap: int) -> CappedLog:
        """The log of a trial adopted from a driver that died, which may have trimmed it.

        The marker line of an earlier trim (within the head's reach) is found again, so that
        later trims keep the same head and count every byte dropped.
        """
        log = cls(path, cap)
        with contextlib.suppress(OSError):
            window = os.pread(log.fd, cap // 2 + CUT_SEARCH, 0)
            found = MARKER.search(window)
            if found is not None and found.start() <= cap // 2:
                log.head = found.start()
                log.marker = found.end() - found.start()
                log.dropped = int(found.group(1))
        return log

    def check(self, now: float | None = None) -> bool:
        """Trim the log if it outgrew the cap, at most every ``CHECK_EVERY`` seconds.

        Returns:
            Whether the log was trimmed.
        """
        now = time.monotonic() if now is None else now
        if now < self.next_check:
            return False
        self.next_check = now + CHECK_EVERY
        return self._trim_quietly(slack=self.cap // 4)

    def finish(self) -> bool:
        """Trim the log of a trial that has ended, keeping as much tail as the cap allows."""
        return self._trim_quietly(slack=0)

    def _trim_quietly(self, slack: int) -> bool:
        try:
            return self.trim(slack=slack)
        except OSError:  # a full disk, say: the trial goes on, its log as it is
            return False

    def trim(self, *, slack: int) -> bool:
        """Rewrite the log as head + marker + tail if it holds more than ``cap`` bytes of output.

        The tail is ``slack`` bytes shorter than the cap allows. Returns whether it trimmed.
        """
        size = os.fstat(self.fd).st_size
        if size - self.marker <= self.cap:
            return False
        if self.head is None:
            self.head = self._head_length(size)
        marker = b"\n" if self.head and os.pread(self.fd, 1, self.head - 1) != b"\n" else b""
        start = self.head + self.marker  # the first byte of output after the marker
        keep = max(0, self.cap - self.head - slack)
        tail, end = self._read_tail(max(start, size - keep), keep)
        # From the end of that read to the truncation, the trial's writes are lost: keep it short.
        if tail and end - sum(map(len, tail)) > start:  # begin at a line, if one starts soon
            cut = bytes(tail[0][: min(CUT_SEARCH, len(tail[0]) // 2)]).find(b"\n")
            tail[0] = tail[0][cut + 1 :]
        self.dropped += end - start - sum(map(len, tail))
        marker += (
            f"[hyperlab: {self.dropped} bytes of this log dropped here; "
            f"max_log_bytes={self.cap} caps it]\n"
        ).encode()
        os.ftruncate(self.fd, self.head)
        _append(self.fd, [memoryview(marker), *tail])
        self.marker = len(marker)
        return True

    def _head_length(self, size: int) -> int:
        """About half the cap, ending after a line break when there is one near the end."""
        length = min(self.cap // 2, size)
        start = max(0, length - CUT_SEARCH)
        window = os.pread(self.fd, length - start, start)
        cut = window.rfind(b"\n")
        return length if cut < 0 else start + cut + 1

    def _read_tail(self, offset: int, keep: int) -> tuple[list[memoryview], int]:
        """The last ``keep`` bytes from ``offset`` on, in pieces; and where the file ended.

        Reads on while the trial appends (a few rounds at most), so that little is lost.
        """
        pieces: deque[memoryview] = deque()
        held = 0
        for _ in range(FOLLOW_ROUNDS):
            while chunk := os.pread(self.fd, READ_SIZE, offset):
                pieces.append(memoryview(chunk))
                held += len(chunk)
                offset += len(chunk)
                # hold no more than keep + READ_SIZE bytes
                while pieces and held - len(pieces[0]) >= keep:
                    held -= len(pieces.popleft())
            if os.fstat(self.fd).st_size <= offset:
                break
        if held > keep:
            pieces[0] = pieces[0][held - keep :]
        return list(pieces), offset

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _append(fd: int, data: list[memoryview]) -> None:
    """Append ``data`` in one ``writev`` (a regular file takes it whole, between the trial's
    own appends), looping only on a short write (a full disk, or more than ``writev`` takes)."""
    data = [piece for piece in data if len(piece)]
    while data:
        written = os.writev(fd, data[:IOV_MAX])
        while data and written >= len(data[0]):
            written -= len(data[0])
            data.pop(0)
        if data:
            data[0] = data[0][written:]
