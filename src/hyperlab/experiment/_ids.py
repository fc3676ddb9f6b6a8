"""Experiment ids chosen with ``id=``: which are accepted, and never one already in the store.

A chosen id names the experiment in the store, its folder (``experiments/<id>/``), trial ids
(``<id>-<number>``), the command line and the REST routes. So it is 1 to 32 lowercase letters,
digits, ``-`` or ``_``, starting with a letter or a digit: what all of those accept, and no two
ids that a case-insensitive file system would give the same folder.
"""

from __future__ import annotations

import os
import re

from hyperlab.errors import ConfigError, ExperimentNotFound
from hyperlab.store import Store

__all__ = ["check_id", "check_id_is_new"]

_CHOSEN_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")


def check_id(experiment_id: object) -> str:
    """``experiment_id`` if it is an id one may choose.

    Raises:
        ConfigError: it is not 1 to 32 lowercase letters, digits, ``-`` or ``_`` starting with
            a letter or a digit (the message quotes it).
    """
    if not isinstance(experiment_id, str) or not _CHOSEN_ID.fullmatch(experiment_id):
        raise ConfigError(
            "id: expected 1 to 32 lowercase letters, digits, '-' or '_', starting with a "
            f"letter or a digit (such as 'my-study-1'), got {experiment_id!r}"
        )
    return experiment_id


def check_id_is_new(store: Store, experiment_id: str, storage: str | os.PathLike | None) -> None:
    """Refuse an id that already names an experiment in ``store``.

    Args:
        store: Where the new experiment goes.
        experiment_id: The chosen id.
        storage: The ``storage`` argument as the caller gave it, for the resume hint.

    Raises:
        ConfigError: an experiment has this id; the message says how to resume it.
    """
    try:
        store.get_experiment(experiment_id)
    except ExperimentNotFound:
        return
    where = "" if storage is None else f", storage={os.fspath(storage)!r}"
    raise ConfigError(
        f"id: {experiment_id!r} already names an experiment in {store.masked_url}; resume it "
        f"with hyperlab.resume({experiment_id!r}{where}) or choose another id"
    )
