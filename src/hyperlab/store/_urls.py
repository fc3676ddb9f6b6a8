"""Storage strings (``None``, ``":memory:"``, paths, URLs) turned into database URLs."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from hyperlab.errors import ConfigError
from hyperlab.store._paths import home

__all__ = ["MEMORY_URL", "StorageTarget", "mask_url", "resolve_storage"]

MEMORY_URL = "sqlite://"
"""The URL of a store kept in memory (``storage=":memory:"``)."""

_EXPECTED = "expected ':memory:', a sqlite:/// URL or file path, or a postgresql:// URL"
_FILE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
_PASSWORD = re.compile(r"(://[^:/@]*:)[^@/]*@")


@dataclass(frozen=True)
class StorageTarget:
    """A resolved storage string.

    Attributes:
        url: The SQLAlchemy URL, with the password if one was given.
        kind: ``"memory"``, ``"sqlite"`` (a file) or ``"postgresql"``.
        path: The database file, for ``kind == "sqlite"``.
    """

    url: str
    kind: Literal["memory", "sqlite", "postgresql"]
    path: Path | None = None


def mask_url(url: str) -> str:
    """``url`` with its password replaced by ``***``, for messages and logs."""
    return _PASSWORD.sub(r"\1***@", url)


def resolve_storage(storage: str | os.PathLike[str] | None) -> StorageTarget:
    """Turn what the user gave as ``storage`` into a database URL.

    Args:
        storage: None for ``<home>/hyperlab.db`` (see ``hyperlab.store._paths.home``);
            ``":memory:"``; a ``sqlite:///`` URL or a path ending in ``.db`` (also ``.sqlite``,
            ``.sqlite3``); a ``postgresql://`` or ``postgresql+psycopg://`` URL.

    Raises:
        ConfigError: for anything else; the message names what was received.
    """
    if storage is None:
        return _sqlite_file(home() / "hyperlab.db")
    if isinstance(storage, os.PathLike):
        return _sqlite_file(Path(os.fspath(storage)))
    if not isinstance(storage, str):
        raise ConfigError(f"storage: {_EXPECTED}, got {type(storage).__name__} {storage!r}")
    text = storage.strip()
    if text == ":memory:":
        return StorageTarget(MEMORY_URL, "memory")
    if "://" not in text:
        if text.lower().endswith(_FILE_SUFFIXES):
            return _sqlite_file(Path(text))
        raise ConfigError(
            f"storage: {mask_url(text)!r} is neither a URL nor a path ending in .db; {_EXPECTED}"
        )
    scheme = text.split("://", 1)[0].lower()
    if scheme in ("sqlite", "sqlite+pysqlite"):
        return _sqlite_url(text)
    if scheme in ("postgresql", "postgresql+psycopg"):
        return _postgresql_url(text)
    raise ConfigError(f"storage: unknown URL scheme {scheme!r} in {mask_url(text)!r}; {_EXPECTED}")


def _sqlite_file(path: Path) -> StorageTarget:
    path = Path(os.path.abspath(path.expanduser()))
    path.parent.mkdir(parents=True, exist_ok=True)
    url = URL.create("sqlite", database=str(path)).render_as_string()
    return StorageTarget(url, "sqlite", path)


def _sqlite_url(text: str) -> StorageTarget:
    url = _parse(text)
    if url.host or url.query:
        raise ConfigError(
            f"storage: a sqlite URL takes no host or options, got {text!r}; "
            "use sqlite:///relative.db or sqlite:////absolute/path.db"
        )
    if url.database in (None, "", ":memory:"):
        return StorageTarget(MEMORY_URL, "memory")
    return _sqlite_file(Path(url.database))


def _postgresql_url(text: str) -> StorageTarget:
    url = _parse(text).set(drivername="postgresql+psycopg")
    return StorageTarget(url.render_as_string(hide_password=False), "postgresql")


def _parse(text: str) -> URL:
    try:
        return make_url(text)
    except ArgumentError as exc:
        raise ConfigError(f"storage: cannot parse {mask_url(text)!r}: {exc}; {_EXPECTED}") from None
