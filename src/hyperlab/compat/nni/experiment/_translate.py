"""An NNI ``ExperimentConfig`` (``config.py``) into hyperlab's config.

The config is checked field by field, refused where NNI has a feature hyperlab lacks
(``UnsupportedFeature``), written as NNI's camelCase v2 dict (``to_nni_dict``: what an NNI
``config.yml`` holds), and translated by the same code as an NNI YAML file
(``hyperlab.config.translate_nni_config``) into hyperlab's ``ExperimentConfig``
(``to_hyperlab``), so a Python config and a YAML file are held to one schema. Every message
names the field as the NNI user wrote it (``trial_concurrency``, not hyperlab's
``concurrency``).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pydantic import ValidationError

from hyperlab.compat.nni.experiment._base import UnsupportedFeature, camel_case
from hyperlab.compat.nni.experiment.config import (
    AlgorithmConfig,
    ExperimentConfig,
    LocalConfig,
)
from hyperlab.config import ExperimentConfig as HyperlabConfig
from hyperlab.config import translate_nni_config
from hyperlab.errors import ConfigError, SearchSpaceError
from hyperlab.space import SearchSpace

__all__ = ["nni_message", "to_hyperlab", "to_nni_dict"]

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
    if algorithm.class_name is not None or algorithm.code_directory is not None:
        custom = algorithm.class_name or algorithm.code_directory
        raise _refuse(
            f"{field}.class_name",
            custom,
            "NNI's custom algorithm classes have another "
            f"interface; set {field}.name to a hyperlab class as 'package.module:Class'",
        )
    if algorithm.name is None:
        raise ConfigError(
            f"config.{field}.name: required once {field}.class_args is set, such as 'TPE'"
        )
    block: dict[str, Any] = {"name": algorithm.name}
    if algorithm.class_args:
        block["classArgs"] = dict(algorithm.class_args)
    return block


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
