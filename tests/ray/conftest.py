"""A real two-node Ray cluster on this machine, started once for the tests of this folder.

The head has 2 CPUs and a Ray Client server (``ray://``); the second node has 2 CPUs, 2
(fake) GPUs and a custom ``special`` resource, so placement by resources can be checked. Tests
that kill a node add their own.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="package")
def cluster() -> Iterator[Any]:
    """The cluster, with this process connected to it (as a user's driver would be); the tests
    that need it skip, saying so, where the ray extra is not installed."""
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    client_port = _free_port()
    made = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 2,
            "resources": {"head": 1},
            "include_dashboard": False,
            "ray_client_server_port": client_port,
        },
    )
    made.add_node(num_cpus=2, num_gpus=2, resources={"special": 2})
    made.wait_for_nodes()
    made.client_address = f"ray://{made.address.rpartition(':')[0]}:{client_port}"  # type: ignore[attr-defined]
    ray.init(address=made.address, log_to_driver=False, configure_logging=False)
    yield made
    ray.shutdown()
    made.shutdown()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
