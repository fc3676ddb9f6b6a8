"""What travels through the store between a driver and its workers: trial specs and events,
as JSON-able dicts."""

from __future__ import annotations

import dataclasses
from typing import Any

from hyperlab.executors.base import (
    Event,
    Failed,
    Finished,
    Reported,
    Requested,
    Started,
    Stopped,
    TrialSpec,
)
from hyperlab.store import PoolEvent

__all__ = ["event_from_row", "event_row", "spec_from_json", "spec_to_json"]


def spec_to_json(spec: TrialSpec) -> dict[str, Any]:
    """``spec`` as a JSON object (tuples become lists)."""
    return dataclasses.asdict(spec)


def spec_from_json(data: dict[str, Any]) -> TrialSpec:
    """The ``TrialSpec`` that ``spec_to_json`` wrote.

    Raises:
        TypeError: ``data`` lacks a field or has one ``TrialSpec`` does not know (a driver of
            another hyperlab version).
    """
    fields = dict(data)
    fields["devices"] = tuple(fields.get("devices", ()))
    score = fields.get("checkpoint_score")
    fields["checkpoint_score"] = None if score is None else (str(score[0]), str(score[1]))
    return TrialSpec(**fields)


def event_row(event: Event, attempt: int) -> dict[str, Any]:
    """A ``pool_events`` row for a worker's trial's event (a ``Failed``'s exception object
    stays on the worker: its text is in ``error``)."""
    payload: dict[str, Any]
    if isinstance(event, Reported):
        payload = {"step": event.step, "metrics": event.metrics}
    elif isinstance(event, Requested):
        payload = {"index": event.index, "kind": event.kind, "name": event.name, "spec": event.spec}
    elif isinstance(event, (Finished, Stopped)):
        payload = {"metrics": event.metrics}
    elif isinstance(event, Failed):
        payload = {"error": event.error}
    elif isinstance(event, Started):
        payload = {}
    else:  # Lost: no local executor a worker runs loses trials
        raise TypeError(f"event: a worker sends no {type(event).__name__} events, got {event!r}")
    return {
        "number": event.number,
        "attempt": attempt,
        "kind": type(event).__name__,
        "payload": payload,
        "time": event.time,
    }


def event_from_row(row: PoolEvent) -> Event:
    """The event a ``pool_events`` row holds.

    Raises:
        ValueError: an unknown kind (a worker of another hyperlab version).
    """
    number, when, data = row.number, row.time, row.payload
    if row.kind == "Started":
        return Started(number, when)
    if row.kind == "Reported":
        return Reported(number, when, int(data["step"]), data["metrics"])
    if row.kind == "Requested":
        return Requested(number, when, data["index"], data["kind"], data["name"], data["spec"])
    if row.kind == "Finished":
        return Finished(number, when, data["metrics"])
    if row.kind == "Stopped":
        return Stopped(number, when, data["metrics"])
    if row.kind == "Failed":
        return Failed(number, when, data["error"])
    raise ValueError(
        f"pool_events row {row.id}: kind must be Started, Reported, Requested, Finished, "
        f"Stopped or Failed, got {row.kind!r}"
    )
