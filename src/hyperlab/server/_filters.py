"""The trial filters and sort keys of the REST API's query strings, parsed against the
experiment's search space into the store's ``TrialFilter``, ``TrialOrder`` and ``Key``.

The syntax (one query parameter per kind, ``param`` and ``metric`` repeatable)::

    status=SUCCEEDED,FAILED        any of these statuses (any case)
    source=custom                  added by hand (``tuner``: proposed by the tuner)
    value=0.1..0.5                 the objective in [0.1, 0.5]; ``0.1..`` or ``..0.5`` for one side
    duration=..60                  seconds from start to end
    param=lr:1e-4..1e-2            a number parameter in a range (``lr:0.01``: exactly)
    param=optimizer:adam,sgd       a choice parameter: one of these options
    param=optimizer:["a,b","c"]    options written as a JSON list (for commas and odd values)
    metric=accuracy:0.9..          a final metric in a range
    changed_after=1234             changed after this change cursor (see /changes)
    sort=-param.lr                 by a key, ``-`` for descending; keys: number, value (best
                                   first), duration, started, finished, param.NAME, metric.NAME

A value that does not parse raises ``ConfigError`` naming the query parameter, the value and the
rule (the app answers 422).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from fastapi import Query

from hyperlab.errors import ConfigError
from hyperlab.space import Choice, NestedOption, SearchSpace
from hyperlab.store import (
    Choices,
    ExperimentRecord,
    Key,
    NestedName,
    Range,
    TrialFilter,
    TrialOrder,
)
from hyperlab.store.codec import dumps, loads
from hyperlab.trial import Mode, TrialStatus

__all__ = [
    "FilterParams",
    "check_name",
    "parse_filter",
    "parse_key",
    "parse_numbers",
    "parse_order",
    "parse_range",
    "parse_statuses",
    "space_of",
]

_SIMPLE_KEYS = ("number", "value", "duration", "started", "finished")
_SORT_HELP = (
    "number, value (best first), duration, started, finished, param.NAME or metric.NAME; "
    "prefix - for descending"
)


@dataclass
class FilterParams:
    """The filter query parameters shared by the trial list and the plots (a FastAPI
    dependency: each field is one query parameter in the OpenAPI document)."""

    status: Annotated[
        str | None,
        Query(
            description="Only these statuses, comma-separated, any case: "
            + ", ".join(TrialStatus.__members__)
            + ".",
            examples=["SUCCEEDED,EARLY_STOPPED"],
        ),
    ] = None
    source: Annotated[
        Literal["tuner", "custom"] | None,
        Query(description="custom: only trials added by hand; tuner: only the others."),
    ] = None
    value: Annotated[
        str | None,
        Query(
            description="The objective value in MIN..MAX (either side may be left out).",
            examples=["..0.25"],
        ),
    ] = None
    duration: Annotated[
        str | None,
        Query(description="Seconds from start to end in MIN..MAX.", examples=["10..60"]),
    ] = None
    param: Annotated[
        list[str] | None,
        Query(
            description="Repeatable. NAME:MIN..MAX for a number parameter, NAME:A,B,... for "
            'the options of a choice (or NAME:["A","B"] in JSON).',
            examples=["lr:1e-4..1e-2"],
        ),
    ] = None
    metric: Annotated[
        list[str] | None,
        Query(
            description="Repeatable. NAME:MIN..MAX for a final metric.",
            examples=["accuracy:0.9.."],
        ),
    ] = None
    changed_after: Annotated[
        int | None,
        Query(
            ge=0,
            le=2**62,
            description="Only trials whose status changed after this change cursor "
            "(X-Change-Cursor of an earlier answer, or cursor of /changes).",
        ),
    ] = None


def parse_statuses(text: str, field: str = "status") -> frozenset[TrialStatus]:
    """Trial statuses from comma-separated names, any case."""
    wanted = set()
    for part in text.split(","):
        name = part.strip().upper()
        if name not in TrialStatus.__members__:
            raise ConfigError(
                f"{field}: unknown trial status {part.strip()!r}; expected one or more of "
                f"{', '.join(TrialStatus.__members__)} (comma-separated)"
            )
        wanted.add(TrialStatus[name])
    return frozenset(wanted)


def _number(text: str, field: str, whole: str) -> float:
    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise ConfigError(f"{field}: {text.strip()!r} in {whole!r} is not a finite number")
    return number


def parse_range(text: str, field: str, given: str | None = None) -> Range:
    """``MIN..MAX``, ``MIN..``, ``..MAX`` or one number (``MIN..MIN``); ``given`` is the whole
    query value, for messages."""
    shown = text if given is None else given
    if ".." not in text:
        value = _number(text, field, shown)
        return Range(value, value)
    low_text, _, high_text = text.partition("..")
    if ".." in high_text:
        raise ConfigError(f"{field}: expected MIN..MAX, got {shown!r}")
    low = _number(low_text, field, shown) if low_text.strip() else None
    high = _number(high_text, field, shown) if high_text.strip() else None
    if low is not None and high is not None and low > high:
        raise ConfigError(f"{field}: MIN <= MAX must hold, got {shown!r}")
    return Range(low, high)


def _split_named(text: str, field: str) -> tuple[str, str]:
    name, colon, rest = text.partition(":")
    if not colon or not name.strip() or not rest.strip():
        raise ConfigError(f"{field}: expected NAME:MIN..MAX or NAME:A,B,..., got {text!r}")
    return check_name(name.strip(), field), rest.strip()


def check_name(name: str, field: str) -> str:
    """A parameter or metric name that both databases can read from JSON."""
    if '"' in name or "\x00" in name:
        raise ConfigError(
            f"{field}: a name with a double quote or NUL is not supported, got {name!r}"
        )
    return name


def space_of(record: ExperimentRecord) -> SearchSpace:
    """The experiment's search space, parsed once per version of it for the whole process (a
    space at its size limits takes most of a second to parse; requests read it all the time).

    Raises:
        ConfigError: naming the experiment, when this version of hyperlab cannot read it.
    """
    parsed = _parsed(dumps(record.space))
    if isinstance(parsed, str):
        raise ConfigError(f"experiment {record.id}: its search space cannot be read: {parsed}")
    return parsed


@functools.lru_cache(maxsize=4)
def _parsed(text: str) -> SearchSpace | str:
    """The space of its stored JSON ``text`` (spaces are immutable: one serves every thread),
    or why it cannot be read. Four are kept: a space at the size limits takes some 20 MB."""
    try:
        return SearchSpace.from_nni(loads(text))
    except ConfigError as exc:
        return str(exc)


def _space(record: ExperimentRecord) -> SearchSpace | None:
    try:
        return space_of(record)
    except ConfigError:  # a stored space this version cannot read: names go unchecked
        return None


def _param(record: ExperimentRecord, name: str, field: str, given: str) -> Key:
    space = _space(record)
    if space is None:
        return Key("param", name)
    if name not in space:
        names = ", ".join(space.names) or "none"
        raise ConfigError(
            f"{field}: {name!r} in {given!r} is not a parameter of experiment {record.id}'s "
            f"search space (its parameters: {names})"
        )
    parameter = space[name]
    if isinstance(parameter, Choice):
        options = tuple(
            NestedName(o.name) if isinstance(o, NestedOption) else o for o in parameter.options
        )
        return Key("param", name, Choices(options))
    return Key("param", name)


def _label(option: Any) -> str:
    """How an option is written in a query string: strings as they are, the rest as JSON, a
    nested option by its name."""
    if isinstance(option, NestedName):
        return option.name
    return option if isinstance(option, str) else dumps(option)


def _options(key: Key, text: str, field: str, given: str) -> frozenset[int]:
    assert key.choices is not None
    options = key.choices.options
    if text.startswith("["):
        try:
            wanted = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{field}: {text!r} in {given!r} is not a JSON list: {exc}") from None
        tokens = [w if isinstance(w, str) else dumps(w) for w in wanted]
    else:
        tokens = [token.strip() for token in text.split(",")]
    labels = [_label(option) for option in options]
    indexes = set()
    for token in tokens:
        matches = [i for i, label in enumerate(labels) if label == token]
        if not matches:
            shown = ", ".join(labels)
            raise ConfigError(
                f"{field}: {token!r} in {given!r} is not an option of {key.name!r} "
                f"(its options: {shown})"
            )
        indexes.add(matches[0])
    return frozenset(indexes)


def parse_filter(record: ExperimentRecord, params: FilterParams) -> TrialFilter:
    """The store's filter for the query parameters of ``params``.

    Raises:
        ConfigError: naming the query parameter and the value that does not parse.
    """
    ranges: list[tuple[Key, Range]] = []
    one_of: list[tuple[Key, frozenset[int]]] = []
    if params.value is not None:
        ranges.append((Key("value"), parse_range(params.value, "value")))
    if params.duration is not None:
        ranges.append((Key("duration"), parse_range(params.duration, "duration")))
    for given in params.param or ():
        name, rest = _split_named(given, "param")
        key = _param(record, name, "param", given)
        if key.choices is not None and ".." not in rest:
            one_of.append((key, _options(key, rest, "param", given)))
        else:
            numeric = Key("param", name)  # a range over a choice reads its numbers
            ranges.append((numeric, parse_range(rest, "param", given)))
    for given in params.metric or ():
        name, rest = _split_named(given, "metric")
        ranges.append((Key("metric", name), parse_range(rest, "metric", given)))
    return TrialFilter(
        statuses=None if params.status is None else parse_statuses(params.status),
        source=params.source,
        ranges=tuple(ranges),
        one_of=tuple(one_of),
        changed_after=params.changed_after,
    )


def parse_key(
    record: ExperimentRecord, text: str, field: str, *, allow: Sequence[str], sql: bool = True
) -> Key:
    """A key written as ``number``, ``value``..., ``param.NAME`` or ``metric.NAME`` (the name
    exactly as it follows the dot).

    ``sql``: the database reads the key (to sort or filter by it), whose JSON functions cannot
    address every metric name (``check_name``); the plots read names themselves and take any.
    """
    kind, dot, name = text.partition(".")
    kind = kind.strip()
    if not dot and kind in allow and kind in _SIMPLE_KEYS:
        return Key(kind)  # type: ignore[arg-type]
    if dot and name and kind == "param" and "param" in allow:
        return _param(record, name, field, text)
    if dot and name and kind == "metric" and "metric" in allow:
        return Key("metric", check_name(name, field) if sql else name)
    expected = ", ".join(k if k in _SIMPLE_KEYS else f"{k}.NAME" for k in allow)
    raise ConfigError(f"{field}: unknown key {text!r}; expected one of {expected}")


def parse_order(record: ExperimentRecord, text: str) -> TrialOrder:
    """A sort written as ``KEY`` or ``-KEY``: ``value`` is best first for the experiment's
    mode, ``-value`` worst first; missing values go last either way. ``metric`` alone (the
    earlier name of ``value``) and ``-number`` are accepted."""
    descending = text.startswith("-")
    name = text[1:] if descending else text
    if name == "metric":
        name = "value"
    try:
        key = parse_key(record, name, "sort", allow=(*_SIMPLE_KEYS, "param", "metric"))
    except ConfigError:
        raise ConfigError(f"sort: unknown key {text!r}; expected {_SORT_HELP}") from None
    if key.kind == "value" and record.options.first_mode is Mode.MAX:
        descending = not descending
    return TrialOrder(key, descending)


def parse_numbers(text: str, field: str, *, at_most: int) -> list[int]:
    """Trial numbers from ``"1,2,3"``: each a whole number >= 0, at most ``at_most`` of them."""
    numbers = []
    for part in text.split(","):
        token = part.strip()
        digits = token.isascii() and token.isdigit() and len(token) <= 10
        if not digits or int(token) >= 2**31:
            raise ConfigError(
                f"{field}: {token!r} is not a trial number (a whole number from 0 to "
                f"{2**31 - 1}); expected comma-separated numbers, got {text!r}"
            )
        numbers.append(int(token))
    unique = list(dict.fromkeys(numbers))
    if len(unique) > at_most:
        raise ConfigError(f"{field}: at most {at_most} trials, got {len(unique)}")
    return unique
