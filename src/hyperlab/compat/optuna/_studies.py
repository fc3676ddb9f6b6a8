"""Optuna's ``create_study``, ``load_study`` and ``get_all_study_names``: finding a study in
a storage (a named hyperlab experiment whose metric is ``value``) and making its ``Study``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from hyperlab.compat.optuna._study import METRIC, Study, StudyDirection
from hyperlab.compat.optuna.exceptions import DuplicatedStudyError
from hyperlab.compat.optuna.pruners import BasePruner, MedianPruner
from hyperlab.compat.optuna.samplers import BaseSampler, TPESampler
from hyperlab.store import Store

__all__ = ["create_study", "get_all_study_names", "load_study"]


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

    Raises:
        NotImplementedError: ``directions`` (multi-objective) or an unmapped sampler/pruner.
        DuplicatedStudyError: A study of that name exists and ``load_if_exists`` is False.
    """
    if directions is not None:
        if len(directions) != 1:
            raise NotImplementedError(
                f"create_study(directions={list(directions)!r}): hyperlab has no "
                "multi-objective optimization yet; optimize one objective (direction=...)"
            )
        if direction is not None:
            raise ValueError("Specify only one of `direction` and `directions`.")
        direction = directions[0]
    url = _storage_url(storage)
    chosen = _direction(direction)
    sampler = _sampler(sampler)
    pruner = _pruner(pruner)
    if study_name is not None:
        found = _find(url, study_name)
        if found is not None:
            if not load_if_exists:
                raise DuplicatedStudyError(
                    f"Another study with name '{study_name}' already exists (hyperlab "
                    f"experiment {found}); pass load_if_exists=True to continue it"
                )
            return _loaded(study_name, url, found, sampler, pruner)
    return Study(study_name, url, chosen, sampler, pruner)


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
    found = _find(url, study_name)
    if found is None:
        raise KeyError(f"Record does not exist: no study named {study_name!r} in {url}")
    return _loaded(study_name, url, found, _sampler(sampler), _pruner(pruner))


def get_all_study_names(storage: Any) -> list[str]:
    """The names of the studies (named hyperlab experiments) in ``storage``."""
    store = Store.open(_storage_url(storage))
    return sorted({e.name for e in store.list_experiments() if e.name is not None})


def _find(url: str | None, name: str) -> str | None:
    store = Store.open(url)
    ids = [e.id for e in store.list_experiments() if e.name == name]
    if len(ids) > 1:
        raise ValueError(
            f"study {name!r}: {len(ids)} hyperlab experiments have this name ({ids}); "
            "rename all but one (hyperlab rename) to load it"
        )
    return ids[0] if ids else None


def _loaded(
    name: str, url: str | None, found: str, sampler: BaseSampler, pruner: BasePruner
) -> Study:
    record = Store.open(url).get_experiment(found)
    if record.options.metric != METRIC:
        raise ValueError(
            f"hyperlab experiment {found} named {name!r} was not made as an Optuna study "
            f"(its metric is {record.options.metric!r}, not {METRIC!r})"
        )
    direction = (
        StudyDirection.MAXIMIZE if record.options.mode.value == "max" else (StudyDirection.MINIMIZE)
    )
    return Study(name, url, direction, sampler, pruner, found)


def _sampler(sampler: BaseSampler | None) -> BaseSampler:
    if sampler is None:
        return TPESampler()
    if not isinstance(sampler, BaseSampler):
        raise NotImplementedError(
            f"sampler={type(sampler).__name__}: hyperlab maps TPESampler, RandomSampler, "
            "CmaEsSampler, GPSampler and GridSampler of hyperlab.compat.optuna.samplers"
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


def _direction(value: str | StudyDirection | None) -> StudyDirection:
    if value is None:
        return StudyDirection.MINIMIZE
    if isinstance(value, StudyDirection) and value is not StudyDirection.NOT_SET:
        return value
    if value in ("minimize", "maximize"):
        return StudyDirection.MINIMIZE if value == "minimize" else StudyDirection.MAXIMIZE
    raise ValueError(f"direction: expected 'minimize' or 'maximize', got {value!r}")


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
