"""The functions of the Python API: ``run``, ``resume`` and ``load``.

```python
import hyperlab

def objective(params):
    return (params["x"] - 2) ** 2 + params["y"]

space = {"x": hyperlab.uniform(-5, 5), "y": hyperlab.choice(0, 1)}
result = hyperlab.run(objective, space, max_trials=50)
print(result.best_params, result.best_value)
```
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from hyperlab._steering import budget_changes
from hyperlab.assessors.base import Assessor
from hyperlab.config import (
    DEFAULT_MAX_LOG_BYTES,
    DEFAULT_STORE_OUTAGE,
    GpuConfig,
    validate_options,
)
from hyperlab.errors import ConfigError
from hyperlab.experiment._callbacks import Callback
from hyperlab.experiment._experiment import Experiment
from hyperlab.experiment._result import Result
from hyperlab.experiment._setup import load_objective
from hyperlab.space import SearchSpace
from hyperlab.store import Store
from hyperlab.trial import Mode
from hyperlab.tuners.base import Tuner

__all__ = ["load", "resume", "run"]


def run(
    objective: Callable[..., Any],
    space: SearchSpace | Mapping[str, Any] | str | os.PathLike,
    *,
    metric: str | None = None,
    mode: Mode | Literal["min", "max"] = Mode.MIN,
    tuner: str | type[Tuner] | Tuner = "auto",
    tuner_args: dict[str, Any] | None = None,
    assessor: str | type[Assessor] | None = None,
    assessor_args: dict[str, Any] | None = None,
    max_trials: int | None = None,
    max_duration: float | str | None = None,
    concurrency: int = 1,
    executor: str = "inprocess",
    trial_timeout: float | str | None = None,
    max_failed_trials: int | None = None,
    continue_on_failure: bool = True,
    fail_fast: bool | int = True,
    storage: str | os.PathLike | None = None,
    seed: int | None = None,
    name: str | None = None,
    id: str | None = None,
    gpus: GpuConfig | Mapping[str, Any] | None = None,
    working_dir: str | os.PathLike | None = None,
    checkpoint_keep: int = 1,
    max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES,
    echo_output: bool = False,
    ray_address: str | None = None,
    resources: Mapping[str, float | int | str] | None = None,
    max_node_failures: int = 3,
    store_outage: float | str = DEFAULT_STORE_OUTAGE,
    progress: bool | float | None = None,
    callbacks: Sequence[Callback] | None = None,
    resume: str | None = None,
) -> Result:
    """Run an experiment to its end and return its ``Result``.

    Args:
        objective: ``f(params) -> float | dict``, a generator yielding intermediate results,
            ``f(params, reporter)`` (Ray Tune style), or any function calling
            ``hyperlab.report``.
        space: A ``SearchSpace``, a dict of parameters (builders or NNI specs), or a path to
            an NNI search-space JSON file.
        metric: Which reported metric is the objective; defaults to ``default`` or the only one.
        mode: ``"min"`` or ``"max"``.
        tuner: A tuner name (the default ``"auto"`` picks by the space and the trials so far,
            see docs/tuners.md; ``"tpe"``, ``"gp"``, ``"random"``, NNI's ``"TPE"``,
            ``"GridSearch"``...; see ``hyperlab.tuners.tuner_names()``), a
            ``"package.module:Class"`` path, a ``Tuner`` subclass, or a ``Tuner`` instance built
            for this ``space`` and ``mode`` (it is stored as it is before its first trial, so
            ``resume`` rebuilds it).
        tuner_args: Keyword arguments for the tuner's constructor (not with an instance).
        assessor: Early stopping or a scheduler acting on the trials' intermediate reports:
            ``"median"``, ``"curvefit"``, ``"asha"``, ``"hyperband"``, ``"pbt"`` (NNI's
            ``"Medianstop"``, ``"Curvefitting"``...), a ``"module:Class"`` path or an
            ``Assessor`` subclass; None for none. See docs/early_stopping.md.
        assessor_args: Keyword arguments for the assessor (``min_resource``...).
        max_trials: Trials to create at most. A budget (this, ``max_duration`` or a finite
            grid) is required.
        max_duration: Experiment time, summed over resumes: seconds, or ``"90s"``, ``"30m"``,
            ``"2h"``; running trials are cancelled (SYS_CANCELED) when it is reached.
        concurrency: Trials at once.
        executor: ``"inprocess"``, ``"threads"``, ``"processes"``, ``"command"`` (for a
            ``CommandTrial``) or ``"ray"`` (``pip install 'hyperlab[ray]'``; docs/cluster.md).
        trial_timeout: A trial running longer is FAILED.
        max_failed_trials: Consecutive failures that end the experiment in ERROR (default 10).
        continue_on_failure: False ends the experiment at the first failed trial, in ERROR,
            and ``run`` then raises that trial's own exception (for ``inprocess`` and
            ``threads`` trials the object itself, for ``processes`` trials an unpickled copy),
            with a note naming the trial and the experiment, or a ``TrialError`` quoting its
            error when there is no exception to raise (command trials, crashes, timeouts).
        fail_fast: While no trial has succeeded, end the experiment in ERROR as soon as the
            first ``max(3, concurrency)`` trials (or this many, given a number) all failed
            the same way; False never does.
        storage: ``None`` for ``$HYPERLAB_HOME/hyperlab.db``, ``":memory:"``, a
            ``sqlite:///`` URL or a ``postgresql://`` URL.
        seed: The experiment seed; every random stream derives from it.
        name: A name to show in listings.
        id: The experiment's id, instead of 8 random characters: 1 to 32 lowercase letters,
            digits, ``-`` or ``_``, starting with a letter or a digit, not already in the
            store (``ConfigError`` otherwise, before anything is written).
        gpus: Place trials on accelerators: ``{"indices": [0, 1] | "auto", "per_trial": 1,
            "max_trials_per_gpu": 1}``; each trial sees its devices in ``CUDA_VISIBLE_DEVICES``
            (command and process trials) and ``hyperlab.trial_devices()``.
        working_dir: Folder for the experiment's files (default: the hyperlab home).
        checkpoint_keep: How many of its latest checkpoints (``hyperlab.checkpoint``) each
            trial keeps.
        max_log_bytes: Cap on each ``stdout.log`` / ``stderr.log`` of a command trial (its
            head and tail are kept); None keeps everything.
        echo_output: Also echo function trials' output (captured to their logs) to the
            driver's stdout and stderr.
        ray_address: With ``executor="ray"``: ``"auto"``, ``"host:port"`` or
            ``"ray://host:port"`` of a running Ray cluster; None uses the Ray instance this
            process is connected to, or starts a local one.
        resources: With ``executor="ray"``, what each trial holds on its node: ``{"cpu": 1,
            "gpu": 0.5, "memory": "4GiB", "<custom resource>": 1}`` (default one CPU).
        max_node_failures: With ``executor="ray"``, how many times a trial whose node dies
            runs again (``attempt + 1``, from its last checkpoint) before it fails.
        store_outage: How long (seconds, or ``"90s"``, ``"5m"``) the experiment rides out a
            database that does not answer (a restart, a lost connection, a SQLite lock held
            past its busy timeout): its trials run on and their results wait in memory while
            the driver tries again; past it the driver stops with ``StoreUnavailable``, whose
            message says how to continue the experiment.
        progress: False for silence; by default a live bar on a terminal, and a plain line
            every 30 s (and each tenth of the trials) elsewhere; a number sets those seconds.
        callbacks: Objects whose ``on_trial_start(trial)``, ``on_report(trial, report)`` and
            ``on_trial_end(trial)`` are called in the driver's thread as trials start, report
            and end (``hyperlab.Callback`` has them all, doing nothing); an error in one is
            logged once and the experiment goes on. They are not stored.
        resume: Continue this experiment (id or unique name) instead of creating one (its
            stored options are kept; ``max_trials`` and ``max_duration`` given here replace
            its budget).

    Raises:
        ConfigError: An option is invalid (nothing is written then).
        TrialError: No trial succeeded (and some failed), or failures ended the experiment in
            ERROR. ``exc.result`` is the result, kept in the store; the message quotes the
            first failure's error and traceback.
        Exception: With ``continue_on_failure=False``, what the failed trial raised, once the
            store shows it FAILED with its traceback and the experiment in ERROR.
        KeyboardInterrupt: On Ctrl-C, once the experiment is stopped and recorded; it says
            how to resume (interrupted trials run again).
    """
    if resume is not None:
        if id is not None:
            raise ConfigError(
                f"id: {id!r} given with resume={resume!r}; a resumed experiment keeps its id"
            )
        return _continue(
            resume,
            storage=storage,
            objective=objective,
            progress=progress,
            changes=budget_changes(max_trials=max_trials, max_duration=max_duration),
            callbacks=callbacks,
        )
    return Experiment(
        objective,
        space,
        metric=metric,
        mode=mode,
        tuner=tuner,
        tuner_args=tuner_args,
        assessor=assessor,
        assessor_args=assessor_args,
        max_trials=max_trials,
        max_duration=max_duration,
        concurrency=concurrency,
        executor=executor,
        trial_timeout=trial_timeout,
        max_failed_trials=max_failed_trials,
        continue_on_failure=continue_on_failure,
        fail_fast=fail_fast,
        storage=storage,
        seed=seed,
        name=name,
        id=id,
        gpus=gpus,
        working_dir=working_dir,
        checkpoint_keep=checkpoint_keep,
        max_log_bytes=max_log_bytes,
        echo_output=echo_output,
        ray_address=ray_address,
        resources=resources,
        max_node_failures=max_node_failures,
        store_outage=store_outage,
        progress=progress,
        callbacks=callbacks,
    ).run()


def resume(
    experiment: str,
    *,
    storage: str | os.PathLike | None = None,
    objective: Callable[..., Any] | None = None,
    progress: bool | float | None = None,
    max_trials: int | None = None,
    max_duration: float | str | None = None,
    concurrency: int | None = None,
    port: int | None = None,
    host: str = "127.0.0.1",
    callbacks: Sequence[Callback] | None = None,
) -> Result:
    """Continue a stopped or crashed experiment from the store alone, and run it to its end.

    Finished trials are replayed into a fresh tuner in number order; trials that were
    waiting, running or interrupted (SYS_CANCELED) when the last driver ended run again with
    their params and ``attempt + 1``. ``max_duration`` counts on from the time already spent.

    What may change on resume is what NNI's manager lets change while an experiment runs:
    its budget (``max_trials``, ``max_duration``) and ``concurrency``, each checked as the
    control request that changes it on a running experiment is. The change is recorded in the
    store as the driver starts (``hyperlab show`` reports it). The rest (search space, tuner,
    assessor, objective, metric, mode, seed...) is what the finished trials were made with,
    and stays as stored; a running experiment takes a new search space with
    ``Experiment.update_search_space`` or ``hyperlab update-space``.

    Example:
        >>> hyperlab.resume("k3x9q2ab", max_trials=200, max_duration="2h", concurrency=4)

    Args:
        experiment: The experiment's id, or its name if no other experiment has it.
        storage: The store that holds it.
        objective: The objective; by default the one pickled in the store (its module is
            imported from the folder it was imported from when the experiment was created).
        progress: As for ``run``.
        max_trials: Trials to create in all from now on (None keeps the stored budget). One
            at or below the trials the experiment already has is taken as NNI's manager takes
            a lower ``maxTrialNumber``: no new trial is created, interrupted ones run again,
            and the experiment ends DONE (a ``UserWarning`` says so).
        max_duration: Experiment time in all, summed over resumes: seconds, or ``"90s"``,
            ``"30m"``, ``"2h"``, ``"1d"`` (None keeps the stored one).
        concurrency: Trials at once from now on (None keeps the stored value).
        port / host: Serve the REST API and the dashboard while it runs (see
            ``Experiment.run``).
        callbacks: As for ``run`` (callbacks are not stored: give them again here).

    Raises:
        ConfigError: A change of the wrong type or out of range (naming it, the value and
            what was expected; nothing is written then), its objective cannot be loaded, or
            the name is ambiguous.
        ExperimentNotFound: No such experiment in the store.
        ExperimentBusy: A driver runs it now (the message names its pid and host).
        TrialError: As for ``run``.
        Exception: As for ``run`` with ``continue_on_failure=False``.
    """
    return _continue(
        experiment,
        storage=storage,
        objective=objective,
        progress=progress,
        changes=budget_changes(
            max_trials=max_trials, max_duration=max_duration, concurrency=concurrency
        ),
        port=port,
        host=host,
        callbacks=callbacks,
    )


def _continue(
    experiment: str,
    *,
    storage: str | os.PathLike | None,
    objective: Callable[..., Any] | None,
    progress: bool | float | None,
    changes: dict[str, Any],
    port: int | None = None,
    host: str = "127.0.0.1",
    callbacks: Sequence[Callback] | None = None,
) -> Result:
    """Run a stored experiment again, with ``changes`` (checked by ``budget_changes``) to its
    options; the driver records the options it runs with as it starts."""
    store = Store.open(storage)
    record = store.get_experiment(store.resolve(experiment))
    record.check_not_running()
    options = validate_options(**{**record.options.model_dump(), **changes})
    if "max_trials" in changes:
        _warn_if_spent(store, record.id, changes["max_trials"])
    if objective is None:
        objective = load_objective(record)
    attached = Experiment.attach(store, record, options, objective, progress, storage, callbacks)
    return attached.run(port=port, host=host)


def _warn_if_spent(store: Store, experiment_id: str, max_trials: int) -> None:
    """Warn when ``max_trials`` leaves no room for a new trial (which NNI's manager accepts)."""
    created = len(store.get_trials(experiment_id, reports=False))
    if created >= max_trials:
        warnings.warn(
            f"max_trials={max_trials}: experiment {experiment_id} already has {created} trials, "
            "so it creates no new one; those that were interrupted run again, then it ends "
            "DONE (as NNI does with a lower maxTrialNumber)",
            UserWarning,
            stacklevel=4,
        )


def load(experiment: str, storage: str | os.PathLike | None = None) -> Result:
    """Read an experiment (by id, or unique name), running or finished, without changing it.

    Raises:
        ExperimentNotFound: No such experiment in the store.
        ConfigError: The name is shared by several experiments (the message lists their ids).
    """
    store = Store.open(storage)
    return Result.read(store, store.resolve(experiment))
