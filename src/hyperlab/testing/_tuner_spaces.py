"""The spaces of ``hyperlab.testing.TunerContract`` and its membership check: every test runs
on ``CONTRACT_SPACES``; ``assert_in_space`` checks that a proposal is a parameter set of its
space, and ``refusal_names_a_parameter`` that a tuner refusing a space says which parameter.

Private: import these names from ``hyperlab.testing.tuners``, which documents the contract.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hyperlab.space import (
    Choice,
    LogNormal,
    LogUniform,
    NestedOption,
    Parameter,
    QLogNormal,
    QLogUniform,
    QNormal,
    QUniform,
    Randint,
    SearchSpace,
    Uniform,
    choice,
    lognormal,
    loguniform,
    normal,
    qlognormal,
    qloguniform,
    qnormal,
    quniform,
    randint,
    uniform,
)
from hyperlab.trial import Mode

__all__ = ["CONTRACT_SPACES", "ContractSpace", "assert_in_space", "refusal_names_a_parameter"]


# ---------------------------------------------------------------- the spaces


@dataclass(frozen=True)
class ContractSpace:
    """One search space the contract runs a tuner on, and the mode it runs it with.

    Attributes:
        name: Its test id (``"every_type"``).
        space: The search space.
        mode: Which way the objective is better in its runs.
    """

    name: str
    space: SearchSpace
    mode: Mode

    def __repr__(self) -> str:
        return self.name


CONTRACT_SPACES: tuple[ContractSpace, ...] = (
    ContractSpace(
        "every_type",
        SearchSpace(
            {
                "width_u": uniform(-2, 3),
                "step_qu": quniform(1, 10, 3),
                "rate_lu": loguniform(1e-4, 1),
                "size_qlu": qloguniform(1, 1000, 5),
                "shift_n": normal(1, 2),
                "offset_qn": qnormal(0, 3, 0.5),
                "scale_ln": lognormal(0, 1),
                "count_qln": qlognormal(1, 0.5, 2),
                "depth_ri": randint(-3, 4),
                "activation": choice("relu", 7, None, 2.5, True, [1, 2]),
                "optimizer": choice(
                    {"_name": "sgd", "momentum": uniform(0, 0.99), "nesterov": choice(True, False)},
                    {"_name": "adam", "beta1": loguniform(0.5, 0.999), "amsgrad": False},
                    "none",
                ),
            }
        ),
        Mode.MIN,
    ),
    ContractSpace(
        "numeric",
        SearchSpace(
            {
                "width_u": uniform(0, 1),
                "step_qu": quniform(-1, 1, 0.25),
                "rate_lu": loguniform(1e-6, 1e-2),
                "size_qlu": qloguniform(16, 512, 16),
                "shift_n": normal(-3, 0.5),
                "offset_qn": qnormal(10, 4, 2),
                "scale_ln": lognormal(-1, 0.5),
                "count_qln": qlognormal(2, 1, 1),
                "depth_ri": randint(0, 10),
            }
        ),
        Mode.MAX,
    ),
    ContractSpace(
        "finite",
        SearchSpace(
            {
                "units_ri": randint(1, 3),  # 1, 2
                "dropout_qu": quniform(0, 1, 0.4),  # 0.0, 0.4, 0.8
                "batch_qlu": qloguniform(2, 8, 8),  # 2.0 (the clipped low bound), 8.0
            }
        ),
        Mode.MIN,
    ),
    ContractSpace(
        "nested",
        SearchSpace(
            {
                "layer": choice(
                    {
                        "_name": "conv",
                        "kernel_ri": randint(1, 3),
                        "pool": choice(
                            {"_name": "maxpool", "window_qu": quniform(2, 4, 2)},
                            {"_name": "avgpool"},
                            "nopool",
                        ),
                    },
                    {"_name": "dense", "units_qlu": qloguniform(16, 64, 16), "bias": True},
                    "skip",
                ),
                "activation": choice("relu", "tanh"),
            }
        ),
        Mode.MAX,
    ),
)
"""The spaces (and modes) every test of the contract runs on, in this order."""


# ---------------------------------------------------------------- membership


def assert_in_space(space: SearchSpace, params: Any, what: str = "the proposal") -> None:
    """Assert that ``params`` is a parameter set of ``space``, with values of the right types.

    The rules are those of the contract (see the module docstring): exactly the space's names
    (a nested option's sub-parameters inside its dict), JSON-serialisable values of each
    parameter's type, inside its bounds or among its options; and ``space.encode`` accepts it.

    Args:
        space: The search space.
        params: What a tuner proposed.
        what: How the failure message names ``params``.

    Raises:
        AssertionError: Listing every rule broken, with the parameter's path and the value.
    """
    if not isinstance(params, dict):
        raise AssertionError(f"{what} must be a dict, got {params!r}")
    problems = _group_problems(space, params, "")
    if not problems:
        try:
            json.dumps(params, allow_nan=False)
        except (TypeError, ValueError) as exc:
            problems.append(f"not JSON-serialisable: {exc}")
    if not problems:
        try:
            space.encode(params)
        except (TypeError, ValueError) as exc:
            problems.append(f"SearchSpace.encode refuses it: {exc}")
    if problems:
        raise AssertionError(f"{what} {params!r} is not in the space: " + "; ".join(problems))


def _group_problems(group: Mapping[str, Any], values: Mapping[str, Any], path: str) -> list[str]:
    """What is wrong with ``values`` as the values of ``group`` (names to params/constants)."""
    problems: list[str] = []
    expected = set(group) | ({"_name"} if path else set())
    missing, extra = sorted(expected - set(values)), sorted(set(values) - expected)
    if missing or extra:
        problems.append(
            f"{path or 'params'}: keys must be {sorted(expected)}, missing {missing}, extra {extra}"
        )
    for name, param in group.items():
        if name not in values:
            continue
        sub = f"{path}/{name}" if path else name
        value = values[name]
        if isinstance(param, Parameter):
            problems.extend(_value_problems(param, value, sub))
        elif _json(value) != _json(param):
            problems.append(f"{sub}: the constant must be {param!r}, got {value!r}")
    return problems


def _value_problems(param: Parameter, value: Any, path: str) -> list[str]:
    """What is wrong with ``value`` as a value of ``param`` at ``path`` (nothing: ``[]``)."""
    if isinstance(param, Choice):
        return _choice_problems(param, value, path)
    got = f"{param!r} at {path} got {value!r} ({type(value).__name__})"
    if isinstance(param, Randint):
        if isinstance(value, bool) or not isinstance(value, int):
            return [f"{path}: randint gives an int; {got}"]
        if not param.low <= value < param.high:
            return [f"{path}: randint needs low <= value < high (high excluded); {got}"]
        return []
    if isinstance(value, bool) or not isinstance(value, float) or not math.isfinite(value):
        return [f"{path}: {param.type} gives a finite float; {got}"]
    if isinstance(param, (Uniform, LogUniform, QUniform, QLogUniform)):
        if not param.low <= value <= param.high:
            return [f"{path}: {param.type} needs low <= value <= high; {got}"]
        if isinstance(param, (QUniform, QLogUniform)) and not (
            value in (param.low, param.high) or _is_multiple(value, param.q)
        ):
            return [f"{path}: {param.type} gives a multiple of q or a clipped bound; {got}"]
    if isinstance(param, (QNormal, QLogNormal)) and not _is_multiple(value, param.q):
        return [f"{path}: {param.type} gives a multiple of q; {got}"]
    if isinstance(param, QLogNormal) and value < 0:
        return [f"{path}: qlognormal gives a value >= 0; {got}"]
    if isinstance(param, LogNormal) and value <= 0:
        return [f"{path}: lognormal gives a value > 0; {got}"]
    return []  # Normal; a type unknown to the contract is checked by encode() only


def _choice_problems(param: Choice, value: Any, path: str) -> list[str]:
    if isinstance(value, Mapping) and "_name" in value:
        for option in param.options:
            if isinstance(option, NestedOption) and option.name == value["_name"]:
                return _group_problems(option.params, value, f"{path}/{option.name}")
    wanted = _json(value)
    if wanted is not None and any(
        _json(option) == wanted for option in param.options if not isinstance(option, NestedOption)
    ):
        return []
    return [f"{path}: {value!r} is not one of the options {list(param.options)!r}"]


def _json(value: Any) -> str | None:
    """A canonical JSON text of ``value`` (telling ``1``, ``1.0`` and ``True`` apart), or None."""
    try:
        return json.dumps(value, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError):
        return None


def _is_multiple(value: float, q: float) -> bool:
    return abs(value - round(value / q) * q) <= 1e-9 * max(1.0, abs(value))


def refusal_names_a_parameter(space: SearchSpace, message: str) -> bool:
    """True if ``message`` names a parameter of ``space``: a dimension's path, such as
    ``layer/conv/kernel``, or its last part, as a whole word."""
    names = {dim.path for dim in space.dimensions()}
    names |= {path.rsplit("/", 1)[-1] for path in names}
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", message) for name in names)
