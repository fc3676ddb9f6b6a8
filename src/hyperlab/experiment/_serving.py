"""The dashboard an experiment serves while it runs (``Experiment.run(port=...)``).

The server sits above the experiment in the layers (it reads experiments through the store,
and steers them through it), so the experiment does not import it: it names what it needs of a
running server (``Serving``) and finds the server's two functions by import path, the way the
executors' registry finds the research executor, which sits above them too. That keeps the
dependency one-way at import time, and FastAPI unimported until a port is asked for.
"""

from __future__ import annotations

import os
from typing import Protocol

from hyperlab.config import import_path
from hyperlab.store import Store

__all__ = ["CHECK_SERVING", "SERVE", "Serving", "check_serving", "serve"]

SERVE = "hyperlab.server:serve_in_background"
"""The function that starts a server for one experiment of a store."""
CHECK_SERVING = "hyperlab.server:check_serving"
"""The function that checks, before anything is written, that a port can be served."""


class Serving(Protocol):
    """A server serving an experiment's REST API and dashboard (``hyperlab.server``'s
    ``BackgroundServer``)."""

    url: str
    """``http://host:port``."""
    token: str
    """The session token, good for writes to the experiment it serves."""
    login_url: str
    """``url`` with the token (print it once: the token is a secret)."""

    def link(self, experiment_id: str | None = None) -> str:
        """The dashboard link with the token: to an experiment's page, or to the overview."""

    def printed_link(self, experiment_id: str, token_file: os.PathLike[str] | str) -> str:
        """The link to print for an experiment: with its token on a terminal; to a file, the
        address and where the token is instead."""

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting requests and finish the ones in flight."""


def check_serving(port: int, host: str) -> None:
    """Check that ``host:port`` could be served now (ConfigError naming them if not)."""
    import_path("port", CHECK_SERVING)(port, host)


def serve(store: Store, port: int, host: str, experiment_id: str, token: str) -> Serving:
    """Serve ``experiment_id`` of ``store`` on ``host:port`` in a background thread."""
    server: Serving = import_path("port", SERVE)(
        store, port, host=host, experiment_id=experiment_id, token=token
    )
    return server
