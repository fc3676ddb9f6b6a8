"""``hyperlab replay ID --assessor NAME [--assessor-args ...]``: what an assessor would have done
on a stored experiment's learning curves (``Result.replay``), as a table or ``--json``.

Bad input (an unknown experiment, assessor or argument, arguments that do not parse, an
experiment without intermediate reports) is an error naming the value (exit 2).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from hyperlab._terminal import printable
from hyperlab.cli._common import make_console, open_store
from hyperlab.errors import ConfigError

__all__ = ["add_replay", "cmd_replay", "parse_assessor_args"]


def add_replay(commands: Any) -> None:
    """Add the ``replay`` command to the ``hyperlab`` subcommands."""
    command = commands.add_parser(
        "replay",
        help="what an assessor would have stopped in a stored experiment, and what it saves",
        description="Run an assessor over an experiment's stored learning curves (each trial's "
        "intermediate reports) in simulated time, feeding it as the driver would, and show "
        "which trials it would have stopped and at which step, the epochs saved, and whether "
        "the best trial would have survived.",
    )
    command.add_argument("id", help="experiment id (or its unique name)")
    command.add_argument("--assessor", required=True, help="an assessor's name: asha, median...")
    command.add_argument(
        "--assessor-args",
        default=None,
        metavar="ARGS",
        help="its arguments: a JSON object ('{\"min_resource\": 1}') or k=v,k=v "
        "(min_resource=1,max_resource=27)",
    )
    command.add_argument(
        "--order",
        choices=["time", "sequential"],
        default="time",
        help="time (default): reports in the order of their stored times; sequential: one "
        "trial at a time in number order, as with concurrency 1",
    )
    command.add_argument("--json", action="store_true", help="print JSON instead of a table")


def parse_assessor_args(text: str | None) -> dict[str, Any]:
    """``--assessor-args``: a JSON object, or ``k=v`` pairs separated by commas whose values
    are read as JSON where they parse (numbers, ``true``, ``null``) and as text otherwise.

    Raises:
        ConfigError: invalid JSON, JSON that is not an object, or a pair without ``=``.
    """
    if text is None or not text.strip():
        return {}
    text = text.strip()
    if text.startswith("{"):
        try:
            found = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--assessor-args: not valid JSON ({exc}), got {text!r}") from None
        if not isinstance(found, dict):
            raise ConfigError(f"--assessor-args: expected a JSON object, got {text!r}")
        return found
    args: dict[str, Any] = {}
    for pair in text.split(","):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"--assessor-args: expected a JSON object or k=v pairs separated by commas, "
                f"got {pair!r} in {text!r}"
            )
        try:
            args[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            args[key.strip()] = value.strip()
    return args


def cmd_replay(args: argparse.Namespace) -> int:
    """Replay the assessor; print the table and the summary, or the JSON."""
    from hyperlab.experiment import Result

    assessor_args = parse_assessor_args(args.assessor_args)
    store = open_store(args)
    result = Result.read(store, store.resolve(args.id))
    replay = result.replay(args.assessor, assessor_args, order=args.order)
    if args.json:
        print(json.dumps(replay.as_dict(), indent=2))
        return 0
    console = make_console()
    console.print(
        printable(
            f"experiment {replay.experiment_id} replayed with {replay.assessor}, reports in "
            f"{'their stored time order' if replay.order == 'time' else 'trial number order'}"
        )
    )
    console.print(_table(replay))
    for line in summary_lines(replay):
        console.print(printable(line))
    return 0


def _table(replay: Any) -> Any:
    from rich.table import Table

    single = len(replay.modes) == 1
    table = Table("#", "status", "value", "epochs", "with the assessor", "best")
    metric = replay.metrics[0] or "value"
    without, with_ = set(replay.best_without), set(replay.best_with)
    for t in replay.trials:
        value = "-" if t.value is None else f"{t.value:.6g}"
        epochs = f"{_num(t.kept_resource)}/{_num(t.resource)}"
        mark = []
        if t.number in without:
            mark.append("best" if single else "front")
        if t.number in with_:
            mark.append("best with" if single else "front with")
        table.add_row(
            str(t.number), str(t.status), value, epochs, _verdict(t, metric), ", ".join(mark)
        )
    return table


def _verdict(t: Any, metric: str) -> str:
    """What the assessor does to the trial, in words (with the judged value where it stops)."""
    last = "" if t.last_value is None else f" ({printable(metric)} {t.last_value:.6g})"
    resumed = f", resumed {t.resumes}x" if t.resumes else ""
    if t.outcome == "stopped" and t.pauses > t.resumes:
        before = f", resumed {t.resumes}x before" if t.resumes else ""
        return f"paused at step {t.stopped_at} for good{last}{before}"
    if t.outcome == "stopped":
        return f"stopped at step {t.stopped_at}{last}{resumed}"
    if t.outcome == "paused":
        return f"paused at step {t.stopped_at}{last}{resumed}"
    if t.outcome == "unfinished":
        return f"runs on (not ended in the store){resumed}"
    return f"runs to its end{resumed}"


def summary_lines(replay: Any) -> list[str]:
    """The replay's outcome in a few lines: stops, epochs saved, the best with and without."""
    stopped = replay.stopped
    lines = [
        f"stopped: {len(stopped)} of {len(replay.trials)} trials"
        + (f" ({', '.join(str(t.number) for t in stopped)})" if stopped else ""),
        f"epochs:  {_num(replay.kept_resource)} of {_num(replay.resource)} "
        f"({_num(replay.saved)} saved, {replay.saved_percent:.1f}%)",
    ]
    if len(replay.modes) == 1:
        lines += _best_lines(replay)
    else:
        kept = [n for n in replay.best_without if n in set(replay.best_with)]
        lines.append(
            f"Pareto front without it: trials {_numbers(replay.best_without)}; with it: "
            f"{_numbers(replay.best_with)} ({len(kept)} of {len(replay.best_without)} "
            "front trials survive)"
        )
    lines += [f"note: {note}" for note in replay.notes]
    return lines


def _best_lines(replay: Any) -> list[str]:
    if not replay.best_without:
        return ["best: no trial succeeded"]
    best = replay.best_without[0]
    lines = [f"best without it: trial {best}, {replay.best_value_without:.6g}"]
    if replay.best_survived:
        lines.append(f"best with it:    trial {best}, the same: it survives")
        return lines
    lost = replay.trial(best)
    why = f"stopped at step {lost.stopped_at}" if lost.stopped else "left paused"
    if replay.best_with:
        instead = replay.best_with[0]
        lines.append(
            f"best with it:    trial {instead}, {replay.best_value_with:.6g} (trial {best} "
            f"would have been {why})"
        )
    else:
        lines.append(f"best with it:    none (trial {best} would have been {why})")
    return lines


def _num(value: float) -> str:
    return f"{value:g}"


def _numbers(numbers: Any) -> str:
    return ", ".join(map(str, numbers)) or "none"
