"""``hyperlab worker ID``: join a running experiment as a worker and run its trials."""

from __future__ import annotations

import argparse
import json
from typing import Any

from hyperlab.errors import ConfigError

__all__ = ["add_worker", "cmd_worker"]


def add_worker(commands: Any) -> None:
    """Add the ``worker`` command to the ``hyperlab`` subcommands."""

    worker = commands.add_parser(
        "worker",
        help="run trials of a running experiment (executor 'pool') on this machine",
        description="Join a running experiment through its store (PostgreSQL for workers on "
        "other machines than the driver) and run the trials its driver offers, until it ends. "
        "The driver decides everything else (tuner, assessor, budget).",
    )
    worker.add_argument("id", help="experiment id (or its unique name)")
    worker.add_argument("--concurrency", type=int, default=1, metavar="N", help="trials at once")
    worker.add_argument(
        "--executor",
        choices=["processes", "threads", "command"],
        help="how trials run here (default: processes, or command for command trials)",
    )
    worker.add_argument(
        "--gpus",
        metavar="G",
        help="GPUs of this machine for trials: auto, 0,1,... or a JSON object of run's gpus",
    )
    worker.add_argument(
        "--ttl",
        type=float,
        default=15.0,
        metavar="S",
        help="seconds without a heartbeat after which the driver runs this worker's trials "
        "again elsewhere (default 15)",
    )
    worker.add_argument(
        "--max-trials",
        type=int,
        metavar="N",
        help="run at most N trials (re-runs of a lost worker's trials not counted), then leave",
    )


def cmd_worker(args: argparse.Namespace) -> int:
    from hyperlab.pool import Worker

    done = Worker(
        args.id,
        storage=args.storage,
        concurrency=args.concurrency,
        executor=args.executor,
        gpus=_gpus(args.gpus),
        ttl=args.ttl,
        max_trials=args.max_trials,
    ).run()
    print(f"worker: {done} trials of experiment {args.id} ran here")
    return 0


def _gpus(text: str | None) -> Any:
    """``--gpus`` as ``run``'s ``gpus``: None, ``{"indices": "auto"}``, a list, or a mapping."""
    if text is None:
        return None
    if text == "auto":
        return {"indices": "auto"}
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--gpus: expected a JSON object, got {text!r} ({exc})") from None
    try:
        return {"indices": [int(part) for part in text.split(",")]}
    except ValueError:
        raise ConfigError(
            f"--gpus: expected auto, device indices (0,1) or a JSON object, got {text!r}"
        ) from None
