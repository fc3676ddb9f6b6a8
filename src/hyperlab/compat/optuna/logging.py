"""Optuna's ``optuna.logging``: the study's log lines and their verbosity.

As Optuna, a study logs a line per finished trial ("Trial 3 finished with value: 0.5 and
parameters: {...}. Best is trial 1 with value: 0.2.", "Trial 4 pruned. ", and two WARNING
lines for a failed trial) to its own logger, ``hyperlab.compat.optuna`` (Optuna's ``optuna``),
which has a handler of its own writing ``[I 2026-01-01 12:00:00,000] ...`` to standard error,
level INFO and no propagation, set up the first time a study logs or a function here is
called. ``set_verbosity`` sets the level of that logger and of hyperlab's own (``hyperlab``),
so ``set_verbosity(WARNING)`` quiets both; the other functions act on the study's logger as
Optuna's act on ``optuna``'s.
"""

from __future__ import annotations

import logging as _logging
import sys
import threading

__all__ = [
    "CRITICAL",
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "WARN",
    "WARNING",
    "create_default_formatter",
    "disable_default_handler",
    "disable_propagation",
    "enable_default_handler",
    "enable_propagation",
    "get_logger",
    "get_verbosity",
    "set_verbosity",
]

CRITICAL = _logging.CRITICAL
FATAL = _logging.FATAL
ERROR = _logging.ERROR
WARNING = _logging.WARNING
WARN = _logging.WARN
INFO = _logging.INFO
DEBUG = _logging.DEBUG

ROOT = "hyperlab.compat.optuna"
"""The study's logger: Optuna's ``optuna`` logger."""

_HYPERLAB = _logging.getLogger("hyperlab")
_lock = threading.Lock()
_default_handler: _logging.Handler | None = None


class _StderrHandler(_logging.StreamHandler):
    """A stream handler writing to ``sys.stderr`` as it is when a record comes (so a
    replaced ``sys.stderr``, as pytest's, gets the lines)."""

    def emit(self, record: _logging.LogRecord) -> None:
        if self.stream is not sys.stderr:
            self.setStream(sys.stderr)
        super().emit(record)


def create_default_formatter() -> _logging.Formatter:
    """The default handler's formatter: ``[I 2026-01-01 12:00:00,000] message``, as
    Optuna's (without its colours)."""
    return _logging.Formatter("[%(levelname)1.1s %(asctime)s] %(message)s")


def _root() -> _logging.Logger:
    """The study's logger, with Optuna's set-up on first use (handler, INFO, no
    propagation)."""
    global _default_handler
    logger = _logging.getLogger(ROOT)
    with _lock:
        if _default_handler is None:
            _default_handler = _StderrHandler()
            _default_handler.setFormatter(create_default_formatter())
            logger.addHandler(_default_handler)
            logger.setLevel(INFO)
            logger.propagate = False
    return logger


def trial_logger() -> _logging.Logger:
    """The logger a study's trial lines go to (set up on first use)."""
    return _root()


def get_logger(name: str) -> _logging.Logger:
    """The logger ``name``, with Optuna's names mapped to the study's: ``"optuna"`` is
    ``hyperlab.compat.optuna``, ``"optuna.x"`` its child ``x``; other names are as given."""
    root = _root()
    if name == "optuna":
        return root
    if name.startswith("optuna."):
        return root.getChild(name[len("optuna.") :])
    return _logging.getLogger(name)


def set_verbosity(verbosity: int) -> None:
    """Set the level of the study's logger and of hyperlab's."""
    _root().setLevel(verbosity)
    _HYPERLAB.setLevel(verbosity)


def get_verbosity() -> int:
    """The level of the study's logger (INFO unless set)."""
    return _root().getEffectiveLevel()


def disable_default_handler() -> None:
    """Take the default handler (standard error) off the study's logger."""
    _root().removeHandler(_default_handler)  # type: ignore[arg-type]


def enable_default_handler() -> None:
    """Put the default handler (standard error) back on the study's logger."""
    _root().addHandler(_default_handler)  # type: ignore[arg-type]


def disable_propagation() -> None:
    """Stop the study's log records from reaching the parent loggers (the default)."""
    _root().propagate = False


def enable_propagation() -> None:
    """Let the study's log records reach the parent loggers (``hyperlab``, then the root
    logger): with ``disable_default_handler``, a script's own logging set-up gets them."""
    _root().propagate = True
