"""The ``hyperlab`` command: run experiments from config files and inspect the store.

Exit codes: 0 success; 1 the experiment ended in ERROR, no trial succeeded, a detached driver
could not start, or the store failed during a run; 2 bad input (usage, config, unknown id or
name, a store that cannot be opened, an experiment another driver runs); 130 interrupted.
Errors are one paragraph; ``--debug`` shows the traceback. Wherever an experiment id is taken,
its name works too when no other experiment has it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path

from hyperlab._terminal import printable
from hyperlab._version import __version__
from hyperlab.cli._common import trial_number
from hyperlab.cli._optuna import add_import_optuna
from hyperlab.cli._replay import add_replay
from hyperlab.cli._worker import add_worker
from hyperlab.errors import HyperlabError, StoreError, TrialError

__all__ = ["main"]

COMMANDS = {
    "run": "_running",
    "resume": "_running",
    "stop": "_running",
    "ls": "_reading",
    "show": "_reading",
    "trials": "_reading",
    "logs": "_reading",
    "export": "_reading",
    "rm": "_reading",
    "serve": "_steering",
    "dashboard": "_steering",
    "view": "_steering",
    "update-space": "_steering",
    "add-trial": "_steering",
    "import": "_steering",
    "import-optuna": "_optuna",
    "replay": "_replay",
    "worker": "_worker",
}
"""Each command's module in ``hyperlab.cli``, imported only when the command runs (so that
``hyperlab --help`` and a parse error cost no import of what the commands use); its function
is ``cmd_`` and the command's name with ``-`` as ``_`` (``dashboard``: ``cmd_serve``)."""


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    """The function that runs command ``name``, its module imported now."""
    module = importlib.import_module(f"hyperlab.cli.{COMMANDS[name]}")
    function = "serve" if name == "dashboard" else name.replace("-", "_")
    handler: Callable[[argparse.Namespace], int] = getattr(module, f"cmd_{function}")
    return handler


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hyperlab", description="Run, tune and track experiments."
    )
    parser.add_argument("--version", action="version", version=f"hyperlab {__version__}")
    _global_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    run = commands.add_parser(
        "run", help="run an experiment from a config file (YAML/JSON, NNI's too)"
    )
    run.add_argument("config", help="path to the config file")
    run.add_argument(
        "--detach",
        action="store_true",
        help="run in the background; print the id once its driver runs",
    )
    resume = commands.add_parser("resume", help="continue a stopped or crashed experiment")
    resume.add_argument("id", help="experiment id (or its unique name)")
    resume.add_argument(
        "--max-trials", type=int, metavar="N", help="trials to create in all from now on"
    )
    resume.add_argument(
        "--max-duration", metavar="D", help="experiment time in all: seconds, or 90s, 30m, 2h, 1d"
    )
    resume.add_argument("--concurrency", type=int, metavar="C", help="trials at once from now on")
    resume.add_argument("--quiet", action="store_true", help=argparse.SUPPRESS)
    serve = commands.add_parser(
        "serve",
        aliases=["dashboard"],
        help="serve the dashboard and REST API of every experiment of the store",
    )
    view = commands.add_parser("view", help="serve one experiment's dashboard page")
    view.add_argument("id", help="experiment id (or its unique name)")
    for sub in (run, resume, serve, view):
        serving = sub in (serve, view)
        sub.add_argument(
            "--port",
            type=int,
            default=8080 if serving else None,
            help="serve the dashboard and REST API (NNI's too) on this port"
            + (" (default 8080; 0 picks a free one)" if serving else " while it runs"),
        )
        sub.add_argument(
            "--host",
            default="127.0.0.1",
            help="address to serve on (default 127.0.0.1; beyond loopback every request "
            "needs the token)",
        )
    stop = commands.add_parser("stop", help="stop a running experiment (trials: SYS_CANCELED)")
    stop.add_argument("id", help="experiment id (or its unique name)")
    ls = commands.add_parser("ls", help="list experiments")
    ls.add_argument("--status", help="only experiments with this status (e.g. RUNNING)")
    ls.add_argument("--name", help="only experiments with this name (wildcards: * ?)")
    ls.add_argument("--json", action="store_true", help="print JSON instead of a table")
    show = commands.add_parser("show", help="an experiment's config, status and top 10 trials")
    show.add_argument("id", help="experiment id (or its unique name)")
    show.add_argument(
        "--env",
        action="store_true",
        help="list the whole environment it was created in: git status and diff, packages...",
    )
    trials = commands.add_parser("trials", help="an experiment's trials")
    trials.add_argument("id", help="experiment id (or its unique name)")
    trials.add_argument("--status", help="only trials with this status (e.g. FAILED)")
    trials.add_argument(
        "--sort",
        default="number",
        help="number (default), metric (the first objective, best first), duration (longest "
        "first), or a metric's name: an objective best first in its direction, another metric "
        "ascending; a leading - reverses it (--sort=-loss)",
    )
    trials.add_argument("--desc", action="store_true", help="reverse the --sort order")
    trials.add_argument("--limit", type=int, help="show at most N trials")
    logs = commands.add_parser(
        "logs",
        help="a trial's stdout (or stderr), or its error",
        description="Print a trial's stdout.log (or stderr.log) as the trial wrote it, as `cat` "
        "would: control characters and escape sequences in it reach the terminal as they are "
        "(every other command shows them escaped). For a function trial without log files, its "
        "stored error, likewise.",
    )
    logs.add_argument("id", help="experiment id (or its unique name)")
    logs.add_argument("trial", type=trial_number, help="trial number")
    logs.add_argument("--stderr", action="store_true", help="show stderr.log instead")
    logs.add_argument("--follow", "-f", action="store_true", help="keep printing until it ends")
    export = commands.add_parser("export", help="one row per trial as CSV or JSON")
    export.add_argument("id", help="experiment id (or its unique name)")
    export.add_argument("--format", choices=["csv", "json"], default="csv")
    export.add_argument("-o", "--output", help="file to write (default: standard output)")
    export.add_argument(
        "--pivot",
        action="store_true",
        help="a research: one row per config x repetition x iteration, a column per variable",
    )
    export.add_argument(
        "--with-env",
        action="store_true",
        help='JSON only: write {"id", "name", "environment", "trials"} instead of the trials list',
    )
    space = commands.add_parser(
        "update-space", help="give a running experiment a new search space (NNI JSON/YAML file)"
    )
    space.add_argument("id", help="experiment id (or its unique name)")
    space.add_argument("space", help="the search space file")
    add = commands.add_parser(
        "add-trial", help="run a trial with the given params next (counted in max_trials)"
    )
    add.add_argument("id", help="experiment id (or its unique name)")
    add.add_argument("params", help="a JSON object ('{\"lr\": 0.01}'), or @file.json")
    imports = commands.add_parser(
        "import", help="feed past results (params and value) to a running experiment's tuner"
    )
    imports.add_argument("id", help="experiment id (or its unique name)")
    imports.add_argument(
        "file", help='a JSON list of {"params": ..., "value": ...} (or NNI\'s export format)'
    )
    add_import_optuna(commands)
    add_replay(commands)
    add_worker(commands)
    rm = commands.add_parser("rm", help="delete an experiment, its trials and its files")
    rm.add_argument("id", help="experiment id (or its unique name)")
    rm.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    for command in {id(sub): sub for sub in commands.choices.values()}.values():  # aliases once
        _global_options(command, default=argparse.SUPPRESS)
    return parser


def _global_options(parser: argparse.ArgumentParser, default: object = None) -> None:
    """The options every command takes, before its name or after it (``hyperlab ls --storage
    URL``). A command's own parser gets them with ``argparse.SUPPRESS`` as their default, so
    that one given before the command's name is kept when it is not given again after."""
    parser.add_argument(
        "--home",
        default=default,
        help="hyperlab home folder (default $HYPERLAB_HOME or ~/.hyperlab)",
    )
    parser.add_argument(
        "--storage",
        default=default,
        help="database URL or SQLite file (default: <home>/hyperlab.db)",
    )
    flag = False if default is None else default
    parser.add_argument(
        "--storage-from-env", action="store_true", default=flag, help=argparse.SUPPRESS
    )
    parser.add_argument("--debug", action="store_true", default=flag, help="show tracebacks")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    warnings.formatwarning = _format_warning
    if args.home:
        os.environ["HYPERLAB_HOME"] = str(Path(args.home).expanduser().resolve())
    if args.storage_from_env:
        from hyperlab.experiment import DETACHED_STORAGE_VAR

        args.storage = os.environ.pop(DETACHED_STORAGE_VAR, None)
    handler = _command(args.command)
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("hyperlab: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `hyperlab export ID | head`: the reader has had enough
        _silence_stdout()
        return 0
    except HyperlabError as exc:
        if args.debug:
            raise
        print(f"hyperlab: error: {printable(str(exc), newlines=True)}", file=sys.stderr)
        # trials failed, or the store failed while in use: 1; a store that cannot be opened
        # (BadStore), an unknown id (a KeyError too) and every other error is bad input: 2
        failed = isinstance(exc, TrialError | StoreError) and not isinstance(exc, KeyError)
        return 1 if failed else 2


_format_other_warning = warnings.formatwarning


def _format_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    """hyperlab's own warnings as one line, like its errors; other warnings as Python shows them."""
    if Path(filename).resolve().is_relative_to(Path(__file__).resolve().parents[1]):
        return f"hyperlab: warning: {printable(str(message), newlines=True)}\n"
    return _format_other_warning(message, category, filename, lineno, line)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so flushing it at exit does not raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor: nothing will be flushed to it
        pass
