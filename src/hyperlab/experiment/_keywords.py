"""The keyword options of ``hyperlab.run`` and ``hyperlab.Experiment``, as types: what
each takes and what it means (docs/config.md, "Fields", says the same in a table).

Written by ``python -m hyperlab.config._generate`` from ``hyperlab.config.ExperimentOptions``,
the one definition of the options; tests/config/test_options_once.py checks it is current.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from hyperlab.assessors.base import Assessor
from hyperlab.config import GpuConfig
from hyperlab.trial import Mode, Trial
from hyperlab.tuners.base import Tuner

__all__ = ["ExecutorArgs", "Options"]


class ExecutorArgs(TypedDict, total=False):
    """The options of ``executor_args``: those of the executor alone."""

    gpus: GpuConfig | Mapping[str, Any] | None
    """Place trials on accelerators; each trial sees its devices in ``CUDA_VISIBLE_DEVICES``
    (command and process trials) and ``hyperlab.trial_devices()``."""

    max_log_bytes: int | None
    """At most how many bytes of a trial's output its ``stdout.log`` and ``stderr.log`` each keep:
    past it, a log keeps its first half-cap and its latest bytes, with one line between them
    saying how many bytes were dropped; ``null`` keeps everything (NNI configs get the default).
    Function trials' logs are capped the same way."""

    echo_output: bool
    """Also write each trial's output to the driver's stdout and stderr, every line prefixed with
    ``[trial N] ``; by default it goes to the trial's ``stdout.log`` and ``stderr.log`` only."""

    ray_address: str | None
    """With executor ``ray``, the cluster to run trials on; ``null`` joins the cluster
    ``ray.init()`` finds by itself, or starts a local one (cluster.md)."""

    resources: Mapping[str, float | int | str] | None
    """With executor ``ray``, what each trial holds on its node: ``cpu``, ``gpu`` (a fraction
    shares one GPU), ``memory`` (bytes or ``4GiB``), and custom Ray resources by name; with
    executor ``dask``, the Dask worker resources each trial holds (``gpu``, ``cpu`` and
    ``memory`` are Dask's ``GPU``, ``CPU`` and ``MEMORY``; other names as the workers declare
    them)."""

    max_node_failures: int
    """With executor ``ray`` (or ``dask``), how many times a trial whose node (or Dask worker) dies
    runs again (``attempt + 1``, from its last checkpoint) before it fails."""

    dask_address: str | None
    """With executor ``dask``, the scheduler to run trials on (``null``: Dask's own ``scheduler-
    address`` setting); in Python ``dask_cluster`` may give a cluster object instead, whose
    address is what the store keeps (cluster.md)."""

    dask_cluster: Any
    """With executor ``dask``, in Python only: a running Dask cluster object
    (``dask_jobqueue.SLURMCluster``, ``distributed.LocalCluster``...) to run trials on; the
    store keeps its scheduler's address, which ``resume`` connects to."""

    own_trials: int | None
    """With executor ``shared``, how many of ``max_trials`` the driver runs in its own process
    (``null``: as many as the workers leave); workers that join bring their own ``--max-trials``
    to the budget, as each process's ``n_trials`` counts in Optuna (cluster.md)."""


class Options(TypedDict, total=False):
    """The keyword options of ``run`` and ``Experiment``; any left out takes its default."""

    name: str | None
    """Shown by ``hyperlab ls`` and ``show``."""

    metric: str | Sequence[str] | None
    """Which reported metric is the objective; a list of several names makes a multi-objective
    experiment (see multiobjective.md) whose trials report every one of them."""

    mode: Mode | Literal["min", "max"] | Sequence[Mode | Literal["min", "max"]]
    """Which way is better; with several metrics a list of as many, or one direction for all of
    them."""

    constraints: Sequence[str] | Callable[[Trial], Sequence[float]] | None
    """Limits a trial must meet to count (``metric <= number``, ``>=``, ``<``, ``>``); an
    infeasible trial is stored with its violation and is never the best nor on the Pareto front;
    in Python also a function of the finished ``Trial`` returning floats, each ``<= 0`` when met
    (Optuna's ``constraints_func``)."""

    tuner: str | type[Tuner] | Tuner
    """The tuner (see tuners.md): a name (``auto`` picks by the space and the trials so far;
    ``tpe``, ``gp``, ``random``, NNI's ``TPE``, ``GridSearch``...), a ``package.module:Class``
    path; in Python also a ``Tuner`` subclass, or a ``Tuner`` instance built for this space and
    mode (stored as it is before its first trial, so that ``resume`` rebuilds it)."""

    tuner_args: dict[str, Any] | None
    """The tuner's constructor arguments, when ``tuner`` is a name or a class."""

    assessor: str | type[Assessor] | Assessor | None
    """Early stopping or a scheduler acting on the trials' intermediate reports: ``median``,
    ``curvefit``, ``asha``, ``hyperband``, ``pbt`` (NNI's ``Medianstop``, ``Curvefitting``,
    ``Hyperband`` too), a ``package.module:Class`` path; in Python also an ``Assessor``
    subclass, or an ``Assessor`` instance (stored as it is before the first trial, so that
    ``resume`` rebuilds it). See early-stopping.md."""

    assessor_args: dict[str, Any] | None
    """The assessor's constructor arguments, when ``assessor`` is a name or a class."""

    checkpoint_keep: int
    """How many of its latest ``hyperlab.checkpoint()``s each trial keeps."""

    checkpoint_score: str | None
    """A reported metric: each trial keeps instead the ``checkpoint_keep`` checkpoints whose
    reports (the last before each checkpoint) were best in it, and its newest, which a resumed
    or continued trial starts from (Ray's ``checkpoint_score_attribute``); a checkpoint whose
    report lacks it ranks last; ``null`` keeps the newest."""

    checkpoint_score_mode: Mode | Literal["min", "max"] | None
    """Which way ``checkpoint_score`` is better; ``null`` takes the experiment's ``mode``."""

    max_trials: int | None
    """Trials to create at most."""

    max_duration: float | str | None
    """Experiment time: the wall-clock time some driver ran the experiment, summed over resumes;
    when it is reached no trial starts and the running ones are cancelled (SYS_CANCELED), as far
    as their executor can interrupt them (see Budgets). A budget (``max_trials``,
    ``max_duration``, or a finite grid) is required."""

    budget_time: Literal["experiment", "trials"]
    """What ``max_duration`` counts: ``experiment`` time (above), or ``trials``: the durations of
    the trials that ended, summed, as NNI's sequential engine counts its ``max_duration``; then
    a trial running when the sum reaches it finishes, and no trial starts after."""

    concurrency: int
    """Trials at once."""

    executor: str
    """Where trials run (``ray``: on a Ray cluster, ``pip install 'hyperlab[ray]'``; ``dask``: on a
    Dask cluster, ``pip install 'hyperlab[dask]'``; ``pool``: on the workers that join it
    through the store, ``hyperlab worker ID``; ``shared``: in the driver's process and on such
    workers, each bringing its own trials, as Optuna's processes on one study; see cluster.md);
    in Python, ``command`` runs a ``CommandTrial``."""

    trial_timeout: float | str | None
    """A trial running longer is FAILED (a command's process group gets SIGTERM, then SIGKILL)."""

    max_failed_trials: int | None
    """Consecutive failed trials after which the experiment ends in ERROR."""

    continue_on_failure: bool
    """False ends the experiment at the first failed trial, in ERROR; ``run`` then raises that
    trial's own exception (for ``inprocess`` and ``threads`` trials the object itself, for
    ``processes`` trials an unpickled copy) with a note naming the trial and the experiment, or
    a ``TrialError`` quoting its error when there is no exception to raise (command trials,
    crashes, timeouts)."""

    callbacks_raise: bool
    """True: a callback's exception ends the experiment in ERROR and is raised by ``run`` (and a
    strategy loop's ``wait``), as NNI's engine lets its callbacks' exceptions through; false
    logs it once and goes on."""

    fail_fast: bool | int
    """While no trial has succeeded, end the experiment in ERROR as soon as the first ``max(3,
    concurrency)`` trials (or this many, given a number) all failed the same way; false never
    does."""

    seed: int | None
    """The experiment seed; every random stream, and each trial's ``hyperlab.trial_seed()``, derive
    from it."""

    working_dir: str | os.PathLike[str] | None
    """Where the experiment's folder (``<id>/trials/<number>/``) goes; the default is
    ``$HYPERLAB_HOME/experiments`` for the home's own ``hyperlab.db``, for PostgreSQL, and
    whenever ``$HYPERLAB_HOME`` is set; the folder chosen is recorded with the experiment."""

    store_outage: float | str
    """How long a running experiment rides out a database that does not answer (a restart, a lost
    connection, a SQLite lock held past its busy timeout): its trials run on and their results
    wait in memory while the driver tries again; past it the driver stops with
    ``StoreUnavailable``, whose message says how to continue. See When the database does not
    answer."""

    executor_args: ExecutorArgs | Mapping[str, Any] | None
    """The executor's own options, checked as the others are: ``gpus``, ``max_log_bytes``,
    ``echo_output``, ``ray_address``, ``resources``, ``max_node_failures``, ``dask_address``,
    ``dask_cluster``, ``own_trials``."""

    # deprecated: the executor's options, given as keywords of their own

    gpus: GpuConfig | Mapping[str, Any] | None
    """Deprecated: give it in ``executor_args`` (``executor_args={'gpus': ...}``)."""

    max_log_bytes: int | None
    """Deprecated: give it in ``executor_args`` (``executor_args={'max_log_bytes': ...}``)."""

    echo_output: bool
    """Deprecated: give it in ``executor_args`` (``executor_args={'echo_output': ...}``)."""

    ray_address: str | None
    """Deprecated: give it in ``executor_args`` (``executor_args={'ray_address': ...}``)."""

    resources: Mapping[str, float | int | str] | None
    """Deprecated: give it in ``executor_args`` (``executor_args={'resources': ...}``)."""

    max_node_failures: int
    """Deprecated: give it in ``executor_args`` (``executor_args={'max_node_failures': ...}``)."""

    dask_address: str | None
    """Deprecated: give it in ``executor_args`` (``executor_args={'dask_address': ...}``)."""

    dask_cluster: Any
    """Deprecated: give it in ``executor_args`` (``executor_args={'dask_cluster': ...}``)."""

    own_trials: int | None
    """Deprecated: give it in ``executor_args`` (``executor_args={'own_trials': ...}``)."""
