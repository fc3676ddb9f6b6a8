"""``tune.Checkpoint`` (also ``ray.train.Checkpoint``): a folder of files, or a dict.

A checkpoint reported with ``tune.report(metrics, checkpoint=...)`` is copied into the
trial's own checkpoints by ``hyperlab.checkpoint`` (atomically; the newest
``CheckpointConfig.num_to_keep`` are kept), and ``tune.get_checkpoint()`` gives back the one
the trial continues from.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = ["Checkpoint", "saved_state"]

METADATA = ".metadata.json"
"""The file of a folder checkpoint that holds its metadata, as Ray names it."""


class Checkpoint:
    """A checkpoint: a local folder (``path``), or, made by ``from_dict``, a dict.

    Args:
        path: The folder holding the checkpoint's files.

    Example:
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     torch.save(model.state_dict(), os.path.join(folder, "model.pt"))
        ...     tune.report({"loss": loss}, checkpoint=Checkpoint.from_directory(folder))
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if isinstance(path, str) and "://" in path:
            raise NotImplementedError(
                f"Checkpoint({path!r}): remote storage has no hyperlab equivalent; give a "
                "local folder"
            )
        self.path = os.fspath(path)
        self._dict: dict[str, Any] | None = None

    @classmethod
    def from_directory(cls, path: str | os.PathLike[str]) -> Checkpoint:
        """The checkpoint of the files in the folder ``path``."""
        if not Path(path).is_dir():
            raise ValueError(f"Checkpoint.from_directory: {os.fspath(path)!r} is not a folder")
        return cls(path)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Checkpoint:
        """A checkpoint holding ``data`` (Ray before 2.7); saved pickled, read by ``to_dict``."""
        if not isinstance(data, Mapping):
            raise TypeError(f"Checkpoint.from_dict: expected a dict, got {type(data).__name__}")
        made = cls.__new__(cls)
        made.path = ""
        made._dict = dict(data)
        return made

    def to_dict(self) -> dict[str, Any]:
        """The dict of a checkpoint made by ``from_dict`` (or restored from one)."""
        if self._dict is None:
            raise ValueError(
                f"Checkpoint.to_dict: {self.path!r} is a folder checkpoint; read its files "
                "with as_directory() or to_directory()"
            )
        return dict(self._dict)

    def to_directory(self, path: str | os.PathLike[str] | None = None) -> str:
        """Copy the files to ``path`` (a new temporary folder by default); return it."""
        source = self._folder("to_directory")
        target = Path(tempfile.mkdtemp(prefix="checkpoint-") if path is None else path)
        shutil.copytree(source, target, dirs_exist_ok=True)
        return os.fspath(target)

    @contextlib.contextmanager
    def as_directory(self) -> Iterator[str]:
        """The checkpoint's own folder, to read (not to change)."""
        yield self._folder("as_directory")

    def get_metadata(self) -> dict[str, Any]:
        """The metadata saved with ``set_metadata`` (``{}`` if none)."""
        file = Path(self._folder("get_metadata"), METADATA)
        return json.loads(file.read_text()) if file.exists() else {}

    def set_metadata(self, metadata: Mapping[str, Any]) -> None:
        """Save ``metadata`` (JSON) with the checkpoint, replacing what was there."""
        file = Path(self._folder("set_metadata"), METADATA)
        file.write_text(json.dumps(dict(metadata)))

    def update_metadata(self, metadata: Mapping[str, Any]) -> None:
        """Add ``metadata`` (JSON) to the checkpoint's."""
        self.set_metadata({**self.get_metadata(), **metadata})

    def _folder(self, method: str) -> str:
        if self._dict is not None:
            raise ValueError(
                f"Checkpoint.{method}: this checkpoint was made by from_dict and has no "
                "folder; read it with to_dict()"
            )
        return self.path

    def __repr__(self) -> str:
        held = "dict" if self._dict is not None else repr(self.path)
        return f"Checkpoint({held})"


def saved_state(checkpoint: Checkpoint) -> dict[str, Any] | str:
    """What ``hyperlab.checkpoint`` saves for ``checkpoint``: its dict, or its folder."""
    return checkpoint.to_dict() if checkpoint._dict is not None else checkpoint.path
