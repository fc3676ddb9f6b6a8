"""The command line of a detached driver: ``python -m hyperlab ... resume <id> --quiet`` in a
process of its own, as ``hyperlab run --detach`` and NNI's ``Experiment.start`` launch it."""

from __future__ import annotations

import os
import sys

from hyperlab.store import Store

__all__ = ["DETACHED_STORAGE_VAR", "detached_command"]

DETACHED_STORAGE_VAR = "HYPERLAB_DETACHED_STORAGE"
"""Hands a store URL with a password to a detached driver, never on its command line (where
``ps`` shows it): ``hyperlab --storage-from-env`` reads the URL from it and removes it."""


def detached_command(store: Store, experiment_id: str) -> tuple[list[str], dict[str, str]]:
    """The command and environment of a driver process that resumes ``experiment_id`` quietly.

    The store's URL is on the command line when it holds no password; otherwise it is in the
    environment's ``DETACHED_STORAGE_VAR``. Callers append their own options (``--port``,
    budget changes) to the command.
    """
    env = dict(os.environ)
    command = [sys.executable, "-m", "hyperlab"]
    if store.masked_url == store.url:
        command += ["--storage", store.url]
    else:
        env[DETACHED_STORAGE_VAR] = store.url
        command += ["--storage-from-env"]
    return [*command, "resume", experiment_id, "--quiet"], env
