"""A research in the store, read back by id or name (BatchFlow's ``Research.load``), and
removed from it (``Research.remove``)."""

from __future__ import annotations

import os
import shutil
import warnings
from typing import TYPE_CHECKING

from hyperlab.config import ResearchOptions
from hyperlab.errors import ExperimentNotFound
from hyperlab.research._results import ResearchResults, research_options
from hyperlab.store import ExperimentRecord, Store
from hyperlab.trial import ExperimentStatus, Trial

if TYPE_CHECKING:
    import pandas

__all__ = ["StoredResearch", "load_research", "remove_research"]


def _open(storage: Store | str | os.PathLike[str] | None) -> Store:
    return storage if isinstance(storage, Store) else Store.open(storage)


class StoredResearch:
    """A read-only view of a research in the store, running or finished.

    ``id``, ``name`` and ``options`` are fixed; everything else is read from the store at each
    access. Get one with ``load_research``.
    """

    def __init__(self, store: Store, experiment_id: str) -> None:
        """Read the research ``experiment_id`` of ``store``.

        Raises:
            ExperimentNotFound: no such experiment in the store.
            ConfigError: the experiment is not a research.
        """
        self._store = store
        self._results = ResearchResults(store, experiment_id)
        record = store.get_experiment(experiment_id)
        self.id: str = record.id
        self.name: str | None = record.name
        self.options: ResearchOptions = research_options(record)

    @property
    def record(self) -> ExperimentRecord:
        """The experiment as stored now (status, times, driver, all its options)."""
        return self._store.get_experiment(self.id)

    @property
    def status(self) -> ExperimentStatus:
        """The experiment's status now."""
        return self.record.status

    @property
    def trials(self) -> list[Trial]:
        """The trials (one per config x repetition) with their reports, by number."""
        return self._store.get_trials(self.id, reports=True)

    @property
    def results(self) -> ResearchResults:
        """The saved variables as tables (see ``ResearchResults``)."""
        return self._results

    @property
    def profile(self) -> pandas.DataFrame:
        """``results.profile``: the time each unit took per trial and iteration."""
        return self._results.profile

    def __repr__(self) -> str:
        name = f" {self.name!r}" if self.name else ""
        return f"<StoredResearch {self.id}{name} {self.status}>"


def load_research(
    name_or_id: str, storage: Store | str | os.PathLike[str] | None = None
) -> StoredResearch:
    """A research in the store, by id or by its name when no other experiment has it.

    Args:
        name_or_id: The research's id, or its unique name.
        storage: The store (anything ``Store.open`` takes, or an open ``Store``); default the
            home's.

    Example::

        research = load_research("my-grid")
        research.results.aggregate("loss")

    Raises:
        ExperimentNotFound: no experiment with this id or name.
        ConfigError: the experiment is not a research, or the name is shared by several
            experiments (the message lists their ids).
    """
    store = _open(storage)
    return StoredResearch(store, store.resolve(name_or_id))


def remove_research(
    name_or_id: str,
    storage: Store | str | os.PathLike[str] | None = None,
    *,
    ask: bool = True,
    force: bool = False,
) -> bool:
    """Delete a research from the store: its trials and reports, and its folder.

    Args:
        name_or_id: The research's id, or its unique name.
        storage: The store (anything ``Store.open`` takes, or an open ``Store``); default the
            home's.
        ask: Ask on the terminal first (``input``); anything but ``y`` or ``yes`` keeps it.
        force: Delete the experiment even if it is not a research (BatchFlow's ``force``:
            remove a folder that is not a research's).

    Returns:
        Whether it was deleted; False with a warning when there is no such experiment
        (BatchFlow warns too, so that a script can clear its previous run first).

    Raises:
        ConfigError: the experiment is not a research (without ``force``), or the name is
            ambiguous.
        ExperimentBusy: a driver runs it now; stop it first.
    """
    store = _open(storage)
    try:
        experiment_id = store.resolve(name_or_id)
    except ExperimentNotFound as exc:
        warnings.warn(f"Research.remove: nothing removed: {exc}", stacklevel=3)
        return False
    record = store.get_experiment(experiment_id)
    if not force:
        research_options(record)  # ConfigError when it is not a research
    record.check_not_running()
    if ask:
        answer = input(
            f"delete research {record.id} ({record.name or 'unnamed'}) and its files? [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            return False
    store.delete_experiment(record.id)
    shutil.rmtree(store.experiment_folder(record), ignore_errors=True)
    return True
