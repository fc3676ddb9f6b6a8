"""The exceptions hyperlab raises, all under one root.

```
HyperlabError
 ├── ConfigError            an experiment's options are invalid (budget, names, values)
 │    └── SearchSpaceError  a search space is invalid; names the parameter path
 ├── StoreError             the database cannot be opened, read or written
 │    ├── ExperimentNotFound  no experiment with that id in the store
 │    └── TrialNotFound       no trial with that number in the experiment
 ├── TrialError             a trial's code or result is unusable (raised inside the driver)
 └── TrialStopped           raised by ``report()`` inside a trial that was told to stop
```

Catch ``HyperlabError`` to handle anything hyperlab reports, or a subclass for one kind.
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "ExperimentNotFound",
    "HyperlabError",
    "SearchSpaceError",
    "StoreError",
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


class TrialError(HyperlabError):
    """A trial's result cannot be used (missing metric, non-finite value, ...)."""


class TrialStopped(HyperlabError):
    """Raised by ``hyperlab.report()`` once the trial has been told to stop.

    Let it propagate out of the objective: the executor records the trial as stopped
    (EARLY_STOPPED or USER_CANCELED), not as failed.
    """
