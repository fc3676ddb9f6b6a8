"""The name ``ray`` for scripts ported to hyperlab.

hyperlab cannot own the ``ray`` module, so a ported script replaces ``import ray`` with
``from hyperlab.compat import ray``. Two helps for the scripts that still say ``import ray``:

- ``hint()``, installed when ``hyperlab.compat.ray`` is imported: a script that dies of a
  ``ModuleNotFoundError`` for ``ray`` (or ``ray.x``) where Ray is not installed gets a note
  under Python's message naming the replacement. It is a ``sys.excepthook``, not an import
  hook: imports, ``importlib.util.find_spec("ray")`` and ``except ImportError`` behave as
  without hyperlab, and an installed Ray is never shadowed.
- ``alias()``, used by ``python -m hyperlab.compat.ray script.py``: in that process ``ray``
  and ``ray.tune...`` *are* ``hyperlab.compat.ray`` and its modules, so the script runs with
  its imports unchanged (whether Ray is installed or not); a ``ray.x`` hyperlab lacks fails
  as a missing module, with a note saying so.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
import sys
import types
from collections.abc import Callable
from typing import Any

__all__ = ["REPLACEMENT", "alias", "hint"]

REPLACEMENT = (
    "hyperlab replaces it: write `from hyperlab.compat import ray` for `import ray` and "
    "`from hyperlab.compat.ray import tune` for `from ray import tune`, or run the script "
    "unchanged with `python -m hyperlab.compat.ray script.py`"
)
"""What the note on a missing ``ray`` says to do."""

_PACKAGE = "hyperlab.compat.ray"
_aliased = False


def note(error: BaseException) -> str | None:
    """The note for an uncaught ``error``: for a missing ``ray`` or ``ray.x``, what to do;
    None for any other error, or where Ray is installed and not replaced by ``alias()``."""
    if not isinstance(error, ModuleNotFoundError):
        return None
    name = error.name or ""
    if name != "ray" and not name.startswith("ray."):
        return None
    if _aliased:
        return (
            f"hyperlab.compat.ray has no {name[4:]!r} (docs/migrating.md, 'Ray Tune', lists "
            "what is mapped)"
        )
    if importlib.util.find_spec("ray") is not None:
        return None
    return f"Ray is not installed; {REPLACEMENT}"


class _Hook:
    """A ``sys.excepthook`` that adds ``note``'s text to the error, then calls ``previous``."""

    def __init__(self, previous: Callable[..., Any]) -> None:
        self.previous = previous

    def __call__(
        self, kind: type[BaseException], error: BaseException, tb: types.TracebackType | None
    ) -> None:
        text = note(error)
        if text is None or text in getattr(error, "__notes__", ()):
            self.previous(kind, error, tb)
        elif hasattr(error, "add_note"):  # Python 3.11+: printed under the error's message
            error.add_note(text)
            self.previous(kind, error, tb)
        else:
            self.previous(kind, error, tb)
            print(text, file=sys.stderr)


def hint() -> None:
    """Install the ``sys.excepthook`` that notes the replacement of a missing ``ray`` (once)."""
    if not isinstance(sys.excepthook, _Hook):
        sys.excepthook = _Hook(sys.excepthook)


def alias() -> None:
    """Make ``ray`` and ``ray.<module>`` the modules of ``hyperlab.compat.ray`` in this
    process: every public module of it is imported and entered in ``sys.modules`` under
    Ray's name."""
    global _aliased
    package = importlib.import_module(_PACKAGE)
    for info in pkgutil.walk_packages(package.__path__, f"{_PACKAGE}."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            importlib.import_module(info.name)
    for name, module in list(sys.modules.items()):
        if name == _PACKAGE or name.startswith(f"{_PACKAGE}."):
            tail = name[len(_PACKAGE) :]
            if not any(part.startswith("_") for part in tail.split(".")):
                sys.modules[f"ray{tail}"] = module
    _aliased = True
    hint()
