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
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from hyperlab._files import read_yaml
from hyperlab.compat.nni.experiment._base import ConfigBase, UnsupportedFeature
from hyperlab.errors import ConfigError

__all__ = ["AlgorithmConfig", "CustomAlgorithmConfig", "ExperimentConfig", "LocalConfig"]


@dataclasses.dataclass(init=False)
class AlgorithmConfig(ConfigBase):
    """A built-in tuner, assessor or advisor by ``name`` (``'TPE'``, ``'Medianstop'``...; any
    name of hyperlab's registries, ``'package.module:Class'`` included) and its ``class_args``.

    ``class_name`` and ``code_directory`` (NNI's custom algorithms) are refused by ``validate``.
    """

    name: str | None = None
    class_name: str | None = None
    code_directory: str | Path | None = None
    class_args: dict[str, Any] | None = None

    def is_placeholder(self) -> bool:
        """True for the blank one ``Experiment('local')`` makes, never filled in."""
        return self.name is None and self.class_name is None and not self.class_args


class CustomAlgorithmConfig(AlgorithmConfig):
    """NNI's custom tuner or assessor class: not supported (hyperlab's tuners and assessors have
    an interface of their own); name a hyperlab ``Tuner`` as ``'package.module:Class'``."""

    def __init__(self, **kwargs: Any) -> None:
        raise UnsupportedFeature(
            "CustomAlgorithmConfig: NNI's custom tuner and assessor classes are not supported by "
            "hyperlab (its tuners have an interface of their own); use AlgorithmConfig(name="
            "'package.module:Class') naming a hyperlab Tuner or Assessor subclass"
        )


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
        from hyperlab.compat.nni.experiment._translate import to_hyperlab

        to_hyperlab(self)

    def json(self) -> dict[str, Any]:
        """The config as NNI's v2 YAML spells it (camelCase; paths absolute; unset fields left
        out), validated: what hyperlab translates."""
        from hyperlab.compat.nni.experiment._translate import to_nni_dict

        return to_nni_dict(self)
