"""``sys.stdout`` and ``sys.stderr`` that write each trial's output to its own logs, for trials
that share the driver's process (``threads`` and ``inprocess`` executors).

While such an executor is open, both streams are replaced by proxies. A write made where a
trial is current (``hyperlab.reporting.find_current``, a context variable: the trial's own
thread) goes to that trial's ``stdout.log``/``stderr.log`` (and, with ``echo_output``, to the
original stream, prefixed); any other write goes to the original stream, unchanged. The
original streams come back when the last open executor closes.

What this cannot separate: output written below Python's streams (C code writing to
descriptor 1 or 2, child processes, ``sys.stdout.buffer`` or ``fileno()``), output of threads a
trial starts (a new thread does not inherit the trial's context), and logging handlers that
kept a reference to ``sys.stderr`` from before the executor opened. All of it goes to the
driver's streams. Use the ``processes`` executor to capture everything.

Public because a research's worker processes route their trials' output with the same
``ROUTER`` (``open``/``add``/``remove``/``close``).
"""

from __future__ import annotations

import io
import sys
import threading
from typing import Any, TextIO

from hyperlab.executors._output import LineEcho, TrialLog, echo_prefix, has_logs, prepare_logs
from hyperlab.executors.base import TrialSpec
from hyperlab.reporting.context import TrialContext, find_current

__all__ = ["ROUTER", "TrialStreams"]

ENCODING = "utf-8"


class TrialStreams:
    """One trial's two logs (and echoes), as the proxies write to them.

    The folder and the logs are made at the first write, so a trial that prints nothing
    costs no file; a trial whose folder already holds logs (a paused trial resumed, or one
    run again) makes them at once, so a re-run that prints nothing leaves no stale output.

    Args:
        spec: The trial (its folder and attempt).
        cap: ``max_log_bytes``, or None.
        echoes: Where to echo stdout and stderr, or None.
    """

    __slots__ = ("_cap", "_closed", "_lock", "_logs", "_spec", "echoes")

    def __init__(
        self, spec: TrialSpec, cap: int | None, echoes: tuple[LineEcho, LineEcho] | None
    ) -> None:
        self._spec = spec
        self._cap = cap
        self.echoes = echoes
        self._lock = threading.Lock()
        self._logs: tuple[TrialLog, TrialLog] | None = None
        self._closed = False
        if spec.trial_dir is not None and not spec.fresh and has_logs(spec.trial_dir):
            self._open()

    def write(self, index: int, text: str) -> None:
        """Write ``text`` to log ``index`` (0: stdout, 1: stderr), and echo it."""
        self.write_bytes(index, text.encode(ENCODING, "backslashreplace"))
        if self.echoes is not None:
            self.echoes[index].feed(text)

    def write_bytes(self, index: int, data: bytes) -> None:
        """Write ``data`` to log ``index`` only (nothing once closed).

        Raises:
            OSError: The folder or the logs could not be made, or the write failed.
        """
        logs = self._logs or self._open()
        if logs is not None:
            logs[index].write(data)

    def _open(self) -> tuple[TrialLog, TrialLog] | None:
        with self._lock:
            if self._logs is None and not self._closed:
                assert self._spec.trial_dir is not None
                paths = prepare_logs(self._spec.trial_dir, self._spec.attempt)
                out = TrialLog(paths[0], self._cap)
                try:
                    self._logs = (out, TrialLog(paths[1], self._cap))
                except BaseException:
                    out.close()
                    raise
            return self._logs

    def close(self) -> None:
        """Close the logs (trimmed to the cap) and write what is left of the echoed lines."""
        with self._lock:
            self._closed = True
            logs, self._logs = self._logs, None
        for log in logs or ():
            log.close()
        for echo in self.echoes or ():
            echo.close()


class _Router:
    """The proxies' shared state: which trial writes where, and the streams they replaced."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._trials: dict[TrialContext, TrialStreams] = {}
        self._proxies: tuple[_RoutedStream, _RoutedStream] | None = None
        self.originals: tuple[TextIO | None, TextIO | None] = (None, None)

    def open(self) -> None:
        """Install the proxies (the first executor that opens does, or one that finds them
        replaced since: an executor that was never closed leaves no stale streams behind)."""
        with self._lock:
            self._users += 1
            proxies = self._proxies
            if proxies is not None and sys.stdout is proxies[0] and sys.stderr is proxies[1]:
                return
            self.originals = (sys.stdout, sys.stderr)
            self._proxies = (_RoutedStream(self, 0), _RoutedStream(self, 1))
            sys.stdout, sys.stderr = self._proxies

    def close(self) -> None:
        """Put the original streams back (the last executor that closes does), unless someone
        replaced the proxies meanwhile: theirs stay, and ours pass everything through."""
        with self._lock:
            self._users -= 1
            if self._users > 0 or self._proxies is None:
                return
            out, err = self._proxies
            if sys.stdout is out:
                sys.stdout = self.originals[0]
            if sys.stderr is err:
                sys.stderr = self.originals[1]
            self._proxies = None

    def current(self) -> TrialStreams | None:
        """The streams of the trial current where the write happens, if it has any."""
        ctx = find_current()
        return None if ctx is None else self._trials.get(ctx)

    def add(
        self, ctx: TrialContext, spec: TrialSpec, cap: int | None, echo: bool
    ) -> TrialStreams | None:
        """Route ``ctx``'s output to ``spec``'s logs until ``remove``; its streams.

        A trial without a folder gets None: its output goes to the driver's streams, as before.

        Raises:
            OSError: Logs an earlier run left could not be reopened (see ``TrialStreams``).
        """
        if spec.trial_dir is None:
            return None
        echoes = None
        if echo:
            prefix = echo_prefix(spec.number)
            echoes = (
                LineEcho(prefix, lambda: self.originals[0]),
                LineEcho(prefix, lambda: self.originals[1]),
            )
        streams = self._trials[ctx] = TrialStreams(spec, cap, echoes)
        return streams

    def remove(self, ctx: TrialContext) -> None:
        """Stop routing ``ctx``'s output; close its logs (trimmed to the cap)."""
        streams = self._trials.pop(ctx, None)
        if streams is not None:
            streams.close()


class _RoutedStream(io.TextIOBase):
    """``sys.stdout`` (index 0) or ``sys.stderr`` (1) while trials run in this process."""

    def __init__(self, router: _Router, index: int) -> None:
        super().__init__()
        self._router = router
        self._index = index

    @property
    def _original(self) -> TextIO | None:
        return self._router.originals[self._index]

    def write(self, text: str) -> int:
        streams = self._router.current()
        if streams is not None:
            streams.write(self._index, text)
            return len(text)
        original = self._original
        return len(text) if original is None else original.write(text)

    def flush(self) -> None:
        original = self._original
        if original is not None and self._router.current() is None:
            original.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        original = self._original
        return self._router.current() is None and original is not None and original.isatty()

    def fileno(self) -> int:
        original = self._original
        if original is None:
            raise io.UnsupportedOperation("fileno")
        return original.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._original, "encoding", None) or ENCODING

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._original, "errors", None)

    def __getattr__(self, name: str) -> Any:  # anything else is the original stream's
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._original, name)


ROUTER = _Router()
"""The one router of this process, shared by every open ``threads``/``inprocess`` executor."""
