"""Experiment config files (``ExperimentConfig``, ``TrialConfig``, ``load_config``): the run
options plus what to search and what to run, read strictly, NNI's format translated as it is
read (``hyperlab.config._nni``), relative paths resolved against the file's folder."""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from hyperlab.config._nni import is_nni_config, translate_nni_config
from hyperlab.config._options import (
    EXECUTOR_DOC,
    Doc,
    ExperimentOptions,
    GpuConfig,
)
from hyperlab.config._validate import describe_validation_error
from hyperlab.errors import ConfigError


class TrialConfig(BaseModel):
    """What a trial runs: a shell ``command`` (with ``code_dir`` as its folder) or a Python
    ``function`` given as ``"package.module:attribute"`` (importable from ``code_dir``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: Annotated[str | None, Doc("string", default="one of command/function")] = Field(
        default=None,
        description="a shell command; it reads its parameters with `hyperlab.get_params()` (or "
        "`nni.get_next_parameter()`) and reports with `hyperlab.report(...)` (or `nni.report_*`)",
    )
    function: Annotated[
        str | None, Doc('`"package.module:attribute"`', default="one of command/function")
    ] = Field(
        default=None, description="a Python objective, imported with `code_dir` first on `sys.path`"
    )
    code_dir: Annotated[str, Doc("path")] = Field(
        default=".", description="the command's working directory / where the function's module is"
    )

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

    search_space: Annotated[
        dict[str, Any] | str, Doc("mapping or path", python="the `space` argument")
    ] = Field(
        description="the parameters to search, in NNI's search-space format (`choice`, "
        "`randint`, `uniform`, `quniform`, `loguniform`, `qloguniform`, `normal`, `qnormal`, "
        "`lognormal`, `qlognormal`, nested choices)",
    )
    trial: Annotated[TrialConfig, Doc("mapping (below)", python="the `objective` argument")] = (
        Field(description="what each trial runs")
    )
    executor: Annotated[str | None, EXECUTOR_DOC] = Field(  # type: ignore[assignment]
        default=None, description=ExperimentOptions.model_fields["executor"].description
    )  # its default depends on the trial
    storage: Annotated[
        str | None, Doc("URL", default="`$HYPERLAB_HOME/hyperlab.db`", python="`storage=`")
    ] = Field(
        default=None,
        description="`sqlite:///path.db`, `postgresql://user@host/db`, or `:memory:`; a "
        "relative SQLite path is relative to the config file's folder; `hyperlab --storage URL` "
        "overrides it",
    )
    env: Annotated[
        dict[str, str], Doc("mapping of strings", python="`CommandTrial(..., env=...)`")
    ] = Field(default_factory=dict, description="extra environment variables for command trials")

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
        data = translate_nni_config(data, base=path.resolve().parent)
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
