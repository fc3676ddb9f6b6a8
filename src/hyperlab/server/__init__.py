"""The REST API over a hyperlab store: hyperlab's own routes and NNI's ``/api/v1/nni/...``.

The server reads the store and appends control requests to it; it never calls into a driver.
FastAPI and uvicorn come with hyperlab; they are imported only when a server starts.

Routes: hyperlab's own under ``/api/v1/`` (``_app.py`` and the modules it includes), NNI's
under ``/api/v1/nni/`` (``_nni.py``, ``_nni_trials.py``); every one is in the OpenAPI document
at ``/docs`` and in ``docs/rest.md``. ``_security.py`` checks every request first (tokens,
Host header, JSON bodies).

Example:
    >>> from hyperlab.server import serve_in_background
    >>> server = serve_in_background("runs.db", 8080)
    >>> server.url
    'http://127.0.0.1:8080'
    >>> server.stop()
"""

from __future__ import annotations

import errno
import os
import socket
import sys
import threading
import time
from types import ModuleType
from typing import TYPE_CHECKING, Any

from hyperlab.errors import ConfigError, HyperlabError
from hyperlab.store.tokens import TOKEN_FILE, new_token

if TYPE_CHECKING:
    from fastapi import FastAPI

    from hyperlab.store import Store

__all__ = [
    "TOKEN_FILE",
    "BackgroundServer",
    "check_serving",
    "create_app",
    "serve_in_background",
]

START_TIMEOUT = 10.0  # seconds serve_in_background waits for uvicorn to accept connections


def _require(module: str) -> ModuleType:
    """Import an optional dependency of the server, or say which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"the hyperlab server needs {module}, which hyperlab installs ({exc}): reinstall "
            "hyperlab (pip install --force-reinstall hyperlab)"
        ) from None


def create_app(
    storage: str | os.PathLike[str] | Store | None = None,
    *,
    experiment_id: str | None = None,
    host: str = "127.0.0.1",
    port: int | None = None,
    session_token: str | None = None,
) -> FastAPI:
    """The FastAPI app serving one store, behind the checks of ``hyperlab.server._security``.

    Args:
        storage: What ``Store.open`` takes (None for ``<home>/hyperlab.db``, a path, a
            ``sqlite:///`` or ``postgresql://`` URL); the app opens one store and closes it on
            shutdown. An open ``Store`` is used as is and left open (pass the driver's own
            store to serve a ``":memory:"`` experiment).
        experiment_id: The one experiment the app is for (``run --port``, ``view``): the
            NNI-compatible routes serve it when a request does not name one with
            ``?experiment_id=``, and ``session_token`` is good for it alone. None for a server of
            the whole store: NNI's routes then serve the newest experiment, and
            ``session_token`` is good for every one. It need not exist yet.
        host: The address the app is served on: requests must name it (or a loopback name) in
            their ``Host`` header, and beyond loopback every request needs a token.
        port: The port it is served on (checked in ``Host`` headers), or None for any.
        session_token: The server's token (the one the dashboard link carries): good for
            ``experiment_id``, or for every experiment of the store when that is None; None for
            none: writes then need the experiment's own token.

    Raises:
        ImportError: when FastAPI is not installed.
        ConfigError: when ``storage`` is not a valid storage string.
        StoreError: when the store cannot be opened.
    """
    _require("fastapi")
    from hyperlab.server._app import build_app
    from hyperlab.server._security import Guard, Policy

    app = build_app(storage, experiment_id=experiment_id)
    policy = Policy(
        host=host,
        port=port,
        session_token=session_token,
        experiment_token=app.state.hyperlab.experiment_token,
        experiment_id=experiment_id,
        cookie="hyperlab_token" if port is None else f"hyperlab_token_{port}",
    )
    app.state.policy = policy
    app.add_middleware(Guard, policy=policy)
    return app


class BackgroundServer:
    """A uvicorn server running the app in a daemon thread; made by ``serve_in_background``.

    Attributes:
        app: The FastAPI app it serves.
        host: The address it listens on.
        port: The port it listens on (the one picked when 0 was asked for).
        url: ``http://host:port``.
        token: The session token: good for writes to every experiment it serves, or to its one
            experiment when it was started for one (``serve_in_background(experiment_id=)``).
        login_url: ``url`` with the token: opening it in a browser sets the cookie that lets
            the dashboard steer experiments (print it once; the token is a secret).
    """

    def __init__(
        self,
        app: FastAPI,
        server: Any,
        thread: threading.Thread,
        sock: socket.socket,
        token: str,
    ):
        """Use ``serve_in_background``."""
        self.app = app
        self.host, self.port = sock.getsockname()[:2]
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{shown}:{self.port}"
        self.token = token
        self.login_url = f"{self.url}/?token={token}"
        self._server = server
        self._thread = thread
        self._socket = sock

    def link(self, experiment_id: str | None = None) -> str:
        """The dashboard link with the token: to an experiment's page, or to the overview."""
        if experiment_id is None:
            return self.login_url
        return f"{self.url}/experiments/{experiment_id}?token={self.token}"

    def printed_link(self, experiment_id: str, token_file: os.PathLike[str] | str) -> str:
        """The link to print for an experiment: with its token on a terminal; to a file
        (a detached driver's log, a job's output, ``> out.log``), which other users may read,
        the address and where the token is instead."""
        if sys.stderr.isatty():
            return self.link(experiment_id)
        return (
            f"{self.url}/experiments/{experiment_id} (to steer it from a browser, add ?token= "
            f"with the token in {os.fspath(token_file)}; `hyperlab show {experiment_id}` "
            "prints that link)"
        )

    @property
    def running(self) -> bool:
        """True until the server has stopped."""
        return self._thread.is_alive()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting requests, finish the ones in flight, and close the app's store."""
        self._server.should_exit = True
        self._thread.join(timeout)
        self._socket.close()

    def __enter__(self) -> BackgroundServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<BackgroundServer {self.url} {state}>"


def serve_in_background(
    storage: str | os.PathLike[str] | Store | None,
    port: int,
    *,
    host: str = "127.0.0.1",
    experiment_id: str | None = None,
    token: str | None = None,
) -> BackgroundServer:
    """Serve ``create_app(storage, ...)`` with uvicorn in a daemon thread.

    Returns once the server accepts connections. The thread is a daemon: the server ends with
    the process, or earlier with ``stop()``.

    Args:
        storage: The store to serve (see ``create_app``).
        port: The TCP port; 0 picks a free one (read it from ``.port`` or ``.url``).
        host: The address to listen on: loopback by default; ``"0.0.0.0"`` for every interface,
            where every request then needs a token.
        experiment_id: The one experiment the server is for (the NNI-compatible routes'
            default, and the only one its token is good for); None to serve the whole store
            with a token good for every experiment.
        token: The session token (``.token``, in ``.login_url``): pass the experiment's own
            token with ``experiment_id``; None makes a new one.

    Raises:
        ImportError: when FastAPI or uvicorn is not installed.
        ConfigError: when the port is invalid or already in use, or the host cannot be bound.
    """
    uvicorn = _require("uvicorn")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(
            f"port: expected an integer from 0 to 65535 (0 picks a free port), got {port!r}"
        )
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    token = token or new_token()
    try:
        app = create_app(
            storage, experiment_id=experiment_id, host=host, port=bound, session_token=token
        )
    except BaseException:
        sock.close()
        raise
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, name=f"hyperlab-server-{port}", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        server.should_exit = True
        thread.join(1.0)
        sock.close()
        raise HyperlabError(f"the server on {host}:{port} did not start within {START_TIMEOUT}s")
    return BackgroundServer(app, server, thread, sock, token)


def check_serving(port: int, host: str = "127.0.0.1") -> None:
    """Check, before anything starts, that the server could serve on ``host:port`` now: its
    dependencies import and the port can be bound.

    Raises:
        ConfigError: naming the port (or the missing dependency) when it could not.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(
            f"port: expected an integer from 0 to 65535 (0 picks a free port), got {port!r}"
        )
    try:
        _require("fastapi")
        _require("uvicorn")
    except ImportError as exc:
        raise ConfigError(f"port: {exc}") from None
    _bind(host, port).close()


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; ConfigError naming them when that fails."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"host: cannot resolve {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        if os.name == "posix":  # rebind over TIME_WAIT; never over a listening socket
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.EADDRINUSE, getattr(errno, "WSAEADDRINUSE", errno.EADDRINUSE)):
            raise ConfigError(
                f"port: {port} is already in use on {host}; choose another port, or 0 for a "
                "free one"
            ) from None
        raise ConfigError(f"port: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(False)
    return sock
