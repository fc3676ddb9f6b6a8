"""Registries, through which a name in the options picks an implementation (``Registry``),
and the checks of the arguments given to the class it picks (``check_arguments``)."""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from typing import Any, Generic, TypeVar, cast

from pydantic import ConfigDict, ValidationError, create_model

from hyperlab.config._validate import describe_validation_error
from hyperlab.errors import ConfigError

T = TypeVar("T")


class Registry(Generic[T]):
    """Names (and aliases, such as NNI's spellings) of the implementations of one extension
    point: tuners, executors, assessors.

    An entry is a class, or its ``"package.module:Class"`` path, imported when first asked for,
    so that ``import hyperlab`` stays cheap. A ``"package.module:Class"`` path that is not
    registered is imported as well, so a config file can name a user's own class.

    Args:
        field: The option that names an implementation (``"tuner"``), for error messages.
        base: The class every implementation must derive from.
        entries: Name -> class or ``"module:Class"`` path.
        aliases: Other name -> registered name.
    """

    def __init__(
        self,
        field: str,
        base: type,
        entries: dict[str, str | type[T]],
        aliases: dict[str, str] | None = None,
    ) -> None:
        self.field = field
        self.base = base
        self._entries = dict(entries)
        self._aliases = dict(aliases or {})

    def register(self, name: str, entry: str | type[T], *, aliases: tuple[str, ...] = ()) -> None:
        """Make ``entry`` (a class or its ``"module:Class"`` path) available as ``name``."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"register: expected a non-empty name, got {name!r}")
        self._entries[name] = entry
        for alias in aliases:
            self._aliases[alias] = name

    def names(self) -> list[str]:
        """Every accepted name: registered names first, then aliases, each sorted."""
        return sorted(self._entries) + sorted(self._aliases)

    def registered(self) -> list[str]:
        """The registered names alone (no aliases), sorted."""
        return sorted(self._entries)

    def name_of(self, cls: type) -> str | None:
        """The name ``cls`` is registered under, or None; imports nothing new."""
        for name, entry in self._entries.items():
            if isinstance(entry, str):
                module = entry.partition(":")[0]
                if module not in sys.modules:  # not imported: cannot be where cls comes from
                    continue
                entry = self.get(name)
            if entry is cls:
                return name
        return None

    def get(self, name: str) -> type[T]:
        """The class registered as ``name`` (or found at the path ``"module:Class"``).

        Raises:
            ConfigError: for an unknown name, listing the known ones, or a path that does not
                import to a subclass of the base class.
        """
        key = self._aliases.get(name, name) if isinstance(name, str) else name
        entry = self._entries.get(key) if isinstance(key, str) else None
        if entry is None:
            if not (isinstance(name, str) and re.fullmatch(r"[\w.]+:[\w.]+", name)):
                raise ConfigError(
                    f"{self.field}: unknown {self.field} {name!r}; known {self.field}s: "
                    f"{', '.join(self.names())} (or a 'package.module:Class' path)"
                )
            entry = name
        if isinstance(entry, str):
            loaded = import_path(self.field, entry)
            if not (isinstance(loaded, type) and issubclass(loaded, self.base)):
                raise ConfigError(
                    f"{self.field}: {entry!r} is {loaded!r}, not a subclass of "
                    f"{self.base.__module__}.{self.base.__qualname__}"
                )
            found = cast("type[T]", loaded)
            if key in self._entries:
                self._entries[key] = found
            return found
        return entry


def import_path(field: str, path: str) -> Any:
    """What ``"package.module:attribute"`` names; ConfigError naming ``field`` if it cannot
    be imported."""
    module_name, _, attr = path.partition(":")
    try:
        target: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            target = getattr(target, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"{field}: cannot import {path!r}: {exc}") from None
    return target


def class_path(cls: type) -> str:
    """``"package.module:Class"``: how a registry finds ``cls`` again in another process."""
    return f"{cls.__module__}:{cls.__qualname__}"


def check_arguments(
    cls: type, args: dict[str, Any] | None, field: str, *, given: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``args`` checked against the keyword-only arguments ``cls.__init__`` declares (their
    names, and their types with pydantic: ``"10"`` for an ``int`` is taken, ``"x"`` for a
    ``float`` is not), converted to those types.

    Args:
        cls: The class to be built with ``args``.
        args: The user's arguments (``tuner_args``, ``assessor_args``).
        field: How to name them in messages (``"tuner_args of 'tpe'"``).
        given: Arguments the framework passes itself (``mode``, ``seed``...): not the user's.

    Raises:
        ConfigError: for an argument the class does not take, or a value of the wrong type,
            naming the argument and the value.
    """
    parameters = _keyword_arguments(cls, given)
    unknown = sorted(set(args or {}) - set(parameters))
    if unknown:
        raise ConfigError(
            f"{field} does not accept {', '.join(map(repr, unknown))}; "
            f"its arguments are: {', '.join(parameters) or 'none'}"
        )
    model = create_model(
        f"{cls.__name__}Arguments",
        __config__=ConfigDict(extra="forbid", arbitrary_types_allowed=True),
        **parameters,  # type: ignore[call-overload]
    )
    try:
        checked = model(**(args or {}))
    except ValidationError as exc:
        raise ConfigError(f"{field}: {describe_validation_error(exc)}") from None
    return {name: getattr(checked, name) for name in args or {}}


def _keyword_arguments(cls: type, given: tuple[str, ...]) -> dict[str, tuple[Any, Any]]:
    """A class's own keyword-only arguments: name -> (annotation, default)."""
    try:
        signature = inspect.signature(cls, eval_str=True)
    except (NameError, TypeError):  # annotations that cannot be resolved: check names only
        signature = inspect.signature(cls)
    return {
        p.name: (
            Any if p.annotation is p.empty or isinstance(p.annotation, str) else p.annotation,
            p.default if p.default is not p.empty else ...,
        )
        for p in signature.parameters.values()
        if p.kind is p.KEYWORD_ONLY and p.name not in given
    }
