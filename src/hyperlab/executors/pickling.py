"""Pickle objectives for other processes so that their tracebacks still name the user's files.

cloudpickle pickles a function defined in ``__main__`` (or a notebook, or registered to be
pickled by value) by value, and writes ``"<dynamic-code>"`` for the file of its code, so a
trial that raises in a worker shows ``File "<dynamic-code>", line 7, in objective``. ``dumps``
is cloudpickle keeping each code object's file name: the worker's traceback names the user's
file and line, and shows the line's source where the file is readable there.
"""

from __future__ import annotations

import io
import types
from collections import ChainMap
from collections.abc import Callable
from typing import Any

import cloudpickle

__all__ = ["dumps", "rebuild_code"]


def rebuild_code(
    build: Callable[..., types.CodeType], args: tuple[Any, ...], filename: str
) -> types.CodeType:
    """The code object ``build(*args)`` with ``filename`` as its file name again (what
    ``dumps``'s pickles call when they are loaded)."""
    return build(*args).replace(co_filename=filename)


def _reduce_code(code: types.CodeType) -> tuple[Any, ...]:
    build, args = cloudpickle.Pickler.dispatch_table[types.CodeType](code)
    return rebuild_code, (build, args, code.co_filename)


class _Pickler(cloudpickle.Pickler):
    """cloudpickle's pickler, with code objects keeping their file names."""

    dispatch_table = ChainMap({types.CodeType: _reduce_code}, cloudpickle.Pickler.dispatch_table)


def dumps(obj: Any) -> bytes:
    """``obj`` as cloudpickle bytes (``cloudpickle.loads`` reads them) whose code objects keep
    the files they were compiled from.

    Raises:
        Exception: Whatever cloudpickle raises for an object it cannot pickle.
    """
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=cloudpickle.DEFAULT_PROTOCOL).dump(obj)
    return buffer.getvalue()
