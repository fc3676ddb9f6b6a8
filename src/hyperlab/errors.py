"""The exceptions hyperlab raises, all under one root.

```
HyperlabError
 ├── ConfigError            an experiment's options are invalid (budget, names, values)
 │    ├── SearchSpaceError  a search space is invalid; names the parameter path
 │    └── ExperimentBusy    another driver runs the experiment (hyperlab.store)
 ├── StoreError             the database cannot be opened, read or written
 │    ├── ExperimentNotFound  no experiment with that id (or name) in the store
 │    ├── TrialNotFound       no trial with that number in the experiment
 │    ├── LeaseLost           another driver took the experiment over (hyperlab.store)
 │    ├── NameTaken           another experiment holds the unique name asked for (hyperlab.store)
 │    └── StoreUnavailable    the database does not answer for now (restart, lost connection, lock)
 ├── TrialError             trials failed: none succeeded, or failures ended the experiment
 └── TrialStopped           raised by ``report()`` inside a trial that was told to stop
```

Catch ``HyperlabError`` to handle anything hyperlab reports, or a subclass for one kind.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigError",
    "ExperimentBusy",
    "ExperimentNotFound",
    "HyperlabError",
    "LeaseLost",
    "NameTaken",
    "SearchSpaceError",
    "StoreError",
    "StoreUnavailable",
    "TrialError",
    "TrialNotFound",
    "TrialStopped",
]


class HyperlabError(Exception):
    """Root of every error hyperlab raises on purpose."""


class ConfigError(HyperlabError, ValueError):
    """An experiment option has an invalid value; the message names the field and the value."""


class SearchSpaceError(ConfigError):
    """A search space is invalid; the message starts with the parameter's path."""


class ExperimentBusy(ConfigError):
    """Another driver runs the experiment now (it holds its lease); the message names it."""


class StoreError(HyperlabError):
    """The store could not be opened, read or written."""


class ExperimentNotFound(StoreError, KeyError):
    """No experiment with the given id exists in the store."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class TrialNotFound(StoreError, KeyError):
    """No trial with the given number exists in the experiment."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0]) if self.args else ""


class LeaseLost(StoreError):
    """This driver no longer holds its experiment's lease: another driver took over (after the
    lease expired) or the experiment was deleted. Nothing more of this driver is written."""


class NameTaken(StoreError):
    """An experiment was to be created with a unique name (an Optuna study's) that another
    experiment holds already: nothing was written. Racing creators of one name all but one
    get it, naming the one that won, whose experiment they may load instead.

    Attributes:
        name: The name asked for.
        experiment_id: The id of the experiment that holds it.
    """

    def __init__(self, message: str, *, name: str, experiment_id: str) -> None:
        super().__init__(message)
        self.name = name
        self.experiment_id = experiment_id


class StoreUnavailable(StoreError):
    """The database did not answer, for a reason that passes: the connection was lost or
    refused, the server is shutting down or starting, or another connection held SQLite's
    lock past the busy timeout. Nothing of the failed transaction was written, and the same
    call may succeed later. A running experiment rides such an outage out for
    ``store_outage`` seconds (see ``hyperlab.run``); past them its driver stops with this
    error, whose message says how to continue it.

    Attributes:
        reason: What the database or its driver answered, in one line.
    """

    def __init__(self, message: str, *, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


class TrialError(HyperlabError):
    """Trials failed: no trial of an experiment succeeded, or failures ended it in ERROR.

    ``hyperlab.run`` raises it at the end of such an experiment (the experiment stays in the
    store: ``exc.result`` is its ``Result``); its message carries the first failed trial's
    error and traceback.

    Attributes:
        result: The experiment's ``Result`` (None where there is none).
    """

    def __init__(self, message: str, *, result: Any = None) -> None:
        super().__init__(message)
        self.result = result


class TrialStopped(HyperlabError):
    """Raised by ``hyperlab.report()`` once the trial has been told to stop.

    Let it propagate out of the objective: the executor records the trial as stopped
    (EARLY_STOPPED or USER_CANCELED), not as failed.
    """
