"""How options given (``validate_options``, ``validate_executor_args``) or stored
(``parse_stored_options``) are validated, and pydantic's errors turned into messages that name
the field, the value and what was expected (``describe_validation_error``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ConfigDict, ValidationError, create_model

from hyperlab.config._options import Doc, ExperimentOptions
from hyperlab.config._ranges import (
    MAX_CHECKPOINTS,
    MAX_CONCURRENCY,
    MAX_DURATION,
    MAX_MAX_LOG_BYTES,
    MAX_NODE_FAILURES,
    MAX_TRIALS,
)
from hyperlab.errors import ConfigError

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


def executor_fields() -> list[str]:
    """The executor's own options (``gpus``, ``max_log_bytes``...): those whose ``Doc`` says
    ``executor``, given in ``executor_args`` in Python."""
    return [
        name
        for name, field in ExperimentOptions.model_fields.items()
        if any(isinstance(m, Doc) and m.executor for m in field.metadata)
    ]


_ExecutorArgs = create_model(
    "ExecutorArgs",
    __config__=ConfigDict(extra="forbid", frozen=True),
    **{
        name: (
            ExperimentOptions.model_fields[name].annotation,
            ExperimentOptions.model_fields[name],
        )
        for name in executor_fields()
    },  # type: ignore[call-overload]
)


def validate_executor_args(args: Any) -> dict[str, Any]:
    """``executor_args`` of ``hyperlab.run`` and ``Experiment`` checked and converted (a mapping
    of ``gpus`` to a ``GpuConfig``...): the options it gives, by name.

    Raises:
        ConfigError: not a mapping, an unknown name or a bad value, naming
            ``executor_args.<option>``, the value and what was expected.
    """
    if args is None:
        return {}
    if not isinstance(args, Mapping):
        raise ConfigError(
            f"executor_args: expected a mapping of the executor's options "
            f"({', '.join(executor_fields())}), got {args!r}"
        )
    try:
        checked = _ExecutorArgs.model_validate(dict(args))
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, prefix="executor_args.")) from None
    return {name: getattr(checked, name) for name in args}


def describe_validation_error(exc: ValidationError, *, prefix: str = "") -> str:
    """One line per invalid field: its name (after ``prefix``, such as ``"executor_args."``),
    what is wrong, and the value received."""
    lines = []
    for err in exc.errors():
        field = prefix + ".".join(str(part) for part in err["loc"]) or "options"
        message = err["msg"]
        if message.startswith("Value error, "):  # raised by our validators: already complete
            lines.append(prefix + message.removeprefix("Value error, "))
            continue
        if err["type"] == "extra_forbidden":
            known = f"; the executor's options are: {', '.join(executor_fields())}"
            lines.append(f"{field}: unknown option" + (known if prefix else ""))
            continue
        lines.append(f"{field}: {message[0].lower()}{message[1:]}, got {err.get('input')!r}")
    return "; ".join(lines)
