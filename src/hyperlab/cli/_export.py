"""``hyperlab export`` of an experiment's trials, a batch at a time: what ``write_export``
writes for the list of every trial's row, without holding the list (a million trials are
gigabytes of rows).

JSON is written row by row, indented as ``json.dump(..., indent=2)`` indents the whole list.
CSV needs its columns (every row's, in the order they first appear) before its first row:
the rows go to a temporary file as they are read, their columns are gathered meanwhile, and
the CSV is written from that file.
"""

from __future__ import annotations

import argparse
import csv
import json
import pickle
import sys
import tempfile
from collections.abc import Iterable
from typing import IO, Any

from hyperlab.cli._common import _cell

__all__ = ["stream_export"]


def stream_export(
    args: argparse.Namespace, record: Any, batches: Iterable[list[dict[str, Any]]], key: str
) -> int:
    """Write the rows of ``batches`` to ``args.output`` (or stdout) as ``write_export`` writes
    their concatenation (``key`` names them beside the environment with ``--with-env``)."""
    out = open(args.output, "w", newline="") if args.output else sys.stdout  # noqa: SIM115
    try:
        if args.format == "json":
            _json(out, record, batches, key, with_env=args.with_env)
        else:
            _csv(out, batches)
        out.flush()
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def _json(
    out: IO[str],
    record: Any,
    batches: Iterable[list[dict[str, Any]]],
    key: str,
    *,
    with_env: bool,
) -> None:
    indent = ""
    if with_env:
        head = {"id": record.id, "name": record.name, "environment": record.environment}
        text = json.dumps(head, indent=2, default=str)
        out.write(f"{text[:-2]},\n  {json.dumps(key)}: ")  # "{...\n}" without "\n}"
        indent = "  "
    first = True
    for batch in batches:
        for row in batch:
            item = json.dumps(row, indent=2, default=str).replace("\n", "\n  " + indent)
            out.write(f"{'[' if first else ','}\n  {indent}{item}")
            first = False
    out.write("[]" if first else f"\n{indent}]")
    out.write("\n}\n" if with_env else "\n")


def _csv(out: IO[str], batches: Iterable[list[dict[str, Any]]]) -> None:
    columns: dict[str, None] = {}
    with tempfile.TemporaryFile() as spill:
        for batch in batches:
            for row in batch:
                columns.update(dict.fromkeys(row))
            pickle.dump(batch, spill, protocol=pickle.HIGHEST_PROTOCOL)
        spill.seek(0)
        writer = csv.DictWriter(out, fieldnames=list(columns))
        writer.writeheader()
        while True:
            try:
                batch = pickle.load(spill)
            except EOFError:
                break
            writer.writerows({k: _cell(v) for k, v in row.items()} for row in batch)
