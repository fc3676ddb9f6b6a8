"""The ``hyperlab`` command: run experiments from config files and inspect the store.

Exit codes: 0 success, 1 the experiment ended in ERROR (or the store failed), 2 bad input
(usage, config, unknown id), 130 interrupted. Errors are one paragraph; ``--debug`` shows the
traceback.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hyperlab import __version__
from hyperlab.errors import ConfigError, HyperlabError, StoreError, TrialError

__all__ = ["main"]

STOP_WAIT = 60.0  # seconds `hyperlab stop` waits for the driver to confirm


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hyperlab", description="Run, tune and track experiments."
    )
    parser.add_argument("--version", action="version", version=f"hyperlab {__version__}")
    parser.add_argument(
        "--home", help="hyperlab home folder (default $HYPERLAB_HOME or ~/.hyperlab)"
    )
    parser.add_argument("--storage", help="database URL (default: <home>/hyperlab.db)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = commands.add_parser(
        "run", help="run an experiment from a config file (YAML/JSON, NNI's too)"
    )
    run.add_argument("config", help="path to the config file")
    run.add_argument("--detach", action="store_true", help="print the id and run in the background")
    resume = commands.add_parser("resume", help="continue a stopped or crashed experiment")
    resume.add_argument("id")
    resume.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    for sub in (run, resume):
        sub.add_argument(
            "--port", type=int, help="serve the REST API (and NNI's) on this port while it runs"
        )
    stop = commands.add_parser("stop", help="stop a running experiment (trials: USER_CANCELED)")
    stop.add_argument("id")
    commands.add_parser("ls", help="list experiments")
    show = commands.add_parser("show", help="an experiment's config, status and top 10 trials")
    show.add_argument("id")
    trials = commands.add_parser("trials", help="an experiment's trials")
    trials.add_argument("id")
    trials.add_argument("--status", help="only trials with this status (e.g. FAILED)")
    trials.add_argument("--sort", choices=["number", "metric", "duration"], default="number")
    trials.add_argument("--limit", type=int, help="show at most N trials")
    logs = commands.add_parser("logs", help="a trial's stdout (or stderr)")
    logs.add_argument("id")
    logs.add_argument("trial", type=int, help="trial number")
    logs.add_argument("--stderr", action="store_true", help="show stderr.log instead")
    logs.add_argument("--follow", "-f", action="store_true", help="keep printing until it ends")
    export = commands.add_parser("export", help="one row per trial as CSV or JSON")
    export.add_argument("id")
    export.add_argument("--format", choices=["csv", "json"], default="csv")
    export.add_argument("-o", "--output", help="file to write (default: standard output)")
    rm = commands.add_parser("rm", help="delete an experiment, its trials and its files")
    rm.add_argument("id")
    rm.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.home:
        os.environ["HYPERLAB_HOME"] = str(Path(args.home).expanduser().resolve())
    handler = globals()[f"_cmd_{args.command}"]
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("hyperlab: interrupted", file=sys.stderr)
        return 130
    except HyperlabError as exc:
        if args.debug:
            raise
        print(f"hyperlab: error: {exc}", file=sys.stderr)
        failed = isinstance(exc, (TrialError, StoreError)) and not isinstance(exc, KeyError)
        return 1 if failed else 2


# ---- running ------------------------------------------------------------------------------


def _cmd_run(args: argparse.Namespace) -> int:
    from hyperlab.experiment import Experiment

    experiment = Experiment.from_config(args.config, storage=args.storage)
    if args.detach:
        return _detach(experiment, args)
    print(f"experiment {experiment.id}", file=sys.stderr)
    server = _serve(args, experiment.store, experiment.save())
    try:
        result = experiment.run()
    except KeyboardInterrupt:
        print(
            f"hyperlab: experiment {experiment.id} stopped; continue it with "
            f"`hyperlab resume {experiment.id}`",
            file=sys.stderr,
        )
        return 130
    finally:
        if server is not None:
            server.stop()
    return _summary(result)


def _serve(args: argparse.Namespace, store: Any, experiment_id: str) -> Any:
    """Start the REST API for ``--port`` (None without it)."""
    if args.port is None:
        return None
    from hyperlab.server import serve_in_background

    try:
        server = serve_in_background(store, args.port, experiment_id=experiment_id)
    except ImportError as exc:  # fastapi/uvicorn are the `server` extra
        raise ConfigError(f"--port: {exc}") from None
    print(
        f"REST API: {server.url}/api/v1/experiments/{experiment_id} (docs: {server.url}/docs)",
        file=sys.stderr,
    )
    return server


def _detach(experiment: Any, args: argparse.Namespace) -> int:
    experiment_id = experiment.save()
    folder = experiment.folder
    folder.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "hyperlab"]
    if args.storage:
        command += ["--storage", args.storage]
    command += ["resume", experiment_id, "--quiet"]
    if args.port is not None:
        command += ["--port", str(args.port)]
    with open(folder / "driver.log", "ab") as log:
        subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    print(experiment_id)
    print(f"running in the background; log: {folder / 'driver.log'}", file=sys.stderr)
    return 0


def _cmd_resume(args: argparse.Namespace) -> int:
    import hyperlab

    store = _store(args)
    store.get_experiment(args.id)  # an unknown id fails before a server starts
    server = _serve(args, store, args.id)
    try:
        result = hyperlab.resume(
            args.id, storage=args.storage, progress=False if args.quiet else None
        )
    finally:
        if server is not None:
            server.stop()
    return _summary(result, quiet=args.quiet)


def _summary(result: Any, *, quiet: bool = False) -> int:
    from hyperlab.trial import ExperimentStatus

    if not quiet:
        print(f"experiment {result.experiment_id}: {result.status}, {len(result.trials)} trials")
        if result.best_trial is not None:
            print(f"best value: {result.best_value:.6g} (trial {result.best_trial.number})")
            print(f"best parameters: {json.dumps(result.best_params)}")
        if result.error:
            print(f"error: {result.error}", file=sys.stderr)
    return 1 if result.status is ExperimentStatus.ERROR else 0


def _cmd_stop(args: argparse.Namespace) -> int:
    from hyperlab.store import StopExperiment

    store = _store(args)
    record = store.get_experiment(args.id)
    if record.status.is_finished() or record.driver_pid is None:
        raise ConfigError(f"experiment {args.id} is not running (status {record.status})")
    store.send_control(args.id, StopExperiment())
    deadline = time.monotonic() + STOP_WAIT
    while time.monotonic() < deadline:
        status = store.get_experiment(args.id).status
        if status.is_finished():
            print(f"experiment {args.id}: {status}")
            return 0
        time.sleep(0.1)
    print(f"hyperlab: stop requested; experiment {args.id} has not confirmed yet", file=sys.stderr)
    return 1


# ---- reading ------------------------------------------------------------------------------


def _store(args: argparse.Namespace) -> Any:
    from hyperlab.store import Store

    return Store.open(args.storage)


def _console() -> Any:
    from rich.console import Console

    return Console()


def _when(seconds: float | None) -> str:
    return "-" if seconds is None else time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def _cmd_ls(args: argparse.Namespace) -> int:
    from rich.table import Table

    table = Table("id", "name", "status", "trials", "best", "started", "duration")
    for exp in _store(args).list_experiments():
        total = "?" if exp.max_trials is None else str(exp.max_trials)
        end = exp.finished_at or (time.time() if exp.started_at else None)
        duration = "-" if end is None or exp.started_at is None else f"{end - exp.started_at:.1f}s"
        best = "-" if exp.best_value is None else f"{exp.best_value:.6g}"
        table.add_row(
            exp.id,
            exp.name or "",
            str(exp.status),
            f"{exp.n_finished}/{total}",
            best,
            _when(exp.started_at or exp.created_at),
            duration,
        )
    _console().print(table)
    return 0


def _trial_table(trials: list, title: str | None = None) -> Any:
    from rich.table import Table

    from hyperlab.trial import flatten_params

    table = Table("#", "status", "value", "duration", "params", title=title)
    for t in trials:
        duration = "-" if t.duration is None else f"{t.duration:.2f}s"
        value = "-" if t.value is None else f"{t.value:.6g}"
        params = ", ".join(f"{k}={v!r}" for k, v in flatten_params(t.params).items())
        table.add_row(str(t.number), str(t.status), value, duration, params)
    return table


def _cmd_show(args: argparse.Namespace) -> int:
    store = _store(args)
    record = store.get_experiment(args.id)
    trials = store.get_trials(args.id, reports=False)
    options = record.options
    console = _console()
    console.print(f"[bold]experiment {record.id}[/bold]  {record.name or ''}")
    counts: dict[str, int] = {}
    for t in trials:
        counts[str(t.status)] = counts.get(str(t.status), 0) + 1
    lines = {
        "status": str(record.status),
        "trials": ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "none yet",
        "objective": f"{options.metric or 'default'} ({options.mode})",
        "tuner": f"{options.tuner} {json.dumps(options.tuner_args)}",
        "budget": f"max_trials={options.max_trials}, max_duration={options.max_duration}",
        "executor": f"{options.executor} x{options.concurrency}",
        "trial": str(record.objective_ref),
        "seed": str(record.seed),
        "created": _when(record.created_at),
        "started": _when(record.started_at),
        "finished": _when(record.finished_at),
    }
    if record.error:
        lines["error"] = record.error.strip().splitlines()[-1]
    for key, value in lines.items():
        console.print(f"  {key:<10} {value}", highlight=False, markup=False)
    top = [t for t in options.mode.ranked(trials) if t.value is not None][:10]
    console.print(_trial_table(top, title="top 10 trials"))
    return 0


def _cmd_trials(args: argparse.Namespace) -> int:
    from hyperlab.trial import TrialStatus

    store = _store(args)
    record = store.get_experiment(args.id)
    trials = store.get_trials(args.id, reports=False)
    if args.status:
        wanted = args.status.upper()
        if wanted not in TrialStatus.__members__:
            raise ConfigError(
                f"--status: unknown status {args.status!r}; expected one of "
                f"{', '.join(TrialStatus.__members__)}"
            )
        trials = [t for t in trials if t.status.value == wanted]
    if args.sort == "metric":
        trials = record.options.mode.ranked(trials)
    elif args.sort == "duration":
        trials = sorted(trials, key=lambda t: -(t.duration or 0.0))
    if args.limit is not None:
        if args.limit < 1:
            raise ConfigError(f"--limit: expected a positive number, got {args.limit}")
        trials = trials[: args.limit]
    _console().print(_trial_table(trials))
    return 0


def _cmd_logs(args: argparse.Namespace) -> int:
    store = _store(args)
    record = store.get_experiment(args.id)
    if not args.follow:
        store.get_trial(args.id, args.trial)  # TrialNotFound names the number
    name = "stderr.log" if args.stderr else "stdout.log"
    path = store.experiment_folder(record) / "trials" / str(args.trial) / name
    if not path.exists() and not args.follow:
        raise ConfigError(
            f"trial {args.trial} of {args.id} has no {name} (function trials "
            f"print to the driver's output; command trials write {path})"
        )
    position = 0
    while True:
        finished = not args.follow or _trial_over(store, args.id, args.trial)
        if path.exists():
            with open(path, "rb") as f:
                f.seek(position)
                chunk = f.read()
                position += len(chunk)
            sys.stdout.write(chunk.decode(errors="replace"))
            sys.stdout.flush()
        if finished:  # read once more after the end was seen: nothing is left behind
            return 0
        time.sleep(0.2)


def _trial_over(store: Any, experiment_id: str, number: int) -> bool:
    """Whether ``--follow`` can stop: the trial ended, or will never run."""
    from hyperlab.errors import TrialNotFound

    try:
        return store.get_trial(experiment_id, number).status.is_finished()
    except TrialNotFound:  # not created yet: wait while the experiment may still create it
        return store.get_experiment(experiment_id).status.is_finished()


def _cmd_export(args: argparse.Namespace) -> int:
    store = _store(args)
    rows = [trial.as_row() for trial in store.get_trials(args.id, reports=False)]
    out = open(args.output, "w", newline="") if args.output else sys.stdout  # noqa: SIM115
    try:
        if args.format == "json":
            json.dump(rows, out, indent=2, default=str)
            out.write("\n")
        else:
            columns: list[str] = []
            for row in rows:
                columns.extend(c for c in row if c not in columns)
            writer = csv.DictWriter(out, fieldnames=columns)
            writer.writeheader()
            writer.writerows(rows)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _cmd_rm(args: argparse.Namespace) -> int:
    store = _store(args)
    record = store.get_experiment(args.id)
    record.check_not_running()
    if not args.yes:
        if not sys.stdin.isatty():
            raise ConfigError(f"rm: pass --yes to delete experiment {args.id} without a prompt")
        answer = input(
            f"delete experiment {args.id} ({record.name or 'unnamed'}) and its files? [y/N] "
        )
        if answer.strip().lower() not in ("y", "yes"):
            print("kept")
            return 0
    store.delete_experiment(args.id)
    shutil.rmtree(store.experiment_folder(record), ignore_errors=True)
    print(f"deleted {args.id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
