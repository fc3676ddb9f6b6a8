"""The limits of a search space, checked when one is read, before it is parsed.

A search space is read by every part that touches an experiment: the tuner, the driver on each
resume, and the server on each request for the experiment's plots. A choice of a million options
(52 MB of JSON) was once accepted, after which one request for a plot took 70 s of CPU and 4.3 GB
of memory. So a space may hold at most:

- ``MAX_OPTIONS`` options in one choice;
- ``MAX_PARAMETERS`` parameters, those of nested options included;
- ``MAX_NESTING`` levels of choices within the nested options of choices;
- ``MAX_SPACE_SIZE`` characters of NNI JSON in all (names, options, constants and bounds).

Each is far above what a search needs (a tuner learns little about any one of ten thousand
options within a budget of trials), and bounds what a request for an experiment can cost.
``docs/config.md`` lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hyperlab.space._params import Parameter, describe, fail, is_spec_dict, join

__all__ = [
    "MAX_NESTING",
    "MAX_OPTIONS",
    "MAX_PARAMETERS",
    "MAX_SPACE_SIZE",
    "check_limits",
    "check_options",
]

MAX_OPTIONS = 10_000
"""The most options of one choice."""
MAX_PARAMETERS = 1_000
"""The most parameters of a search space, those of nested options included."""
MAX_NESTING = 10
"""The most levels of choices within nested options (a top-level choice is level 1)."""
MAX_SPACE_SIZE = 1_000_000
"""The most characters of a search space's NNI JSON (written compactly)."""


def check_options(path: str, count: int) -> None:
    """Raise ``SearchSpaceError`` at ``path`` when a choice has more than ``MAX_OPTIONS``."""
    if count > MAX_OPTIONS:
        raise fail(path, f"a choice has at most {MAX_OPTIONS:,} options, got {count:,}")


@dataclass
class _Tally:
    parameters: int = 0
    size: int = 2  # the braces of the space


def check_limits(params: Mapping[Any, Any]) -> None:
    """Raise ``SearchSpaceError`` when the space ``params`` (names to Parameters or NNI spec
    dicts) is beyond a limit, naming the parameter where it is passed, the size and the limit.

    Only the size is looked at (a spec that is invalid otherwise is left to the parser), and the
    walk stops at the limit, so a space far beyond one costs no more than one at it.
    """
    tally = _Tally()
    for name, spec in params.items():
        if isinstance(name, str):
            tally.size += _text_size(name) + 2  # the colon, the comma
            _parameter(name, spec, 1, tally)


def _parameter(path: str, spec: Any, nesting: int, tally: _Tally) -> None:
    tally.parameters += 1
    if tally.parameters > MAX_PARAMETERS:
        raise fail(
            path,
            f"a search space has at most {MAX_PARAMETERS:,} parameters (those of nested "
            f"options included); this is number {tally.parameters:,}",
        )
    if isinstance(spec, Parameter):
        spec = spec.to_nni()
    if not is_spec_dict(spec):
        return
    values = spec.get("_value")
    _add(path, tally, _text_size(str(spec.get("_type"))) + len('{"_type":,"_value":}'))
    if spec.get("_type") != "choice" or not isinstance(values, (list, tuple)):
        _add(path, tally, _json_size(values, path, tally))
        return
    check_options(path, len(values))
    if nesting > MAX_NESTING:
        raise fail(
            path,
            f"choices nest at most {MAX_NESTING} levels deep (a choice in a nested option of a "
            f"choice is level 2), this one is level {nesting}",
        )
    for option in values:
        if isinstance(option, Mapping) and "_name" in option:
            _add(path, tally, _json_size(option.get("_name"), path, tally) + 10)
            sub = join(path, str(option.get("_name")))
            for key, entry in option.items():
                if key == "_name" or not isinstance(key, str):
                    continue
                _add(path, tally, _text_size(key) + 2)
                if isinstance(entry, Parameter) or is_spec_dict(entry):
                    _parameter(join(sub, key), entry, nesting + 1, tally)
                else:
                    _add(path, tally, _json_size(entry, join(sub, key), tally))
        elif isinstance(option, str):  # most options: counted without the general walk
            _add(path, tally, len(option) + 3)
        else:
            _add(path, tally, _json_size(option, path, tally) + 1)


def _add(path: str, tally: _Tally, size: int) -> None:
    tally.size += size
    if tally.size > MAX_SPACE_SIZE:
        raise fail(
            path,
            f"a search space has at most {MAX_SPACE_SIZE:,} characters of JSON; it passes "
            f"{MAX_SPACE_SIZE:,} here",
        )


def _text_size(text: str) -> int:
    return len(text) + 2  # its quotes (escapes are not counted)


def _json_size(value: Any, path: str, tally: _Tally) -> int:
    """About how many characters of JSON ``value`` takes, counted without recursion and only
    as far as the space's room left (past it, the count stops at the first value beyond)."""
    room = MAX_SPACE_SIZE - tally.size
    size = 0
    stack = [value]
    while stack and size <= room:
        item = stack.pop()
        if isinstance(item, str):
            size += _text_size(item) + 1
        elif isinstance(item, Mapping):
            size += 2
            for key, sub in item.items():
                size += _text_size(str(key)) + 1
                stack.append(sub)
        elif isinstance(item, (list, tuple)):
            size += 2
            stack.extend(item)
        elif isinstance(item, int) and not isinstance(item, bool):
            size += item.bit_length() * 3 // 10 + 2  # its digits, about (never written out)
        elif item is None or isinstance(item, (bool, float)):
            size += len(repr(item)) + 1
        else:
            size += len(describe(item))  # not JSON: the parser says so
    return size
