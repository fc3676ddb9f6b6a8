"""Checkpoints on disk: what ``hyperlab.checkpoint`` writes and ``load_checkpoint`` reads.

A trial's checkpoints live in its folder, one complete folder each, numbered in order::

    <trial folder>/checkpoints/             (HYPERLAB_CHECKPOINT_DIR in a command trial)
      checkpoint-000000/
        meta.json    {"format": 1, "kind": "state" | "folder", "step": <its last report's step>,
                      "report": <that report's metrics>, "trial_id", "attempt", "time", and
                      "bytes" + "sha256" of state.pkl, or "files":
                      {relative path: size} of files/; "restored_from" in a copy}
        state.pkl    the dict given to checkpoint(), pickled (kind "state")
        files/       a copy of the folder given to checkpoint() (kind "folder")
      checkpoint-000001/ ...
      .tmp-<pid>-<random>-<host>/      a checkpoint being written: never read
      .trash-<pid>-<random>-<host>/    an old checkpoint being deleted: never read

A checkpoint is written into a ``.tmp-`` folder (each file fsynced, then the folders), and renamed
to the next free ``checkpoint-<n>`` in one step, so a reader sees it whole or not at all. Only the
newest ``checkpoint_keep`` are kept (with ``checkpoint_score``, the ``checkpoint_keep`` whose
reports scored best, and the newest: see ``prune``): the others are renamed to ``.trash-`` first,
then deleted, and the ``.tmp-``/``.trash-`` folders of writers that died (on this host) are
removed. A reader checks a checkpoint against its ``meta.json`` (the size and SHA-256 of
``state.pkl``; the size of each copied file) and reports a mismatch as ``Corrupt``, naming the
file. A trial that continues another (population based training) copies that trial's newest
checkpoint into its own folder (hard links where it can: files are never changed once written), so
it keeps what it started from whatever the other trial deletes later.

Only the standard library is used here (cloudpickle when it is installed), so that command
trials run by another interpreter can checkpoint too.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pickle
import shutil
import socket
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from hyperlab.errors import HyperlabError

__all__ = [
    "CHECKPOINTS_DIR",
    "FILES",
    "PREFIX",
    "Corrupt",
    "latest",
    "pickle_state",
    "prune",
    "type_name",
    "write_checkpoint",
]

CHECKPOINTS_DIR = "checkpoints"
"""The folder of a trial's checkpoints, inside its own folder."""

FORMAT = 1
PREFIX = "checkpoint-"
TEMP = ".tmp-"
TRASH = ".trash-"
META = "meta.json"
STATE = "state.pkl"
FILES = "files"
RENAME_TRIES = 100
"""Numbers tried for a new checkpoint (other processes of the trial may take one meanwhile)."""
RESCANS = 5
"""Times a folder is listed again when a checkpoint vanished while it was read."""


class Corrupt(Exception):
    """A checkpoint that cannot be read: ``file`` is the culprit, ``reason`` says why."""

    def __init__(self, file: Path, reason: str) -> None:
        super().__init__(f"{file}: {reason}")
        self.file = file
        self.reason = reason


class _Gone(Exception):
    """A checkpoint deleted while it was read (a newer one replaced it)."""


def type_name(value: Any) -> str:
    """``value``'s type as users write it: ``int``, ``_thread.lock``, ``numpy.ndarray``."""
    kind = type(value)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def pickle_state(state: Mapping[str, Any]) -> bytes:
    """``state`` as a dict, cloudpickled (pickled where cloudpickle is not installed).

    Raises:
        HyperlabError: Naming the first key whose value cannot be pickled, and its type.
    """
    try:
        import cloudpickle

        dumps: Callable[..., bytes] = cloudpickle.dumps
    except ImportError:  # a command trial run by an interpreter without it
        dumps = pickle.dumps
    try:
        return dumps(dict(state), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        for key, value in state.items():
            try:
                dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as error:
                raise HyperlabError(
                    f"checkpoint(): the value of {key!r} cannot be pickled: a "
                    f"{type_name(value)} ({type(error).__name__}: {error})"
                ) from None
        raise HyperlabError(
            f"checkpoint(): the state cannot be pickled ({type(exc).__name__}: {exc})"
        ) from None


def checkpoints(folder: Path) -> list[Path]:
    """The complete checkpoints in ``folder``, oldest first."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    numbered = [
        (int(name[len(PREFIX) :]), name)
        for name in names
        if name.startswith(PREFIX) and name[len(PREFIX) :].isdigit()
    ]
    return [folder / name for _, name in sorted(numbered)]


def write_checkpoint(
    folder: Path,
    meta: dict[str, Any],
    *,
    payload: bytes | None = None,
    source: Path | None = None,
    link: bool = False,
) -> Path:
    """Write one checkpoint into ``folder`` atomically and return its path.

    Args:
        folder: The trial's checkpoints folder (created if needed).
        meta: What ``meta.json`` records besides the format, kind, time and contents.
        payload: The pickled state, or None to copy ``source``.
        source: A folder whose contents are copied.
        link: Hard-link ``source``'s files where possible (they are checkpoint files).
    """
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / _unique(TEMP)
    temp.mkdir()
    try:
        meta = {"format": FORMAT, **meta, "time": time.time()}
        if payload is not None:
            _write_file(temp / STATE, payload)
            digest = hashlib.sha256(payload).hexdigest()
            meta.update(kind="state", bytes=len(payload), sha256=digest)
        elif source is not None:
            copy = _link_or_copy if link else _copy_synced
            shutil.copytree(source, temp / FILES, copy_function=copy)
            meta.update(kind="folder", files=_manifest(temp / FILES))
        else:
            raise ValueError("write_checkpoint needs a payload or a source folder")
        _write_file(temp / META, json.dumps(meta).encode())
        _sync(temp, directory=True)
        for _ in range(RENAME_TRIES):
            existing = checkpoints(folder)
            number = int(existing[-1].name[len(PREFIX) :]) + 1 if existing else 0
            target = folder / f"{PREFIX}{number:06d}"
            try:
                os.rename(temp, target)  # atomic; refused if the name was taken meanwhile
                break
            except OSError:
                if not target.exists():
                    raise
        else:
            raise HyperlabError(f"checkpoint(): found no free checkpoint number in {folder}")
        _sync(folder, directory=True)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return target


def prune(folder: Path, keep: int, score: tuple[str, str] | None = None) -> None:
    """Delete all but the newest ``keep`` checkpoints, and what dead writers left behind.

    With ``score`` (``(metric, "min" | "max")``), keep instead the ``keep`` checkpoints whose
    report (the last one before each, in its ``meta.json``) is best in that metric, and the
    newest whatever its score (a resumed or continued trial starts from it): as Ray's
    ``CheckpointConfig(num_to_keep, checkpoint_score_attribute, checkpoint_score_order)``. A
    checkpoint whose report lacks the metric, or holds no finite number there, ranks below all
    others; of equal scores the newer ranks higher.
    """
    found = checkpoints(folder)
    doomed = found[: -max(1, keep)] if score is None else _worst(found, max(1, keep), score)
    for path in doomed:
        trash = folder / _unique(TRASH)
        try:
            os.rename(path, trash)  # first, so that no reader ever sees it half deleted
        except OSError:
            continue
        shutil.rmtree(trash, ignore_errors=True)
    host = socket.gethostname()
    for name in os.listdir(folder):
        if name.startswith((TEMP, TRASH)):
            _, pid, _, where = [*name.split("-", 3), "", "", ""][:4]
            if where != host or not pid.isdigit() or int(pid) == os.getpid():
                continue
            if not _alive(int(pid)):
                shutil.rmtree(folder / name, ignore_errors=True)


def _worst(found: list[Path], keep: int, score: tuple[str, str]) -> list[Path]:
    """The checkpoints of ``found`` (oldest first) outside the best ``keep`` by ``score``,
    less the newest."""
    if len(found) <= keep:
        return []
    metric, order = score
    sign = -1.0 if order == "min" else 1.0

    def rank(index: int) -> tuple[bool, float, int]:
        try:
            value = json.loads((found[index] / META).read_bytes())["report"][metric]
        except (OSError, ValueError, KeyError, TypeError):
            return False, 0.0, index
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            return False, 0.0, index
        return True, sign * value, index

    best = sorted(range(len(found)), key=rank, reverse=True)[:keep]
    kept = {*best, len(found) - 1}
    return [path for index, path in enumerate(found) if index not in kept]


def latest(
    folder: Path,
    corrupt: list[Corrupt],
    *,
    copy_to: Path | None = None,
    trial_id: str = "",
) -> tuple[Any, dict[str, Any], Path] | None:
    """``(value, meta, path)`` of the newest intact checkpoint in ``folder``, or None.

    The value is the unpickled dict, or the path of the copied folder. Corrupt checkpoints are
    skipped and appended to ``corrupt``. With ``copy_to``, the checkpoint found is copied there
    first (a new checkpoint of trial ``trial_id``), and the copy is what is returned.

    Raises:
        HyperlabError: An intact ``state.pkl`` cannot be unpickled here.
    """
    seen: set[Path] = set()
    for _ in range(RESCANS):  # a checkpoint vanished: a newer one replaced it, look again
        try:
            for path in reversed(checkpoints(folder)):
                if path in seen:
                    continue
                seen.add(path)
                try:
                    value, meta, payload = _read(path)
                except Corrupt as bad:
                    corrupt.append(bad)
                    continue
                if copy_to is None:
                    return value, meta, path
                return _copy(path, value, meta, payload, copy_to, trial_id)
            return None
        except _Gone:
            continue
    return None


def _copy(
    path: Path,
    value: Any,
    meta: dict[str, Any],
    payload: bytes | None,
    target: Path,
    trial_id: str,
) -> tuple[Any, dict[str, Any], Path]:
    """Copy the checkpoint at ``path`` (just read) into the folder ``target``."""
    kept = {
        "step": meta.get("step"),
        "report": meta.get("report"),
        "trial_id": trial_id,
        "restored_from": str(path),
    }
    source = None if payload is not None else path / FILES
    try:
        copy = write_checkpoint(target, kept, payload=payload, source=source, link=True)
    except (OSError, shutil.Error):
        if not path.exists():
            raise _Gone from None
        raise
    return (value if payload is not None else copy / FILES), meta, copy


def _read(path: Path) -> tuple[Any, dict[str, Any], bytes | None]:
    """``(value, meta, pickled bytes or None)`` of one checkpoint; ``Corrupt`` or ``_Gone``."""

    def fail(file: Path, reason: str) -> Exception:
        return _Gone() if not path.exists() else Corrupt(file, reason)

    meta_file = path / META
    try:
        meta = json.loads(meta_file.read_bytes())
    except FileNotFoundError:
        raise fail(meta_file, "missing: the checkpoint is incomplete") from None
    except (OSError, ValueError) as exc:
        raise fail(meta_file, f"{type(exc).__name__}: {exc}") from None
    if not isinstance(meta, dict) or meta.get("kind") not in ("state", "folder"):
        raise fail(meta_file, "not the description of a checkpoint")
    if meta["kind"] == "folder":
        files = meta.get("files")
        if not isinstance(files, dict):
            raise fail(meta_file, "it lists no files")
        for name, size in files.items():
            file = path / FILES / name
            try:
                actual = file.stat().st_size
            except OSError:
                raise fail(file, "missing") from None
            if actual != size:
                raise fail(file, f"{actual} bytes where {size} were saved")
        return path / FILES, meta, None
    file = path / STATE
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise fail(file, f"{type(exc).__name__}: {exc}") from None
    if len(data) != meta.get("bytes") or hashlib.sha256(data).hexdigest() != meta.get("sha256"):
        raise fail(file, f"its {len(data)} bytes do not match the size and checksum in {META}")
    try:
        return pickle.loads(data), meta, data
    except Exception as exc:
        raise HyperlabError(
            f"load_checkpoint(): {file} is intact but cannot be unpickled here "
            f"({type(exc).__name__}: {exc})"
        ) from None


def _unique(prefix: str) -> str:
    return f"{prefix}{os.getpid()}-{os.urandom(4).hex()}-{socket.gethostname()}"


def _sync(path: Path, *, directory: bool = False) -> None:
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECTORY if directory else 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)


def _copy_synced(source: str, target: str) -> None:
    shutil.copyfile(source, target)
    _sync(Path(target))


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:  # another file system, or no hard links there
        _copy_synced(source, target)


def _manifest(folder: Path) -> dict[str, int]:
    """``{relative path: size}`` of every file under ``folder``; fsyncs its folders."""
    files = {}
    for root, _, names in os.walk(folder):
        for name in names:
            path = Path(root, name)
            files[path.relative_to(folder).as_posix()] = path.stat().st_size
        _sync(Path(root), directory=True)
    return files


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # someone else's process
        return True
    return True
