"""What a research shows as its search space, and the table that maps stored aliases back to
the values workers need."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hyperlab.research._domain import Domain
from hyperlab.research._runner import alias_key
from hyperlab.space import Choice, SearchSpace

__all__ = ["DomainSpace", "domain_space", "value_table"]


class DomainSpace(SearchSpace):
    """A research's search space: the domain's options (grid aliases as choices, sampled
    options as their distributions) and ``repetition``, for listings and the dashboard.

    Its trials' params are whatever the domains (also those ``update_domain`` returns)
    produce, so ``check`` asks only for a mapping of option names.
    """

    def check(self, params: Mapping[str, Any]) -> None:
        if not isinstance(params, Mapping):
            super().check(params)


def domain_space(domain: Domain, n_reps: int) -> DomainSpace:
    """The ``DomainSpace`` of ``domain`` with ``n_reps`` repetitions."""
    grids = domain.values_by_alias()
    sampled = domain.distributions()
    params: dict[str, Any] = {}
    for name in domain.keys():  # noqa: SIM118  (a Domain, not a dict)
        if name in sampled:
            params[name] = sampled[name]
        else:
            params[name] = Choice(tuple(dict.fromkeys(_hashable(a.alias) for a in grids[name])))
    params["repetition"] = Choice(tuple(range(n_reps)))
    return DomainSpace(params)


def _hashable(alias: Any) -> Any:
    try:
        hash(alias)
    except TypeError:
        return repr(alias)
    return alias


def value_table(domain: Domain) -> dict[str, dict[str, Any]]:
    """For each option, alias -> value for the grid values that are not stored as they are
    (classes, functions, objects, values named with ``Alias``)."""
    table: dict[str, dict[str, Any]] = {}
    for name, values in domain.values_by_alias().items():
        for value in values:
            if _plain(value.value) and value.value == value.alias:
                continue
            table.setdefault(name, {})[alias_key(value.alias)] = value.value
    return table


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))
