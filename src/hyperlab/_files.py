"""Reading the YAML and JSON files users give hyperlab, strictly.

Experiment config files (hyperlab's and NNI's), search-space files (YAML and NNI's JSON), NNI
experiment config files and the JSON files of ``hyperlab add-trial`` / ``import`` are all read
here, so that all of them refuse the same things, each with a message that starts with the
file and names the line:

- a file of more than ``MAX_FILE_BYTES`` (4 MiB), before any of it is read;
- a key given twice in one mapping or JSON object (YAML and Python's ``json`` would silently
  keep the last value): the message names the key and both lines;
- nesting deeper than ``MAX_DEPTH`` levels;
- YAML aliases (``*name``) that stand for more than ``MAX_ALIAS_VALUES`` values in all, or an
  alias inside its own anchor: a "billion laughs" file of a few hundred bytes would otherwise
  expand to a billion values. Anchors, aliases and merge keys (``<<: *base``) that repeat a
  reasonable part of a file work as usual.

Errors are of the caller's kind (``ConfigError``, or its ``SearchSpaceError``).
"""

from __future__ import annotations

import json
import os
from json.decoder import WHITESPACE, scanstring  # type: ignore[attr-defined]
from json.scanner import py_make_scanner  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any, cast

import yaml
from yaml.composer import Composer
from yaml.events import AliasEvent, Event
from yaml.nodes import MappingNode, Node, SequenceNode

from hyperlab.errors import ConfigError

__all__ = [
    "MAX_ALIAS_VALUES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "parse_json",
    "parse_yaml",
    "read_json",
    "read_text",
    "read_yaml",
]

MAX_FILE_BYTES = 4 * 1024 * 1024
"""The largest file hyperlab reads (4 MiB); a larger one is refused before it is read."""

MAX_DEPTH = 100
"""The deepest nesting of mappings and lists a file may have (aliases expanded)."""

MAX_ALIAS_VALUES = 100_000
"""How many values, counted with everything nested in them, a YAML file's aliases may stand
for in all."""

_MERGE = "tag:yaml.org,2002:merge"


def read_text(
    path: str | os.PathLike[str], *, what: str, error: type[ConfigError] = ConfigError
) -> str:
    """The text of the file at ``path`` (UTF-8, a byte-order mark allowed).

    Args:
        path: The file.
        what: What the file is, for messages (``"config file"``).
        error: The kind of error to raise.

    Raises:
        error: It does not exist, cannot be read, holds more than ``MAX_FILE_BYTES`` (refused
            before it is read, or after that many bytes of a pipe), or is not UTF-8.
    """
    path = Path(path)
    try:
        with open(path, "rb") as file:
            size = os.fstat(file.fileno()).st_size
            data = b"" if size > MAX_FILE_BYTES else file.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None
    except OSError as exc:
        raise error(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    if size > MAX_FILE_BYTES or len(data) > MAX_FILE_BYTES:
        held = f"{size:,}" if size > MAX_FILE_BYTES else f"more than {MAX_FILE_BYTES:,}"
        raise error(
            f"{path}: the {what} has {held} bytes; hyperlab reads files of at most "
            f"{MAX_FILE_BYTES:,} bytes (4 MiB)"
        )
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(
            f"{path}: the {what} is not UTF-8 text (byte {exc.start}: {exc.reason})"
        ) from None


def read_yaml(
    path: str | os.PathLike[str], *, what: str, error: type[ConfigError] = ConfigError
) -> Any:
    """The document of a YAML (or JSON) file, read strictly (see the module's docstring)."""
    return parse_yaml(read_text(path, what=what, error=error), str(path), error=error)


def read_json(
    path: str | os.PathLike[str], *, what: str, error: type[ConfigError] = ConfigError
) -> Any:
    """The document of a JSON file, read strictly (see the module's docstring)."""
    return parse_json(read_text(path, what=what, error=error), str(path), error=error)


# ---- YAML -----------------------------------------------------------------------------------


class _Refused(Exception):
    """What the strict loader refuses, and where."""


class _StrictLoader(Composer, yaml.CSafeLoader):
    """``yaml.safe_load`` with limits: libyaml scans and parses (fast, and without recursion),
    PyYAML's own composer builds the nodes (libyaml's recurses without a limit and crashes on
    deep nesting), checking depth and aliases as it goes, and the constructor refuses
    duplicate keys."""

    def __init__(self, stream: str) -> None:
        yaml.CSafeLoader.__init__(self, stream)
        Composer.__init__(self)
        self._depth = 0  # of the node being composed
        self._complete: set[int] = set()  # ids of the nodes composed to their end
        self._measured: dict[int, tuple[int, int]] = {}  # id -> (values, levels), aliases expanded
        self._aliased = 0  # values the aliases so far stand for

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            anchor = cast(AliasEvent, self.peek_event()).anchor
            anchored = self.anchors.get(anchor)
            if anchored is not None:  # else the composer's own "undefined alias" error
                self._check_alias(anchor, anchored, self._line())
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _Refused(f"nested more than {MAX_DEPTH} levels deep at line {self._line()}")
        node = super().compose_node(parent, index)
        self._depth -= 1
        self._complete.add(id(node))
        return node

    def _line(self) -> int:
        """The line of the next event, from 1."""
        mark: Any = cast(Event, self.peek_event()).start_mark
        return int(mark.line) + 1

    def _check_alias(self, anchor: str | None, node: Node, line: int) -> None:
        if id(node) not in self._complete:
            raise _Refused(
                f"alias *{anchor} at line {line} is inside its own anchor &{anchor} (a value "
                "cannot hold itself)"
            )
        values, levels = self._measure(node)
        if self._depth + levels > MAX_DEPTH:
            raise _Refused(
                f"alias *{anchor} at line {line} makes it nested more than {MAX_DEPTH} levels deep"
            )
        self._aliased += values
        if self._aliased > MAX_ALIAS_VALUES:
            raise _Refused(
                f"aliases stand for more than {MAX_ALIAS_VALUES:,} values in all (nested values "
                f"counted), reached at alias *{anchor} at line {line}; write the values out, or "
                "repeat smaller parts"
            )

    def _measure(self, node: Node) -> tuple[int, int]:
        """The values ``node`` stands for, nested ones included, and its levels of nesting,
        its aliases expanded (each node measured once)."""
        known = self._measured.get(id(node))
        if known is not None:
            return known
        if isinstance(node, SequenceNode):
            children = [self._measure(child) for child in node.value]
        elif isinstance(node, MappingNode):
            children = [self._measure(part) for pair in node.value for part in pair]
        else:
            children = []
        measured = (
            1 + sum(values for values, _ in children),
            1 + max((levels for _, levels in children), default=0),
        )
        self._measured[id(node)] = measured
        return measured

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        first: dict[Any, Any] = {}  # key -> the mark of its first line
        for key_node, _ in node.value:
            if key_node.tag == _MERGE:  # keys merged in may be overridden: that is their use
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                seen = first.setdefault(key, key_node.start_mark)
            except TypeError:  # an unhashable key: the constructor names it
                continue
            again = key_node.start_mark
            if seen is not again:
                where = _places((seen.line, seen.column), (again.line, again.column))
                raise _Refused(
                    f"key {key!r} is given twice, {where}; a mapping holds each key once"
                )
        return super().construct_mapping(node, deep=deep)


def _places(first: tuple[int, int], again: tuple[int, int]) -> str:
    """Where a key given twice is, from the 0-based (line, column) of each time."""
    if first[0] == again[0]:
        return f"on line {first[0] + 1} (columns {first[1] + 1} and {again[1] + 1})"
    return f"at line {first[0] + 1} and line {again[0] + 1}"


def parse_yaml(text: str, where: str, *, error: type[ConfigError] = ConfigError) -> Any:
    """The document of YAML (or JSON) ``text``, read strictly (see the module's docstring).

    Args:
        text: The YAML.
        where: Where it comes from (the file), for messages.
        error: The kind of error to raise.

    Raises:
        error: Invalid YAML, a duplicate key, too deep a nesting or too many aliased values;
            the message starts with ``where`` and names the line.
    """
    loader = _StrictLoader(text)
    try:
        return loader.get_single_data()
    except _Refused as exc:
        raise error(f"{where}: {exc}") from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        at = "" if mark is None else f" at line {mark.line + 1}, column {mark.column + 1}"
        raise error(f"{where}: invalid YAML{at}: {exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise error(f"{where}: invalid YAML: {exc}") from None
    finally:
        loader.dispose()


# ---- JSON -----------------------------------------------------------------------------------


class _Duplicate(Exception):
    """A JSON object holds a key twice (found without its lines)."""


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict; _Duplicate if a key is given twice."""
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Duplicate
    return found


def parse_json(text: str, where: str, *, error: type[ConfigError] = ConfigError) -> Any:
    """The document of JSON ``text``, read strictly (see the module's docstring).

    Args:
        text: The JSON.
        where: Where it comes from (the file, the argument), for messages.
        error: The kind of error to raise.

    Raises:
        error: Invalid JSON (naming the line and column), a key given twice in one object
            (naming the key and both lines), or too deep a nesting.
    """
    too_deep = f"{where}: nested more than {MAX_DEPTH} levels deep"
    try:
        document = json.loads(text, object_pairs_hook=_unique)
    except _Duplicate:
        raise error(f"{where}: {_duplicate(text) or too_deep}") from None
    except json.JSONDecodeError as exc:
        raise error(
            f"{where}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise error(too_deep) from None
    if _depth(document) > MAX_DEPTH:
        raise error(too_deep)
    return document


def _depth(document: Any) -> int:
    """The levels of nesting of a JSON document (a scalar: 1)."""
    deepest = 0
    stack = [(document, 1)]
    while stack:
        value, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(value, dict):
            stack.extend((child, level + 1) for child in value.values())
        elif isinstance(value, list):
            stack.extend((child, level + 1) for child in value)
    return deepest


def _position(text: str, offset: int) -> tuple[int, int]:
    """The 0-based (line, column) of ``offset`` in ``text``."""
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


class _Found(Exception):
    """The first key given twice in a JSON object, and its two lines."""


def _duplicate(text: str) -> str | None:
    """What the first duplicate key of JSON ``text`` is and where: ``text`` is read again with
    Python's own scanner, whose objects are parsed here key by key, at known offsets. None if
    that scanner runs out of recursion first (so the text is nested too deeply)."""

    def parse_object(s_and_end: tuple[str, int], strict: bool, scan_once: Any, *_: Any) -> Any:
        s, end = s_and_end
        keys: dict[str, int] = {}
        end = WHITESPACE.match(s, end).end()
        if s[end] == "}":
            return {}, end + 1
        while True:  # the object is valid JSON: the first parse read it whole
            key, after = scanstring(s, end + 1, strict)
            if key in keys:
                where = _places(_position(s, keys[key]), _position(s, end))
                raise _Found(
                    f"key {key!r} is given twice in one object, {where}; an object holds each "
                    "key once"
                )
            keys[key] = end
            end = WHITESPACE.match(s, after).end() + 1  # past the ':'
            _, end = scan_once(s, WHITESPACE.match(s, end).end())
            end = WHITESPACE.match(s, end).end()
            if s[end] == "}":
                return {}, end + 1
            end = WHITESPACE.match(s, end + 1).end()  # past the ','

    decoder = json.JSONDecoder()
    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.scan_once = py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        decoder.decode(text)
    except _Found as found:
        return str(found)
    except RecursionError:
        return None
    raise AssertionError("the first parse found a duplicate key; the second must too")
