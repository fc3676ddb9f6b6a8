"""The schema of experiments (pydantic): run options, config files, durations, and the
registries through which a name in them picks an implementation.

Every entry point (``hyperlab.run``, ``Experiment``, config files, the REST API) validates
through these models; a bad value becomes a ``ConfigError`` that names the field, the value
received and what was expected. NNI's config format is translated into ``ExperimentConfig`` as
a file is read (``hyperlab.config._nni``: ``translate_nni_config``), so there is one schema.
"""

from __future__ import annotations

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
