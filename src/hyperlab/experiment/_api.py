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
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from typing_extensions import Unpack

from hyperlab._steering import budget_changes
from hyperlab.errors import ConfigError
from hyperlab.experiment._callbacks import Callback
from hyperlab.experiment._experiment import Experiment
from hyperlab.experiment._keywords import Options
from hyperlab.experiment._parts import check_keywords
from hyperlab.experiment._result import Result
from hyperlab.space import SearchSpace
from hyperlab.store import Store

__all__ = ["load", "resume", "run"]


def run(
    objective: Callable[..., Any],
    space: SearchSpace | Mapping[str, Any] | str | os.PathLike,
    *,
    storage: str | os.PathLike | None = None,
    id: str | None = None,
    progress: bool | float | None = None,
    callbacks: Sequence[Callback] | None = None,
    resume: str | None = None,
    **options: Unpack[Options],
) -> Result:
    """Run an experiment to its end and return its ``Result``.

    Every option (``max_trials``, ``tuner``, ``concurrency``, ``executor_args``...) is a
    keyword of the same name: docs/config.md, "Fields", lists them with their types, defaults
    and meanings (``hyperlab.experiment.Options`` has the same for IDEs).

    Args:
        objective: ``f(params) -> float | dict``, a generator yielding intermediate results,
            ``f(params, reporter)`` (Ray Tune style), or any function calling
            ``hyperlab.report``.
        space: A ``SearchSpace``, a dict of parameters (builders or NNI specs), or a path to
            an NNI search-space JSON file.
        storage: ``None`` for ``$HYPERLAB_HOME/hyperlab.db``, ``":memory:"``, a
            ``sqlite:///`` URL or a ``postgresql://`` URL.
        id: The experiment's id, instead of 8 random characters: 1 to 32 lowercase letters,
            digits, ``-`` or ``_``, starting with a letter or a digit, not already in the
            store (``ConfigError`` otherwise, before anything is written).
        progress: False for silence; by default a live bar on a terminal, and a plain line
            every 30 s (and each tenth of the trials) elsewhere; a number sets those seconds.
        callbacks: Objects whose ``on_trial_start(trial)``, ``on_report(trial, report)`` and
            ``on_trial_end(trial)`` are called in the driver's thread as trials start, report
            and end (``hyperlab.Callback`` has them all, doing nothing); an error in one is
            logged once and the experiment goes on. They are not stored.
        resume: Continue this experiment (id or unique name) instead of creating one (its
            stored options are kept; ``max_trials`` and ``max_duration`` given here replace
            its budget).
        **options: The options of docs/config.md; an executor option given as a keyword of
            its own (``gpus=``, not in ``executor_args``) is deprecated (``DeprecationWarning``).

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
        check_keywords(options)
        if id is not None:
            raise ConfigError(
                f"id: {id!r} given with resume={resume!r}; a resumed experiment keeps its id"
            )
        return _continue(
            resume,
            storage=storage,
            objective=objective,
            progress=progress,
            changes=budget_changes(
                max_trials=options.get("max_trials"), max_duration=options.get("max_duration")
            ),
            callbacks=callbacks,
        )
    return Experiment(
        objective,
        space,
        storage=storage,
        id=id,
        progress=progress,
        callbacks=callbacks,
        **options,
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
    attached = Experiment.resume(
        experiment,
        storage=storage,
        objective=objective,
        progress=progress,
        callbacks=callbacks,
        **changes,
    )
    return attached.run(port=port, host=host)


def load(experiment: str, storage: str | os.PathLike | None = None) -> Result:
    """Read an experiment (by id, or unique name), running or finished, without changing it.

    Raises:
        ExperimentNotFound: No such experiment in the store.
        ConfigError: The name is shared by several experiments (the message lists their ids).
    """
    store = Store.open(storage)
    return Result.read(store, store.resolve(experiment))
