"""A profiled research's unit timings: each trial's ``profile.jsonl`` read back, and a summary
per unit.

Each line of ``<experiment folder>/trials/<number>/profile.jsonl`` is one JSON object,
``{"iteration": 0, "unit": "train", "time": 0.0123, "calls": 1}``, with ``"attempt": k`` on
the lines of attempt ``k`` (1 when absent). Only the lines of the trial's last attempt count,
as for its reports.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperlab.errors import StoreError
from hyperlab.trial import Trial

__all__ = ["PROFILE_COLUMNS", "SUMMARY_COLUMNS", "read_profile", "summarize_profile"]

PROFILE_COLUMNS = ("trial", "iteration", "unit", "time", "calls")
SUMMARY_COLUMNS = ("unit", "total_time", "mean_time", "calls", "share")

PROFILE_FILE = "profile.jsonl"


def read_profile(folder: Path, trials: Sequence[Trial]) -> list[dict[str, Any]]:
    """One row (``PROFILE_COLUMNS``) per trial x iteration x unit, in trial-number order.

    A last line cut short (the trial is writing it) is left out.

    Raises:
        StoreError: naming the file and line when another line is not such an object.
    """
    rows = []
    for trial in trials:
        path = folder / "trials" / str(trial.number) / PROFILE_FILE
        try:
            text = path.read_text()
        except FileNotFoundError:
            continue
        lines = text.split("\n")
        for index, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            entry = _entry(line, path, index, torn=index == len(lines))
            if entry is not None and entry.get("attempt", 1) == trial.attempt:
                rows.append(
                    {
                        "trial": trial.number,
                        "iteration": entry["iteration"],
                        "unit": entry["unit"],
                        "time": float(entry["time"]),
                        "calls": int(entry.get("calls", 1)),
                    }
                )
    return rows


def _entry(line: str, path: Path, index: int, *, torn: bool) -> dict[str, Any] | None:
    try:
        entry = json.loads(line)
    except json.JSONDecodeError:
        entry = None
    if isinstance(entry, dict) and {"iteration", "unit", "time"} <= entry.keys():
        return entry
    if torn and entry is None:  # the last line, without its newline yet
        return None
    raise StoreError(
        f"{path}, line {index}: expected a JSON object with iteration, unit, time (and calls), "
        f"got {line[:200]!r}"
    )


def summarize_profile(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per unit (``SUMMARY_COLUMNS``), most time first: total seconds, seconds per call, calls,
    and the unit's share of the total time (0 to 1)."""
    units: dict[str, list[float]] = {}
    for row in rows:
        totals = units.setdefault(row["unit"], [0.0, 0])
        totals[0] += row["time"]
        totals[1] += row["calls"]
    overall = sum(total for total, _ in units.values())
    summary = [
        {
            "unit": unit,
            "total_time": total,
            "mean_time": total / calls if calls else float("nan"),
            "calls": int(calls),
            "share": total / overall if overall else float("nan"),
        }
        for unit, (total, calls) in units.items()
    ]
    return sorted(summary, key=lambda row: -row["total_time"])
