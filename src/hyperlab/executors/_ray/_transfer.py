"""The driver's side of a Ray trial's files: what goes to its node, what comes back.

A trial that continues earlier work gets its checkpoints with it (``checkpoints_for``); what
each ``Batch`` brings back (output, checkpoints, at its end the rest of its folder) is written
into the trial's folder under the driver's experiment folder (``deliver_files``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from hyperlab.executors._ray._actor import Batch
from hyperlab.executors._ray._files import (
    checkpoint_names,
    drop_checkpoints,
    pack_checkpoints,
    put_checkpoint,
    unpack,
)
from hyperlab.executors.base import TrialSpec

__all__ = ["checkpoints_for", "deliver_files"]


def checkpoints_for(spec: TrialSpec) -> tuple[bytes | None, bytes | None]:
    """The trial's own checkpoints (a run after others) and the newest of the trial it
    continues (``restore_from``), as tar bytes for its node."""
    own = restore = None
    if spec.trial_dir is not None and not spec.fresh:
        folder = Path(spec.trial_dir)
        own = pack_checkpoints(folder, checkpoint_names(folder))
    if spec.restore_from is not None and spec.trial_dir is not None:
        folder = Path(spec.trial_dir)
        if not checkpoint_names(folder):
            parent = Path(spec.restore_from)
            restore = pack_checkpoints(parent, checkpoint_names(parent)[-1:])
    return own, restore


def deliver_files(spec: TrialSpec | None, batch: Batch) -> None:
    """Write what ``batch`` brought of the trial's files into its folder (if it has one).

    A failure to write is said on the driver's stderr; the trial goes on.
    """
    if spec is None or spec.trial_dir is None:
        return
    folder = Path(spec.trial_dir)
    try:
        for data, name in ((batch.out, "stdout.log"), (batch.err, "stderr.log")):
            if data:
                with open(folder / name, "ab") as log:
                    log.write(data)
        for name, data in batch.checkpoints.items():
            put_checkpoint(folder, name, data)
        if batch.checkpoints or batch.end is not None:
            drop_checkpoints(folder, batch.kept)
        if batch.files is not None:
            unpack(batch.files, folder)
    except OSError as exc:  # the driver's disk: say so in the driver's stderr, go on
        print(
            f"hyperlab: trial {spec.number}: its files could not be written: {exc}",
            file=sys.stderr,
        )
