"""The run options (``ExperimentOptions``, ``GpuConfig``, ``ResearchOptions``), what documents
each of them (``Doc``): the one definition of every option.

Every entry point (``hyperlab.run``, ``Experiment``, config files, the REST API) validates
through these models; a bad value becomes a ``ConfigError`` that names the field, the value
received and what was expected.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema

from hyperlab.config._constraints import parse_constraint
from hyperlab.config._ranges import (
    DEFAULT_MAX_LOG_BYTES,
    DEFAULT_STORE_OUTAGE,
    MAX_CHECKPOINTS,
    MAX_DURATION,
    MAX_GPU_CHECK_DELAY,
    MAX_GPU_CHECKS,
    MAX_GPUS,
    MAX_ITERATIONS,
    MAX_MAX_LOG_BYTES,
    MAX_NODE_FAILURES,
    MAX_STORE_OUTAGE,
    MAX_TRIALS,
    MIN_MAX_LOG_BYTES,
    Concurrency,
    TrialCount,
    parse_duration,
)
from hyperlab.trial import Mode


@dataclass(frozen=True)
class Doc:
    """What the docs and the Python signatures say of an option beyond its model field (its
    ``Field(description=...)`` says what it means); read by ``hyperlab.config._generate``.

    Attributes:
        type: What a config file gives, for the options table (``"integer, 1 .. 10,000"``).
        api: The keyword's type in ``hyperlab.run`` and ``Experiment``, where it is an option
            of theirs (it may be wider than the field's: ``"float | str | None"`` for a
            duration); None for a config-file field.
        default: The table's default, where the field's default does not say it.
        executor: An executor option: given in ``executor_args`` in Python.
        python: What stands for a config-file field in Python, for the table.
    """

    type: str
    api: str | None = None
    default: str | None = None
    executor: bool = False
    python: str | None = None


EXECUTOR_DOC = Doc(
    "`command`, `processes`, `threads`, `inprocess`, `ray`, `dask`, `pool`, `shared`",
    "str",
    "`inprocess`; in config files `command` for commands, `processes` for functions",
)
"""The ``Doc`` of ``executor``, whose default differs in config files."""
_LOG_CAP = "52428800 (50 MiB)"


class GpuConfig(BaseModel):
    """Where trials run: device indices (or ``"auto"``: what ``nvidia-smi`` lists), how many
    each trial holds, and how many trials may share one device.

    With ``memory_ratio`` (BatchFlow's option of that name), a trial starts only once each of
    its devices has that fraction of its memory free, looked at up to ``n_gpu_checks`` times
    ``gpu_check_delay`` seconds apart (it fails otherwise); None starts trials without looking.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    indices: Annotated[
        list[Annotated[int, Field(ge=0)]] | Literal["auto"],
        Doc("list of non-negative integers, or `auto`"),
    ] = Field(
        default="auto", description="devices trials may use; `auto` lists them with `nvidia-smi`"
    )
    per_trial: Annotated[int, Doc("integer, 1 .. 1,024")] = Field(
        default=1,
        ge=1,
        le=MAX_GPUS,
        description="devices each trial holds (its `CUDA_VISIBLE_DEVICES`)",
    )
    max_trials_per_gpu: Annotated[int, Doc("integer, 1 .. 1,024")] = Field(
        default=1,
        ge=1,
        le=MAX_GPUS,
        description="trials one device may hold at once; a trial waits while none is free",
    )
    memory_ratio: Annotated[float | None, Doc("number in (0, 1], or `null`")] = Field(
        default=None,
        gt=0,
        le=1,
        description="before a trial starts, each of its devices must have this fraction of its "
        "total memory free (BatchFlow's `memory_ratio`); `null` starts trials without looking. "
        "See [GPU memory checks](#gpu-memory-checks)",
    )
    n_gpu_checks: Annotated[int, Doc("integer, 1 .. 10,000")] = Field(
        default=3,
        ge=1,
        le=MAX_GPU_CHECKS,
        description="how many times to look at the free memory before the trial fails",
    )
    gpu_check_delay: Annotated[float, Doc("seconds, 0 .. 3,600")] = Field(
        default=5.0, ge=0, le=MAX_GPU_CHECK_DELAY, description="time between two looks"
    )

    @field_validator("memory_ratio", "n_gpu_checks", "gpu_check_delay", mode="before")
    @classmethod
    def _not_bool(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"gpus.{info.field_name}: expected a number, got {value!r}")
        return value

    @field_validator("indices", mode="before")
    @classmethod
    def _indices(cls, value: Any) -> Any:
        """The messages ``DevicePool`` gives for the same indices."""
        if value == "auto":
            return value
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise ValueError(f"gpus.indices: expected a list of device indices, got {value!r}")
        values = list(value)
        if not values:
            raise ValueError(
                "gpus.indices: expected at least one device index, got [] (no GPU was detected?)"
            )
        for index in values:
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise ValueError(
                    f"gpus.indices: expected non-negative integers, got {index!r} in {values}"
                )
            if values.count(index) > 1:
                raise ValueError(f"gpus.indices: device {index} appears twice in {values}")
        return values

    @model_validator(mode="after")
    def _fits(self) -> GpuConfig:
        if self.indices != "auto" and self.per_trial > len(self.indices):
            raise ValueError(
                f"gpus.per_trial: {self.per_trial} devices per trial is more than the "
                f"{len(self.indices)} in gpus.indices={self.indices}"
            )
        return self


class ResearchOptions(BaseModel):
    """What makes an experiment a research (``hyperlab.Research``): its units, iterations and
    how its configs are spread. Each trial of a research is one config x repetition; its params
    are the config's aliases (see ``hyperlab.research.Domain``) plus ``repetition``, and each of
    its reports is one iteration (``step``) holding the variables saved in it (``save_to``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_iters: int | None = Field(default=None, ge=1, le=MAX_ITERATIONS)
    n_configs: TrialCount | None = None
    n_reps: TrialCount = 1
    repeat_each: TrialCount | None = None
    workers: Concurrency = 1
    branches: Concurrency = 1
    units: list[str] = Field(default_factory=list)
    variables: list[str] = Field(default_factory=list)
    config_keys: list[str] = Field(default_factory=list)
    profile: bool = False
    domain: str = ""
    project_dir: str | None = None
    """The user's project: the folder of the script that built the research (else the working
    directory then), whose git state its environment records."""


def _duration_field(cls: type, value: Any, info: ValidationInfo) -> float | None:
    return parse_duration(value, info.field_name or "duration")


class ExperimentOptions(BaseModel):
    """How an experiment runs: the one definition of every option of ``hyperlab.run``,
    ``Experiment`` and config files (docs/config.md, "Fields", is generated from it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Annotated[str | None, Doc("string", "str | None")] = Field(
        default=None, description="shown by `hyperlab ls` and `show`"
    )
    metric: Annotated[
        str | tuple[str, ...] | None,
        Doc(
            "string, or a list of strings (several objectives)",
            "str | Sequence[str] | None",
            "`default` or the only metric",
        ),
    ] = Field(
        default=None,
        description="which reported metric is the objective; a list of several names makes a "
        "multi-objective experiment (see [multiobjective.md](multiobjective.md)) whose trials "
        "report every one of them",
    )
    mode: Annotated[
        Mode | tuple[Mode, ...],
        Doc(
            "`min` or `max`, or a list of them (one per metric)",
            'Mode | Literal["min", "max"] | Sequence[Mode | Literal["min", "max"]]',
        ),
    ] = Field(
        default=Mode.MIN,
        description="which way is better; with several metrics a list of as many, or one "
        "direction for all of them",
    )
    constraints: Annotated[
        tuple[str, ...] | None,
        Doc(
            "list of strings such as `latency_ms <= 50`",
            "Sequence[str] | Callable[[Trial], Sequence[float]] | None",
        ),
    ] = Field(
        default=None,
        description="limits a trial must meet to count (`metric <= number`, `>=`, `<`, `>`); "
        "an infeasible trial is stored with its violation and is never the best nor on the "
        "Pareto front; in Python also a function of the finished `Trial` returning floats, "
        "each `<= 0` when met (Optuna's `constraints_func`)",
    )
    tuner: Annotated[str, Doc("name or `{name, args}`", "str | type[Tuner] | Tuner")] = Field(
        default="auto",
        description="the tuner (see [tuners.md](tuners.md)): a name (`auto` picks by the space "
        "and the trials so far; `tpe`, `gp`, `random`, NNI's `TPE`, `GridSearch`...), a "
        "`package.module:Class` path; in Python also a `Tuner` subclass, or a `Tuner` instance "
        "built for this space and mode (stored as it is before its first trial, so that "
        "`resume` rebuilds it)",
    )
    tuner_args: Annotated[dict[str, Any], Doc("mapping", "dict[str, Any] | None")] = Field(
        default_factory=dict,
        description="the tuner's constructor arguments, when `tuner` is a name or a class",
    )
    assessor: Annotated[
        str | None, Doc("name or `{name, args}`", "str | type[Assessor] | Assessor | None")
    ] = Field(
        default=None,
        description="early stopping or a scheduler acting on the trials' intermediate reports: "
        "`median`, `curvefit`, `asha`, `hyperband`, `pbt` (NNI's `Medianstop`, `Curvefitting`, "
        "`Hyperband` too), a `package.module:Class` path; in Python also an `Assessor` "
        "subclass, or an `Assessor` instance (stored as it is before the first trial, so that "
        "`resume` rebuilds it). See [early-stopping.md](early-stopping.md)",
    )
    assessor_args: Annotated[dict[str, Any], Doc("mapping", "dict[str, Any] | None")] = Field(
        default_factory=dict,
        description="the assessor's constructor arguments, when `assessor` is a name or a class",
    )
    checkpoint_keep: Annotated[int, Doc("integer, 1 .. 2^31 - 1", "int")] = Field(
        default=1,
        ge=1,
        le=MAX_CHECKPOINTS,
        description="how many of its latest `hyperlab.checkpoint()`s each trial keeps",
    )
    checkpoint_score: Annotated[str | None, Doc("string, or `null`", "str | None")] = Field(
        default=None,
        min_length=1,
        description="a reported metric: each trial keeps instead the `checkpoint_keep` "
        "checkpoints whose reports (the last before each checkpoint) were best in it, and its "
        "newest, which a resumed or continued trial starts from (Ray's "
        "`checkpoint_score_attribute`); a checkpoint whose report lacks it ranks last; `null` "
        "keeps the newest",
    )
    checkpoint_score_mode: Annotated[
        Mode | None, Doc("`min`, `max`, or `null`", 'Mode | Literal["min", "max"] | None', "`mode`")
    ] = Field(
        default=None,
        description="which way `checkpoint_score` is better; `null` takes the experiment's `mode`",
    )
    max_trials: Annotated[TrialCount | None, Doc("integer, 1 .. 2^31 - 1", "int | None")] = Field(
        default=None, description="trials to create at most"
    )
    max_duration: Annotated[
        float | None,
        Doc("seconds or `90s`/`30m`/`2h`/`1d`, up to 3650d", "float | str | None"),
    ] = Field(
        default=None,
        gt=0,
        le=MAX_DURATION,
        description="experiment time: the wall-clock time some driver ran the experiment, "
        "summed over resumes; when it is reached no trial starts and the running ones are "
        "cancelled (SYS_CANCELED), as far as their executor can interrupt them (see "
        "[Budgets](#budgets)). A budget (`max_trials`, `max_duration`, or a finite grid) is "
        "required",
    )
    budget_time: Annotated[
        Literal["experiment", "trials"],
        Doc("`experiment` or `trials`", 'Literal["experiment", "trials"]'),
    ] = Field(
        default="experiment",
        description="what `max_duration` counts: `experiment` time (above), or `trials`: the "
        "durations of the trials that ended, summed, as NNI's sequential engine counts its "
        "`max_duration`; then a trial running when the sum reaches it finishes, and no trial "
        "starts after",
    )
    concurrency: Annotated[Concurrency, Doc("integer, 1 .. 10,000", "int")] = Field(
        default=1, description="trials at once"
    )
    executor: Annotated[str, EXECUTOR_DOC] = Field(
        default="inprocess",
        description="where trials run (`ray`: on a Ray cluster, `pip install 'hyperlab[ray]'`; "
        "`dask`: on a Dask cluster, `pip install 'hyperlab[dask]'`; `pool`: on the workers that "
        "join it through the store, `hyperlab worker ID`; `shared`: in the driver's process "
        "and on such workers, each bringing its own trials, as Optuna's processes on one "
        "study; see [cluster.md](cluster.md)); "
        "in Python, `command` runs a `CommandTrial`",
    )
    trial_timeout: Annotated[
        float | None, Doc("seconds or duration string, up to 3650d", "float | str | None")
    ] = Field(
        default=None,
        gt=0,
        le=MAX_DURATION,
        description="a trial running longer is FAILED (a command's process group gets SIGTERM, "
        "then SIGKILL)",
    )
    max_failed_trials: Annotated[
        TrialCount | None, Doc("integer, 1 .. 2^31 - 1", "int | None", "10")
    ] = Field(
        default=None,
        description="consecutive failed trials after which the experiment ends in ERROR",
    )
    continue_on_failure: Annotated[bool, Doc("boolean", "bool")] = Field(
        default=True,
        description="false ends the experiment at the first failed trial, in ERROR; `run` then "
        "raises that trial's own exception (for `inprocess` and `threads` trials the object "
        "itself, for `processes` trials an unpickled copy) with a note naming the trial and the "
        "experiment, or a `TrialError` quoting its error when there is no exception to raise "
        "(command trials, crashes, timeouts)",
    )
    callbacks_raise: Annotated[bool, Doc("boolean", "bool")] = Field(
        default=False,
        description="true: a callback's exception ends the experiment in ERROR and is raised by "
        "`run` (and a strategy loop's `wait`), as NNI's engine lets its callbacks' exceptions "
        "through; false logs it once and goes on",
    )
    fail_fast: Annotated[bool | int, Doc("boolean, or 1 .. 2^31 - 1", "bool | int")] = Field(
        default=True,
        description="while no trial has succeeded, end the experiment in ERROR as soon as the "
        "first `max(3, concurrency)` trials (or this many, given a number) all failed the same "
        "way; false never does",
    )
    seed: Annotated[int | None, Doc("integer, 0 .. 2^63 - 1", "int | None", "random")] = Field(
        default=None,
        ge=0,
        lt=2**63,
        description="the experiment seed; every random stream, and each trial's "
        "`hyperlab.trial_seed()`, derive from it",
    )
    gpus: Annotated[
        GpuConfig | None,
        Doc("mapping (below)", "GpuConfig | Mapping[str, Any] | None", executor=True),
    ] = Field(
        default=None,
        description="place trials on accelerators; each trial sees its devices in "
        "`CUDA_VISIBLE_DEVICES` (command and process trials) and `hyperlab.trial_devices()`",
    )
    working_dir: Annotated[
        str | None,
        Doc(
            "path",
            "str | os.PathLike[str] | None",
            "beside a SQLite file `runs.db`: `runs-experiments`; else `$HYPERLAB_HOME/experiments`",
        ),
    ] = Field(
        default=None,
        description="where the experiment's folder (`<id>/trials/<number>/`) goes; the default "
        "is `$HYPERLAB_HOME/experiments` for the home's own `hyperlab.db`, for PostgreSQL, and "
        "whenever `$HYPERLAB_HOME` is set; the folder chosen is recorded with the experiment",
    )
    max_log_bytes: Annotated[
        int | None,
        Doc("integer, 1,024 .. 2^40 (1 TiB), or `null`", "int | None", _LOG_CAP, executor=True),
    ] = Field(
        default=DEFAULT_MAX_LOG_BYTES,
        ge=MIN_MAX_LOG_BYTES,
        le=MAX_MAX_LOG_BYTES,
        description="at most how many bytes of a trial's output its `stdout.log` and "
        "`stderr.log` each keep: past it, a log keeps its first half-cap and its latest bytes, "
        "with one line between them saying how many bytes were dropped; `null` keeps "
        "everything (NNI configs get the default). Function trials' logs are capped the same way",
    )
    echo_output: Annotated[bool, Doc("boolean", "bool", executor=True)] = Field(
        default=False,
        description="also write each trial's output to the driver's stdout and stderr, every "
        "line prefixed with `[trial N] `; by default it goes to the trial's `stdout.log` and "
        "`stderr.log` only",
    )
    research: ResearchOptions | None = None
    """What makes the experiment a research (``hyperlab.Research`` sets it)."""
    ray_address: Annotated[
        str | None,
        Doc("`auto`, `host:port`, `ray://host:port`, or `null`", "str | None", executor=True),
    ] = Field(
        default=None,
        description="with executor `ray`, the cluster to run trials on; `null` joins the "
        "cluster `ray.init()` finds by itself, or starts a local one ([cluster.md](cluster.md))",
    )
    resources: Annotated[
        dict[str, float | int | str] | None,
        Doc(
            "mapping of resource to amount",
            "Mapping[str, float | int | str] | None",
            "`{cpu: 1}`",
            executor=True,
        ),
    ] = Field(
        default=None,
        description="with executor `ray`, what each trial holds on its node: `cpu`, `gpu` (a "
        "fraction shares one GPU), `memory` (bytes or `4GiB`), and custom Ray resources by name; "
        "with executor `dask`, the Dask worker resources each trial holds (`gpu`, `cpu` and "
        "`memory` are Dask's `GPU`, `CPU` and `MEMORY`; other names as the workers declare them)",
    )
    max_node_failures: Annotated[int, Doc("integer, 0 .. 1,000", "int", executor=True)] = Field(
        default=3,
        ge=0,
        le=MAX_NODE_FAILURES,
        description="with executor `ray` (or `dask`), how many times a trial whose node (or "
        "Dask worker) dies runs again (`attempt + 1`, from its last checkpoint) before it fails",
    )
    dask_address: Annotated[
        str | None, Doc("`tcp://host:port`, or `null`", "str | None", executor=True)
    ] = Field(
        default=None,
        description="with executor `dask`, the scheduler to run trials on (`null`: Dask's own "
        "`scheduler-address` setting); in Python `dask_cluster` may give a cluster object "
        "instead, whose address is what the store keeps ([cluster.md](cluster.md))",
    )
    dask_cluster: Annotated[
        SkipJsonSchema[Any],  # no config file can give one
        Doc("a cluster object, in Python only", "Any", executor=True),
    ] = Field(
        default=None,
        exclude=True,
        description="with executor `dask`, in Python only: a running Dask cluster object "
        "(`dask_jobqueue.SLURMCluster`, `distributed.LocalCluster`...) to run trials on; the "
        "store keeps its scheduler's address, which `resume` connects to",
    )
    own_trials: Annotated[
        int | None, Doc("integer, 0 .. 2^31 - 1, or `null`", "int | None", executor=True)
    ] = Field(
        default=None,
        ge=0,
        le=MAX_TRIALS,
        description="with executor `shared`, how many of `max_trials` the driver runs in its "
        "own process (`null`: as many as the workers leave); workers that join bring their own "
        "`--max-trials` to the budget, as each process's `n_trials` counts in Optuna "
        "([cluster.md](cluster.md))",
    )
    store_outage: Annotated[
        float, Doc("seconds or duration string, > 0 .. 86,400 (`1d`)", "float | str")
    ] = Field(
        default=DEFAULT_STORE_OUTAGE,
        gt=0,
        le=MAX_STORE_OUTAGE,
        description="how long a running experiment rides out a database that does not answer "
        "(a restart, a lost connection, a SQLite lock held past its busy timeout): its trials "
        "run on and their results wait in memory while the driver tries again; past it the "
        "driver stops with `StoreUnavailable`, whose message says how to continue. See [When "
        "the database does not answer](#when-the-database-does-not-answer)",
    )
    suggested: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Recorded by the driver: the distributions trials defined as they ran
    (``hyperlab.suggest``), name to NNI spec."""
    budget_signals: list[
        tuple[float, int, bool] | tuple[float, int, bool, list[tuple[int, int, bool]]]
    ] = Field(default_factory=list)
    """Recorded by the driver: each time it told the assessor that no trial numbered ``count``
    or above would be created (``(time, count, True, heard)``: the budget was spent, the tuner
    ran out) and that more would after all (``(time, count, False, heard)``: the budget was
    raised), with what the assessor had heard of each trial by then (``heard``: ``(number,
    reports, ended)``), so that a resumed experiment's replay tells its fresh assessor the same
    at the same point of the trials' history. Older records have no ``heard``."""

    _durations = field_validator("max_duration", "trial_timeout", "store_outage", mode="before")(
        _duration_field
    )

    @field_validator("dask_cluster")
    @classmethod
    def _dask_cluster(cls, value: Any) -> Any:
        if value is not None and not isinstance(getattr(value, "scheduler_address", None), str):
            raise ValueError(
                f"dask_cluster: expected a running Dask cluster object (one with a "
                f"scheduler_address, such as dask_jobqueue.SLURMCluster or "
                f"distributed.LocalCluster), got {value!r}; a config file gives dask_address"
            )
        return value

    @model_validator(mode="after")
    def _dask_address(self) -> ExperimentOptions:
        if self.dask_cluster is None:
            return self
        address = self.dask_cluster.scheduler_address
        if self.dask_address not in (None, address):
            raise ValueError(
                f"dask_address: {self.dask_address!r} is not the address of the dask_cluster "
                f"given ({address!r}); give one of them"
            )
        object.__setattr__(self, "dask_address", address)  # what the store keeps of it
        return self

    @field_validator("working_dir", mode="before")
    @classmethod
    def _path(cls, value: Any) -> Any:
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    @field_validator("metric", mode="before")
    @classmethod
    def _metric(cls, value: Any) -> Any:
        return _names("metric", value)

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError("mode: expected 'min', 'max' or a list of them, got []")
            return tuple(value)
        return value

    @field_validator("constraints", mode="before")
    @classmethod
    def _constraints(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, (list, tuple)):
            for text in value:
                parse_constraint(text)  # ValueError naming it when it does not parse
            return tuple(value) or None
        return value

    @model_validator(mode="after")
    def _objectives(self) -> ExperimentOptions:
        n = len(self.metric) if isinstance(self.metric, tuple) else 1
        if isinstance(self.mode, tuple) and len(self.mode) != n:
            names = list(self.metric) if isinstance(self.metric, tuple) else self.metric
            raise ValueError(
                f"mode: {len(self.mode)} directions {[m.value for m in self.mode]} for {n} "
                f"metric(s) {names!r}; give one per metric, in the same order"
            )
        if n == 1 and isinstance(self.mode, tuple):
            object.__setattr__(self, "mode", self.mode[0])
        if n > 1 and isinstance(self.mode, Mode):
            object.__setattr__(self, "mode", (self.mode,) * n)
        return self

    @property
    def multi_objective(self) -> bool:
        """True when the experiment has several objectives (``metric`` is a list)."""
        return isinstance(self.metric, tuple)

    @property
    def metrics(self) -> tuple[str | None, ...]:
        """The objectives' metric names, in order (``(None,)`` when ``metric`` is unset)."""
        return self.metric if isinstance(self.metric, tuple) else (self.metric,)

    @property
    def modes(self) -> tuple[Mode, ...]:
        """Each objective's direction, in the order of ``metrics``."""
        return self.mode if isinstance(self.mode, tuple) else (self.mode,)

    @property
    def first_metric(self) -> str | None:
        """The first objective's metric name: NNI's ``default`` metric, the one a
        single-objective part (a schedule, a sort) reads."""
        return self.metrics[0]

    @property
    def first_mode(self) -> Mode:
        """The first objective's direction."""
        return self.modes[0]

    @field_validator("tuner_args", "assessor_args", mode="before")
    @classmethod
    def _args(cls, value: Any) -> Any:
        return {} if value is None else value

    @model_validator(mode="after")
    def _checkpoint_score(self) -> ExperimentOptions:
        if self.checkpoint_score_mode is not None and self.checkpoint_score is None:
            raise ValueError(
                f"checkpoint_score_mode: {self.checkpoint_score_mode.value!r} needs "
                "checkpoint_score, the metric it orders checkpoints by"
            )
        return self

    def checkpoint_rule(self) -> tuple[str, str] | None:
        """``(checkpoint_score, its mode)`` by which trials choose the checkpoints they keep,
        or None to keep their newest."""
        if self.checkpoint_score is None:
            return None
        return self.checkpoint_score, (self.checkpoint_score_mode or self.first_mode).value

    @field_validator("fail_fast")
    @classmethod
    def _fail_fast(cls, value: bool | int) -> bool | int:
        if not isinstance(value, bool) and not 1 <= value <= MAX_TRIALS:
            raise ValueError(
                f"fail_fast: expected True, False or a number of trials in 1 .. {MAX_TRIALS}, "
                f"got {value!r}"
            )
        return value


def _names(field: str, value: Any) -> Any:
    """A list of metric names as a tuple (one name alone as the name), checked."""
    if not isinstance(value, (list, tuple)):
        return value
    names = list(value)
    if not names:
        raise ValueError(f"{field}: expected a metric name or a list of them, got []")
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"{field}: expected metric names, got {name!r} in {names}")
        if names.count(name) > 1:
            raise ValueError(f"{field}: {name!r} appears twice in {names}")
    return names[0] if len(names) == 1 else tuple(names)
