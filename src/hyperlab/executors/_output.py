"""A function trial's ``stdout.log`` and ``stderr.log``, and echoing trials' output to the driver.

Every local executor gives a trial with a folder these two files, as the ``command`` executor
does, so ``hyperlab logs ID N`` shows them (``--follow`` while it runs):

- ``processes``: the worker points its descriptors 1 and 2 at the files for the trial
  (``RedirectedOutput``), so C extensions and child processes are captured too; the driver
  caps the files as it polls (``WatchedLogs``, the ``command`` executor's ``CappedLog``).
- ``threads`` and ``inprocess``: ``sys.stdout`` and ``sys.stderr`` route each write to the
  current trial's files (``hyperlab.executors.routing``), each capped as it is written
  (``TrialLog``).

With ``echo_output`` the trial's lines are also written to the driver's stdout and stderr,
prefixed with ``[trial N] `` (``LineEcho``); processes' and commands' by reading what they
append to their files (``LogTail``).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from hyperlab.executors._logs import CappedLog

__all__ = [
    "LOG_FILES",
    "LineEcho",
    "LogTail",
    "RedirectedOutput",
    "TrialLog",
    "WatchedLogs",
    "check_logs",
    "echo_prefix",
    "echo_tails",
    "finish_logs",
    "has_logs",
    "log_paths",
    "prepare_logs",
]

LOG_FILES = ("stdout.log", "stderr.log")
"""A trial's two logs, in its folder: descriptor 1's, then descriptor 2's."""
ATTEMPT_FILE = "attempt"
"""The attempt that last wrote the logs (as the ``command`` executor keeps it)."""
READ_SIZE = 1 << 16


def log_paths(trial_dir: str) -> tuple[Path, Path]:
    """Where the trial with folder ``trial_dir`` keeps its stdout and its stderr."""
    folder = Path(trial_dir)
    return folder / LOG_FILES[0], folder / LOG_FILES[1]


def has_logs(trial_dir: str) -> bool:
    """Whether an earlier run of the trial made its logs in ``trial_dir`` (``prepare_logs``)."""
    return os.path.exists(os.path.join(trial_dir, ATTEMPT_FILE))


def prepare_logs(trial_dir: str, attempt: int) -> tuple[Path, Path]:
    """Create the trial's folder and its two logs, empty; return the logs' paths.

    A paused trial resumed (the same ``attempt`` as the one that wrote them last) keeps its
    earlier output and appends to it; a first run or a re-run after a crash starts empty.
    """
    folder = Path(trial_dir)
    folder.mkdir(parents=True, exist_ok=True)
    marker = folder / ATTEMPT_FILE
    try:
        resumed = marker.read_text().strip() == str(attempt)
    except OSError:
        resumed = False
    marker.write_text(f"{attempt}\n")
    truncate = 0 if resumed else os.O_TRUNC
    paths = log_paths(trial_dir)
    for path in paths:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | truncate, 0o666))
    return paths


def echo_prefix(number: int) -> str:
    """What starts each echoed line of trial ``number``."""
    return f"[trial {number}] "


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class TrialLog:
    """One log written from this process (thread and in-process trials), kept within ``cap``.

    Writes go straight to the file (no buffer to lose), under a lock that also orders them
    with the trims, so a trim never loses a byte here; a trim happens when a write finds the
    file grown past the cap (looked at every ``CHECK_EVERY`` seconds) and at ``close``.

    Args:
        path: A log made by ``prepare_logs``.
        cap: ``max_log_bytes``, or None to keep everything.
    """

    __slots__ = ("_capped", "_fd", "_lock")

    def __init__(self, path: Path, cap: int | None) -> None:
        self._capped = None if cap is None else CappedLog(path, cap)
        self._fd = (
            os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
            if self._capped is None
            else self._capped.fd
        )
        self._lock = threading.Lock()

    def write(self, data: bytes) -> None:
        """Append ``data`` (dropped once the log is closed: a trial's thread that outlived it)."""
        with self._lock:
            if self._fd < 0:
                return
            _write_all(self._fd, data)
            if self._capped is not None:
                self._capped.check()

    def close(self) -> None:
        """Trim to the cap for the last time and close the file."""
        with self._lock:
            if self._fd < 0:
                return
            if self._capped is not None:
                self._capped.finish()
                self._capped.close()
            else:
                os.close(self._fd)
            self._fd = -1


class LineEcho:
    """Writes a trial's output to one of the driver's streams, whole lines, each prefixed.

    Lines of concurrent trials never mix: a line is written only once complete (``close``
    writes what is left of the last one), in one call under a lock shared by every echo.

    Args:
        prefix: What starts each line (``echo_prefix(number)``).
        stream: Returns the stream to write to, looked up at each write (``sys.stderr`` of
            the moment, or the stream ``sys.stderr`` was before the router took its place).
    """

    __slots__ = ("_partial", "_prefix", "_stream")
    _lock = threading.Lock()

    def __init__(self, prefix: str, stream: Callable[[], TextIO | None]) -> None:
        self._prefix = prefix
        self._stream = stream
        self._partial = ""

    def feed(self, text: str) -> None:
        """Take more of the trial's output; write the lines it completes."""
        with self._lock:
            if "\n" not in text:
                self._partial += text
                return
            lines = (self._partial + text).split("\n")
            self._partial = lines.pop()
            self._write("".join(f"{self._prefix}{line}\n" for line in lines))

    def close(self) -> None:
        """Write the last line, if the trial left it without its newline."""
        with self._lock:
            if self._partial:
                self._write(f"{self._prefix}{self._partial}\n")
                self._partial = ""

    def _write(self, text: str) -> None:
        stream = self._stream()
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):  # a closed or broken driver stream
                stream.write(text)
                stream.flush()


class LogTail:
    """Echoes what another process appends to a log: reads from where it stopped last time.

    It starts at the file's current end (a resumed trial's earlier output is not echoed
    again). After a trim the file is shorter: reading goes on from its new end (``skip``).
    """

    __slots__ = ("_decoder", "_echo", "_fd", "_offset", "path")

    def __init__(self, path: Path, echo: LineEcho) -> None:
        self.path = path
        self._echo = echo
        self._fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        self._offset = os.fstat(self._fd).st_size
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def pump(self) -> None:
        """Echo the bytes appended since the last call."""
        if os.fstat(self._fd).st_size < self._offset:
            self.skip()
        while chunk := os.pread(self._fd, READ_SIZE, self._offset):
            self._offset += len(chunk)
            self._echo.feed(self._decoder.decode(chunk))

    def skip(self) -> None:
        """Go on from the file's end: it was just trimmed, what it holds was echoed."""
        self._offset = os.fstat(self._fd).st_size

    def close(self) -> None:
        """Echo the rest, the last line too, and close the file."""
        with contextlib.suppress(OSError):
            self.pump()
        self._echo.feed(self._decoder.decode(b"", final=True))
        self._echo.close()
        os.close(self._fd)


def driver_stream(index: int) -> Callable[[], TextIO | None]:
    """Returns the driver's ``sys.stdout`` (0) or ``sys.stderr`` (1) of the moment."""
    if index == 0:
        return lambda: sys.stdout
    return lambda: sys.stderr


def echo_tails(paths: Sequence[Path], number: int) -> list[LogTail]:
    """Echoes of trial ``number``'s stdout and stderr logs to the driver's, from their ends
    (a log that does not exist is not echoed)."""
    tails: list[LogTail] = []
    try:
        for i, path in enumerate(paths):
            if path.exists():
                tails.append(LogTail(path, LineEcho(echo_prefix(number), driver_stream(i))))
    except BaseException:
        for tail in tails:
            tail.close()
        raise
    return tails


def check_logs(logs: Sequence[CappedLog], tails: Sequence[LogTail], now: float) -> None:
    """Echo what was appended to a trial's logs, then trim those grown past the cap (the echo
    of a trimmed log goes on from its new end)."""
    for tail in tails:
        tail.pump()
    for log in logs:
        if log.check(now):
            for tail in tails:
                if tail.path == log.path:
                    tail.skip()


def finish_logs(logs: Sequence[CappedLog], tails: Sequence[LogTail]) -> None:
    """The trial ended: echo the rest of its logs and close the echoes, then trim the logs
    for the last time (they stay open)."""
    for tail in tails:
        tail.close()
    for log in logs:
        log.finish()


class WatchedLogs:
    """A trial's two logs as the driver keeps them while another process writes them: each
    trimmed within ``cap`` as the executor polls (see ``CappedLog``), and echoed.

    Args:
        paths: The logs, made by ``prepare_logs``.
        cap: ``max_log_bytes``, or None to keep everything.
        echo: Echo them, prefixed with ``echo_prefix(number)``.
        number: The trial's number.
    """

    __slots__ = ("_logs", "_tails")

    def __init__(self, paths: tuple[Path, Path], cap: int | None, echo: bool, number: int) -> None:
        self._logs: list[CappedLog] = []
        self._tails: list[LogTail] = []
        try:
            if cap is not None:
                for path in paths:
                    self._logs.append(CappedLog(path, cap))
            if echo:
                self._tails = echo_tails(paths, number)
        except BaseException:
            self.finish()
            raise

    def check(self, now: float) -> None:
        """Echo what was appended, then trim the logs grown past the cap."""
        check_logs(self._logs, self._tails, now)

    def finish(self) -> None:
        """The trial ended: echo the rest, trim for the last time, close."""
        finish_logs(self._logs, self._tails)
        for log in self._logs:
            log.close()
        self._logs = []
        self._tails = []


def watch_trial_logs(
    trial_dir: str | None, attempt: int, number: int, cap: int | None, echo: bool
) -> WatchedLogs | str | None:
    """The ``WatchedLogs`` of a trial whose output another process writes (``prepare_logs``
    first); None for a trial without a folder, or the error text when they cannot be made."""
    if trial_dir is None:
        return None
    try:
        return WatchedLogs(prepare_logs(trial_dir, attempt), cap, echo, number)
    except OSError as exc:
        return f"the trial's logs could not be made: {exc}"


class RedirectedOutput:
    """Descriptors 1 and 2 of this process pointed at a trial's logs, for the ``with`` block.

    What the trial writes, through ``sys.stdout``, C code, or child processes that inherit the
    descriptors, lands in its files. Python's streams are flushed at both switches, so output
    written before goes where it was meant to. ``driver`` writes to the stderr the process
    had before (the driver's).

    Args:
        paths: The trial's logs, made by ``prepare_logs``.
    """

    def __init__(self, paths: tuple[Path, Path]) -> None:
        self._paths = paths
        self._saved: list[int] = []

    def __enter__(self) -> RedirectedOutput:
        _flush()
        for fd, path in zip((1, 2), self._paths, strict=True):
            self._saved.append(_dup_or_null(fd))
            log = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
            os.dup2(log, fd)
            os.close(log)
        return self

    def __exit__(self, *exc: object) -> None:
        _flush()
        for fd, saved in zip((1, 2), self._saved, strict=True):
            os.dup2(saved, fd)
            os.close(saved)
        self._saved = []

    def driver(self, line: str) -> None:
        """Write ``line`` to the process's stderr as it was before the redirection."""
        with contextlib.suppress(OSError):
            _write_all(self._saved[1], f"{line}\n".encode(errors="replace"))


def _dup_or_null(fd: int) -> int:
    """A copy of ``fd`` to restore later; ``/dev/null`` for a descriptor that was closed."""
    try:
        return os.dup(fd)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY | os.O_CLOEXEC)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
