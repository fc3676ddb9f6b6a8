"""NNI v2 experiment configs, translated into hyperlab's ``ExperimentConfig`` fields.

Every NNI field is either mapped, accepted with a documented no-op (``logLevel``, ``debug``,
``experimentType: hpo``, ``useActiveGpu``), or rejected with an error naming it: an NNI user's
config never runs differently from what it says without being told.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hyperlab.errors import ConfigError

__all__ = ["is_nni_config", "translate_nni_config"]

_MARKERS = {
    "trialCommand",
    "searchSpaceFile",
    "searchSpace",
    "trainingService",
    "trialConcurrency",
    "maxTrialNumber",
    "maxExperimentDuration",
    "experimentName",
    "trialCodeDirectory",
}
_PLAIN = {
    "experimentName": "name",
    "trialConcurrency": "concurrency",
    "maxTrialNumber": "max_trials",
    "maxExperimentDuration": "max_duration",
    "maxTrialDuration": "trial_timeout",
    "experimentWorkingDirectory": "working_dir",
}
_NO_EFFECT = {"logLevel", "debug"}
_MODES = {"minimize": "min", "maximize": "max"}


def is_nni_config(data: dict[str, Any]) -> bool:
    """True when the mapping uses NNI's (camelCase) experiment config fields."""
    return any(key in _MARKERS for key in data)


def translate_nni_config(data: dict[str, Any], *, base: Path | None = None) -> dict[str, Any]:
    """hyperlab config fields for an NNI v2 experiment config.

    A ``tuner``, ``assessor`` or ``advisor`` given by ``className`` (a user's own NNI class)
    becomes its adapter in ``hyperlab.compat.nni`` (an advisor's is the tuner), its
    ``codeDirectory`` resolved against ``base`` (the config file's folder) when relative.

    Raises:
        ConfigError: naming any NNI field or value hyperlab does not support.
    """
    advisor = data.get("advisor")
    as_nni = {"tuner": "as in NNI", "assessor": "NNI ignores one, logging an error"}
    for other, nni_does in as_nni.items():
        if isinstance(advisor, dict) and "className" in advisor and data.get(other):
            raise ConfigError(
                f"config: advisor.className = {advisor['className']!r} proposes the trials "
                f"and stops them, so there is no {other} next to it ({nni_does}); "
                f"remove {other}"
            )
    out: dict[str, Any] = {}
    trial: dict[str, Any] = {}
    gpus: dict[str, Any] = {}
    gpu_number = 0
    for key, value in data.items():
        if key in _PLAIN:
            out[_PLAIN[key]] = value
        elif key == "searchSpaceFile" or key == "searchSpace":
            out["search_space"] = value
        elif key == "trialCommand":
            trial["command"] = value
        elif key == "trialCodeDirectory":
            trial["code_dir"] = value
        elif key == "trialGpuNumber":
            gpu_number = _count(key, value)
        elif isinstance(value, dict) and "className" in value and key in _ALGORITHMS:
            out.update(_custom(key, value, base))
        elif key == "tuner":
            out.update(_tuner(value))
        elif key in ("assessor", "advisor"):
            out.update(_scheduler(key, value))
        elif key == "trainingService":
            gpus.update(_training_service(value))
        elif key == "experimentType":
            if value != "hpo":
                raise _unsupported(key, value, "only 'hpo' experiments")
        elif key == "useAnnotation":
            if value:
                raise _unsupported(key, value, "annotation-based trials; use nni.* calls")
        elif key in _NO_EFFECT:
            continue
        else:
            raise _unsupported(key, value)
    if trial:
        out["trial"] = trial
    if gpu_number > 0:
        out["gpus"] = {
            "indices": gpus.get("indices", "auto"),
            "per_trial": gpu_number,
            "max_trials_per_gpu": gpus.get("max_trials_per_gpu", 1),
        }
    return out


def _unsupported(key: str, value: Any, what: str | None = None) -> ConfigError:
    detail = f" (hyperlab supports {what})" if what else ""
    return ConfigError(
        f"config: NNI field {key!r} = {value!r} is not supported by hyperlab yet{detail}; "
        "remove it or see docs/config.md for the fields hyperlab translates"
    )


def _count(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigError(f"config: {key} must be a non-negative integer, got {value!r}")
    return value


def _component(key: str, value: Any) -> tuple[str, dict[str, Any]]:
    if not isinstance(value, dict) or "name" not in value:
        raise ConfigError(f"config: {key} must be a mapping with a 'name', got {value!r}")
    for field in value:
        if field not in ("name", "classArgs"):
            raise _unsupported(f"{key}.{field}", value[field], "built-in algorithms by name")
    args = value.get("classArgs") or {}
    if not isinstance(args, dict):
        raise ConfigError(f"config: {key}.classArgs must be a mapping, got {args!r}")
    return value["name"], dict(args)


def _tuner(value: Any) -> dict[str, Any]:
    name, args = _component("tuner", value)
    out: dict[str, Any] = {"tuner": name}
    mode = args.pop("optimize_mode", None)
    if mode is not None:
        if mode not in _MODES:
            raise ConfigError(
                f"config: tuner.classArgs.optimize_mode must be 'minimize' or 'maximize', "
                f"got {mode!r}"
            )
        out["mode"] = _MODES[mode]
    if "seed" in args:
        out["seed"] = args.pop("seed")
    out["tuner_args"] = args
    return out


# NNI's assessors and advisors, how their classArgs are named here, and the classArgs accepted
# without effect: Hyperband's parallelism switch (hyperlab always runs brackets side by side),
# and the kernel bandwidths of BOHB's density model (hyperlab's Parzen estimator sets its own)
_SCHEDULERS: dict[str, tuple[str, str, dict[str, str], frozenset[str]]] = {
    # NNI name: (field, hyperlab name, NNI argument -> hyperlab argument, ignored arguments)
    "Medianstop": ("assessor", "median", {}, frozenset()),
    "Curvefitting": ("assessor", "curvefit", {}, frozenset()),
    "Hyperband": (
        "assessor",
        "hyperband",
        {"R": "max_resource", "eta": "reduction_factor"},
        frozenset({"exec_mode"}),
    ),
    "BOHB": (
        "tuner",
        "bohb",
        {"min_budget": "min_resource", "max_budget": "max_resource", "eta": "reduction_factor"},
        frozenset({"bandwidth_factor", "min_bandwidth"}),
    ),
}


def _nni_hyperband(args: dict[str, Any]) -> dict[str, Any]:
    """NNI Hyperband's defaults: ``R=60``, ``eta=3``, and its smallest budget
    ``R / eta ** floor(log_eta(R))`` (hyperlab's own defaults start later and use eta 4)."""
    top, eta = args.get("max_resource", 60), args.get("reduction_factor", 3)
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in (top, eta)):
        return {"max_resource": 60, "reduction_factor": 3}  # Hyperband names the bad value
    brackets = 0
    while eta > 1 and eta ** (brackets + 1) <= top * (1 + 1e-9):
        brackets += 1
    return {"max_resource": 60, "reduction_factor": 3, "min_resource": top / eta**brackets}


_NNI_DEFAULTS = {
    "Medianstop": lambda args: {"start_step": 0},
    "Hyperband": _nni_hyperband,
}


def _scheduler(key: str, value: Any) -> dict[str, Any]:
    """NNI's ``assessor`` (Medianstop, Curvefitting) or ``advisor`` (Hyperband, BOHB)."""
    name, args = _component(key, value)
    if name not in _SCHEDULERS:
        known = [n for n, (f, *_) in _SCHEDULERS.items() if key == "advisor" or f == key]
        raise _unsupported(f"{key}.name", name, f"the built-in {', '.join(known)}")
    field, ours, renames, ignored = _SCHEDULERS[name]
    out: dict[str, Any] = {}
    mode = args.pop("optimize_mode", None)
    if mode is not None:
        if mode not in _MODES:
            raise ConfigError(
                f"config: {key}.classArgs.optimize_mode must be 'minimize' or 'maximize', "
                f"got {mode!r}"
            )
        out["mode"] = _MODES[mode]
    converted = {renames.get(arg, arg): val for arg, val in args.items() if arg not in ignored}
    if name in _NNI_DEFAULTS:  # NNI's defaults, not hyperlab's (they differ)
        converted = _NNI_DEFAULTS[name](converted) | converted
    out[field] = ours
    out[f"{field}_args"] = converted
    return out


_ALGORITHMS = ("tuner", "assessor", "advisor")
_ADAPTERS = {
    "tuner": "hyperlab.compat.nni.custom:CustomTuner",
    "assessor": "hyperlab.compat.nni.custom:CustomAssessor",
    "advisor": "hyperlab.compat.nni.advisor:CustomAdvisor",
}


def _custom(key: str, value: dict[str, Any], base: Path | None) -> dict[str, Any]:
    """A user's own NNI tuner, assessor or advisor class (``className``, ``codeDirectory``,
    ``classArgs``), run by its adapter in ``hyperlab.compat.nni`` (an advisor is the tuner)."""
    if "name" in value:
        raise ConfigError(
            f"config: {key} has both name ({value['name']!r}, a built-in) and className "
            f"({value['className']!r}, your own class); keep one"
        )
    for field in value:
        if field not in ("className", "codeDirectory", "classArgs"):
            raise _unsupported(
                f"{key}.{field}", value[field], "className, codeDirectory, classArgs"
            )
    name = value["className"]
    if not isinstance(name, str) or "." not in name.strip("."):
        raise ConfigError(
            f"config: {key}.className must be 'module.Class', such as 'my_tuner.MyTuner', "
            f"got {name!r}"
        )
    args = value.get("classArgs") or {}
    if not isinstance(args, dict):
        raise ConfigError(f"config: {key}.classArgs must be a mapping, got {args!r}")
    folder = value.get("codeDirectory", ".")
    if not isinstance(folder, str):
        raise ConfigError(f"config: {key}.codeDirectory must be a folder's path, got {folder!r}")
    if base is not None:
        folder = str((base / folder).resolve())
    field = "tuner" if key == "advisor" else key  # an advisor proposes the trials
    out: dict[str, Any] = {
        field: _ADAPTERS[key],
        f"{field}_args": {"class_name": name, "code_directory": folder, "class_args": dict(args)},
    }
    mode = args.get("optimize_mode")  # the class takes it too, as in NNI
    if mode in _MODES:
        out["mode"] = _MODES[mode]
    return out


def _training_service(value: Any) -> dict[str, Any]:
    if isinstance(value, list):
        if len(value) != 1:
            raise _unsupported("trainingService", value, "one local training service")
        value = value[0]
    if not isinstance(value, dict) or value.get("platform") != "local":
        platform = value.get("platform") if isinstance(value, dict) else value
        raise _unsupported("trainingService.platform", platform, "platform: local")
    gpus: dict[str, Any] = {}
    for key, field in value.items():
        if key == "gpuIndices":
            gpus["indices"] = _indices(field)
        elif key == "maxTrialNumberPerGpu":
            gpus["max_trials_per_gpu"] = field
        elif key in ("platform", "useActiveGpu"):
            continue  # hyperlab does not look at other processes' GPU use: useActiveGpu: true
        else:
            raise _unsupported(f"trainingService.{key}", field)
    return gpus


def _indices(value: Any) -> Any:
    """NNI accepts ``gpuIndices`` as a list, one integer, or a string like ``"0,1"``."""
    if isinstance(value, str):
        return [
            int(part) if part.strip().isdigit() else part.strip()
            for part in value.split(",")
            if part.strip()
        ]
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    return value
