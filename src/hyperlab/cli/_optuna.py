"""``hyperlab import-optuna STORAGE_URL --study NAME``: an Optuna study's complete trials as a
new experiment, which ``hyperlab.compat.optuna.create_study(..., load_if_exists=True)`` or
``hyperlab.resume(id, objective=...)`` continues.

Nothing is written unless the whole study reads and translates: an unreachable database, an
unknown study (the message lists the names found), a multi-objective study or one without a
complete trial is an error (exit 2).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from hyperlab._terminal import printable
from hyperlab.cli._common import hyperlab_command, open_store

__all__ = ["add_import_optuna", "cmd_import_optuna"]


def add_import_optuna(commands: Any) -> None:
    """Add the ``import-optuna`` command to the ``hyperlab`` subcommands."""
    command = commands.add_parser(
        "import-optuna",
        help="create an experiment from an Optuna study's complete trials (needs optuna)",
    )
    command.add_argument(
        "storage_url",
        metavar="STORAGE_URL",
        help="the Optuna study's database URL (sqlite:///study.db, postgresql://...)",
    )
    command.add_argument("--study", required=True, help="the Optuna study's name")
    command.add_argument("--name", help="the experiment's name (default: the study's)")


def cmd_import_optuna(args: argparse.Namespace) -> int:
    """Import the study; print what was imported, what was skipped, how to continue."""
    from hyperlab.compat.optuna.study_import import create_experiment, read_study

    imported = read_study(args.storage_url, args.study)
    store = open_store(args)
    name = args.name or args.study
    source = f"Optuna study {args.study!r} (imported; no objective stored)"
    record = create_experiment(store, imported, name=name, source=source)
    count = len(imported.results)
    print(
        f"experiment {record.id} ({name!r}): imported {count} complete trial"
        f"{'' if count == 1 else 's'} of Optuna study {args.study!r} as results fed to its "
        f"tuner (metric 'value', mode {imported.mode})"
    )
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(imported.skipped.items()))
    print(f"skipped: {skipped or 'none'}")
    print("search space:" if imported.space else "search space: empty")
    for param, spec in imported.space.items():
        print(f"  {printable(param)}: {spec['_type']} {json.dumps(spec['_value'])}")
    if imported.left_out:
        print(
            "left out (not in every complete trial with one distribution): "
            + printable(", ".join(imported.left_out))
        )
    print(
        f"continue it: hyperlab.compat.optuna.create_study(study_name={name!r}, "
        f"storage={store.masked_url!r}, load_if_exists=True), or "
        f"hyperlab.resume({record.id!r}, objective=..., storage=...); "
        f"`{hyperlab_command(store)} show {record.id}` shows it"
    )
    return 0
