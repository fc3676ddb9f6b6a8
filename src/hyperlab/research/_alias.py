"""Short names for option values: :class:`Alias`, the default naming rule, :class:`ConfigItem`.

A research stores and shows each config by its *alias*: a short JSON value per option. Numbers,
strings, booleans and ``None`` are their own alias; classes and functions are named by
``__name__``; other objects by their ``repr`` (cut to 40 characters), or by their class name
when the ``repr`` carries a memory address, which would change from run to run. ``Alias(value,
"name")`` names any value explicitly, as BatchFlow's ``Alias`` does. A :class:`ConfigItem` is
a config with its aliases, as BatchFlow's ``ConfigAlias``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from hyperlab.errors import ConfigError

_MAX_REPR = 40


def auto_alias(value: Any) -> Any:
    """The default alias of ``value``: itself if a JSON scalar, else a short readable string."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    name = getattr(value, "__name__", None)
    if isinstance(name, str):
        return name
    text = repr(value)
    if " at 0x" in text:
        return type(value).__name__
    return text if len(text) <= _MAX_REPR else text[: _MAX_REPR - 3] + "..."


def alias_key(alias: Any) -> tuple[str, Any]:
    """A hashable lookup key for an alias that tells ``1``, ``1.0`` and ``True`` apart.

    ``1`` and ``1.0`` stay apart because JSON (and so a stored config) keeps them apart. An
    unhashable alias (a list or dict sampled by a choice) is keyed by its ``repr``.
    """
    if isinstance(alias, np.generic):
        alias = alias.item()
    key = (type(alias).__name__, alias)
    try:
        hash(key)
    except TypeError:
        return ("repr", repr(alias))
    return key


def same_value(a: Any, b: Any) -> bool:
    """True if ``a`` and ``b`` are the same value (identical, or equal without raising)."""
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # e.g. numpy arrays, whose == is element-wise
        return False


class Alias:
    """A value with a short name, shown and stored in its place (BatchFlow's ``Alias``).

    Args:
        value: Any object: a class, a function, a config dict, a model instance...
        alias: Its short name; by default the rule of :func:`auto_alias` (``__name__`` for
            classes and functions). An ``Alias`` given as ``value`` is unwrapped.

    Raises:
        ConfigError: ``alias`` is not a non-empty string.

    Example:
        >>> from hyperlab.research._domain import Domain
        >>> Domain(loss=[Alias(lambda y, p: abs(y - p), "l1"), Alias({"kind": "huber"}, "huber")])
        Domain(loss: [l1, huber])
    """

    __slots__ = ("alias", "value")

    def __init__(self, value: Any, alias: str | None = None) -> None:
        if alias is not None and (not isinstance(alias, str) or not alias):
            raise ConfigError(f"Alias needs alias to be a non-empty string, got {alias!r}")
        if isinstance(value, Alias):
            alias = value.alias if alias is None else alias
            value = value.value
        self.value: Any = value
        self.alias: Any = auto_alias(value) if alias is None else alias

    @classmethod
    def of(cls, named: Mapping[str, Any]) -> list[Alias]:
        """A grid of named values: ``Alias.of({"sgd": SGDClassifier, "nb": GaussianNB})``.

        Args:
            named: Alias -> value, in grid order.

        Returns:
            One :class:`Alias` per item, usable as an option's values in a ``Domain``.
        """
        return [cls(value, alias) for alias, value in named.items()]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Alias):
            return NotImplemented
        return alias_key(self.alias) == alias_key(other.alias) and same_value(
            self.value, other.value
        )

    __hash__ = None  # type: ignore[assignment]  # equal values may be unhashable

    def __repr__(self) -> str:
        return f"Alias({self.value!r}, {self.alias!r})"


@dataclass(frozen=True)
class ConfigItem:
    """One config of a domain, in one repetition.

    Attributes:
        index: The config's number in the iteration (0, 1, ...), the same for its repetitions.
        repetition: ``0 .. n_reps - 1``.
        config: Option name -> actual value.
        alias: Option name -> short JSON value (see :mod:`hyperlab.research._alias`).
    """

    index: int
    repetition: int
    config: dict[str, Any]
    alias: dict[str, Any]

    @property
    def key(self) -> str:
        """``"layers_2-lr_0.1"``: ``name_alias`` pairs sorted by name and joined by ``-``, as
        BatchFlow's ``ConfigAlias.alias(as_string=True)``; the same for every repetition."""
        return "-".join(f"{name}_{alias}" for name, alias in sorted(self.alias.items()))
