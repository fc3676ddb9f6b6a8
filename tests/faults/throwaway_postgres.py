"""A PostgreSQL server of a test's own, to stop and restart under a running experiment.

``initdb`` makes a cluster in a new folder under the temp folder, and ``pg_ctl`` runs it on a
free port of 127.0.0.1 (its socket in that folder too), with trust authentication and no fsync.
PostgreSQL refuses to run as root: as root, every command runs as the ``postgres`` user
(``runuser``), which owns the folder. ``ThrowawayPostgres.find`` says why when none can run.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from pathlib import Path

from sqlalchemy import create_engine, text

__all__ = ["ThrowawayPostgres"]


def _binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on the PATH, else Debian's newest."""
    on_path = shutil.which("initdb")
    if on_path and shutil.which("pg_ctl"):
        return Path(on_path).parent
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: [int(part) for part in Path(path).parts[-3].split(".") if part.isdigit()],
    )
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ThrowawayPostgres:
    """A PostgreSQL cluster in a temporary folder; ``start``, ``stop``, ``restart``, ``remove``.

    Args:
        bin_dir: The folder of ``initdb`` and ``pg_ctl``.
        user: The user the server runs as (None: this process's own).
    """

    def __init__(self, bin_dir: Path, user: str | None) -> None:
        self.bin_dir = bin_dir
        self.user = user
        self.folder = Path(tempfile.mkdtemp(prefix="hyperlab-pg-"))
        if user is not None:
            shutil.chown(self.folder, user)
        self.data = self.folder / "data"
        self.log = self.folder / "server.log"
        self.port = _free_port()
        self._run("initdb", "-D", self.data, "-A", "trust", "-U", "postgres", "--no-sync")

    @classmethod
    def find(cls) -> tuple[Path | None, str | None, str]:
        """(binaries, user to run as, why not): ``why`` is "" when a server can be made."""
        bin_dir = _binaries()
        if bin_dir is None:
            return None, None, "no PostgreSQL server binaries (initdb, pg_ctl) on the PATH"
        if os.geteuid() != 0:
            return bin_dir, None, ""
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return bin_dir, None, "running as root, and there is no postgres user to run as"
        if shutil.which("runuser") is None:
            return bin_dir, None, "running as root, and there is no runuser to run as postgres"
        return bin_dir, "postgres", ""

    @property
    def url(self) -> str:
        """The URL of the ``postgres`` database."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def new_database(self) -> str:
        """Create an empty database; its URL."""
        name = f"t_{uuid.uuid4().hex[:12]}"
        engine = create_engine(
            self.url.replace("postgresql://", "postgresql+psycopg://"),
            isolation_level="AUTOCOMMIT",
        )
        try:
            with engine.connect() as conn:
                conn.execute(text(f'CREATE DATABASE "{name}"'))
        finally:
            engine.dispose()
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    def start(self) -> None:
        """Start the server and wait until it accepts connections."""
        self._pg_ctl("start", "-o", self._options())

    def stop(self) -> None:
        """Stop it the way ``pg_ctl stop -m fast`` does: sessions are ended, then it shuts down."""
        self._pg_ctl("stop", "-m", "fast")

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: down and up again, the sessions it had ended."""
        self._pg_ctl("restart", "-m", "fast", "-o", self._options())

    def running(self) -> bool:
        """Whether the server runs (``pg_ctl status``)."""
        status = subprocess.run(
            self._command("pg_ctl", "status", "-D", self.data),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        return status.returncode == 0

    def remove(self) -> None:
        """Stop the server if it runs and delete its folder."""
        if self.running():
            self._pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

    def _options(self) -> str:
        return (
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c full_page_writes=off"
        )

    def _pg_ctl(self, action: str, *args: str) -> None:
        # -l: the server's output goes to its log, never to a pipe of ours it would hold open
        self._run("pg_ctl", action, "-D", self.data, "-l", self.log, "-w", "-t", "60", *args)

    def _command(self, program: str, *args: object) -> list[str]:
        command = [str(self.bin_dir / program), *map(str, args)]
        return command if self.user is None else ["runuser", "-u", self.user, "--", *command]

    def _run(self, program: str, *args: object) -> None:
        done = subprocess.run(
            self._command(program, *args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            log = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{program} {args[0]} failed: {done.stdout}\n{log}")
