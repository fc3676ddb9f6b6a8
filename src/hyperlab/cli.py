"""The ``hyperlab`` command."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence

from hyperlab import __version__
from hyperlab.errors import HyperlabError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hyperlab", description=__doc__)
    parser.add_argument("--version", action="version", version=f"hyperlab {__version__}")
    parser.add_argument(
        "--home", help="hyperlab home folder (default $HYPERLAB_HOME or ~/.hyperlab)"
    )
    parser.add_argument("--storage", help="database URL (default: <home>/hyperlab.db)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("ls", help="list experiments")
    return parser


def _ls(storage: str | None) -> int:
    from rich.console import Console
    from rich.table import Table

    from hyperlab.store import Store

    table = Table("id", "name", "status", "trials", "best", "started", "duration")
    for exp in Store.open(storage).list_experiments():
        total = "?" if exp.max_trials is None else str(exp.max_trials)
        started = exp.started_at or exp.created_at
        end = exp.finished_at or (time.time() if exp.started_at else None)
        duration = "-" if end is None or exp.started_at is None else f"{end - exp.started_at:.1f}s"
        table.add_row(
            exp.id,
            exp.name or "",
            str(exp.status),
            f"{exp.n_finished}/{total}",
            "-" if exp.best_value is None else f"{exp.best_value:.6g}",
            time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)),
            duration,
        )
    Console().print(table)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 1 failure, 2 usage error)."""
    args = _parser().parse_args(argv)
    if args.home:
        os.environ["HYPERLAB_HOME"] = args.home
    try:
        if args.command == "ls":
            return _ls(args.storage)
        _parser().print_help()
        return 2
    except HyperlabError as exc:
        if args.debug:
            raise
        print(f"hyperlab: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
