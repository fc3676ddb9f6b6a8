"""The REST API over a hyperlab store: hyperlab's own routes and NNI's ``/api/v1/nni/...``.

The server reads the store and appends control requests to it; it never calls into a driver.
Needs the ``server`` extra: ``pip install 'hyperlab[server]'`` (FastAPI and uvicorn).

Routes (OpenAPI docs at ``/docs``):

```
GET    /api/v1/experiments                            summaries, newest first
GET    /api/v1/experiments/{id}                       record, counts, best trial
PATCH  /api/v1/experiments/{id}                       {concurrency?, max_trials?, max_duration?}
POST   /api/v1/experiments/{id}/stop                  202 with the control request
GET    /api/v1/experiments/{id}/trials                ?status=&sort=&limit=&offset=&reports=
GET    /api/v1/experiments/{id}/trials/{number}       with reports and status changes
POST   /api/v1/experiments/{id}/trials/{number}/kill  202 with the control request
GET    /api/v1/controls/{control_id}                  a control request and its outcome
GET    /api/v1/nni/check-status | experiment | job-statistics | trial-jobs[/{trialJobId}]
GET    /api/v1/nni/metric-data[/{trialJobId}]
PUT    /api/v1/nni/experiment?update_type=TRIAL_CONCURRENCY|MAX_TRIAL_NUM|MAX_EXEC_DURATION
DELETE /api/v1/nni/trial-jobs/{trialJobId}
```

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
import threading
import time
from types import ModuleType
from typing import TYPE_CHECKING, Any

from hyperlab.errors import ConfigError, HyperlabError

if TYPE_CHECKING:
    from fastapi import FastAPI

    from hyperlab.store import Store

__all__ = ["BackgroundServer", "check_serving", "create_app", "serve_in_background"]

START_TIMEOUT = 10.0  # seconds serve_in_background waits for uvicorn to accept connections


def _require(module: str) -> ModuleType:
    """Import an optional dependency of the server, or say which extra installs it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"the hyperlab server needs {module} ({exc}): pip install 'hyperlab[server]'"
        ) from None


def create_app(
    storage: str | os.PathLike[str] | Store | None = None, *, experiment_id: str | None = None
) -> FastAPI:
    """The FastAPI app serving one store.

    Args:
        storage: What ``Store.open`` takes (None for ``<home>/hyperlab.db``, a path, a
            ``sqlite:///`` or ``postgresql://`` URL); the app opens one store and closes it on
            shutdown. An open ``Store`` is used as is and left open (pass the driver's own
            store to serve a ``":memory:"`` experiment).
        experiment_id: The experiment the NNI-compatible routes serve when a request does not
            name one with ``?experiment_id=``; None for the newest experiment in the store.
            It need not exist yet.

    Raises:
        ImportError: when FastAPI is not installed.
        ConfigError: when ``storage`` is not a valid storage string.
        StoreError: when the store cannot be opened.
    """
    _require("fastapi")
    from hyperlab.server._app import build_app

    return build_app(storage, experiment_id=experiment_id)


class BackgroundServer:
    """A uvicorn server running the app in a daemon thread; made by ``serve_in_background``.

    Attributes:
        app: The FastAPI app it serves.
        host: The address it listens on.
        port: The port it listens on (the one picked when 0 was asked for).
        url: ``http://host:port``.
    """

    def __init__(self, app: FastAPI, server: Any, thread: threading.Thread, sock: socket.socket):
        """Use ``serve_in_background``."""
        self.app = app
        self.host, self.port = sock.getsockname()[:2]
        shown = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{shown}:{self.port}"
        self._server = server
        self._thread = thread
        self._socket = sock

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
) -> BackgroundServer:
    """Serve ``create_app(storage, experiment_id=...)`` with uvicorn in a daemon thread.

    Returns once the server accepts connections. The thread is a daemon: the server ends with
    the process, or earlier with ``stop()``.

    Args:
        storage: The store to serve (see ``create_app``).
        port: The TCP port; 0 picks a free one (read it from ``.port`` or ``.url``).
        host: The address to listen on; ``"0.0.0.0"`` for every interface (the API has no
            authentication: anyone who reaches it can stop experiments).
        experiment_id: The NNI-compatible routes' default experiment.

    Raises:
        ImportError: when FastAPI or uvicorn is not installed.
        ConfigError: when the port is invalid or already in use, or the host cannot be bound.
    """
    uvicorn = _require("uvicorn")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ConfigError(
            f"port: expected an integer from 0 to 65535 (0 picks a free port), got {port!r}"
        )
    app = create_app(storage, experiment_id=experiment_id)
    sock = _bind(host, port)
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
    return BackgroundServer(app, server, thread, sock)


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
