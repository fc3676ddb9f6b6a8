"""The Dask side of the ``dask`` executor, in the driver: importing ``distributed``, connecting
to a scheduler, and what a trial's ``resources`` ask of the workers.

``distributed`` is imported only through ``import_distributed``, so hyperlab loads without it
and says which extra to install when it is missing.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from hyperlab.errors import ConfigError

__all__ = [
    "CONNECT_TIMEOUT",
    "connect",
    "dask_resources",
    "import_distributed",
    "missing_resources",
]

CONNECT_TIMEOUT = 10.0
"""Seconds a scheduler has to answer before ``dask_address`` is called unreachable."""
_SPELLINGS = {"gpu": "GPU", "num_gpus": "GPU", "cpu": "CPU", "num_cpus": "CPU"}
_SPELLINGS |= {"memory": "MEMORY"}


def import_distributed() -> ModuleType:
    """``distributed``, or a ``ConfigError`` naming the extra that installs it."""
    try:
        import distributed
    except ImportError as exc:
        raise ConfigError(
            f"executor: 'dask' needs dask.distributed, which is not installed ({exc}); install "
            "it with pip install 'hyperlab[dask]'"
        ) from None
    return distributed


def connect(address: str | None, cluster: Any | None) -> Any:
    """A ``distributed.Client`` of ``cluster`` (a cluster object) or of the scheduler at
    ``address`` (None: Dask's ``scheduler-address`` setting), not made the default client.

    Raises:
        ConfigError: ``distributed`` is missing, no scheduler is named, or the one named does
            not answer within ``CONNECT_TIMEOUT`` seconds.
    """
    distributed = import_distributed()
    if cluster is not None:
        return distributed.Client(cluster, set_as_default=False)
    if address is None:
        import dask

        address = dask.config.get("scheduler-address", None)
        if not address:
            raise ConfigError(
                "dask_address: the 'dask' executor needs a scheduler: give "
                "executor_args={'dask_address': 'tcp://host:8786'} (or, in Python, "
                "{'dask_cluster': cluster}); Dask's scheduler-address setting is unset"
            )
    _probe(address)
    try:
        return distributed.Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ConfigError(
            f"dask_address: cannot connect to the Dask scheduler at {address!r} within "
            f"{CONNECT_TIMEOUT:g}s ({exc})"
        ) from None


def _probe(address: str) -> None:
    """Check the port of a ``tcp://`` or ``tls://`` address answers (Dask would retry until
    its timeout even when nothing listens there)."""
    scheme, _, rest = address.rpartition("://")
    if scheme not in ("", "tcp", "tls"):
        return  # another transport (inproc, ucx): the client's own timeout bounds it
    host, _, port = rest.rstrip("/").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(
            f"dask_address: expected 'tcp://host:port' (or 'host:port'), got {address!r}"
        )
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        raise ConfigError(
            f"dask_address: the Dask scheduler at {address!r} is unreachable ({host}:{port}: "
            f"{exc.strerror or exc}); start one (`dask scheduler`, or a dask_jobqueue "
            "cluster), or check the address"
        ) from None


def dask_resources(value: Mapping[str, Any] | None) -> dict[str, float]:
    """``resources`` as Dask's ``submit(resources=...)`` takes them: ``gpu``, ``cpu`` and
    ``memory`` (bytes, or a size such as ``"4GiB"``) spelled ``GPU``, ``CPU`` and ``MEMORY``
    as Dask's documentation has workers declare them, other names kept; zeros left out.

    Raises:
        ConfigError: not a mapping, or an amount that is no number >= 0, naming it.
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"resources: expected a mapping such as {{'gpu': 1}}, got {value!r}")
    from dask.utils import parse_bytes

    wanted: dict[str, float] = {}
    for name, amount in value.items():
        if not isinstance(name, str) or not name:
            raise ConfigError(f"resources: expected resource names, got {name!r}")
        key = _SPELLINGS.get(name.lower(), name)
        if key == "MEMORY" and isinstance(amount, str):
            try:
                amount = parse_bytes(amount)
            except ValueError:
                raise ConfigError(
                    f"resources.{name}: expected bytes or a size such as '4GiB', got {amount!r}"
                ) from None
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not amount >= 0:
            raise ConfigError(f"resources.{name}: expected a number >= 0, got {amount!r}")
        if amount > 0:
            wanted[key] = float(amount)
    return wanted


def missing_resources(wanted: Mapping[str, float], workers: Mapping[str, Any]) -> str | None:
    """None if some worker in ``workers`` (``scheduler_info()["workers"]``) can hold one
    trial's ``wanted`` resources, or while there is no worker at all (a batch job still
    queued); else what none has, naming the resource and what the workers declare."""
    if not wanted or not workers:
        return None
    offers = [dict(info.get("resources") or {}) for info in workers.values()]
    if any(all(offer.get(k, 0.0) >= v for k, v in wanted.items()) for offer in offers):
        return None
    for name, amount in wanted.items():
        best = max(offer.get(name, 0.0) for offer in offers)
        if best < amount:
            return (
                f"resources: no worker of the Dask cluster has {name}={amount:g} for one trial "
                f"(the most any of its {len(offers)} workers declares is {best:g}; workers "
                f'declare resources with `dask worker --resources "{name}={amount:g}"`)'
            )
    return (
        f"resources: no single worker of the Dask cluster has all of {dict(wanted)} for one "
        f"trial (its {len(offers)} workers declare {offers})"
    )
