"""What ``ls``, ``show`` and ``export`` do differently for a research (``hyperlab.Research``):
its kind in the listing, its units, progress and mean ± std table, and its long-form rows.

None of it needs pandas.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hyperlab.cli._common import duration, hyperlab_command, make_console, when

if TYPE_CHECKING:
    from hyperlab.config import ResearchOptions
    from hyperlab.store import ExperimentRecord, ExperimentSummary, Store

__all__ = ["export_research", "planned_runs", "researches_of", "show_research"]


def researches_of(
    store: Store, summaries: Sequence[ExperimentSummary]
) -> dict[str, ResearchOptions]:
    """The research options of those of ``summaries`` that are researches, by id (one read
    per experiment)."""
    from hyperlab.errors import ExperimentNotFound

    found = {}
    for summary in summaries:
        try:
            research = store.get_experiment(summary.id).options.research
        except ExperimentNotFound:  # deleted since it was listed
            continue
        if research is not None:
            found[summary.id] = research
    return found


def planned_runs(research: ResearchOptions) -> int | None:
    """How many config x repetitions the research runs, when its number of configs is set."""
    return None if research.n_configs is None else research.n_configs * research.n_reps


def _progress(research: ResearchOptions, trials: Sequence[Any]) -> str:
    from hyperlab.research._rows import ended

    done = [t for t in trials if ended(t)]
    counts: dict[str, int] = {}
    for t in done:
        counts[str(t.status)] = counts.get(str(t.status), 0) + 1
    planned = planned_runs(research)
    total = f"{len(done)}/{planned}" if planned is not None else f"{len(done)} of {len(trials)}"
    kinds = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{total} config x repetitions finished" + (f" ({kinds})" if kinds else "")


def show_research(store: Store, record: ExperimentRecord) -> int:
    """Print a research: its units, iterations, spread, domain, progress, and the mean ± std
    over repetitions of each variable at each trial's last iteration, per config."""
    from hyperlab.experiment._failures import last_line
    from hyperlab.research._profile import summarize_profile
    from hyperlab.research._results import ResearchResults, research_options
    from hyperlab.trial import TrialStatus

    research = research_options(record)
    trials = store.get_trials(record.id, reports=False)
    results = ResearchResults(store, record.id)
    console = make_console()
    console.print(f"[bold]research {record.id}[/bold]  {record.name or ''}")
    lines = {
        "status": record.shown_status,
        "progress": _progress(research, trials),
        "units": ", ".join(research.units) or "-",
        "n_iters": "until a generator ends" if research.n_iters is None else str(research.n_iters),
        "n_reps": str(research.n_reps),
        "n_configs": "all the domain's" if research.n_configs is None else str(research.n_configs),
        "workers": f"{research.workers} workers x {research.branches} branches",
        "domain": research.domain or "-",
        "variables": ", ".join(research.variables or results.variables) or "none saved yet",
        "created": when(record.created_at),
        "started": when(record.started_at),
        "finished": when(record.finished_at),
        "elapsed": duration(record.elapsed),
    }
    if record.driver_alive():
        lines["driver"] = f"pid {record.driver_pid} on {record.driver_host}"
    elif record.driver_lost:
        lines["driver"] = f"gone; continue it with {hyperlab_command(store)} resume {record.id}"
    failed = [t for t in trials if t.status is TrialStatus.FAILED]
    if failed:
        lines["failures"] = (
            f"{len(failed)} failed (trial {failed[0].number}: {last_line(failed[0].error)})"
        )
    if record.error:
        lines["error"] = last_line(record.error)
    for key, value in lines.items():
        console.print(f"  {key:<10} {value}", highlight=False, markup=False)
    profile = summarize_profile(results.profile_rows())
    if profile:
        spent = ", ".join(
            f"{row['unit']} {row['total_time']:.3g}s ({row['share']:.0%})" for row in profile
        )
        console.print(f"  {'time':<10} {spent}", highlight=False, markup=False)
    summary = results.summary()
    if summary.names:
        console.print("\nmean ± std (repetitions) at each trial's last iteration:", markup=False)
        console.print(summary.text(), highlight=False, markup=False)
    return 0


def _cell(value: Any) -> Any:
    """A value as a CSV cell: lists and dicts as JSON, the rest as they are."""
    return json.dumps(value) if isinstance(value, (list, dict)) else value


def export_research(store: Store, experiment_id: str, args: argparse.Namespace) -> int:
    """Write a research's saved values, one row per config x repetition x iteration x
    variable (or, with ``--pivot``, per config x repetition x iteration), as CSV or JSON;
    with ``--with-env``, JSON ``{"id", "name", "environment", "rows"}``."""
    from hyperlab.research._results import ResearchResults

    selected = ResearchResults(store, experiment_id).to_rows(pivot=args.pivot)
    exported: Any = selected.rows
    if args.with_env:
        record = store.get_experiment(experiment_id)
        exported = {
            "id": record.id,
            "name": record.name,
            "environment": record.environment,
            "rows": selected.rows,
        }
    out = open(args.output, "w", newline="") if args.output else sys.stdout  # noqa: SIM115
    try:
        if args.format == "json":
            json.dump(exported, out, indent=2, default=str)
            out.write("\n")
        else:
            writer = csv.DictWriter(out, fieldnames=selected.columns)
            writer.writeheader()
            writer.writerows({k: _cell(v) for k, v in row.items()} for row in selected.rows)
        out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
    return 0
