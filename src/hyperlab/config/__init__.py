"""The schema of experiments (pydantic): run options, config files, durations, and the
registries through which a name in them picks an implementation.

Every entry point (``hyperlab.run``, ``Experiment``, config files, the REST API) validates
through these models; a bad value becomes a ``ConfigError`` that names the field, the value
received and what was expected. NNI's config format is translated into ``ExperimentConfig`` as
a file is read (``hyperlab.config._nni``: ``translate_nni_config``), so there is one schema.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import math
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Generic, Literal, TypeVar, cast

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from hyperlab.config._nni import is_nni_config, translate_nni_config
from hyperlab.errors import ConfigError
from hyperlab.trial import Mode

__all__ = [
    "DEFAULT_MAX_FAILED_TRIALS",
    "DEFAULT_MAX_LOG_BYTES",
    "DEFAULT_STORE_OUTAGE",
    "MAX_CHECKPOINTS",
    "MAX_CONCURRENCY",
    "MAX_DURATION",
    "MAX_GPUS",
    "MAX_GPU_CHECKS",
    "MAX_GPU_CHECK_DELAY",
    "MAX_ITERATIONS",
    "MAX_MAX_LOG_BYTES",
    "MAX_NODE_FAILURES",
    "MAX_STORE_OUTAGE",
    "MAX_TRIALS",
    "MAX_TRIAL_NUMBER",
    "MIN_MAX_LOG_BYTES",
    "Concurrency",
    "ExperimentConfig",
    "ExperimentOptions",
    "GpuConfig",
    "Registry",
    "ResearchOptions",
    "TrialConfig",
    "TrialCount",
    "check_arguments",
    "class_path",
    "describe_validation_error",
    "import_path",
    "is_nni_config",
    "load_config",
    "parse_duration",
    "parse_stored_options",
    "translate_nni_config",
    "validate_options",
]

DEFAULT_MAX_FAILED_TRIALS = 10
"""Consecutive failed trials after which an experiment ends in ERROR, unless set otherwise."""

DEFAULT_MAX_LOG_BYTES = 50 * 1024 * 1024
"""The cap on each of a trial's ``stdout.log`` and ``stderr.log``, unless set otherwise."""
MIN_MAX_LOG_BYTES = 1024
"""The smallest cap ``max_log_bytes`` takes."""

# ---- ranges: the bounds of every number a user sets ---------------------------------------
# The options below, the control requests that change them on a running experiment
# (``hyperlab.store``), the REST API's bodies and the CLI's flags all take these bounds, so a
# value is accepted or refused alike wherever it is given. docs/config.md lists them (Ranges)
# and says why each is where it is.

MAX_CONCURRENCY = 10_000
"""The most trials at once (``concurrency``, a research's ``workers`` and ``branches``)."""
MAX_TRIAL_NUMBER = 2**31 - 1
"""The largest trial number (trial numbers are 32-bit integers in the store)."""
MAX_TRIALS = MAX_TRIAL_NUMBER
"""The most trials a count may name: ``max_trials``, ``max_failed_trials``, ``fail_fast``, a
research's configs and repetitions (no experiment can number more); what stands for "no end"
where a number is needed (Optuna's ``optimize`` without ``n_trials``, Ray's unlimited
failures)."""
MAX_DURATION = 10 * 365 * 86400.0
"""The longest duration, in seconds (ten years): ``max_duration``, ``trial_timeout``."""
MAX_CHECKPOINTS = MAX_TRIALS
"""The most checkpoints a trial keeps (``checkpoint_keep``): any count, keeping costs only
the checkpoints the trial writes (Ray's "keep them all" is this)."""
MAX_MAX_LOG_BYTES = 1 << 40
"""The largest cap ``max_log_bytes`` takes (1 TiB; ``None`` keeps everything)."""
MAX_NODE_FAILURES = 1000
"""The most re-runs of a trial whose Ray node died (``max_node_failures``)."""
MAX_STORE_OUTAGE = 86400.0
"""The longest a running experiment rides out a database that does not answer, in seconds
(a day: ``store_outage``)."""
DEFAULT_STORE_OUTAGE = 60.0
"""How long a running experiment rides out a database that does not answer, unless set
otherwise (seconds)."""
MAX_GPUS = 1024
"""The most devices a trial holds, and trials one device holds (``gpus.per_trial``,
``gpus.max_trials_per_gpu``)."""
MAX_GPU_CHECKS = 10_000
"""The most looks at a device's free memory before a trial fails (``gpus.n_gpu_checks``)."""
MAX_GPU_CHECK_DELAY = 3600.0
"""The longest wait between two looks, in seconds (``gpus.gpu_check_delay``)."""
MAX_ITERATIONS = 1_000_000_000
"""The most iterations of a research's units (``research.n_iters``)."""

Concurrency = Annotated[int, Field(ge=1, le=MAX_CONCURRENCY)]
"""Trials at once: 1 .. ``MAX_CONCURRENCY``."""
TrialCount = Annotated[int, Field(ge=1, le=MAX_TRIALS)]
"""A number of trials: 1 .. ``MAX_TRIALS``."""

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([smhd]?)\s*$")


def parse_duration(value: Any, field: str) -> float | None:
    """Seconds from a number or a string like ``"90s"``, ``"30m"``, ``"2h"``, ``"1d"``.

    Raises:
        ConfigError: naming ``field`` when the value is not a positive duration of at most
            ``MAX_DURATION`` seconds.
    """
    if value is None:
        return None
    seconds: float | None = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str) and (match := _DURATION.match(value)):
        seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(
            f"{field}: expected a positive number of seconds or a string like '90s', '30m', "
            f"'2h', '1d', got {value!r}"
        )
    if seconds > MAX_DURATION:
        raise ConfigError(
            f"{field}: expected at most {MAX_DURATION:.0f} seconds (3650d, ten years), "
            f"got {value!r}"
        )
    return seconds


class GpuConfig(BaseModel):
    """Where trials run: device indices (or ``"auto"``: what ``nvidia-smi`` lists), how many
    each trial holds, and how many trials may share one device.

    With ``memory_ratio`` (BatchFlow's option of that name), a trial starts only once each of
    its devices has that fraction of its memory free, looked at up to ``n_gpu_checks`` times
    ``gpu_check_delay`` seconds apart (it fails otherwise); None starts trials without looking.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    indices: list[Any] | Literal["auto"] = "auto"
    per_trial: int = Field(default=1, ge=1, le=MAX_GPUS)
    max_trials_per_gpu: int = Field(default=1, ge=1, le=MAX_GPUS)
    memory_ratio: float | None = Field(default=None, gt=0, le=1)
    n_gpu_checks: int = Field(default=3, ge=1, le=MAX_GPU_CHECKS)
    gpu_check_delay: float = Field(default=5.0, ge=0, le=MAX_GPU_CHECK_DELAY)

    @field_validator("memory_ratio", "n_gpu_checks", "gpu_check_delay", mode="before")
    @classmethod
    def _not_bool(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"gpus.{info.field_name}: expected a number, got {value!r}")
        return value


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
    """How an experiment runs. See ``hyperlab.run`` for what each option means."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    metric: str | None = None
    mode: Mode = Mode.MIN
    tuner: str = "auto"
    tuner_args: dict[str, Any] = Field(default_factory=dict)
    assessor: str | None = None
    assessor_args: dict[str, Any] = Field(default_factory=dict)
    checkpoint_keep: int = Field(default=1, ge=1, le=MAX_CHECKPOINTS)
    max_trials: TrialCount | None = None
    max_duration: float | None = Field(default=None, gt=0, le=MAX_DURATION)
    concurrency: Concurrency = 1
    executor: str = "inprocess"
    trial_timeout: float | None = Field(default=None, gt=0, le=MAX_DURATION)
    max_failed_trials: TrialCount | None = None
    continue_on_failure: bool = True
    fail_fast: bool | int = True
    seed: int | None = Field(default=None, ge=0, lt=2**63)
    gpus: GpuConfig | None = None
    working_dir: str | None = None
    max_log_bytes: int | None = Field(
        default=DEFAULT_MAX_LOG_BYTES, ge=MIN_MAX_LOG_BYTES, le=MAX_MAX_LOG_BYTES
    )
    echo_output: bool = False
    research: ResearchOptions | None = None
    ray_address: str | None = None
    resources: dict[str, float | int | str] | None = None
    max_node_failures: int = Field(default=3, ge=0, le=MAX_NODE_FAILURES)
    store_outage: float = Field(default=DEFAULT_STORE_OUTAGE, gt=0, le=MAX_STORE_OUTAGE)
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

    @field_validator("working_dir", mode="before")
    @classmethod
    def _path(cls, value: Any) -> Any:
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    @field_validator("tuner_args", "assessor_args", mode="before")
    @classmethod
    def _args(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("fail_fast")
    @classmethod
    def _fail_fast(cls, value: bool | int) -> bool | int:
        if not isinstance(value, bool) and not 1 <= value <= MAX_TRIALS:
            raise ValueError(
                f"fail_fast: expected True, False or a number of trials in 1 .. {MAX_TRIALS}, "
                f"got {value!r}"
            )
        return value


_STORED_CAPS = {
    "checkpoint_keep": MAX_CHECKPOINTS,
    "max_trials": MAX_TRIALS,
    "max_duration": MAX_DURATION,
    "concurrency": MAX_CONCURRENCY,
    "trial_timeout": MAX_DURATION,
    "max_failed_trials": MAX_TRIALS,
    "fail_fast": MAX_TRIALS,
    "max_log_bytes": MAX_MAX_LOG_BYTES,
    "max_node_failures": MAX_NODE_FAILURES,
}


def parse_stored_options(data: dict[str, Any]) -> ExperimentOptions:
    """The options of an experiment as the store keeps them (``model_dump(mode="json")``).

    Keys this version does not know (written by a newer hyperlab) are left out. A number above
    its range that a hyperlab without ranges stored (``max_trials: 10000000000`` meant "no
    end") reads as the range's end, so that the experiment stays readable and resumable.

    Raises:
        ValidationError: when a known field holds a value the model refuses.
    """
    fields = ExperimentOptions.model_fields
    known = {k: v for k, v in data.items() if k in fields}
    for name, cap in _STORED_CAPS.items():
        value = known.get(name)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > cap:
            known[name] = cap
    return ExperimentOptions.model_validate(known)


def validate_options(**options: Any) -> ExperimentOptions:
    """``ExperimentOptions(**options)`` with pydantic's errors turned into one ``ConfigError``."""
    try:
        return ExperimentOptions(**options)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc)) from None


def describe_validation_error(exc: ValidationError) -> str:
    """One line per invalid field: its name, what is wrong, and the value received."""
    lines = []
    for err in exc.errors():
        field = ".".join(str(part) for part in err["loc"]) or "options"
        message = err["msg"]
        if message.startswith("Value error, "):  # raised by our validators: already complete
            lines.append(message.removeprefix("Value error, "))
            continue
        if err["type"] == "extra_forbidden":
            lines.append(f"{field}: unknown option")
            continue
        lines.append(f"{field}: {message[0].lower()}{message[1:]}, got {err.get('input')!r}")
    return "; ".join(lines)


# ---- experiment config files --------------------------------------------------------------


class TrialConfig(BaseModel):
    """What a trial runs: a shell ``command`` (with ``code_dir`` as its folder) or a Python
    ``function`` given as ``"package.module:attribute"`` (importable from ``code_dir``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    function: str | None = None
    code_dir: str = "."

    @model_validator(mode="after")
    def _one_of(self) -> TrialConfig:
        if (self.command is None) == (self.function is None):
            raise ValueError(
                "trial: give exactly one of `command` (a shell command) or `function` "
                "('package.module:attribute')"
            )
        if self.function is not None and not re.fullmatch(r"[\w.]+:[\w.]+", self.function):
            raise ValueError(
                f"trial.function: expected 'package.module:attribute', got {self.function!r}"
            )
        return self


class ExperimentConfig(ExperimentOptions):
    """An experiment config file (YAML or JSON), as ``hyperlab run CONFIG`` reads it: the run
    options plus what to search and what to run.

    ``tuner`` and ``assessor`` may be a name or ``{name, args}``. Relative paths
    (``search_space`` as a file, ``trial.code_dir``, ``working_dir``, a SQLite ``storage``) are
    resolved against the config file's folder by ``load_config``. See ``docs/config.md`` for
    every field.
    """

    search_space: dict[str, Any] | str
    trial: TrialConfig
    executor: str | None = None  # type: ignore[assignment]  # default depends on the trial
    storage: str | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _blocks(cls, data: Any) -> Any:
        for key in ("tuner", "assessor"):
            block = data.get(key) if isinstance(data, dict) else None
            if isinstance(block, dict):
                unknown = sorted(set(block) - {"name", "args"})
                if unknown or "name" not in block:
                    raise ValueError(
                        f"{key}: expected a name or {{name, args}}, got fields {sorted(block)}"
                    )
                data = {**data, key: block["name"], f"{key}_args": block.get("args") or {}}
        return data

    @field_validator("suggested")
    @classmethod
    def _not_suggested(cls, value: dict[str, Any]) -> dict[str, Any]:
        if value:
            raise ValueError(
                f"suggested: the driver records what trials define as they run "
                f"(hyperlab.suggest), got {value!r}; declare parameters in search_space"
            )
        return value

    @field_validator("budget_signals")
    @classmethod
    def _not_recorded(cls, value: list[Any]) -> list[Any]:
        if value:
            raise ValueError(
                f"budget_signals: the driver records when the budget was spent, got {value!r}; "
                "remove it"
            )
        return value

    @property
    def executor_name(self) -> str:
        """The executor: as given, else ``command`` for commands and ``processes`` for functions."""
        if self.executor is not None:
            return self.executor
        return "command" if self.trial.command is not None else "processes"

    def options(self) -> ExperimentOptions:
        """The run options alone, with the executor resolved."""
        fields = {name: getattr(self, name) for name in ExperimentOptions.model_fields}
        return ExperimentOptions(**{**fields, "executor": self.executor_name})


def load_config(path: str | os.PathLike) -> ExperimentConfig:
    """Read and validate an experiment config file: hyperlab's own format or NNI's v2 YAML.

    The file is read strictly (``hyperlab._files``): at most 4 MiB, each key once per mapping,
    and bounded nesting and aliases (docs/config.md, "How files are read").

    Raises:
        ConfigError: unreadable or too large a file, invalid YAML/JSON (with its line), a key
            given twice (with both lines), too deep a nesting or too many aliased values, an
            unknown field (with the nearest valid name), a wrong type, a missing search space
            file or code_dir.
    """
    from hyperlab._files import read_yaml

    path = Path(path)
    data = read_yaml(path, what="config file")
    if not isinstance(data, dict):
        raise ConfigError(
            f"config: {path} must hold a mapping of fields, got {type(data).__name__}"
        )
    if is_nni_config(data):
        data = translate_nni_config(data)
    _check_fields(data, ExperimentConfig, "")
    try:
        config = ExperimentConfig(**data)
    except ValidationError as exc:
        raise ConfigError(f"config {path}: {describe_validation_error(exc)}") from None
    return _resolve_paths(config, path.resolve().parent)


def _check_fields(data: dict, model: type[BaseModel], prefix: str) -> None:
    """ConfigError for an unknown field, suggesting the nearest valid one."""
    known = list(model.model_fields)
    for key in data:
        if key not in known:
            near = difflib.get_close_matches(str(key), known, n=1)
            hint = f"; did you mean {near[0]!r}?" if near else f"; valid fields: {', '.join(known)}"
            raise ConfigError(f"config: unknown field '{prefix}{key}'{hint}")
    for key, sub in (("trial", TrialConfig), ("gpus", GpuConfig)):
        if isinstance(data.get(key), dict) and model is ExperimentConfig:
            _check_fields(data[key], sub, f"{key}.")


def _resolve_paths(config: ExperimentConfig, base: Path) -> ExperimentConfig:
    code_dir = (base / config.trial.code_dir).resolve()
    if not code_dir.is_dir():
        raise ConfigError(f"trial.code_dir: folder {str(code_dir)!r} does not exist")
    update: dict[str, Any] = {"trial": config.trial.model_copy(update={"code_dir": str(code_dir)})}
    if isinstance(config.search_space, str):
        space_file = (base / config.search_space).resolve()
        if not space_file.is_file():
            raise ConfigError(f"search_space: file {str(space_file)!r} does not exist")
        update["search_space"] = str(space_file)
    if config.working_dir is not None:
        update["working_dir"] = str((base / config.working_dir).resolve())
    if config.storage is not None:
        update["storage"] = _resolve_storage(config.storage, base)
    return config.model_copy(update=update)


def _resolve_storage(storage: str, base: Path) -> str:
    """A SQLite file given relative in a config file, made relative to the file's folder (as
    every other path of the file is); anything else as it is."""
    text = storage.strip()
    if text == ":memory:":
        return storage
    if "://" not in text:
        path = Path(text).expanduser()
        return str(path if path.is_absolute() else (base / path).resolve())
    scheme, _, rest = text.partition(":///")
    relative = rest and rest[0] != "/" and rest != ":memory:"
    if scheme.lower() in ("sqlite", "sqlite+pysqlite") and relative:
        return f"{scheme}:///{(base / rest).resolve()}"
    return storage


# ---- registries: a name in the options picks an implementation ---------------------------

T = TypeVar("T")


class Registry(Generic[T]):
    """Names (and aliases, such as NNI's spellings) of the implementations of one extension
    point: tuners, executors, assessors.

    An entry is a class, or its ``"package.module:Class"`` path, imported when first asked for,
    so that ``import hyperlab`` stays cheap. A ``"package.module:Class"`` path that is not
    registered is imported as well, so a config file can name a user's own class.

    Args:
        field: The option that names an implementation (``"tuner"``), for error messages.
        base: The class every implementation must derive from.
        entries: Name -> class or ``"module:Class"`` path.
        aliases: Other name -> registered name.
    """

    def __init__(
        self,
        field: str,
        base: type,
        entries: dict[str, str | type[T]],
        aliases: dict[str, str] | None = None,
    ) -> None:
        self.field = field
        self.base = base
        self._entries = dict(entries)
        self._aliases = dict(aliases or {})

    def register(self, name: str, entry: str | type[T], *, aliases: tuple[str, ...] = ()) -> None:
        """Make ``entry`` (a class or its ``"module:Class"`` path) available as ``name``."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"register: expected a non-empty name, got {name!r}")
        self._entries[name] = entry
        for alias in aliases:
            self._aliases[alias] = name

    def names(self) -> list[str]:
        """Every accepted name: registered names first, then aliases, each sorted."""
        return sorted(self._entries) + sorted(self._aliases)

    def name_of(self, cls: type) -> str | None:
        """The name ``cls`` is registered under, or None; imports nothing new."""
        for name, entry in self._entries.items():
            if isinstance(entry, str):
                module = entry.partition(":")[0]
                if module not in sys.modules:  # not imported: cannot be where cls comes from
                    continue
                entry = self.get(name)
            if entry is cls:
                return name
        return None

    def get(self, name: str) -> type[T]:
        """The class registered as ``name`` (or found at the path ``"module:Class"``).

        Raises:
            ConfigError: for an unknown name, listing the known ones, or a path that does not
                import to a subclass of the base class.
        """
        key = self._aliases.get(name, name) if isinstance(name, str) else name
        entry = self._entries.get(key) if isinstance(key, str) else None
        if entry is None:
            if not (isinstance(name, str) and re.fullmatch(r"[\w.]+:[\w.]+", name)):
                raise ConfigError(
                    f"{self.field}: unknown {self.field} {name!r}; known {self.field}s: "
                    f"{', '.join(self.names())} (or a 'package.module:Class' path)"
                )
            entry = name
        if isinstance(entry, str):
            loaded = import_path(self.field, entry)
            if not (isinstance(loaded, type) and issubclass(loaded, self.base)):
                raise ConfigError(
                    f"{self.field}: {entry!r} is {loaded!r}, not a subclass of "
                    f"{self.base.__module__}.{self.base.__qualname__}"
                )
            found = cast("type[T]", loaded)
            if key in self._entries:
                self._entries[key] = found
            return found
        return entry


def import_path(field: str, path: str) -> Any:
    """What ``"package.module:attribute"`` names; ConfigError naming ``field`` if it cannot
    be imported."""
    module_name, _, attr = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{field}: cannot import {path!r}: {exc}") from None
    return target


def class_path(cls: type) -> str:
    """``"package.module:Class"``: how a registry finds ``cls`` again in another process."""
    return f"{cls.__module__}:{cls.__qualname__}"


def check_arguments(
    cls: type, args: dict[str, Any] | None, field: str, *, given: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``args`` checked against the keyword-only arguments ``cls.__init__`` declares (their
    names, and their types with pydantic: ``"10"`` for an ``int`` is taken, ``"x"`` for a
    ``float`` is not), converted to those types.

    Args:
        cls: The class to be built with ``args``.
        args: The user's arguments (``tuner_args``, ``assessor_args``).
        field: How to name them in messages (``"tuner_args of 'tpe'"``).
        given: Arguments the framework passes itself (``mode``, ``seed``...): not the user's.

    Raises:
        ConfigError: for an argument the class does not take, or a value of the wrong type,
            naming the argument and the value.
    """
    parameters = _keyword_arguments(cls, given)
    unknown = sorted(set(args or {}) - set(parameters))
    if unknown:
        raise ConfigError(
            f"{field} does not accept {', '.join(map(repr, unknown))}; "
            f"its arguments are: {', '.join(parameters) or 'none'}"
        )
    model = create_model(
        f"{cls.__name__}Arguments",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
        **parameters,  # type: ignore[call-overload]
    )
    try:
        checked = model(**(args or {}))
    except ValidationError as exc:
        raise ConfigError(f"{field}: {describe_validation_error(exc)}") from None
    return {name: getattr(checked, name) for name in args or {}}


def _keyword_arguments(cls: type, given: tuple[str, ...]) -> dict[str, tuple[Any, Any]]:
    """A class's own keyword-only arguments: name -> (annotation, default)."""
    try:
        signature = inspect.signature(cls, eval_str=True)
    except (NameError, TypeError):  # annotations that cannot be resolved: check names only
        signature = inspect.signature(cls)
    return {
        p.name: (
            Any if p.annotation is p.empty or isinstance(p.annotation, str) else p.annotation,
            p.default if p.default is not p.empty else ...,
        )
        for p in signature.parameters.values()
        if p.kind is p.KEYWORD_ONLY and p.name not in given
    }
