"""An Optuna study's complete trials as a new hyperlab experiment (``hyperlab import-optuna``).

``read_study`` reads the study with the optuna package (imported here, when first needed) and
translates it: its direction becomes the mode, the objective the metric ``"value"``, and its
parameters the search space, each Optuna distribution becoming the NNI spec that
``trial.suggest_*`` of ``hyperlab.compat.optuna`` asks for (``distributions.to_spec``), so a
continued study suggests from the same space. The space holds the parameters that every complete
trial has with one distribution (Optuna's intersection search space); others are left out and
named. ``create_experiment`` writes the experiment, its complete trials being imported results
(fed to the tuner, not trials), as ``Experiment.import_data`` keeps them. A public module (not
one of Optuna's), so that the command line, above ``compat``, imports it by a public name.
"""

from __future__ import annotations

import importlib
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from hyperlab.compat.optuna import distributions as ours
from hyperlab.config import validate_options
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.space import SearchSpace
from hyperlab.store import ExperimentRecord, ImportedResult, Store
from hyperlab.trial import ExperimentStatus, Mode

__all__ = [
    "METRIC",
    "StudyImport",
    "create_experiment",
    "distribution_spec",
    "load_optuna",
    "read_study",
]

METRIC = "value"
"""The metric of an imported study's experiment: what ``trial.report`` and the objective's
return value are recorded as."""

TUNER = "tpe"
"""The imported experiment's tuner: Optuna's default sampler is TPE."""

_SKIPPED = {"PRUNED": "pruned", "FAIL": "failed", "RUNNING": "running", "WAITING": "waiting"}
"""How the trials left out are counted, by Optuna state."""


@dataclass(frozen=True)
class StudyImport:
    """What an Optuna study becomes.

    Attributes:
        study: The study's name.
        mode: ``min`` for a study that minimizes, ``max`` for one that maximizes.
        space: The search space: parameter name to NNI spec.
        results: The complete trials with a finite value, in trial-number order.
        skipped: How many trials were left out, by why: ``pruned``, ``failed``, ``running``,
            ``waiting``, or ``complete, not finite`` (an infinite value).
        left_out: Parameters left out of the space (and of the results): not in every complete
            trial, or with other distributions in some.
    """

    study: str
    mode: Mode
    space: dict[str, Any]
    results: list[ImportedResult]
    skipped: dict[str, int] = field(default_factory=dict)
    left_out: list[str] = field(default_factory=list)


def load_optuna() -> ModuleType:
    """The optuna package.

    Raises:
        ConfigError: it is not installed (saying how to install it).
    """
    try:
        return importlib.import_module("optuna")
    except ImportError as exc:
        raise ConfigError(
            f"importing an Optuna study needs the optuna package ({exc}): pip install optuna"
        ) from None


def distribution_spec(distribution: Any) -> dict[str, Any]:
    """The NNI spec of an ``optuna.distributions`` distribution: the one
    ``hyperlab.compat.optuna`` asks for when a trial suggests from it.

    Raises:
        NotImplementedError: not a float, int or categorical distribution, or a stepped range
            with more values than hyperlab enumerates.
    """
    names = {cls.__name__ for cls in type(distribution).__mro__}  # Optuna's legacy ones too
    mirrored: ours.BaseDistribution
    if "CategoricalDistribution" in names:
        mirrored = ours.CategoricalDistribution(distribution.choices)
    elif "FloatDistribution" in names:
        mirrored = ours.FloatDistribution(
            distribution.low, distribution.high, log=distribution.log, step=distribution.step
        )
    elif "IntDistribution" in names:
        mirrored = ours.IntDistribution(
            distribution.low, distribution.high, log=distribution.log, step=distribution.step
        )
    else:
        raise NotImplementedError(
            f"{type(distribution).__name__}: hyperlab imports FloatDistribution, "
            "IntDistribution and CategoricalDistribution only"
        )
    return ours.to_spec(mirrored)


def read_study(url: str, study: str) -> StudyImport:
    """Read Optuna study ``study`` from the database at ``url``, without writing to it.

    Raises:
        ConfigError: optuna is not installed; the database cannot be opened (a SQLite file
            that does not exist is not created); no study has that name (the message lists
            those found); it has several objectives; it has no complete trial with a finite
            value; a parameter cannot be translated (naming it).
    """
    optuna = load_optuna()
    storage = _open(optuna, url)
    try:
        names = optuna.get_all_study_names(storage)
        if study not in names:
            found = ", ".join(repr(n) for n in sorted(names)) or "none"
            raise ConfigError(
                f"--study: no Optuna study named {study!r} in {_masked(url)} (studies found: "
                f"{found})"
            )
        loaded = optuna.load_study(study_name=study, storage=storage)
        if len(loaded.directions) != 1:
            raise ConfigError(
                f"Optuna study {study!r} has {len(loaded.directions)} objectives; hyperlab "
                "imports single-objective studies only"
            )
        trials = loaded.get_trials(deepcopy=False)
        maximize = loaded.direction == optuna.study.StudyDirection.MAXIMIZE
    except ConfigError:
        raise
    except Exception as exc:  # the database's own errors, whatever its driver raises
        raise ConfigError(f"cannot read Optuna study {study!r} in {_masked(url)}: {exc}") from None
    finally:
        storage.engine.dispose()
    complete_state = optuna.trial.TrialState.COMPLETE
    skipped = Counter(_SKIPPED[t.state.name] for t in trials if t.state != complete_state)
    complete = [t for t in trials if t.state == complete_state]
    finite = [t for t in complete if t.value is not None and math.isfinite(t.value)]
    if len(finite) < len(complete):
        skipped["complete, not finite"] = len(complete) - len(finite)
    if not finite:
        counts = ", ".join(f"{n} {state}" for state, n in sorted(skipped.items())) or "none"
        raise ConfigError(
            f"Optuna study {study!r} has no complete trial with a finite value to import "
            f"(its trials: {counts})"
        )
    shared, left_out = _shared_distributions(finite)
    space = _space(shared)
    results = [
        ImportedResult(
            params=_params(space, shared, t.params, t.number), value=float(t.value), metrics={}
        )
        for t in sorted(finite, key=lambda t: t.number)
    ]
    return StudyImport(
        study=study,
        mode=Mode.MAX if maximize else Mode.MIN,
        space=space.to_nni(),
        results=results,
        skipped=dict(skipped),
        left_out=left_out,
    )


def create_experiment(
    store: Store, imported: StudyImport, *, name: str, source: str
) -> ExperimentRecord:
    """Create an experiment named ``name`` in ``store`` from ``imported``: status
    INITIALIZED, no objective (a continuation gives one), its results imported.

    Args:
        store: Where to create it.
        imported: What ``read_study`` read.
        name: Its name.
        source: Where it came from, shown as its trial's origin (``hyperlab show``).

    Raises:
        ConfigError: another experiment of ``store`` has this name (nothing is written).
    """
    taken = store.ids_named(name)
    if taken:
        raise ConfigError(
            f"--name: an experiment named {name!r} already exists in {store.masked_url} "
            f"({', '.join(taken)}); give the imported study another name with --name"
        )
    from hyperlab.experiment import random_seed
    from hyperlab.store.tokens import ensure_token

    record = ExperimentRecord(
        id=store.new_experiment_id(),
        name=name,
        status=ExperimentStatus.INITIALIZED,
        options=validate_options(name=name, metric=METRIC, mode=imported.mode, tuner=TUNER),
        space=imported.space,
        seed=random_seed(),
        objective=None,
        created_at=time.time(),
        objective_ref=source,
    )
    store.create_experiment(record)
    ensure_token(store.experiment_folder(record))  # what writes through the REST API need
    for result in imported.results:
        store.add_imported(record.id, result.params, result.value, result.metrics)
    store.flush()
    return record


def _open(optuna: ModuleType, url: str) -> Any:
    """Optuna's storage for ``url``, opened without creating anything."""
    if "://" not in url:
        hint = f"; did you mean sqlite:///{url}?" if Path(url).is_file() else ""
        raise ConfigError(
            f"STORAGE_URL: expected the Optuna study's database URL "
            f"(sqlite:///path/to/study.db, postgresql://...), got {url!r}{hint}"
        )
    if url.startswith("sqlite:"):
        path = url.split("://", 1)[1].split("?", 1)[0].removeprefix("/")
        if path and path != ":memory:" and not Path(path).is_file():
            raise ConfigError(f"STORAGE_URL: {url}: no such file {path!r}")
    try:
        return optuna.storages.RDBStorage(url, skip_table_creation=True)
    except Exception as exc:  # an unreachable server, a missing driver, not Optuna's tables
        raise ConfigError(f"cannot open the Optuna storage {_masked(url)}: {exc}") from None


def _masked(url: str) -> str:
    """``url`` with its password hidden."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # not a URL SQLAlchemy parses: it holds no password it knows of
        return url


def _shared_distributions(trials: list[Any]) -> tuple[dict[str, Any], list[str]]:
    """The distributions every trial has, identical in all; the other parameters' names."""
    first = trials[0].distributions
    shared = {
        name: dist
        for name, dist in first.items()
        if all(t.distributions.get(name) == dist for t in trials)
    }
    every = {name for t in trials for name in t.distributions}
    return shared, sorted(every - set(shared))


def _space(distributions: dict[str, Any]) -> SearchSpace:
    specs = {}
    for name, distribution in distributions.items():
        try:
            specs[name] = distribution_spec(distribution)
        except NotImplementedError as exc:
            raise ConfigError(f"parameter {name!r}: {exc}") from None
    return SearchSpace.coerce(specs)


def _params(
    space: SearchSpace, distributions: dict[str, Any], params: dict[str, Any], number: int
) -> dict[str, Any]:
    """An Optuna trial's values of the space's parameters, as the space holds them: a value
    of a stepped range enumerated as a ``choice`` is the option it stands for."""
    values = {}
    for name, distribution in distributions.items():
        value = params[name]
        options = space[name].to_nni()
        if options["_type"] == "choice" and not hasattr(distribution, "choices"):
            value = min(options["_value"], key=lambda option: abs(option - value))
        values[name] = value
    try:
        space.check(values)
    except SearchSpaceError as exc:
        raise ConfigError(f"Optuna trial {number}: {exc}") from None
    return values
