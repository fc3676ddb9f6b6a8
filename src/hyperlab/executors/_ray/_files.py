"""Moving a trial's files between the driver's folders and a Ray node, as tar bytes.

A trial on a Ray node works in a folder of its own there; what it leaves in it reaches the
driver's trial folder through Ray's object store: its logs as they grow, each checkpoint as
soon as it is complete, the rest when the trial ends. A trial that runs again (a re-run after
its node died, a paused trial resumed, a population based training child) first gets the
checkpoints it continues from.
"""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import uuid
from collections.abc import Iterable
from pathlib import Path

from hyperlab.executors._output import ATTEMPT_FILE, LOG_FILES
from hyperlab.reporting.checkpoints import CHECKPOINTS_DIR, PREFIX

__all__ = [
    "checkpoint_names",
    "drop_checkpoints",
    "pack",
    "pack_checkpoints",
    "put_checkpoint",
    "unpack",
]

KEPT_APART = frozenset({*LOG_FILES, ATTEMPT_FILE, CHECKPOINTS_DIR})
"""What ``pack`` leaves out of a trial's folder: its logs and checkpoints travel on their own."""


def pack(folder: Path, *, skip: Iterable[str] = KEPT_APART) -> bytes | None:
    """The files of ``folder`` as tar bytes, without the top-level names in ``skip``; None
    when there is nothing else in it."""
    skipped = set(skip)
    names = sorted(n for n in os.listdir(folder) if n not in skipped) if folder.is_dir() else []
    return _tar(folder, names)


def _tar(folder: Path, names: Iterable[str]) -> bytes | None:
    """The entries ``names`` of ``folder`` as tar bytes, or None for none."""
    names = list(names)
    if not names:
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name in names:
            tar.add(folder / name, arcname=name)
    return buffer.getvalue()


def unpack(data: bytes, folder: Path) -> None:
    """Extract what ``pack`` made into ``folder`` (made if missing), replacing files there."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        if hasattr(tarfile, "data_filter"):  # refuse absolute paths and links out of it
            tar.extractall(folder, filter="data")
        else:  # pragma: no cover - Pythons without extraction filters
            tar.extractall(folder)


def checkpoint_names(trial_dir: Path) -> list[str]:
    """The complete checkpoints in ``trial_dir``, oldest first."""
    folder = trial_dir / CHECKPOINTS_DIR
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(n for n in names if n.startswith(PREFIX))


def pack_checkpoints(trial_dir: Path, names: Iterable[str]) -> bytes | None:
    """The checkpoints ``names`` of ``trial_dir`` as tar bytes, or None for none."""
    folder = trial_dir / CHECKPOINTS_DIR
    return _tar(folder, [n for n in names if (folder / n).is_dir()])


def put_checkpoint(trial_dir: Path, name: str, data: bytes) -> None:
    """Write the checkpoint ``name`` (tar bytes of ``pack_checkpoints``) into ``trial_dir``
    as ``hyperlab.checkpoint`` would: extracted aside, then renamed into place in one step."""
    folder = trial_dir / CHECKPOINTS_DIR
    target = folder / name
    if target.exists():
        return
    aside = folder / f".tmp-ray-{uuid.uuid4().hex[:12]}"
    unpack(data, aside)
    try:
        os.rename(aside / name, target)
    finally:
        shutil.rmtree(aside, ignore_errors=True)


def drop_checkpoints(trial_dir: Path, keep: Iterable[str]) -> None:
    """Delete the checkpoints of ``trial_dir`` not in ``keep`` (the node pruned them)."""
    kept = set(keep)
    folder = trial_dir / CHECKPOINTS_DIR
    for name in checkpoint_names(trial_dir):
        if name not in kept:
            shutil.rmtree(folder / name, ignore_errors=True)
