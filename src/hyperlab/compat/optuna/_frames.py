"""What a study's trials show, as Optuna computes it: their Pareto front (``best_trials``,
``plot_pareto_front``) and their DataFrame (``trials_dataframe``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hyperlab.compat.optuna.trial import FrozenTrial, TrialState
from hyperlab.pareto import pareto_mask

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["pareto_front", "trials_frame"]


def pareto_front(trials: Sequence[FrozenTrial], directions: Sequence[Any]) -> list[FrozenTrial]:
    """The ``trials`` with values that no other of them dominates in ``directions``
    (``StudyDirection`` members; equal trials are all kept), in their order."""
    having = [t for t in trials if t.values is not None]
    if not having:
        return []
    signs = [-1.0 if d.name == "MAXIMIZE" else 1.0 for d in directions]
    losses = [[s * v for s, v in zip(signs, t.values or (), strict=True)] for t in having]
    return [t for t, kept in zip(having, pareto_mask(losses), strict=True) if kept]


def trials_frame(
    trials: Sequence[FrozenTrial],
    directions: Sequence[Any],
    attrs: Sequence[str],
    multi_index: bool,
) -> pd.DataFrame:
    """The trials as Optuna's ``trials_dataframe``: a column per attribute of ``attrs`` (per
    key of a dict attribute, sorted; ``values_0``, ``values_1``... in place of ``value``
    with several objectives), named ``attr_key`` unless ``multi_index``."""
    import pandas as pd

    if not trials:
        return pd.DataFrame()
    if len(directions) > 1:
        attrs = tuple("values" if attr == "value" else attr for attr in attrs)
    records = []
    found: dict[str, set[tuple[str, Any]]] = {attr: set() for attr in attrs}
    for trial in trials:
        record: dict[tuple[str, Any], Any] = {}
        for attr in attrs:
            name = attr[1:] if attr.startswith("_") else attr
            value = getattr(trial, attr)
            if isinstance(value, TrialState):
                value = value.name
            if attr == "values" and value is None:
                value = [None] * len(directions)
            if isinstance(value, dict):
                cells = {(name, key): item for key, item in value.items()}
            elif isinstance(value, list):
                cells = {(name, index): item for index, item in enumerate(value)}
            else:
                cells = {(name, ""): value}
            record.update(cells)
            found[attr].update(cells)
        records.append(record)
    columns = [column for attr in attrs for column in sorted(found[attr], key=_column_key)]
    frame = pd.DataFrame(records, columns=pd.MultiIndex.from_tuples(columns))
    if not multi_index:
        frame.columns = ["_".join(str(part) for part in c if part != "") for c in columns]
    return frame


def _column_key(column: tuple[str, Any]) -> tuple[bool, Any]:
    """Sorts the columns of one attribute as Optuna: by key (indexes as numbers)."""
    key = column[1]
    return (isinstance(key, str), key)
