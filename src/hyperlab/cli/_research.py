"""What ``ls``, ``show`` and ``export`` do differently for a research (``hyperlab.Research``):
its kind in the listing, its units, progress and mean ± std table, and its long-form rows.

None of it needs pandas.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hyperlab._terminal import printable
from hyperlab.cli._common import (
    duration,
    heading,
    hyperlab_command,
    make_console,
    when,
    write_export,
)

if TYPE_CHECKING:
    from hyperlab.store import ExperimentRecord, Store

__all__ = ["export_research", "show_research"]


def _progress(planned: int | None, trials: Sequence[Any]) -> str:
    from hyperlab.research import ended

    done = [t for t in trials if ended(t)]
    counts: dict[str, int] = {}
    for t in done:
        counts[str(t.status)] = counts.get(str(t.status), 0) + 1
    total = f"{len(done)}/{planned}" if planned is not None else f"{len(done)} of {len(trials)}"
    kinds = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    return f"{total} config x repetitions finished" + (f" ({kinds})" if kinds else "")


def show_research(store: Store, record: ExperimentRecord, *, env: bool = False) -> int:
    """Print a research: its units, iterations, spread, domain, progress, its environment
    (a summary; with ``env`` all of it, git diff and packages included, at the end, as for
    an experiment), and the mean ± std over repetitions of each variable at each trial's last
    iteration, per config."""
    from hyperlab.environment import describe_environment
    from hyperlab.experiment import last_line
    from hyperlab.research import ResearchResults, research_options, summarize_profile
    from hyperlab.trial import TrialStatus

    research = research_options(record)
    trials = store.get_trials(record.id, reports=False)
    results = ResearchResults(store, record.id)
    console = make_console()
    console.print(heading("research", record))
    lines = {
        "status": record.shown_status,
        "progress": _progress(record.options.max_trials, trials),
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
    if research.project_dir is not None:
        lines["project"] = research.project_dir
    for key, value in lines.items():
        console.print(f"  {key:<10} {printable(value)}")
    environment = (
        ["not recorded (created by a hyperlab that did not record it)"]
        if record.environment is None
        else [printable(line) for line in describe_environment(record.environment, full=env)]
    )
    if not env:
        console.print("  environment")
        for line in environment:
            console.print(f"    {line}")
    profile = summarize_profile(results.profile_rows())
    if profile:
        spent = ", ".join(
            f"{row['unit']} {row['total_time']:.3g}s ({row['share']:.0%})" for row in profile
        )
        console.print(f"  {'time':<10} {printable(spent)}")
    summary = results.summary()
    if summary.names:
        console.print("\nmean ± std (repetitions) at each trial's last iteration:")
        console.print(summary.text())  # its cells escaped
    if env:  # plain lines: a long diff is neither styled nor wrapped
        print("environment", *environment, sep="\n")
    return 0


def export_research(store: Store, experiment_id: str, args: argparse.Namespace) -> int:
    """Write a research's saved values, one row per config x repetition x iteration x
    variable (or, with ``--pivot``, per config x repetition x iteration), as CSV or JSON;
    with ``--with-env``, JSON ``{"id", "name", "environment", "rows"}``."""
    from hyperlab.research import ResearchResults

    selected = ResearchResults(store, experiment_id).to_rows(pivot=args.pivot)
    record = store.get_experiment(experiment_id)
    return write_export(args, record, selected.rows, selected.columns, "rows")
