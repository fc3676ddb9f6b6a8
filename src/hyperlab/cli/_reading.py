"""The commands that read the store: ``ls``, ``show``, ``trials``, ``logs``, ``export``, and
``rm``. ``show`` and ``trials`` list the later phases of multi-phase (NNI) trials too; for an
experiment with several objectives, ``show`` lists the Pareto front and ``ls`` its size
(``_front``)."""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from hyperlab._terminal import printable
from hyperlab.cli._common import (
    dashboard_link,
    duration,
    heading,
    hyperlab_command,
    make_console,
    open_store,
    status_option,
    trial_cap,
    trial_table,
    when,
)
from hyperlab.cli._export import stream_export
from hyperlab.cli._front import (
    front_table,
    objective_columns,
    objective_line,
    sort_trials,
)
from hyperlab.cli._research import export_research, show_research
from hyperlab.errors import ConfigError


def cmd_ls(args: argparse.Namespace) -> int:
    from hyperlab.cli._table import plain_table
    from hyperlab.config import MAX_TRIALS
    from hyperlab.trial import ExperimentStatus

    store = open_store(args)
    summaries = store.list_experiments()
    if args.status:
        wanted = status_option(args.status, ExperimentStatus)
        summaries = [s for s in summaries if s.status.value == wanted]
    if args.name:
        summaries = [s for s in summaries if fnmatch.fnmatchcase(s.name or "", args.name)]
    researches = {s.id for s in summaries if s.research is not None}
    if not summaries:
        print(_none_listed(store, args), file=sys.stderr)
    if args.json:
        rows = [
            {
                k: v.value if hasattr(v, "value") else v
                for k, v in dataclasses.asdict(s).items()
                if k != "research"
            }
            | {"kind": "research" if s.id in researches else "experiment"}
            for s in summaries
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not summaries:
        return 0
    kind = ["kind"] if researches else []  # a column only when some experiment is a research
    headers = ["id", "name", *kind, "status", "trials", "failed", "best", "started", "duration"]
    lines: list[list[str]] = []
    for exp in summaries:
        if exp.max_trials is not None and exp.max_trials < MAX_TRIALS:
            trials = f"{exp.n_finished}/{exp.max_trials}"
        else:  # no cap: a time-only budget (Optuna's optimize with only a timeout stores
            # MAX_TRIALS), or a research whose runs are not counted yet
            trials = f"{exp.n_finished}/?" if exp.id in researches else str(exp.n_finished)
        status = f"{exp.status} (driver lost)" if exp.driver_lost else str(exp.status)
        best = _best_column(store, exp)
        lines.append(
            [
                printable(exp.id),
                printable(exp.name or ""),
                *(["research" if exp.id in researches else "experiment"] if kind else []),
                status,
                trials,
                str(exp.n_failed),
                best,
                when(exp.started_at or exp.created_at),
                "-" if exp.started_at is None else duration(exp.elapsed),
            ]
        )
    console = make_console()
    text = plain_table(console, headers, lines)  # rich's own text, without its cost per cell
    if text is not None:
        console.file.write(text)
        return 0
    from rich.table import Table

    table = Table(*headers)
    for line in lines:
        table.add_row(*line)
    console.print(table)
    return 0


def _best_column(store: Any, summary: Any) -> str:
    """The ``best`` cell of ``ls``: the best value, or ``front N`` with several objectives."""
    if len(summary.modes) > 1:
        front = store.get_pareto_front(summary.id, summary.modes, details=False).front
        return f"front {len(front)}" if front else "-"
    return "-" if summary.best_value is None else f"{summary.best_value:.6g}"


def _none_listed(store: Any, args: argparse.Namespace) -> str:
    """What ``ls`` says when it lists nothing: which store it read, and how to read another."""
    where = store.masked_url
    if args.status or args.name:
        return f"hyperlab: no experiment of {where} matches --status/--name"
    default = "" if args.storage else ", the default store (<home>/hyperlab.db)"
    return (
        f"hyperlab: no experiments in {where}{default}. An experiment run with "
        "storage='sqlite:///runs.db' is in that file: list it with "
        "`hyperlab ls --storage sqlite:///runs.db`; "
        "--home FOLDER (or $HYPERLAB_HOME) reads FOLDER/hyperlab.db"
    )


def cmd_show(args: argparse.Namespace) -> int:
    from hyperlab.environment import describe_environment
    from hyperlab.experiment import error_kind, last_line

    store = open_store(args)
    record = store.get_experiment(store.resolve(args.id))
    if record.options.research is not None:
        return show_research(store, record, env=args.env)
    options = record.options
    counts = store.status_counts(record.id)  # the summary reads no trial whole: a million of
    console = make_console()  # them would take seconds and gigabytes
    console.print(heading("experiment", record))
    lines = {
        "status": record.shown_status,
        "trials": ", ".join(f"{n} {s}" for s, n in sorted((str(s), n) for s, n in counts.items()))
        or "none yet",
        "imported": f"{len(store.get_imported(record.id))} results (fed to the tuner)",
        "objective": objective_line(options),
        "feasible": _constraint_line(store, record) or "",
        "tuner": _tuner_line(options),
        "assessor": (
            "none"
            if options.assessor is None
            else f"{options.assessor} {json.dumps(options.assessor_args)}"
        ),
        "budget": (
            f"max_trials={trial_cap(options.max_trials)}, max_duration={options.max_duration}"
        ),
        "executor": f"{options.executor} x{options.concurrency}",
        "by run": ", ".join(  # parameters trials defined as they ran (hyperlab.suggest)
            f"{name} {spec.get('_type')}{spec.get('_value')}"
            for name, spec in options.suggested.items()
        ),
        "trial": str(record.objective_ref),
        "folder": str(store.experiment_folder(record)),  # its trials' logs and checkpoints
        "seed": str(record.seed),
        "created": when(record.created_at),
        "started": when(record.started_at),
        "finished": when(record.finished_at),
        "elapsed": duration(record.elapsed),
    }
    for key in ("by run", "feasible"):
        if not lines[key]:
            del lines[key]
    if record.driver_alive():
        lines["driver"] = f"pid {record.driver_pid} on {record.driver_host}"
        if record.server_url is not None:
            lines["dashboard"] = dashboard_link(record, store.experiment_folder(record))
    elif record.driver_lost:
        lines["driver"] = f"gone; continue it with {hyperlab_command(store)} resume {record.id}"
    failed = store.failed_errors(record.id)  # (number, error), by number
    if failed:
        kinds: dict[str, list[tuple[int, str | None]]] = {}
        for number, error in failed:
            kinds.setdefault(error_kind(error), []).append((number, error))
        kind, same = max(kinds.items(), key=lambda item: len(item[1]))
        lines["failures"] = (
            f"{len(failed)} failed, most often {kind} ({len(same)}x; trial {same[0][0]}: "
            f"{last_line(same[0][1])})"
        )
    if record.error:
        first = record.error.strip().splitlines()[0]
        lines["error"] = last_line(record.error) if first.startswith("Traceback") else first
    if lines["imported"].startswith("0 "):
        del lines["imported"]
    phases = store.get_phases(record.id)  # by trial number, then index
    if phases:
        multi = len({p.number for p in phases})
        lines["phases"] = f"{len(phases)} later phases of {multi} multi-phase trials"
    for key, value in lines.items():
        console.print(f"  {key:<10} {printable(value)}")
    environment = (
        ["not recorded (created by a hyperlab that did not record it)"]
        if record.environment is None
        else [printable(line) for line in describe_environment(record.environment, full=args.env)]
    )
    if not args.env:
        console.print("  environment")
        for line in environment:
            console.print(f"    {line}")
    if options.multi_objective:
        numbers = store.get_pareto_front(record.id, options.modes, details=False).front
        front = store.trials_by_number(record.id, numbers)
        if front:
            console.print(front_table(front, options))
        else:
            console.print("  no trial on the Pareto front yet (none succeeded feasible)")
    else:
        top = [t for t in _best_trials(store, record, 10) if t.value is not None]
        if top:
            console.print(trial_table(top, title="top 10 trials"))
    best = sorted(
        (p for p in phases if p.value is not None),
        key=lambda p: (options.first_mode.sign * p.value, p.number, p.index),
    )[:10]
    if best:
        console.print(_phase_table(best, title="top 10 later phases"))
    if args.env:  # plain lines: a long diff is neither styled nor wrapped
        print("environment", *environment, sep="\n")
    return 0


def _tuner_line(options: Any) -> str:
    """The tuner and its arguments (when it has any); ``none`` says where trials come from."""
    if options.tuner == "none":
        return "none (its trials are submitted: a strategy loop, added trials)"
    args = f" {json.dumps(options.tuner_args)}" if options.tuner_args else ""
    return f"{options.tuner}{args}"


def _constraint_line(store: Any, record: Any) -> str | None:
    """``constraint_line`` of the experiment's trials, counted by the store."""
    checked, infeasible = store.constraint_counts(record.id)
    options = record.options
    if options.constraints is None and not checked:
        return None
    rules = "; ".join(options.constraints or ("a function of the trial",))
    return f"{rules}: {infeasible} infeasible of {checked} trials"


def _best_trials(store: Any, record: Any, limit: int) -> list[Any]:
    """The experiment's first ``limit`` trials by ``Mode.ranked`` (best value first, the
    earliest among equals, then those without a value by number), sorted by the database."""
    from hyperlab.store import Key, TrialFilter, TrialOrder
    from hyperlab.trial import Mode

    order = TrialOrder(Key("value"), descending=record.options.first_mode is Mode.MAX)
    page = store.page_trials(record.id, TrialFilter(), order, limit=limit)
    return store.trials_by_number(record.id, page.numbers)


def cmd_trials(args: argparse.Namespace) -> int:
    from hyperlab.trial import TrialStatus

    store = open_store(args)
    record = store.get_experiment(store.resolve(args.id))
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit: expected a positive number, got {args.limit}")
    wanted = None if not args.status else TrialStatus(status_option(args.status, TrialStatus))
    order = _database_order(record.options, args.sort, descending=args.desc)
    if order is not None and args.limit is not None:  # one page, sorted by the database
        trials = _page(store, record.id, wanted, order, args.limit)
    else:
        trials = store.get_trials(record.id, reports=False)
        if wanted is not None:
            trials = [t for t in trials if t.status is wanted]
        trials = sort_trials(trials, record.options, args.sort, descending=args.desc)
        if args.limit is not None:
            trials = trials[: args.limit]
    console = make_console()
    console.print(trial_table(trials, objectives=objective_columns(record.options)))
    phases = [phase for t in trials for phase in t.phases]
    if phases:
        console.print(_phase_table(phases, title="later phases of multi-phase trials"))
    return 0


def _database_order(options: Any, sort: str, *, descending: bool) -> Any:
    """The ``TrialOrder`` the database sorts by as ``sort_trials`` would, or None where only
    ``sort_trials`` can (a trial's duration, a metric, several objectives)."""
    from hyperlab.store import Key, TrialOrder
    from hyperlab.trial import Mode

    reverse = descending != sort.startswith("-")
    name = sort.removeprefix("-")
    if name == "number":
        return TrialOrder(Key("number"), descending=reverse)
    if name == "metric" and not options.multi_objective:  # by value (None last), then number
        return TrialOrder(Key("value"), descending=reverse != (options.first_mode is Mode.MAX))
    return None


def _page(store: Any, experiment_id: str, status: Any, order: Any, limit: int) -> list[Any]:
    """The first ``limit`` trials (in ``status`` if given) in ``order``, with their phases."""
    from hyperlab.store import TrialFilter

    where = TrialFilter(statuses=None if status is None else frozenset({status}))
    numbers = store.page_trials(experiment_id, where, order, limit=limit).numbers
    trials = store.trials_by_number(experiment_id, numbers)
    phases: dict[int, list[Any]] = {}
    if trials:
        for phase in store.get_phases(experiment_id):
            phases.setdefault(phase.number, []).append(phase)
    return [dataclasses.replace(t, phases=tuple(phases.get(t.number, ()))) for t in trials]


def _phase_table(phases: list[Any], title: str) -> Any:
    """The phases as a table: trial number, phase index, NNI's parameter id, status, value,
    params, and the error of those that failed."""
    from rich.table import Table

    from hyperlab.experiment import last_line
    from hyperlab.trial import TrialStatus, flatten_params, readable

    errors = any(p.status is TrialStatus.FAILED for p in phases)
    columns = ["#", "phase", "parameter_id", "status", "value", "params"]
    table = Table(*columns, *(["error"] if errors else []), title=title)
    for p in phases:
        params = ", ".join(f"{k}={v!r}" for k, v in readable(flatten_params(p.params)).items())
        value = "-" if p.value is None else f"{p.value:.6g}"
        row = [str(p.number), str(p.index), str(p.parameter_id), str(p.status), value, params]
        if errors:
            row.append(last_line(p.error) if p.status is TrialStatus.FAILED else "")
        table.add_row(*map(printable, row))
    return table


def cmd_logs(args: argparse.Namespace) -> int:
    store = open_store(args)
    record = store.get_experiment(store.resolve(args.id))
    experiment_id = record.id
    if not args.follow:
        store.get_trial(experiment_id, args.trial)  # TrialNotFound names the number
    name = "stderr.log" if args.stderr else "stdout.log"
    folder = store.experiment_folder(record)
    path = folder / "trials" / str(args.trial) / name
    command = record.options.executor == "command"
    if not path.exists() and not args.follow and command:
        raise ConfigError(
            f"trial {args.trial} of {experiment_id} has no {name} (looked for {path})"
        )
    position = 0
    while True:
        finished = not args.follow or _trial_over(store, experiment_id, args.trial)
        if path.exists():
            with open(path, "rb") as f:
                f.seek(position)
                chunk = f.read()
                position += len(chunk)
            sys.stdout.write(chunk.decode(errors="replace"))
            sys.stdout.flush()
        if finished:  # read once more after the end was seen: nothing is left behind
            break
        time.sleep(0.2)
    if not path.exists() and not command:
        _function_trial_error(store, record, args.trial, folder)
    elif position == 0:
        _wrote_nothing(store, record.id, args.trial, path)
    return 0


def _wrote_nothing(store: Any, experiment_id: str, number: int, path: Path) -> None:
    """Say that the log ``path`` is empty, naming it, and whether the trial's other log is."""
    other = path.with_name("stdout.log" if path.name == "stderr.log" else "stderr.log")
    size = other.stat().st_size if other.is_file() else 0
    if size:
        flag = "" if other.name == "stdout.log" else " --stderr"
        then = f"; its {other.name} has {size} bytes: `{hyperlab_command(store)} logs "
        then += f"{experiment_id} {number}{flag}`"
    else:
        then = f", nor to {other}"
    print(
        f"hyperlab: trial {number} of {experiment_id} wrote nothing to {path}{then}",
        file=sys.stderr,
    )


def _function_trial_error(store: Any, record: Any, number: int, folder: Path) -> None:
    """A function trial has no log files: print its stored error, and say why there are none."""
    from hyperlab.errors import TrialNotFound

    try:
        trial = store.get_trial(record.id, number)
    except TrialNotFound:  # --follow of a trial the experiment never created
        return
    if trial.error:
        print(trial.error.rstrip())
    shown = "its stored error is above" if trial.error else f"it has no error ({trial.status})"
    print(
        f"hyperlab: trial {number} of {record.id} has no stdout.log or stderr.log in "
        f"{folder / 'trials' / str(number)}: it wrote no output (or it ran before hyperlab "
        f"kept function trials' output, when it went to the driver's); {shown}",
        file=sys.stderr,
    )


def _trial_over(store: Any, experiment_id: str, number: int) -> bool:
    """Whether ``--follow`` can stop: the trial ended, or will never run."""
    from hyperlab.errors import TrialNotFound

    try:
        return store.get_trial(experiment_id, number).status.is_finished()
    except TrialNotFound:  # not created yet: wait while the experiment may still create it
        return store.get_experiment(experiment_id).status.is_finished()


def cmd_export(args: argparse.Namespace) -> int:
    if args.with_env and args.format != "json":
        raise ConfigError(
            f"--with-env: the environment is exported with --format json only, got --format "
            f"{args.format}"
        )
    store = open_store(args)
    experiment_id = store.resolve(args.id)
    if store.get_experiment(experiment_id).options.research is not None:
        return export_research(store, experiment_id, args)  # its saved values, not trials
    batches = (
        [trial.as_row() for trial in batch]
        for batch in store.iter_trials(experiment_id, reports=False, batch=2000)
    )
    return stream_export(args, store.get_experiment(experiment_id), batches, "trials")


def cmd_rm(args: argparse.Namespace) -> int:
    store = open_store(args)
    record = store.get_experiment(store.resolve(args.id))
    experiment_id = record.id
    record.check_not_running()
    if not args.yes:
        if not sys.stdin.isatty():
            raise ConfigError(
                f"rm: pass --yes to delete experiment {experiment_id} without a prompt"
            )
        named = printable(record.name or "unnamed")
        answer = input(f"delete experiment {experiment_id} ({named}) and its files? [y/N] ")
        if answer.strip().lower() not in ("y", "yes"):
            print("kept")
            return 0
    store.delete_experiment(experiment_id)
    shutil.rmtree(store.experiment_folder(record), ignore_errors=True)
    print(f"deleted {experiment_id}")
    return 0
