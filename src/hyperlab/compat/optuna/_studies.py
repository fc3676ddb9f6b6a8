"""Optuna's ``create_study``, ``load_study``, ``get_all_study_names``,
``get_all_study_summaries`` and ``delete_study``: finding a study in a storage (a named
hyperlab experiment whose metric is ``value``), making its ``Study``, summing it up, deleting
it.
"""

from __future__ import annotations

import datetime
import os
import shutil
import time
from collections.abc import Sequence
from typing import Any

from hyperlab.compat.optuna._objective import metric_names
from hyperlab.compat.optuna._study import UNBOUNDED, Study, StudyDirection
from hyperlab.compat.optuna.exceptions import DuplicatedStudyError
from hyperlab.compat.optuna.pruners import BasePruner, MedianPruner
from hyperlab.compat.optuna.samplers import BaseSampler, TPESampler
from hyperlab.compat.optuna.trial import FrozenTrial
from hyperlab.config import validate_options
from hyperlab.experiment import random_seed
from hyperlab.space import SearchSpace
from hyperlab.store import ExperimentRecord, ExperimentSummary, NameTaken, Store
from hyperlab.trial import ExperimentStatus, Mode

__all__ = [
    "StudySummary",
    "create_study",
    "delete_study",
    "get_all_study_names",
    "get_all_study_summaries",
    "load_study",
]


def create_study(
    *,
    storage: Any = None,
    sampler: BaseSampler | None = None,
    pruner: BasePruner | None = None,
    study_name: str | None = None,
    direction: str | StudyDirection | None = None,
    load_if_exists: bool = False,
    directions: Sequence[str | StudyDirection] | None = None,
) -> Study:
    """A new study (or, with ``load_if_exists``, the stored one of that name).

    ``directions`` (one per objective) makes a multi-objective study: its objective returns
    one value per direction. A named study is recorded at once, holding its name, as in
    Optuna: of processes creating one name at once with ``load_if_exists``, one creates it
    and the others load it (the store's unique index decides), so all get the same study. Its
    first ``optimize``, in whichever process, gives it its objective. (An unnamed study, and
    any study in a ``":memory:"`` storage, which no other process sees, is recorded by its
    first ``optimize``.)

    Raises:
        NotImplementedError: An unmapped sampler/pruner.
        ValueError: ``direction`` and ``directions`` both given, or a direction that is
            neither ``"minimize"`` nor ``"maximize"`` (Optuna's messages); several hyperlab
            experiments have this name.
        DuplicatedStudyError: A study of that name exists and ``load_if_exists`` is False.
    """
    chosen = _directions(direction, directions)
    url = _storage_url(storage)
    sampler = _sampler(sampler)
    pruner = _pruner(pruner)
    study = Study(study_name, url, chosen, sampler, pruner)
    if study_name is None:
        return study
    with Store.open(url) as store:
        found = _find(store, study_name)
        if found is None and not store.in_memory:
            try:
                return Study(study_name, url, chosen, sampler, pruner, _claim(store, study))
            except NameTaken as taken:  # another process created it since: it is the study
                found = taken.experiment_id
    if found is None:
        return study
    if not load_if_exists:
        raise DuplicatedStudyError(
            f"Another study with name '{study_name}' already exists (hyperlab "
            f"experiment {found}); pass load_if_exists=True to continue it"
        )
    return _loaded(study_name, url, found, sampler, pruner)


def _claim(store: Store, study: Study) -> str:
    """Record ``study``'s experiment (INITIALIZED, with its options, space and seed but no
    objective yet), holding its name uniquely; return its id. Its first ``optimize`` defines
    it (``Study._start``).

    Raises:
        NameTaken: Another experiment holds the name.
    """
    name = study.study_name
    seed = random_seed() if study.sampler.seed is None else study.sampler.seed
    files = store.files_dir()
    options = validate_options(
        **study._definition(),
        max_trials=UNBOUNDED,
        seed=seed,
        working_dir=None if files is None else str(files),
    )
    record = ExperimentRecord(
        id=store.new_experiment_id(),
        name=name,
        status=ExperimentStatus.INITIALIZED,
        options=options,
        space=SearchSpace.coerce(study.sampler.space()).to_nni(),
        seed=seed,
        objective=None,
        created_at=time.time(),
        unique_name=True,
    )
    store.create_experiment(record)
    return record.id


def load_study(
    *,
    study_name: str | None,
    storage: Any,
    sampler: BaseSampler | None = None,
    pruner: BasePruner | None = None,
) -> Study:
    """The stored study ``study_name`` (the only one in ``storage`` when None).

    Raises:
        KeyError: No such study, as Optuna.
    """
    url = _storage_url(storage)
    if study_name is None:
        names = get_all_study_names(url)
        if len(names) != 1:
            raise ValueError(
                f"study_name=None: the storage holds {len(names)} studies ({names}); name one"
            )
        study_name = names[0]
    found = _find(Store.open(url), study_name)
    if found is None:
        raise KeyError(f"Record does not exist: no study named {study_name!r} in {url}")
    return _loaded(study_name, url, found, _sampler(sampler), _pruner(pruner))


def get_all_study_names(storage: Any) -> list[str]:
    """The names of the studies (named hyperlab experiments) in ``storage``."""
    store = Store.open(_storage_url(storage))
    return sorted({e.name for e in store.list_experiments() if e.name is not None})


class StudySummary:
    """A study at a glance (``optuna.study.StudySummary``), as
    ``get_all_study_summaries`` lists it.

    Attributes:
        study_name: Its name.
        directions: Its directions, one per objective (``direction`` is the only one).
        best_trial: Its COMPLETE trial with the best value (None when there is none, when
            not asked for, or with several objectives).
        user_attrs: Its attributes (always empty: hyperlab keeps attributes per trial).
        n_trials: How many trials it has, in every state.
        datetime_start: When it first ran (None before that).
        experiment_id: The hyperlab experiment it is.
    """

    def __init__(
        self,
        study_name: str,
        directions: Sequence[StudyDirection],
        best_trial: FrozenTrial | None,
        n_trials: int,
        datetime_start: datetime.datetime | None,
        experiment_id: str,
    ) -> None:
        self.study_name = study_name
        self.directions = list(directions)
        self.best_trial = best_trial
        self.user_attrs: dict[str, Any] = {}
        self.n_trials = n_trials
        self.datetime_start = datetime_start
        self.experiment_id = experiment_id

    @property
    def direction(self) -> StudyDirection:
        """Its direction.

        Raises:
            RuntimeError: for a multi-objective study, as Optuna.
        """
        if len(self.directions) > 1:
            raise RuntimeError(
                "This attribute is not available during multi-objective optimization."
            )
        return self.directions[0]

    def __repr__(self) -> str:
        names = ", ".join(d.name for d in self.directions)
        return (
            f"StudySummary(study_name={self.study_name!r}, directions=[{names}], "
            f"n_trials={self.n_trials}, experiment_id={self.experiment_id!r})"
        )


def get_all_study_summaries(storage: Any, include_best_trial: bool = True) -> list[StudySummary]:
    """A summary of each study (named hyperlab experiment) in ``storage``, by name."""
    store = Store.open(_storage_url(storage))
    found = sorted(
        (e for e in store.list_experiments() if e.name is not None), key=lambda e: e.name or ""
    )
    return [_summary(store, e, include_best_trial) for e in found]


def _summary(store: Store, found: ExperimentSummary, include_best_trial: bool) -> StudySummary:
    best = None
    experiment = store.get_experiment(found.id)
    directions = _of_modes(experiment.options.modes)
    if include_best_trial and len(directions) == 1:
        record = store.get_best_trial(found.id, found.mode)
        if record is not None:
            best = FrozenTrial.from_record(
                record, {**experiment.space, **experiment.options.suggested}
            )
    started = found.started_at
    return StudySummary(
        study_name=found.name or "",
        directions=directions,
        best_trial=best,
        n_trials=found.n_trials,
        datetime_start=None if started is None else datetime.datetime.fromtimestamp(started),
        experiment_id=found.id,
    )


def delete_study(*, study_name: str, storage: Any) -> None:
    """Delete study ``study_name``: its experiment, trials and trial folders (as
    ``hyperlab rm``).

    Raises:
        KeyError: No such study, as Optuna.
        ExperimentBusy: A driver runs it.
    """
    url = _storage_url(storage)
    store = Store.open(url)
    found = _find(store, study_name)
    if found is None:
        raise KeyError(f"Record does not exist: no study named {study_name!r} in {url}")
    record = store.get_experiment(found)
    record.check_not_running()
    store.delete_experiment(found)
    shutil.rmtree(store.experiment_folder(record), ignore_errors=True)


def _find(store: Store, name: str) -> str | None:
    ids = store.ids_named(name)
    if len(ids) > 1:
        raise ValueError(
            f"study {name!r}: {len(ids)} hyperlab experiments have this name ({ids}); "
            "delete all but one (hyperlab rm ID) to load it"
        )
    return ids[0] if ids else None


def _loaded(
    name: str, url: str | None, found: str, sampler: BaseSampler, pruner: BasePruner
) -> Study:
    record = Store.open(url).get_experiment(found)
    options = record.options
    if options.metrics != metric_names(len(options.metrics)):
        raise ValueError(
            f"hyperlab experiment {found} named {name!r} was not made as an Optuna study "
            f"(its metrics are {list(options.metrics)}, not "
            f"{list(metric_names(len(options.metrics)))})"
        )
    return Study(name, url, _of_modes(options.modes), sampler, pruner, found)


def _of_modes(modes: Sequence[Mode]) -> list[StudyDirection]:
    return [StudyDirection.MAXIMIZE if m is Mode.MAX else StudyDirection.MINIMIZE for m in modes]


def _sampler(sampler: BaseSampler | None) -> BaseSampler:
    if sampler is None:
        return TPESampler()
    if not isinstance(sampler, BaseSampler):
        raise NotImplementedError(
            f"sampler={type(sampler).__name__}: hyperlab maps TPESampler, RandomSampler, "
            "CmaEsSampler, GPSampler, GridSampler, NSGAIISampler and NSGAIIISampler of "
            "hyperlab.compat.optuna.samplers"
        )
    return sampler


def _pruner(pruner: BasePruner | None) -> BasePruner:
    if pruner is None:
        return MedianPruner()
    if not isinstance(pruner, BasePruner):
        raise NotImplementedError(
            f"pruner={type(pruner).__name__}: hyperlab maps MedianPruner, PercentilePruner, "
            "SuccessiveHalvingPruner, HyperbandPruner, ThresholdPruner, PatientPruner and "
            "NopPruner of hyperlab.compat.optuna.pruners"
        )
    return pruner


def _directions(
    direction: str | StudyDirection | None, directions: Sequence[str | StudyDirection] | None
) -> list[StudyDirection]:
    """The study's directions, checked as Optuna's ``create_study`` checks them."""
    if direction is not None and directions is not None:
        raise ValueError("Specify only one of `direction` and `directions`.")
    given = list(directions) if directions is not None else [direction or "minimize"]
    if len(given) < 1:
        raise ValueError("The number of objectives must be greater than 0.")
    if not all(_known(d) for d in given):
        raise ValueError(
            f"`directions` must be a list of `minimize` or `maximize`, but got {given}. For "
            "single-objective optimization, please use `direction` instead of `directions`."
        )
    return [d if isinstance(d, StudyDirection) else StudyDirection[str(d).upper()] for d in given]


def _known(value: object) -> bool:
    if isinstance(value, StudyDirection):
        return value is not StudyDirection.NOT_SET
    return value in ("minimize", "maximize")


def _storage_url(storage: Any) -> str | None:
    if storage is None or isinstance(storage, (str, os.PathLike)):
        return None if storage is None else os.fspath(storage)
    url = getattr(storage, "url", None)  # an RDBStorage
    if isinstance(url, str):
        return url
    raise NotImplementedError(
        f"storage={type(storage).__name__}: hyperlab stores studies in SQLite or PostgreSQL; "
        "pass a database URL ('sqlite:///study.db', 'postgresql://...')"
    )
