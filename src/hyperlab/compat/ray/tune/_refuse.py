"""Refusing what has no hyperlab equivalent: ``NotImplementedError`` naming the call, the
argument and what to use instead."""

from __future__ import annotations

import types
from typing import Any, NoReturn

__all__ = ["UnsupportedModule", "check_mode", "refuse"]


def refuse(owner: str, name: str, value: Any, default: Any, instead: str) -> None:
    """Raise ``NotImplementedError`` unless ``value`` is Ray's ``default``.

    Args:
        owner: The call, e.g. ``"RunConfig"``.
        name: The argument.
        value: What was given.
        default: Ray's default, the only value hyperlab honours.
        instead: What to do instead.
    """
    if value is default:
        return
    try:
        same = bool(value == default)
    except Exception:  # arrays and the like: not the default
        same = False
    if not same:
        raise NotImplementedError(
            f"{owner}({name}={value!r}) has no hyperlab equivalent; {instead}"
        )


def check_mode(owner: str, mode: str | None) -> str | None:
    """``mode`` if it is None, ``"min"`` or ``"max"``; ``ValueError`` naming ``owner`` else."""
    if mode not in (None, "min", "max"):
        raise ValueError(f"{owner}: mode must be 'min' or 'max', got {mode!r}")
    return mode


class UnsupportedModule(types.ModuleType):
    """A module of Ray's (``ray.tune.search.ax``...) with no hyperlab equivalent: any name
    taken from it raises ``NotImplementedError`` saying what to use instead."""

    def __init__(self, name: str, ray_name: str, instead: str) -> None:
        super().__init__(name)
        self.__ray_name = ray_name
        self.__instead = instead

    def __getattr__(self, attribute: str) -> NoReturn:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        raise NotImplementedError(
            f"{self.__ray_name}.{attribute} has no hyperlab equivalent; {self.__instead}"
        )
