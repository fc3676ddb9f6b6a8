"""The commands that serve a store and steer running experiments: ``serve``,
``update-space``, ``add-trial`` and ``import``.

Steering goes through the store's control table, like ``hyperlab stop``: the command checks
the request against the experiment, sends it, and waits until the experiment's driver applied
it (or says why it refused). No token is needed: whoever can open the store can steer.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from hyperlab._terminal import printable
from hyperlab.cli._common import open_store
from hyperlab.cli._running import check_server
from hyperlab.errors import ConfigError

__all__ = ["cmd_add_trial", "cmd_import", "cmd_serve", "cmd_update_space", "cmd_view"]


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve every experiment of the store until interrupted."""
    from hyperlab.server import serve_in_background

    store = open_store(args)
    check_server(args.port, args.host)
    server = serve_in_background(store, args.port, host=args.host)
    print(f"serving {store.masked_url} at {server.url}", file=sys.stderr)
    print(
        f"dashboard (this link carries the server's token; keep it to yourself): {server.link()}",
        file=sys.stderr,
        flush=True,
    )
    return _serve_until_interrupted(server)


def cmd_view(args: argparse.Namespace) -> int:
    """Serve one experiment's page until interrupted; it can be steered while its driver runs
    (the link carries the experiment's token)."""
    from hyperlab.server import serve_in_background
    from hyperlab.store.tokens import read_token

    store = open_store(args)
    record = store.get_experiment(store.resolve(args.id))
    check_server(args.port, args.host)
    token = read_token(store.experiment_folder(record))
    server = serve_in_background(
        store, args.port, host=args.host, experiment_id=record.id, token=token
    )
    steered = "" if record.driver_alive() else " (read-only: no driver runs it)"
    print(f"experiment {record.id} ({record.status}){steered}", file=sys.stderr)
    print(f"dashboard: {server.link(record.id)}", file=sys.stderr, flush=True)
    return _serve_until_interrupted(server)


def _serve_until_interrupted(server: Any) -> int:
    try:
        while server.running:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    print("hyperlab: server stopped", file=sys.stderr)
    return 0


def cmd_update_space(args: argparse.Namespace) -> int:
    from hyperlab._steering import steer
    from hyperlab.space import SearchSpace
    from hyperlab.store import UpdateSearchSpace

    space = SearchSpace.from_nni(args.space)
    store = open_store(args)
    control = steer(store, args.id, UpdateSearchSpace(space=space.to_nni()))
    print(f"experiment {control.experiment_id}: {_said(control)}")
    return 0


def cmd_add_trial(args: argparse.Namespace) -> int:
    from hyperlab._steering import steer
    from hyperlab.store import AddTrial

    params = _json_argument(args.params, "params")
    if not isinstance(params, dict):
        raise ConfigError(f"params: expected a JSON object of parameter values, got {params!r}")
    store = open_store(args)
    control = steer(store, args.id, AddTrial(params=params))
    print(f"experiment {control.experiment_id}: {_said(control)}")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from hyperlab._steering import imported_results, steer
    from hyperlab.store import ImportData

    records = _json_argument(f"@{args.file}", "file")
    if not isinstance(records, list):
        raise ConfigError(
            f"{args.file}: expected a JSON list of results ({{'params': ..., 'value': ...}}, or "
            f"NNI's {{'parameter': ..., 'value': ...}}), got {type(records).__name__}"
        )
    store = open_store(args)
    control = steer(store, args.id, ImportData(results=imported_results(records)))
    print(f"experiment {control.experiment_id}: {_said(control)}")
    return 0


def _said(control: Any) -> str:
    outcome = control.outcome
    return printable(outcome.message) if outcome is not None and outcome.message else "done"


def _json_argument(text: str, name: str) -> Any:
    """JSON given inline, or ``@path`` for a file's, read strictly (``hyperlab._files``: each
    key once per object, bounded nesting, a file of at most 4 MiB)."""
    from hyperlab._files import parse_json, read_json

    if text.startswith("@"):
        return read_json(Path(text[1:]).expanduser(), what="JSON file")
    return parse_json(text, name)
