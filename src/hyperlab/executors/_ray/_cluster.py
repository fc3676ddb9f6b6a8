"""The Ray side of the ``ray`` executor: importing Ray, connecting to a cluster, and what a
trial's ``resources`` ask of its nodes.

Everything here runs in the driver. Ray is imported only through ``import_ray``, so hyperlab
loads without it and says which extra to install when it is missing.
"""

from __future__ import annotations

import io
import os
import re
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from hyperlab.errors import ConfigError

__all__ = [
    "CONNECT_TIMEOUT",
    "Resources",
    "connect",
    "import_ray",
    "parse_resources",
    "serialize_objective",
]

CONNECT_TIMEOUT = 10.0
"""Seconds given to a ``ray_address``'s port to answer before it is called unreachable."""
STALE_PROBE = 1.0
"""Seconds given to the port of a cluster this machine recorded (not one the user named)."""

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3}
_UNITS |= {"gb": 1000**3, "t": 1000**4, "tb": 1000**4, "kib": 1024, "mib": 1024**2}
_UNITS |= {"gib": 1024**3, "tib": 1024**4}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*$")
_OWN_LOCK = threading.Lock()
_started_here: str | None = None  # the address of the Ray instance this process started


def import_ray() -> ModuleType:
    """``ray``, or a ``ConfigError`` naming the extra that installs it."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(
            f"executor: 'ray' needs Ray, which is not installed ({exc}); install it with "
            "pip install 'hyperlab[ray]'"
        ) from None
    return ray


@dataclass(frozen=True)
class Resources:
    """What one trial holds on its node: Ray's ``num_cpus``, ``num_gpus``, ``memory`` (bytes)
    and custom resources."""

    cpu: float = 1.0
    gpu: float = 0.0
    memory: int | None = None
    custom: Mapping[str, float] = field(default_factory=dict)

    def actor_options(self) -> dict[str, Any]:
        """The keyword arguments of Ray's ``.options()`` that reserve these."""
        options: dict[str, Any] = {"num_cpus": self.cpu, "num_gpus": self.gpu}
        if self.memory is not None:
            options["memory"] = self.memory
        if self.custom:
            options["resources"] = dict(self.custom)
        return options

    def as_ray(self) -> dict[str, float]:
        """These in the names of ``ray.nodes()``'s ``Resources``, zeros left out."""
        wanted = {"CPU": self.cpu, "GPU": self.gpu, "memory": float(self.memory or 0)}
        wanted |= dict(self.custom)
        return {name: amount for name, amount in wanted.items() if amount > 0}

    def missing(self, nodes: list[dict[str, Any]]) -> str | None:
        """None if some alive node in ``nodes`` (``ray.nodes()``) can hold one trial, else
        what no node has, naming the resource and what the nodes offer."""
        wanted = self.as_ray()
        alive = [node.get("Resources", {}) for node in nodes if node.get("Alive")]
        if any(all(offer.get(k, 0.0) >= v for k, v in wanted.items()) for offer in alive):
            return None
        for name, amount in wanted.items():
            best = max((offer.get(name, 0.0) for offer in alive), default=0.0)
            if best < amount:
                shown = _amount(name, best)
                return (
                    f"resources: no node of the Ray cluster has {name}={_amount(name, amount)} "
                    f"for one trial (the most any of its {len(alive)} alive nodes has is "
                    f"{shown})"
                )
        return (
            f"resources: no single node of the Ray cluster has all of {wanted} for one trial "
            f"(its {len(alive)} alive nodes offer {alive})"
        )


def _amount(name: str, amount: float) -> str:
    return f"{amount / 1024**3:.3g} GiB" if name == "memory" else f"{amount:g}"


def parse_resources(value: Mapping[str, Any] | None) -> Resources:
    """``resources`` as given (``{"cpu": 2, "gpu": 0.5, "memory": "4GiB", "special": 1}``:
    any other name is a custom Ray resource) as ``Resources``; ``ConfigError`` naming a bad
    entry."""
    if value is None:
        return Resources()
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"resources: expected a mapping such as {{'cpu': 1, 'gpu': 0.5}}, got {value!r}"
        )
    cpu, gpu, memory, custom = 1.0, 0.0, None, {}
    for name, amount in value.items():
        if not isinstance(name, str) or not name:
            raise ConfigError(f"resources: expected resource names, got {name!r}")
        key = name.lower()
        if key == "memory":
            memory = _bytes(amount)
            continue
        number = _number(name, amount)
        if key in ("cpu", "num_cpus"):
            cpu = number
        elif key in ("gpu", "num_gpus"):
            gpu = number
        else:
            custom[name] = number
    if gpu > 1 and gpu != int(gpu):
        raise ConfigError(
            f"resources.gpu: a fraction of a GPU must be below 1 (Ray shares one GPU, not "
            f"several), got {gpu:g}"
        )
    return Resources(cpu, gpu, memory, custom)


def _number(name: str, amount: Any) -> float:
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not amount >= 0:
        raise ConfigError(f"resources.{name}: expected a number >= 0, got {amount!r}")
    return float(amount)


def _bytes(amount: Any) -> int:
    if isinstance(amount, str):
        match = _SIZE.match(amount)
        unit = match and _UNITS.get(match.group(2).lower())
        if match is None or unit is None:
            raise ConfigError(
                f"resources.memory: expected bytes or a size such as '4GiB' or '500MB', "
                f"got {amount!r}"
            )
        return int(float(match.group(1)) * unit)
    if isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
        raise ConfigError(f"resources.memory: expected a number of bytes > 0, got {amount!r}")
    return int(amount)


def connect(address: str | None) -> bool:
    """Connect this process to Ray: to ``address`` (``"auto"``, ``"host:port"``,
    ``"ray://host:port"``), to the instance this process is already connected to, to the
    cluster ``ray.init()`` finds by itself (``RAY_ADDRESS``, ``ray start`` on this machine), or
    to a local instance started now (the machine's CPUs and GPUs; it stops when the process
    exits).

    Returns:
        Whether hyperlab started that instance itself (its trials die with this process).

    Raises:
        ConfigError: Ray is missing, or ``address`` is unreachable (within
            ``CONNECT_TIMEOUT`` seconds for its port to answer).
    """
    global _started_here
    ray = import_ray()
    with _OWN_LOCK:
        if ray.is_initialized():
            current = _gcs_address(ray)
            if address not in (None, "auto", current) and not address.startswith("ray://"):
                raise ConfigError(
                    f"ray_address: this process is already connected to the Ray cluster at "
                    f"{current!r}, not {address!r}; call ray.shutdown() first, or leave "
                    "ray_address unset to use that one"
                )
            return _started_here == current  # not if Ray was shut down and joined since
        if address is None and _running_cluster() is None:
            ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
            _started_here = _gcs_address(ray)
            return True
        address = address or "auto"  # as ray.init() would: RAY_ADDRESS, or `ray start`'s
        _probe(address)
        try:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ConfigError(f"ray_address: cannot connect to {address!r}: {exc}") from None
        _started_here = None
        return False


def _running_cluster() -> str | None:
    """The address of the cluster ``ray.init()`` would join (``RAY_ADDRESS``, or one that
    ``ray start`` started on this machine), or None when it would start its own (Ray's own
    lookup, given None as ``ray.init()`` gives it). A cluster this machine recorded but whose
    port no longer answers (it died without cleaning up) counts as none."""
    from ray._private.services import canonicalize_bootstrap_address

    try:
        found = canonicalize_bootstrap_address(None) or None  # type: ignore[arg-type]
    except (ConnectionError, ValueError):
        return None
    if found is None or os.environ.get("RAY_ADDRESS"):
        return found  # an address the user gave: unreachable, it is an error to report
    host, _, port = found.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=STALE_PROBE):
            return found
    except (OSError, ValueError):
        return None


def _gcs_address(ray: ModuleType) -> str:
    try:
        return str(ray.get_runtime_context().gcs_address)
    except Exception:  # a Ray Client connection has none here
        return ""


def _probe(address: str) -> None:
    """Check ``address``'s port answers (Ray would retry for minutes)."""
    target = address
    if address == "auto":
        from ray._private.services import canonicalize_bootstrap_address

        try:
            found = canonicalize_bootstrap_address("auto")
        except (ConnectionError, ValueError) as exc:
            found, reason = None, str(exc)
        else:
            reason = "no running Ray instance was found (RAY_ADDRESS is unset, no `ray start`)"
        if not found:
            raise ConfigError(f"ray_address: 'auto' found no Ray cluster: {reason}")
        target = found
    elif "://" in address:
        scheme, _, target = address.partition("://")
        if scheme != "ray":
            raise ConfigError(
                f"ray_address: expected 'auto', 'host:port' or 'ray://host:port', got {address!r}"
            )
    host, _, port = target.rstrip("/").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(
            f"ray_address: expected 'auto', 'host:port' or 'ray://host:port', got {address!r}"
        )
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT):
            pass
    except OSError as exc:
        raise ConfigError(
            f"ray_address: the Ray cluster at {address!r} is unreachable ({host}:{port}: "
            f"{exc.strerror or exc}); start one with `ray start --head`, or check the address"
        ) from None


def serialize_objective(objective: Any) -> bytes:
    """``objective`` as cloudpickle bytes for the cluster; ``ConfigError`` naming what in it
    could not be serialized."""
    from hyperlab.executors import pickling

    try:
        return pickling.dumps(objective)
    except Exception as exc:
        culprit = ""
        try:
            from ray.util import inspect_serializability

            _, failures = inspect_serializability(
                objective, name="objective", print_file=io.StringIO()
            )
            culprit = "; ".join(sorted(str(failure) for failure in failures))
        except Exception:  # the inspection failed too: the error alone says enough
            pass
        named = f"; what cannot be: {culprit}" if culprit else ""
        raise ConfigError(
            f"objective: {objective!r} cannot be serialized to send it to the Ray cluster "
            f"({type(exc).__name__}: {exc}){named}. Make it a module-level function, and "
            "create what it holds (locks, connections, open files) inside it"
        ) from None
