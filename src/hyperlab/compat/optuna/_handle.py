"""What a trial, an objective and an ask-and-tell session need of their study.

``Study`` (``_study.py``) builds all three, so they cannot import it back: they name this
protocol instead, which ``Study`` implements.
"""

from __future__ import annotations

from typing import Any, Protocol

from hyperlab.compat.optuna.samplers import BaseSampler

__all__ = ["StudyHandle"]


class StudyHandle(Protocol):
    """The study as its trials see it."""

    grid_names: frozenset[str]
    """Parameters a ``GridSampler`` sets: their values come from its grid."""

    sampler: BaseSampler
    """Its sampler (its ``constraints_func`` judges each trial that completes)."""

    @property
    def directions(self) -> list[Any]:
        """Its directions, one per objective."""

    def next_enqueued(self) -> dict[str, Any] | None:
        """The parameters of the next enqueued trial (taken), or None."""

    def stop(self) -> None:
        """Start no more trials."""
