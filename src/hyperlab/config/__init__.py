"""The schema of experiments (pydantic): run options, config files, durations, and the
registries through which a name in them picks an implementation.

Every entry point (``hyperlab.run``, ``Experiment``, config files, the REST API) validates
through these models; a bad value becomes a ``ConfigError`` that names the field, the value
received and what was expected. NNI's config format is translated into ``ExperimentConfig`` as
a file is read (``hyperlab.config._nni``: ``translate_nni_config``), so there is one schema.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Constraint": "hyperlab.config._constraints",
    "parse_constraint": "hyperlab.config._constraints",
    "ExperimentConfig": "hyperlab.config._files",
    "TrialConfig": "hyperlab.config._files",
    "load_config": "hyperlab.config._files",
    "is_nni_config": "hyperlab.config._nni",
    "translate_nni_config": "hyperlab.config._nni",
    "ExperimentOptions": "hyperlab.config._options",
    "GpuConfig": "hyperlab.config._options",
    "ResearchOptions": "hyperlab.config._options",
    "DEFAULT_MAX_FAILED_TRIALS": "hyperlab.config._ranges",
    "DEFAULT_MAX_LOG_BYTES": "hyperlab.config._ranges",
    "DEFAULT_STORE_OUTAGE": "hyperlab.config._ranges",
    "MAX_CHECKPOINTS": "hyperlab.config._ranges",
    "MAX_CONCURRENCY": "hyperlab.config._ranges",
    "MAX_DURATION": "hyperlab.config._ranges",
    "MAX_GPU_CHECK_DELAY": "hyperlab.config._ranges",
    "MAX_GPU_CHECKS": "hyperlab.config._ranges",
    "MAX_GPUS": "hyperlab.config._ranges",
    "MAX_ITERATIONS": "hyperlab.config._ranges",
    "MAX_MAX_LOG_BYTES": "hyperlab.config._ranges",
    "MAX_NODE_FAILURES": "hyperlab.config._ranges",
    "MAX_STORE_OUTAGE": "hyperlab.config._ranges",
    "MAX_TRIAL_NUMBER": "hyperlab.config._ranges",
    "MAX_TRIALS": "hyperlab.config._ranges",
    "MIN_MAX_LOG_BYTES": "hyperlab.config._ranges",
    "Concurrency": "hyperlab.config._ranges",
    "TrialCount": "hyperlab.config._ranges",
    "parse_duration": "hyperlab.config._ranges",
    "Registry": "hyperlab.config._registry",
    "check_arguments": "hyperlab.config._registry",
    "class_path": "hyperlab.config._registry",
    "import_path": "hyperlab.config._registry",
    "describe_validation_error": "hyperlab.config._validate",
    "executor_fields": "hyperlab.config._validate",
    "parse_stored_options": "hyperlab.config._validate",
    "validate_executor_args": "hyperlab.config._validate",
    "validate_options": "hyperlab.config._validate",
}
"""Each public name's module, imported on first use: the listing of `hyperlab ls` needs the
stored options' model (``_validate``, ``_options``) but not the config files' (``_files``), nor
NNI's translation or the registries."""

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
    "Constraint",
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
    "executor_fields",
    "import_path",
    "is_nni_config",
    "load_config",
    "parse_constraint",
    "parse_duration",
    "parse_stored_options",
    "translate_nni_config",
    "validate_executor_args",
    "validate_options",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hyperlab.config' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from hyperlab.config._constraints import Constraint, parse_constraint
    from hyperlab.config._files import ExperimentConfig, TrialConfig, load_config
    from hyperlab.config._nni import is_nni_config, translate_nni_config
    from hyperlab.config._options import (
        ExperimentOptions,
        GpuConfig,
        ResearchOptions,
    )
    from hyperlab.config._ranges import (
        DEFAULT_MAX_FAILED_TRIALS,
        DEFAULT_MAX_LOG_BYTES,
        DEFAULT_STORE_OUTAGE,
        MAX_CHECKPOINTS,
        MAX_CONCURRENCY,
        MAX_DURATION,
        MAX_GPU_CHECK_DELAY,
        MAX_GPU_CHECKS,
        MAX_GPUS,
        MAX_ITERATIONS,
        MAX_MAX_LOG_BYTES,
        MAX_NODE_FAILURES,
        MAX_STORE_OUTAGE,
        MAX_TRIAL_NUMBER,
        MAX_TRIALS,
        MIN_MAX_LOG_BYTES,
        Concurrency,
        TrialCount,
        parse_duration,
    )
    from hyperlab.config._registry import Registry, check_arguments, class_path, import_path
    from hyperlab.config._validate import (
        describe_validation_error,
        executor_fields,
        parse_stored_options,
        validate_executor_args,
        validate_options,
    )
