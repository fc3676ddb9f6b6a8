"""What the commands share: opening the store, tables, times, and how results are printed."""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from hyperlab._terminal import printable
from hyperlab.errors import ConfigError, HyperlabError, StoreError


class BadStore(HyperlabError):
    """The store given (``--storage``, the config's ``storage``) cannot be opened: bad input."""


def trial_number(text: str) -> int:
    """A trial number given on the command line (an argparse ``type``): 0 .. the largest
    number the store keeps."""
    from hyperlab.config import MAX_TRIAL_NUMBER

    try:
        number = int(text)
    except ValueError:
        number = -1
    if not 0 <= number <= MAX_TRIAL_NUMBER:
        raise argparse.ArgumentTypeError(
            f"expected a trial number from 0 to {MAX_TRIAL_NUMBER}, got {text!r}"
        )
    return number


def hyperlab_command(store: Any) -> str:
    """How to call ``hyperlab`` on ``store``: with ``--storage`` unless it is the default one
    (a password in the URL shown as ``***``)."""
    from sqlalchemy.engine import URL

    from hyperlab.store import home

    default = os.path.abspath(home().expanduser() / "hyperlab.db")
    if store.url == URL.create("sqlite", database=default).render_as_string():
        return "hyperlab"
    return f"hyperlab --storage {store.masked_url}"


def open_store(args: argparse.Namespace) -> Any:
    """The store of ``--storage`` (or the home's); one that cannot be opened is bad input."""
    from hyperlab.store import Store

    try:
        return Store.open(args.storage)
    except StoreError as exc:
        raise BadStore(str(exc)) from None


def trial_cap(max_trials: int | None) -> str:
    """``max_trials`` as ``show`` says it: ``none`` for no cap (a time-only budget; Optuna's
    ``optimize`` with only a timeout stores ``MAX_TRIALS``, what stands for no end)."""
    from hyperlab.config import MAX_TRIALS

    return "none" if max_trials is None or max_trials >= MAX_TRIALS else str(max_trials)


def make_console() -> Any:
    """Rich output; piped (and no $COLUMNS), one line per table row, for grep and scripts.

    Strings are printed as text: no markup, emoji codes or highlighting is read from them
    (style with ``rich.text.Text``), and what comes from users goes through ``printable``.
    """
    from rich.console import Console

    console = Console(markup=False, emoji=False, highlight=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = 10_000  # a table is as wide as its content, not the console
    return console


def heading(kind: str, record: Any) -> Any:
    """``experiment ID`` in bold, then the experiment's name (as text): a ``show`` heading."""
    from rich.text import Text

    return Text.assemble((f"{kind} {record.id}", "bold"), f"  {printable(record.name or '')}")


def when(seconds: float | None) -> str:
    return "-" if seconds is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def duration(seconds: float) -> str:
    """``42.0s``, ``12m05s``, ``3h07m``."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    return f"{minutes // 60}h{minutes % 60:02d}m"


def status_option(value: str, kind: Any) -> str:
    """``--status`` upper-cased, checked against the members of ``kind``."""
    wanted = value.upper()
    if wanted not in kind.__members__:
        raise ConfigError(
            f"--status: unknown status {value!r}; expected one of {', '.join(kind.__members__)}"
        )
    return wanted


def trial_table(
    trials: list, title: str | None = None, *, objectives: list[str] | None = None
) -> Any:
    """The trials as a table: number, status, value (or, with ``objectives``, one column per
    objective under those headings), feasibility when some trial has constraints, duration,
    params, and the error of those that failed."""
    from rich.table import Table

    from hyperlab.experiment import last_line
    from hyperlab.trial import TrialStatus, flatten_params, readable

    errors = any(t.status is TrialStatus.FAILED for t in trials)
    lineage = any(t.parent is not None for t in trials)  # population based training's
    constrained = any(t.constraints is not None for t in trials)
    values = objectives or ["value"]
    shown = [*values, *(["feasible"] if constrained else []), "duration", "params"]
    columns = ["#", *(["from"] if lineage else []), "status", *shown]
    table = Table(*columns, *(["error"] if errors else []), title=title)
    for t in trials:
        duration = "-" if t.duration is None else f"{t.duration:.2f}s"
        found = t.objectives or () if objectives else () if t.value is None else (t.value,)
        value = [f"{v:.6g}" for v in found] if len(found) == len(values) else ["-"] * len(values)
        if constrained:
            value.append("-" if t.constraints is None else "yes" if t.feasible else "no")
        params = ", ".join(f"{k}={v!r}" for k, v in readable(flatten_params(t.params)).items())
        row = [str(t.number), str(t.status), *value, duration, params]
        if lineage:
            row.insert(1, "" if t.parent is None else f"#{t.parent}")
        if errors:
            row.append(last_line(t.error) if t.status is TrialStatus.FAILED else "")
        table.add_row(*map(printable, row))
    return table


def dashboard_link(record: Any, folder: Path) -> str:
    """Where the experiment's driver serves it, with the experiment's token (read from its
    folder, which this user can read): the link that lets a browser steer it."""
    from hyperlab.store.tokens import read_token

    token = read_token(folder)
    page = f"{record.server_url}/experiments/{record.id}"
    return page + (f"?token={token}" if token else "")


def read_result(store: Any, experiment_id: str) -> Any:
    from hyperlab.experiment import Result

    return Result.read(store, experiment_id)


def print_result(result: Any) -> None:
    """The summary line (status, trials, failures, best value or front size) and the best
    parameters (with several objectives, ``hyperlab show`` prints the front)."""
    print(printable(result.summary()), flush=True)
    if result.multi_objective:
        print(f"Pareto front: hyperlab show {result.experiment_id}", flush=True)
    elif result.best_trial is not None:
        from hyperlab.trial import readable

        best = json.dumps(readable(result.best_params), default=str)
        print(f"best parameters: {best}", flush=True)


def write_export(
    args: argparse.Namespace,
    record: Any,
    rows: list[dict[str, Any]],
    columns: list[str],
    key: str,
) -> int:
    """Write ``rows`` to ``args.output`` (or stdout) as ``args.format``: CSV with ``columns``
    (lists and dicts as JSON cells) or a JSON list; with ``--with-env``, JSON
    ``{"id", "name", "environment", key: rows}``."""
    exported: Any = rows
    if args.with_env:
        exported = {
            "id": record.id,
            "name": record.name,
            "environment": record.environment,
            key: rows,
        }
    out = open(args.output, "w", newline="") if args.output else sys.stdout  # noqa: SIM115
    try:
        if args.format == "json":
            json.dump(exported, out, indent=2, default=str)
            out.write("\n")
        else:
            writer = csv.DictWriter(out, fieldnames=columns)
            writer.writeheader()
            writer.writerows({k: _cell(v) for k, v in row.items()} for row in rows)
        out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _cell(value: Any) -> Any:
    """A value as a CSV cell: lists and dicts as JSON, the rest as they are."""
    return json.dumps(value) if isinstance(value, (list, dict)) else value
