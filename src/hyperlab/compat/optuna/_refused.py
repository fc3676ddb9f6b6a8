"""The refusal of an Optuna name that hyperlab has no equivalent for: the modules that stand
for Optuna's (``storages``, ``terminator``...) call ``refuse`` from their ``__getattr__``, so
that importing them works and using one of their names says what to use instead."""

from __future__ import annotations

from typing import NoReturn

__all__ = ["refuse"]


def refuse(module: str, name: str, instead: str) -> NoReturn:
    """Raise ``NotImplementedError`` for Optuna's ``module.name``, naming ``instead``; an
    ``AttributeError`` for a dunder name (what Python's own look-ups expect of a module).

    Args:
        module: Optuna's name of the module, as ``optuna.storages``.
        name: The name asked for.
        instead: What to use in hyperlab.
    """
    if name.startswith("__"):
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    raise NotImplementedError(f"{module}.{name}: not in hyperlab; {instead}")
