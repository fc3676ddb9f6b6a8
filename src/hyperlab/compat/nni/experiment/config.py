"""NNI 3.0's experiment config classes (``nni.experiment.config``), with its field names.

```python
from hyperlab.compat.nni.experiment import Experiment

experiment = Experiment('local')
experiment.config.trial_command = 'python3 trial.py'
experiment.config.search_space = {'lr': {'_type': 'loguniform', '_value': [1e-4, 1e-1]}}
experiment.config.tuner.name = 'TPE'
experiment.config.tuner.class_args['optimize_mode'] = 'maximize'
experiment.config.max_trial_number = 20
```

A config is checked as it is filled in (a field the class does not have, or a value of the wrong
type, is refused at once, naming it) and as a whole by ``validate()``, which translates it into
hyperlab's config through the same schema as an NNI YAML file
(``hyperlab.config.translate_nni_config``).
Fields hyperlab has no equivalent for are refused with ``NotImplementedError``
(``UnsupportedFeature``) naming them; see docs/migrating.md.

The translation lives here, beside the classes whose methods use it: ``to_nni_dict`` writes a
config as NNI's camelCase v2 dict (what an NNI ``config.yml`` holds) and ``to_hyperlab`` turns
that into hyperlab's ``ExperimentConfig``; every message names the field as the NNI user wrote
it (``trial_concurrency``, not hyperlab's ``concurrency``).
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hyperlab._files import read_yaml
from hyperlab.compat.nni.experiment._base import ConfigBase, UnsupportedFeature, camel_case
from hyperlab.config import ExperimentConfig as HyperlabConfig
from hyperlab.config import translate_nni_config
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.space import SearchSpace

__all__ = ["AlgorithmConfig", "CustomAlgorithmConfig", "ExperimentConfig", "LocalConfig"]


@dataclasses.dataclass(init=False)
class AlgorithmConfig(ConfigBase):
    """A tuner, assessor or advisor: a built-in one by ``name`` (``'TPE'``, ``'Medianstop'``...;
    any name of hyperlab's registries, ``'package.module:Class'`` included) and its
    ``class_args``, or a user's own NNI tuner, assessor or advisor class by ``class_name``
    (``'my_tuner.MyTuner'``) in ``code_directory`` (NNI's ``CustomAlgorithmConfig``), run by
    the adapters of ``hyperlab.compat.nni.custom`` and ``hyperlab.compat.nni.advisor``.
    """

    name: str | None = None
    class_name: str | None = None
    code_directory: str | Path | None = None
    class_args: dict[str, Any] | None = None

    def is_placeholder(self) -> bool:
        """True for the blank one ``Experiment('local')`` makes, never filled in."""
        return self.name is None and self.class_name is None and not self.class_args


@dataclasses.dataclass(init=False)
class CustomAlgorithmConfig(AlgorithmConfig):
    """A user's own NNI tuner or assessor class: ``class_name`` (``'my_tuner.MyTuner'``),
    ``code_directory`` (the folder of its module, default the working directory) and
    ``class_args`` (its constructor's arguments), as NNI's."""

    code_directory: str | Path | None = "."


@dataclasses.dataclass(init=False)
class LocalConfig(ConfigBase):
    """NNI's local training service: trials run on this machine.

    ``trial_command``, ``trial_code_directory`` and ``trial_gpu_number`` set here win over the
    experiment's (NNI's shortcuts). ``use_active_gpu`` is accepted and has no effect (hyperlab
    does not look at other processes' GPU use); ``reuse_mode`` is refused.
    """

    platform: str = "local"
    trial_command: str | None = None
    trial_code_directory: str | Path | None = None
    trial_gpu_number: int | None = None
    nni_manager_ip: str | None = None
    debug: bool | None = None
    use_active_gpu: bool | None = None
    max_trial_number_per_gpu: int = 1
    gpu_indices: list[int] | int | str | None = None
    reuse_mode: bool = False


def training_service_config(value: Any) -> LocalConfig:
    """The training service ``value`` names: ``'local'``, ``['local']``, a dict of
    ``LocalConfig``'s fields, or a ``LocalConfig``.

    Raises:
        UnsupportedFeature: another platform (``'remote'``, ``'openpai'``...) or several.
        ConfigError: anything else.
    """
    if isinstance(value, list):
        if len(value) != 1:
            raise UnsupportedFeature(
                f"training_service: hybrid training services ({value!r}) are not supported by "
                "hyperlab; trials run on this machine (platform 'local')"
            )
        value = value[0]
    platform = value.get("platform") if isinstance(value, dict) else value
    if isinstance(value, LocalConfig):
        return value
    if platform != "local" and isinstance(platform, str):
        raise UnsupportedFeature(
            f"training_service: platform {platform!r} is not supported by hyperlab; its trials "
            "run on this machine (platform 'local'), or on a Ray cluster with hyperlab's own "
            "API (executor='ray', docs/cluster.md)"
        )
    if isinstance(value, str):
        return LocalConfig()
    if isinstance(value, dict):
        return LocalConfig(**value)
    raise ConfigError(
        f"training_service: expected 'local', a LocalConfig or a dict of its fields, got {value!r}"
    )


@dataclasses.dataclass(init=False)
class ExperimentConfig(ConfigBase):
    """An NNI experiment config (NNI 3.0's ``ExperimentConfig``, local training service).

    Args:
        training_service_platform: ``'local'`` makes a blank config to fill in, with blank
            ``tuner``, ``assessor`` and ``advisor`` (so ``config.tuner.name = ...`` works).
        **kwargs: Fields, in snake_case or NNI's camelCase.

    Differences from NNI: ``trial_concurrency`` defaults to 1, ``tuner`` to hyperlab's
    ``auto``, and ``experiment_working_directory`` to hyperlab's home (``$HYPERLAB_HOME``);
    ``training_service`` may be left out (local).

    Raises:
        UnknownField: a field NNI's config does not have (naming the nearest one).
        ConfigError: a value of the wrong type, naming the field.
        UnsupportedFeature: a platform other than ``'local'``.
    """

    experiment_name: str | None = None
    experiment_type: str = "hpo"
    search_space_file: str | Path | None = None
    search_space: Any = None
    trial_command: str | None = None
    trial_code_directory: str | Path = "."
    trial_concurrency: int | None = None
    trial_gpu_number: int | None = None
    max_experiment_duration: str | int | None = None
    max_trial_number: int | None = None
    max_trial_duration: str | int | None = None
    nni_manager_ip: str | None = None
    use_annotation: bool = False
    debug: bool = False
    log_level: str | None = None
    experiment_working_directory: str | Path | None = None
    tuner_gpu_indices: list[int] | int | str | None = None
    tuner: AlgorithmConfig | None = None
    assessor: AlgorithmConfig | None = None
    advisor: AlgorithmConfig | None = None
    training_service: LocalConfig | None = None
    shared_storage: dict[str, Any] | None = None

    def __init__(
        self, training_service_platform: str | list[str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        if training_service_platform is not None:
            self.training_service = training_service_config(training_service_platform)
            for field in ("tuner", "assessor", "advisor"):
                if getattr(self, field) is None:
                    setattr(self, field, AlgorithmConfig(class_args={}))

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "training_service" and value is not None:
            value = training_service_config(value)
        super().__setattr__(name, value)

    @classmethod
    def load(cls, path: str | Path) -> ExperimentConfig:
        """The config in an NNI YAML (or JSON) file; its relative paths are the file's folder's.

        The file is read strictly, as hyperlab's own config files are (at most 4 MiB, each key
        once, bounded nesting and aliases: docs/config.md, "How files are read").

        Raises:
            ConfigError: the file cannot be read, is not valid YAML/JSON, breaks one of those
                rules, or does not hold a mapping; as the constructor.
        """
        path = Path(path)
        data = read_yaml(path, what="NNI config file")
        if not isinstance(data, dict):
            raise ConfigError(f"config: {str(path)!r} must hold a mapping of fields")
        config = cls(**data)
        config.set_base_path(path.resolve().parent)
        return config

    def validate(self) -> None:
        """Check the whole config, and that hyperlab can run it (nothing is written).

        Raises:
            ConfigError: naming the first field that is wrong (missing ``trial_command``, a
                value of the wrong type, an unknown tuner...).
            UnsupportedFeature: naming an NNI feature hyperlab has no equivalent for.
        """
        to_hyperlab(self)

    def json(self) -> dict[str, Any]:
        """The config as NNI's v2 YAML spells it (camelCase; paths absolute; unset fields left
        out), validated: what hyperlab translates."""
        return to_nni_dict(self)


# ---- the translation into hyperlab's config ----------------------------------------------

LOG_LEVELS = ("fatal", "error", "warning", "info", "debug", "trace")

# hyperlab's config fields (as pydantic locates them) -> NNI's, for error messages
_NNI_FIELDS = {
    "name": "experiment_name",
    "concurrency": "trial_concurrency",
    "max_trials": "max_trial_number",
    "max_duration": "max_experiment_duration",
    "trial_timeout": "max_trial_duration",
    "working_dir": "experiment_working_directory",
    "trial.command": "trial_command",
    "trial.code_dir": "trial_code_directory",
    "tuner": "tuner.name",
    "tuner_args": "tuner.class_args",
    "assessor": "assessor.name",
    "assessor_args": "assessor.class_args",
    "mode": "tuner.class_args.optimize_mode",
    "seed": "tuner.class_args.seed",
    "gpus.per_trial": "trial_gpu_number",
    "gpus.indices": "training_service.gpu_indices",
    "gpus.max_trials_per_gpu": "training_service.max_trial_number_per_gpu",
}
# words of hyperlab's messages that name one of its options, as NNI names them
_RENAMED_WORDS = {key: value for key, value in _NNI_FIELDS.items() if "_" in key and "." not in key}
_CAMEL_WORDS = {
    camel_case(f.name): f.name
    for cls in (ExperimentConfig, LocalConfig, AlgorithmConfig)
    for f in dataclasses.fields(cls)
    if "_" in f.name
}
_WORD = re.compile(r"\b(" + "|".join(sorted({**_RENAMED_WORDS, **_CAMEL_WORDS})) + r")\b")


def nni_message(message: str) -> str:
    """A message of hyperlab's config code with the fields named as in NNI's Python API:
    ``classArgs`` -> ``class_args``, ``tuner_args`` -> ``tuner.class_args``..."""
    names = {**_RENAMED_WORDS, **_CAMEL_WORDS}
    return _WORD.sub(lambda match: names[match.group(1)], message)


def _refuse(field: str, value: Any, why: str) -> UnsupportedFeature:
    return UnsupportedFeature(f"config.{field} = {value!r} is not supported by hyperlab: {why}")


def _check_supported(config: ExperimentConfig, service: LocalConfig) -> None:
    if config.experiment_type != "hpo":
        raise _refuse("experiment_type", config.experiment_type, "it runs 'hpo' experiments")
    if config.use_annotation:
        raise _refuse("use_annotation", True, "call nni.get_next_parameter() and report results")
    if config.shared_storage is not None:
        raise _refuse("shared_storage", config.shared_storage, "trials run on this machine")
    if config.tuner_gpu_indices is not None:
        raise _refuse(
            "tuner_gpu_indices", config.tuner_gpu_indices, "its tuners run in the driver, on CPU"
        )
    if service.platform != "local":
        raise _refuse(
            "training_service.platform", service.platform, "trials run on this machine ('local')"
        )
    if service.reuse_mode:
        raise _refuse("training_service.reuse_mode", True, "each trial runs in a new process")


def _algorithm(field: str, algorithm: AlgorithmConfig | None) -> dict[str, Any] | None:
    if algorithm is None or algorithm.is_placeholder():
        return None
    block: dict[str, Any] = {}
    if algorithm.class_name is not None:
        if algorithm.name is not None:
            raise ConfigError(
                f"config.{field}: give name ({algorithm.name!r}, a built-in) or class_name "
                f"({algorithm.class_name!r}, your own class), not both"
            )
        folder = _folder(field, algorithm)
        block = {"className": algorithm.class_name, "codeDirectory": str(folder)}
    elif algorithm.code_directory is not None:
        raise ConfigError(
            f"config.{field}.class_name: required with {field}.code_directory "
            f"({str(algorithm.code_directory)!r}): the class to run, such as 'my_tuner.MyTuner'"
        )
    elif algorithm.name is None:
        raise ConfigError(
            f"config.{field}.name: required once {field}.class_args is set, such as 'TPE'"
        )
    else:
        block = {"name": algorithm.name}
    if algorithm.class_args:
        block["classArgs"] = dict(algorithm.class_args)
    return block


def _folder(field: str, algorithm: AlgorithmConfig) -> Path:
    """The absolute folder of a custom algorithm's module (``code_directory``, default the
    base folder).

    Raises:
        ConfigError: it does not exist.
    """
    folder = algorithm.resolve(algorithm.code_directory or ".")
    if not folder.is_dir():
        raise ConfigError(f"config.{field}.code_directory: folder {str(folder)!r} does not exist")
    return folder


def _code_directory(config: ExperimentConfig, service: LocalConfig) -> str:
    if service.trial_code_directory is not None:
        field, folder = (
            "training_service.trial_code_directory",
            service.resolve(service.trial_code_directory),
        )
    else:
        field, folder = "trial_code_directory", config.resolve(config.trial_code_directory)
    if not folder.is_dir():
        raise ConfigError(f"config.{field}: folder {str(folder)!r} does not exist")
    return str(folder)


def _search_space(config: ExperimentConfig) -> dict[str, Any]:
    given = config.search_space is not None, config.search_space_file is not None
    if given != (True, False) and given != (False, True):
        raise ConfigError(
            "config.search_space: give exactly one of search_space (a dict in NNI's format) and "
            f"search_space_file, got search_space={config.search_space!r}, "
            f"search_space_file={config.search_space_file!r}"
        )
    if config.search_space_file is None:
        if not isinstance(config.search_space, dict):
            raise ConfigError(
                "config.search_space: expected a dict in NNI's format (a file goes in "
                f"search_space_file), got {config.search_space!r}"
            )
        return {"searchSpace": config.search_space}
    path = config.resolve(config.search_space_file)
    if not path.is_file():
        raise ConfigError(f"config.search_space_file: file {str(path)!r} does not exist")
    return {"searchSpaceFile": str(path)}


def _training_service(service: LocalConfig) -> dict[str, Any]:
    block: dict[str, Any] = {"platform": "local"}
    if service.use_active_gpu is not None:
        block["useActiveGpu"] = service.use_active_gpu
    if service.max_trial_number_per_gpu != 1:
        block["maxTrialNumberPerGpu"] = service.max_trial_number_per_gpu
    if service.gpu_indices is not None:
        block["gpuIndices"] = service.gpu_indices
    return block


def to_nni_dict(config: ExperimentConfig) -> dict[str, Any]:
    """``config`` as NNI's v2 YAML spells it, checked: camelCase fields, absolute paths, the
    training service's shortcuts applied, unset fields left out.

    Raises:
        ConfigError: naming the first field that is missing or of the wrong type.
        UnsupportedFeature: naming an NNI feature hyperlab has no equivalent for.
    """
    config.check("config")
    service = config.training_service or LocalConfig()
    _check_supported(config, service)
    command = service.trial_command or config.trial_command
    if not command:
        raise ConfigError(
            "config.trial_command: required: the shell command that runs one trial, such as "
            "'python3 trial.py'"
        )
    if config.log_level is not None and config.log_level not in LOG_LEVELS:
        raise ConfigError(
            f"config.log_level: expected one of {', '.join(LOG_LEVELS)}, got {config.log_level!r}"
        )
    folder = config.experiment_working_directory
    gpus = service.trial_gpu_number
    data: dict[str, Any] = {
        "experimentName": config.experiment_name,
        **_search_space(config),
        "trialCommand": command,
        "trialCodeDirectory": _code_directory(config, service),
        "trialConcurrency": config.trial_concurrency,
        "trialGpuNumber": config.trial_gpu_number if gpus is None else gpus,
        "maxExperimentDuration": config.max_experiment_duration,
        "maxTrialNumber": config.max_trial_number,
        "maxTrialDuration": config.max_trial_duration,
        "experimentWorkingDirectory": None if folder is None else str(config.resolve(folder)),
        "logLevel": config.log_level,
        "debug": config.debug,
        "tuner": _algorithm("tuner", config.tuner),
        "assessor": _algorithm("assessor", config.assessor),
        "advisor": _algorithm("advisor", config.advisor),
        "trainingService": _training_service(service),
    }
    return {key: value for key, value in data.items() if value is not None}


def _describe(exc: ValidationError) -> str:
    """pydantic's errors about hyperlab's fields, each naming the NNI field it came from."""
    lines = []
    for err in exc.errors():
        where = ".".join(str(part) for part in err["loc"])
        known = [k for k in _NNI_FIELDS if where == k or where.startswith(f"{k}.")]
        prefix = max(known, key=len, default="")
        field = _NNI_FIELDS[prefix] + where[len(prefix) :] if prefix else where
        message = err["msg"]
        if message.startswith("Value error, "):  # hyperlab's validators name the field
            text = message.removeprefix("Value error, ").removeprefix(f"{where}: ")
            lines.append(f"config.{field}: {nni_message(text)}")
        else:
            lines.append(f"config.{field}: {message[0].lower()}{message[1:]}, got {err['input']!r}")
    return "; ".join(lines)


def to_hyperlab(config: ExperimentConfig) -> HyperlabConfig:
    """hyperlab's config for ``config``, through NNI's YAML translation; its search space is
    checked too.

    Raises:
        ConfigError: naming the NNI field that is missing, of the wrong type or out of range.
        SearchSpaceError: naming the parameter of the search space that is invalid.
        UnsupportedFeature: naming an NNI feature hyperlab has no equivalent for.
    """
    data = to_nni_dict(config)
    try:
        translated = translate_nni_config(data)
    except ConfigError as exc:
        raise ConfigError(nni_message(str(exc))) from None
    try:
        hyperlab_config = HyperlabConfig(**translated)
    except ValidationError as exc:
        raise ConfigError(_describe(exc)) from None
    try:
        SearchSpace.coerce(hyperlab_config.search_space)
    except SearchSpaceError as exc:
        field = "search_space_file" if isinstance(hyperlab_config.search_space, str) else ""
        raise SearchSpaceError(f"config.{field or 'search_space'}: {exc}") from None
    return hyperlab_config
