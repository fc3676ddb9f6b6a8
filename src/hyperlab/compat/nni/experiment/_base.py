"""``ConfigBase``: the base of NNI's config objects as hyperlab has them (``config.py``).

They are dataclasses whose fields are set by keyword (snake_case, or NNI's camelCase as a YAML
file spells them: case and underscores do not matter, as in NNI) or by attribute, as NNI's
examples do (``experiment.config.tuner.name = 'TPE'``). A field a class does not have is
refused at once (``UnknownField``, an ``AttributeError`` as NNI's is); unlike NNI's, a value of
the wrong type is refused as it is assigned too, naming the field, the value and the type
expected. A dict given for a nested config becomes that config object.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

from pydantic import TypeAdapter, ValidationError

from hyperlab.errors import ConfigError

__all__ = ["ConfigBase", "UnknownField", "UnsupportedFeature", "camel_case"]


class UnknownField(ConfigError, AttributeError):
    """A config has no field of that name; the message suggests the nearest one."""


class UnsupportedFeature(ConfigError, NotImplementedError):
    """An NNI feature hyperlab has no equivalent for; the message names it and what to do."""


def camel_case(name: str) -> str:
    """``trial_code_directory`` -> ``trialCodeDirectory``, as NNI's YAML spells fields."""
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _key(name: str) -> str:
    return name.replace("_", "").lower()


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    """The type hints of a config class's fields (resolved once per class)."""
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


@functools.cache
def _adapter(hint: Any) -> TypeAdapter[Any]:
    return TypeAdapter(hint)


def _describe(hint: Any) -> str:
    """A type hint as a reader knows it: ``int | str | None``, ``'local'``, ``dict[str, Any]``."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return " or ".join(repr(arg) for arg in args)
    if origin in (Union, types.UnionType):
        return " | ".join(_describe(arg) for arg in args)
    if origin is not None:
        return f"{origin.__name__}[{', '.join(_describe(arg) for arg in args)}]"
    if hint is type(None):
        return "None"
    return getattr(hint, "__name__", str(hint))


def _configs_in(hint: Any) -> list[type[ConfigBase]]:
    options = typing.get_args(hint) or (hint,)
    return [o for o in options if isinstance(o, type) and issubclass(o, ConfigBase)]


def check_value(where: str, hint: Any, value: Any) -> Any:
    """``value`` if it has the type ``hint`` says, else ConfigError naming ``where``; a dict for a
    nested config is made into that config.

    Types are checked strictly: ``'2'`` is not an ``int`` and ``True`` is not a number.
    """
    configs = _configs_in(hint)
    if configs:
        if value is None and type(None) in typing.get_args(hint):
            return None
        if isinstance(value, tuple(configs)):
            return value
        if isinstance(value, dict) and len(configs) == 1:
            return configs[0](**value)
        raise ConfigError(
            f"{where}: expected {_describe(hint)} (or a dict of its fields), got {value!r}"
        )
    try:
        _adapter(hint).validate_python(value, strict=True)
    except ValidationError:
        raise ConfigError(f"{where}: expected {_describe(hint)}, got {value!r}") from None
    return value


@dataclasses.dataclass(init=False)
class ConfigBase:
    """A config whose fields are its dataclass fields, each checked against its type hint.

    Subclasses are ``@dataclasses.dataclass(init=False)`` classes with a default for every
    field. Relative paths in them are resolved against the working directory when the object
    was made, or the folder of the file ``ExperimentConfig.load`` read (``set_base_path``).
    """

    def __init__(self, **kwargs: Any) -> None:
        self._base_path = Path.cwd()
        names = {_key(f.name): f.name for f in dataclasses.fields(self)}
        given: dict[str, Any] = {}
        for key, value in kwargs.items():
            if _key(key) not in names:
                raise self._unknown(key)
            given[names[_key(key)]] = value
        for f in dataclasses.fields(self):
            if f.name in given:
                setattr(self, f.name, given[f.name])
            elif f.default_factory is not dataclasses.MISSING:
                object.__setattr__(self, f.name, f.default_factory())
            else:
                object.__setattr__(self, f.name, f.default)

    def __setattr__(self, name: str, value: Any) -> None:
        if not name.startswith("_"):
            hint = _hints(type(self)).get(name)
            if hint is None:
                raise self._unknown(name)
            value = check_value(f"{type(self).__name__}.{name}", hint, value)
        super().__setattr__(name, value)

    def _unknown(self, name: str) -> UnknownField:
        known = [f.name for f in dataclasses.fields(self)]
        near = difflib.get_close_matches(name, known, n=1)
        hint = f"; did you mean {near[0]!r}?" if near else f"; its fields: {', '.join(known)}"
        return UnknownField(f"{type(self).__name__} has no field {name!r}{hint}")

    def set_base_path(self, folder: Path) -> None:
        """Resolve this config's relative paths (and its nested configs') against ``folder``."""
        self._base_path = folder
        for child in self._children():
            child.set_base_path(folder)

    def resolve(self, path: str | Path) -> Path:
        """``path`` made absolute against the base folder (``~`` expanded)."""
        return (self._base_path / Path(path).expanduser()).resolve()

    def check(self, where: str) -> None:
        """Check every field again (a dict or list may have been changed in place), and the
        nested configs', naming each field from ``where`` (``config.tuner.class_args``).

        Raises:
            ConfigError: naming the first field whose value does not have its type.
        """
        hints = _hints(type(self))
        for f in dataclasses.fields(self):
            value = check_value(f"{where}.{f.name}", hints[f.name], getattr(self, f.name))
            if isinstance(value, ConfigBase):
                value.check(f"{where}.{f.name}")

    def _children(self) -> list[ConfigBase]:
        children = (getattr(self, f.name) for f in dataclasses.fields(self))
        return [child for child in children if isinstance(child, ConfigBase)]
