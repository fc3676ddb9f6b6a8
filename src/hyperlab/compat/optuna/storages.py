"""Optuna's ``optuna.storages``: where studies are kept. hyperlab keeps them in its store, a
SQLite or PostgreSQL database named by URL.

``RDBStorage(url)`` stands for its URL: ``create_study(storage=RDBStorage(url))`` is
``create_study(storage=url)``. Its other names (journal and in-memory storages, heartbeat
callbacks, the gRPC proxy...) raise ``NotImplementedError`` naming what to use instead.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.optuna._refused import refuse

__all__ = ["RDBStorage"]

INSTEAD = (
    "pass a database URL as storage ('sqlite:///study.db', 'postgresql://...'), or "
    "RDBStorage(url); a trial whose driver was lost runs again when the study goes on"
)


class RDBStorage:
    """A study's database, by URL (``optuna.storages.RDBStorage``).

    Args:
        url: The database URL (``sqlite:///study.db``, ``postgresql://...``).
        engine_kwargs: Refused unless empty: hyperlab opens the database with its own
            engine settings.
        skip_compatibility_check: Ignored (hyperlab's store checks its own schema).
        heartbeat_interval: Refused: hyperlab's driver holds a lease on its experiment, and
            the trials of a lost driver run again when the study goes on.
        grace_period: Refused, as ``heartbeat_interval``.
        failed_trial_callback: Refused, as ``heartbeat_interval``.
        skip_table_creation: Ignored (hyperlab's store makes its tables when needed).

    Raises:
        TypeError: ``url`` is not a string.
        NotImplementedError: A refused argument is given.
    """

    def __init__(
        self,
        url: str,
        engine_kwargs: dict[str, Any] | None = None,
        skip_compatibility_check: bool = False,
        *,
        heartbeat_interval: int | None = None,
        grace_period: int | None = None,
        failed_trial_callback: Any = None,
        skip_table_creation: bool = False,
    ) -> None:
        if not isinstance(url, str):
            raise TypeError(f"RDBStorage(url): expected a database URL string, got {url!r}")
        if engine_kwargs:
            raise NotImplementedError(
                f"RDBStorage(engine_kwargs={engine_kwargs!r}): hyperlab opens the database "
                "with its own engine settings; pass the URL only"
            )
        if heartbeat_interval is not None or grace_period is not None or failed_trial_callback:
            raise NotImplementedError(
                "RDBStorage(heartbeat_interval=, grace_period=, failed_trial_callback=): "
                "hyperlab's driver holds a lease on its experiment, and the trials of a lost "
                "driver run again when the study goes on (hyperlab resume)"
            )
        self.url = url

    def __repr__(self) -> str:
        return f"RDBStorage({self.url!r})"


def __getattr__(name: str) -> Any:
    refuse("optuna.storages", name, INSTEAD)
