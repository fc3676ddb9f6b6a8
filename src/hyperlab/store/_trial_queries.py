"""The queries behind the REST API's trial tables: filters, sort keys and pages over one
experiment's trials, evaluated by the database (SQLite or PostgreSQL), JSON fields included.

A ``TrialFilter`` and a ``TrialOrder`` describe what to read; ``where_clauses`` and
``order_by`` turn them into SQL for the connection's dialect. Parameters and metrics live in
the JSON columns ``params`` and ``metrics``; they are read with the dialect's JSON functions
(``json_extract`` on SQLite, ``->`` / ``->>`` on PostgreSQL). A value of another type (a string
where a number was expected, a non-finite float the store keeps as ``"NaN"``) never fails a
query: it is outside every range (PostgreSQL checks the JSON type; on SQLite a string compares
greater than any number, even ``+inf``), and readers of the keys treat it as missing. Missing
values sort last in either direction; ties go by trial number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

from sqlalchemy import (
    Double,
    Integer,
    Select,
    Text,
    case,
    cast,
    func,
    literal,
    or_,
    select,
    type_coerce,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql.elements import ColumnElement

from hyperlab.errors import ConfigError
from hyperlab.store._rows import TRIAL_COLUMNS, trial_from_row
from hyperlab.store._schema import trial_events, trials
from hyperlab.store.codec import _escape as escape
from hyperlab.store.codec import dumps, loads
from hyperlab.trial import CUSTOM_TRIAL, Trial, TrialStatus

__all__ = [
    "STATUS_ORDER",
    "Choices",
    "Key",
    "KeyRows",
    "NestedName",
    "Range",
    "TrialFilter",
    "TrialOrder",
    "TrialPage",
    "addressable",
    "constraint_rows",
    "count_trials",
    "failed_errors",
    "fetch_tuples",
    "key_expression",
    "key_rows",
    "page_numbers",
    "status_counts",
    "trials_by_number",
    "where_clauses",
]

STATUS_ORDER = tuple(TrialStatus)
"""A ``status`` key reads a trial's status as its index in this tuple."""


@dataclass(frozen=True)
class NestedName:
    """A nested choice option (``{"_name": name, ...}``), matched by its ``_name``."""

    name: str


@dataclass(frozen=True, eq=False)
class Choices:
    """How to read a choice parameter: its options in order (nested ones as ``NestedName``).

    A trial's value reads as the index of its option (so a choice sorts in the order the space
    lists its options, on both databases), or as missing when it is none of them. Equal and
    hashable by the options' ``repr`` (options may be lists or dicts).
    """

    options: tuple[Any, ...]
    _repr: str = field(init=False, repr=False)  # written once: a choice may have many options

    def __post_init__(self) -> None:
        object.__setattr__(self, "_repr", repr(self.options))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Choices) and self._repr == other._repr

    def __hash__(self) -> int:
        return hash(self._repr)


@dataclass(frozen=True)
class Key:
    """A sortable, filterable quantity of a trial.

    Attributes:
        kind: ``number``, ``value`` (the objective), ``duration`` (finished - started, seconds),
            ``started`` / ``finished`` (epoch seconds), ``status`` (its index in
            ``STATUS_ORDER``), ``param`` or ``metric`` (a final metric).
        name: The parameter's or metric's name (top level).
        choices: For a choice parameter: its options, to read it as an option index.
    """

    kind: Literal["number", "value", "duration", "started", "finished", "status", "param", "metric"]
    name: str | None = None
    choices: Choices | None = None


@dataclass(frozen=True)
class Range:
    """Numbers from ``low`` to ``high``, both included; None leaves that side open."""

    low: float | None = None
    high: float | None = None


@dataclass(frozen=True)
class TrialFilter:
    """Which trials to read; every condition given must hold.

    Attributes:
        statuses: Only trials in these statuses.
        source: ``"custom"``: only trials added by hand; ``"tuner"``: only the others.
        ranges: (key, range) pairs: the key's value must be a number in the range.
        one_of: (choice key, option indexes) pairs: the parameter must be one of these options.
        changed_after: Only trials whose status changed after this ``trial_events`` id.
    """

    statuses: frozenset[TrialStatus] | None = None
    source: Literal["tuner", "custom"] | None = None
    ranges: tuple[tuple[Key, Range], ...] = ()
    one_of: tuple[tuple[Key, frozenset[int]], ...] = ()
    changed_after: int | None = None

    @property
    def reads_json(self) -> bool:
        """Whether a condition reads the JSON columns (a pass over every trial's JSON)."""
        keys = [key for key, _ in self.ranges] + [key for key, _ in self.one_of]
        return any(key.kind in ("param", "metric") for key in keys)


@dataclass(frozen=True)
class TrialOrder:
    """The order of a page: by ``key`` (missing values last), then by number.

    Attributes:
        key: What to sort by.
        descending: Largest first.
    """

    key: Key = field(default_factory=lambda: Key("number"))
    descending: bool = False


# ---- expressions -------------------------------------------------------------------------


_ESCAPED_IN_JSON = re.compile(r'["\\\x00-\x1f]')


def addressable(dialect: str, name: str) -> bool:
    """Whether the dialect's JSON functions can read the field ``name``: PostgreSQL's read any
    name without a NUL (which its text cannot hold); SQLite's compare a path's name with the
    key as the JSON text writes it, so they never find a name that JSON escapes (a double
    quote, a backslash, a control character). Readers that must take every name read the
    others from the decoded JSON."""
    if dialect == "postgresql":
        return "\x00" not in name
    return _ESCAPED_IN_JSON.search(name) is None


def _sqlite_path(name: str) -> str:
    if not addressable("sqlite", name):
        raise ConfigError(
            f"{name!r}: a name with a double quote, a backslash or a control character cannot "
            "be read from SQLite's JSON; rename the parameter or metric"
        )
    return f'$."{name}"'


def json_number(dialect: str, column: Any, name: str) -> ColumnElement[Any]:
    """The JSON field ``name`` of ``column`` as a number, NULL when it is missing.

    On PostgreSQL it is NULL unless the field holds a number. On SQLite it is the field as
    stored, read once (no type check, which would read it twice): a string there compares
    greater than every number, so a range with finite or infinite bounds (``in_range``) leaves
    it out, and readers of the value treat a non-number as missing.
    """
    if dialect == "postgresql":
        kind = func.json_typeof(column.op("->", return_type=Text)(name))
        text = column.op("->>", return_type=Text)(name)
        return case((kind == "number", cast(text, Double)))
    return type_coerce(func.json_extract(column, _sqlite_path(name)), Double)


def in_range(expression: ColumnElement[Any], bounds: Range) -> ColumnElement[bool]:
    """``low <= expression <= high`` with open sides as infinite bounds: true only for numbers
    (``BETWEEN`` reads the expression once; on SQLite a string is greater than ``+inf``)."""
    low = -math.inf if bounds.low is None else bounds.low
    high = math.inf if bounds.high is None else bounds.high
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"range bounds must be numbers, got {bounds}")
    return expression.between(literal(float(low), Double), literal(float(high), Double))


def _option_literal(dialect: str, option: Any) -> Any:
    """What the dialect's scalar JSON read gives for a trial whose value is ``option``."""
    if isinstance(option, NestedName):
        return option.name
    if isinstance(option, str):
        return escape(option)  # "NaN" is stored as "~NaN" (a float NaN as "NaN")
    if dialect == "postgresql":
        if isinstance(option, bool):
            return "true" if option else "false"
        return dumps(option)  # numbers, lists and dicts as the stored JSON text
    if isinstance(option, bool):
        return int(option)
    if isinstance(option, (int, float)):
        return option
    return dumps(option)


def choice_index(dialect: str, column: Any, name: str, choices: Choices) -> ColumnElement[Any]:
    """The index of the option the JSON field ``name`` holds; NULL when it is none of them."""
    nested = any(isinstance(option, NestedName) for option in choices.options)
    if dialect == "postgresql":
        field_json = column.op("->", return_type=Text)(name)
        operand = column.op("->>", return_type=Text)(name)
        if nested:
            operand = func.coalesce(field_json.op("->>", return_type=Text)("_name"), operand)
        is_null = func.json_typeof(field_json) == "null"
    else:
        path = _sqlite_path(name)
        operand = func.json_extract(column, path)
        if nested:
            operand = func.coalesce(func.json_extract(column, f"{path}._name"), operand)
        is_null = func.json_type(column, path) == "null"
    whens: list[tuple[Any, int]] = []
    seen: set[tuple[str, Any]] = set()
    null_index = None
    for i, option in enumerate(choices.options):
        if option is None:
            null_index = i if null_index is None else null_index
            continue
        stored = _option_literal(dialect, option)
        if (type(stored).__name__, stored) not in seen:  # the first of equal options wins
            seen.add((type(stored).__name__, stored))
            whens.append((stored, i))
    indexed: ColumnElement[Any] = (
        case(*whens, value=operand) if whens else type_coerce(literal(None), Integer)
    )
    if null_index is not None:
        indexed = case((is_null, null_index), else_=indexed)
    return type_coerce(indexed, Integer)


def key_expression(dialect: str, key: Key) -> ColumnElement[Any]:
    """The SQL expression of ``key`` over the ``trials`` table."""
    t = trials.c
    if key.kind == "number":
        return t.number
    if key.kind == "value":
        return t.value
    if key.kind == "duration":
        return t.finished_at - t.started_at
    if key.kind == "started":
        return t.started_at
    if key.kind == "finished":
        return t.finished_at
    if key.kind == "status":
        codes = {status.value: i for i, status in enumerate(STATUS_ORDER)}
        return type_coerce(case(codes, value=t.status), Integer)
    if key.name is None:
        raise ValueError(f"a {key.kind} key needs a name")
    column = t.params if key.kind == "param" else t.metrics
    if key.choices is not None:
        return choice_index(dialect, column, key.name, key.choices)
    return json_number(dialect, column, key.name)


def where_clauses(
    dialect: str, experiment_id: str, where: TrialFilter
) -> list[ColumnElement[bool]]:
    """The WHERE conditions selecting the experiment's trials that pass ``where``."""
    t = trials.c
    clauses: list[ColumnElement[bool]] = [t.experiment_id == experiment_id]
    if where.statuses is not None:
        clauses.append(t.status.in_(sorted(status.value for status in where.statuses)))
    if where.source == "custom":
        clauses.append(t.source == CUSTOM_TRIAL)
    elif where.source == "tuner":
        clauses.append(or_(t.source.is_(None), t.source != CUSTOM_TRIAL))
    for key, bounds in where.ranges:
        clauses.append(in_range(key_expression(dialect, key), bounds))
    for key, indexes in where.one_of:
        clauses.append(key_expression(dialect, key).in_(sorted(indexes)))
    if where.changed_after is not None:
        e = trial_events.c
        changed = select(e.number).where(
            e.experiment_id == experiment_id, e.id > where.changed_after
        )
        clauses.append(t.number.in_(changed))
    return clauses


def order_by(dialect: str, order: TrialOrder) -> list[ColumnElement[Any]]:
    """ORDER BY terms: the key (missing values last), then the trial number."""
    if order.key.kind == "number":
        return [trials.c.number.desc() if order.descending else trials.c.number.asc()]
    expression = key_expression(dialect, order.key)
    direction = expression.desc() if order.descending else expression.asc()
    return [direction.nulls_last(), trials.c.number.asc()]


# ---- queries -----------------------------------------------------------------------------


class TrialPage(NamedTuple):
    """One page of trial numbers, with the number of trials on every page and the change
    cursor read before them."""

    cursor: int
    total: int
    numbers: list[int]


class KeyRows(NamedTuple):
    """(number, *key values) rows of the trials passing a filter.

    Attributes:
        cursor: The change cursor read before the rows.
        changed: When the rows were read for the trials changed after an earlier cursor: the
            numbers of every trial changed since (the rows hold those that pass the filter).
        rows: (number, *key values) tuples, in no particular order; a key reads as None when
            missing (on SQLite, a JSON value of another type comes as it is stored).
    """

    cursor: int
    changed: list[int] | None
    rows: list[tuple[Any, ...]]


def count_trials(conn: Connection, experiment_id: str, where: TrialFilter) -> int:
    """How many of the experiment's trials pass ``where``."""
    clauses = where_clauses(conn.dialect.name, experiment_id, where)
    return int(conn.execute(select(func.count()).select_from(trials).where(*clauses)).scalar_one())


def status_counts(conn: Connection, experiment_id: str) -> dict[TrialStatus, int]:
    """How many of the experiment's trials are in each status (those with none left out)."""
    t = trials.c
    query = (
        select(t.status, func.count()).where(t.experiment_id == experiment_id).group_by(t.status)
    )
    return {TrialStatus(status): int(count) for status, count in conn.execute(query)}


def failed_errors(conn: Connection, experiment_id: str) -> list[tuple[int, str | None]]:
    """(number, error) of the experiment's FAILED trials, by number."""
    t = trials.c
    query = (
        select(t.number, t.error)
        .where(t.experiment_id == experiment_id, t.status == TrialStatus.FAILED.value)
        .order_by(t.number)
    )
    return [(number, error) for number, error in conn.execute(query)]


def constraint_rows(conn: Connection, experiment_id: str) -> Iterator[list[float]]:
    """The constraint values of each of the experiment's trials that has some, decoded one
    row at a time."""
    t = trials.c
    query = select(cast(t.constraint_values, Text)).where(
        t.experiment_id == experiment_id, t.constraint_values.is_not(None)
    )
    for (stored,) in conn.execution_options(yield_per=1000).execute(query):
        yield loads(stored)


def page_numbers(
    conn: Connection,
    experiment_id: str,
    where: TrialFilter,
    order: TrialOrder,
    *,
    limit: int | None,
    offset: int,
) -> list[int]:
    """The numbers of one page of the trials passing ``where``, in ``order``."""
    dialect = conn.dialect.name
    query = (
        select(trials.c.number)
        .where(*where_clauses(dialect, experiment_id, where))
        .order_by(*order_by(dialect, order))
        .offset(offset)
    )
    if limit is not None:
        query = query.limit(limit)
    return list(conn.execute(query).scalars())


def trials_by_number(conn: Connection, experiment_id: str, numbers: Sequence[int]) -> list[Trial]:
    """The trials with these numbers (without reports), in the order given."""
    if not numbers:
        return []
    query = select(*TRIAL_COLUMNS).where(
        trials.c.experiment_id == experiment_id, trials.c.number.in_(list(numbers))
    )
    found = {row.number: trial_from_row(row, ()) for row in conn.execute(query)}
    return [found[n] for n in numbers if n in found]


def key_rows(
    conn: Connection, experiment_id: str, where: TrialFilter, keys: Sequence[Key]
) -> list[tuple[Any, ...]]:
    """(number, *key values) of every trial passing ``where``, in no particular order."""
    dialect = conn.dialect.name
    query = select(trials.c.number, *(key_expression(dialect, key) for key in keys)).where(
        *where_clauses(dialect, experiment_id, where)
    )
    return fetch_tuples(conn, query)


def fetch_tuples(conn: Connection, query: Select[Any]) -> list[tuple[Any, ...]]:
    """The rows of ``query`` as the database driver returns them.

    For bulk reads of plain values: skipping SQLAlchemy's result rows makes 100,000 rows about
    twice as fast. The query's parameters must need no conversion (numbers and strings).
    """
    compiled: Any = query.compile(dialect=conn.dialect, compile_kwargs={"render_postcompile": True})
    params = compiled.params
    args = tuple(params[name] for name in compiled.positiontup) if compiled.positional else params
    sql = str(compiled)
    cursor = conn.connection.cursor()
    try:
        cursor.execute(sql, args)
        return [tuple(row) for row in cursor.fetchall()]
    except conn.dialect.loaded_dbapi.Error as exc:
        raise DBAPIError(sql, args, exc) from exc
    finally:
        cursor.close()
