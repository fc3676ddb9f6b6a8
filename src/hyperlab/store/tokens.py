"""Experiment tokens: the secret every write to an experiment through the REST API needs.

Each experiment gets one when it is first saved, in ``<experiment folder>/token``, readable by
its owner only (mode 0600); whoever can read that file (the user who runs the experiment, the
``hyperlab`` CLI) can steer the experiment through the API. The dashboard link printed when a
server starts carries a token once; the page exchanges it for a cookie.

A token is written only to files readable by their owner alone: the token file, and a detached
driver's log (``open_private_log``), which its launcher keeps the link out of anyway.

Only the standard library is used here, so ``Experiment`` can make tokens without FastAPI; the
module lives in the store, below the server that checks tokens and everything that makes them.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "TOKEN_FILE",
    "ensure_token",
    "new_token",
    "open_private_log",
    "read_token",
    "same_token",
]

TOKEN_FILE = "token"
TOKEN_BYTES = 24


def new_token() -> str:
    """A fresh random token (URL-safe text)."""
    return secrets.token_urlsafe(TOKEN_BYTES)


def read_token(folder: Path) -> str | None:
    """The experiment's token kept in ``folder``, or None if it has none (or it is unreadable)."""
    try:
        token = (folder / TOKEN_FILE).read_text().strip()
    except OSError:
        return None
    return token or None


def ensure_token(folder: Path) -> str:
    """The experiment's token in ``folder``, created (mode 0600) if it has none yet.

    Created with ``O_EXCL``, so two processes creating it at once agree on one token.
    """
    existing = read_token(folder)
    if existing is not None:
        return existing
    folder.mkdir(parents=True, exist_ok=True)
    token = new_token()
    path = folder / TOKEN_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_token(folder) or token
    try:
        os.write(fd, token.encode() + b"\n")
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):  # a umask cannot widen 0600, but be explicit
        os.chmod(path, 0o600)
    return token


def same_token(given: str | None, expected: str | None) -> bool:
    """Whether ``given`` is ``expected``, compared in constant time."""
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


def open_private_log(path: Path) -> BinaryIO:
    """``path`` opened for appending, readable and writable by its owner only (mode 0600, made
    so also when it existed): a background driver's log, which holds whatever the driver and its
    trials print."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.fchmod(fd, 0o600)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "ab")
