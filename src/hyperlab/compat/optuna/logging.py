"""Optuna's ``optuna.logging``: verbosity levels for hyperlab's own log messages.

Scripts commonly call ``optuna.logging.set_verbosity(optuna.logging.WARNING)``; the level is
set on the ``hyperlab`` logger. hyperlab does not log a line per trial as Optuna does: its
progress display (``show_progress_bar``) plays that part.
"""

from __future__ import annotations

import logging as _logging

__all__ = [
    "CRITICAL",
    "DEBUG",
    "ERROR",
    "FATAL",
    "INFO",
    "WARN",
    "WARNING",
    "disable_default_handler",
    "disable_propagation",
    "enable_default_handler",
    "enable_propagation",
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

_LOGGER = _logging.getLogger("hyperlab")


def set_verbosity(verbosity: int) -> None:
    """Set the level of hyperlab's logger."""
    _LOGGER.setLevel(verbosity)


def get_verbosity() -> int:
    """The level of hyperlab's logger."""
    return _LOGGER.getEffectiveLevel()


def disable_default_handler() -> None:
    """Nothing to do: hyperlab adds no handler of its own to its logger."""


def enable_default_handler() -> None:
    """Nothing to do: hyperlab adds no handler of its own to its logger."""


def disable_propagation() -> None:
    """Stop hyperlab's log records from reaching the root logger."""
    _LOGGER.propagate = False


def enable_propagation() -> None:
    """Let hyperlab's log records reach the root logger (the default)."""
    _LOGGER.propagate = True
