"""What Ray Tune scripts call on ``ray`` itself, on hyperlab: ``init``, ``shutdown``,
``is_initialized``, ``put``/``get`` of in-process values; ``remote`` is refused.

hyperlab runs the trials, so ``init`` starts nothing: it records what it was given. Two of its
arguments act on the runs that follow, as they would with Ray: ``num_cpus`` is the CPUs trials
share on this machine (one trial per CPU a trial asks for; Ray's default is every CPU), and
``address`` (a running cluster: ``"auto"``, ``"host:port"``, ``"ray://host:port"``) runs the
trials on that cluster with hyperlab's ray executor (it needs ``pip install 'hyperlab[ray]'``).
Every other argument of Ray's ``init`` is accepted and has no effect.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

__all__ = [
    "ObjectRef",
    "RayContext",
    "cpus",
    "get",
    "init",
    "is_initialized",
    "put",
    "recorded_address",
    "remote",
    "shutdown",
]

_INIT_ARGUMENTS = frozenset(
    {
        "address",
        "num_cpus",
        "num_gpus",
        "resources",
        "labels",
        "object_store_memory",
        "local_mode",
        "ignore_reinit_error",
        "include_dashboard",
        "dashboard_host",
        "dashboard_port",
        "job_config",
        "configure_logging",
        "logging_level",
        "logging_format",
        "logging_config",
        "log_to_driver",
        "namespace",
        "runtime_env",
        "enable_resource_isolation",
        "cgroup_path",
        "system_reserved_cpu",
        "system_reserved_memory",
        "proxy_server_url",
        "storage",
    }
)
"""The arguments of Ray 2.x's ``ray.init`` (its private ``_...`` ones are accepted too)."""


@dataclass(frozen=True)
class RayContext:
    """What ``init`` returns, as Ray's context does: ``address_info``, ``dashboard_url``
    (None: hyperlab serves its own dashboard, ``hyperlab serve``); a ``with`` block shuts
    down at its end.

    Attributes:
        address_info: ``{"address": ...}``: the cluster given to ``init``, or None.
        arguments: Everything ``init`` was given.
    """

    address_info: dict[str, Any]
    arguments: dict[str, Any] = field(default_factory=dict)
    dashboard_url: str | None = None

    def __enter__(self) -> RayContext:
        return self

    def __exit__(self, *exc: object) -> None:
        shutdown()


_lock = threading.Lock()
_context: RayContext | None = None


def init(address: str | None = None, **kwargs: Any) -> RayContext:
    """Record Ray's ``init`` arguments; start nothing (hyperlab runs the trials).

    Args:
        address: A running Ray cluster: later Tune runs put their trials on it with the ray
            executor (unless their ``hyperlab_options`` name an executor). None: trials run
            on this machine.
        **kwargs: Ray's other ``init`` arguments: ``num_cpus`` caps the trials run at once
            on this machine; ``ignore_reinit_error`` as in Ray; the others have no effect.

    Raises:
        RuntimeError: Called twice without ``shutdown`` (unless ``ignore_reinit_error``).
        TypeError: An argument Ray's ``init`` does not take.
        ValueError: ``num_cpus`` is not a positive integer.
    """
    global _context
    unknown = sorted(k for k in kwargs if k not in _INIT_ARGUMENTS and not k.startswith("_"))
    if unknown:
        raise TypeError(f"ray.init() got unexpected keyword arguments {unknown}")
    cpus = kwargs.get("num_cpus")
    if cpus is not None and (isinstance(cpus, bool) or not isinstance(cpus, int) or cpus < 1):
        raise ValueError(f"ray.init: num_cpus must be a positive integer, got {cpus!r}")
    with _lock:
        if _context is not None:
            if kwargs.get("ignore_reinit_error"):
                return _context
            raise RuntimeError(
                "Maybe you called ray.init twice by accident? Call ray.shutdown() first, or "
                "pass ignore_reinit_error=True"
            )
        _context = RayContext({"address": address}, {"address": address, **kwargs})
        return _context


def shutdown() -> None:
    """Forget what ``init`` recorded (nothing runs to stop)."""
    global _context
    with _lock:
        _context = None


def is_initialized() -> bool:
    """Whether ``init`` was called (and ``shutdown`` not since)."""
    return _context is not None


def recorded_address() -> str | None:
    """The cluster given to ``init``, or None."""
    context = _context
    return None if context is None else context.address_info["address"]


def cpus() -> int | None:
    """The ``num_cpus`` given to ``init``, or None."""
    context = _context
    return None if context is None else context.arguments.get("num_cpus")


class ObjectRef:
    """A value given to ``put``, held in this process: ``get`` returns it (Ray's object
    store, for the common use: passing a large object to ``tune.with_parameters`` or a
    trainable's config once)."""

    __slots__ = ("_value",)

    def __init__(self, value: Any) -> None:
        self._value = value

    def __repr__(self) -> str:
        return f"ObjectRef({type(self._value).__name__} at {id(self):#x})"

    def value(self) -> Any:
        """The value it holds."""
        return self._value


def put(value: Any, **kwargs: Any) -> ObjectRef:
    """An ``ObjectRef`` to ``value``: ``get`` returns the object itself, not a copy (Ray
    returns an equal copy). Ray's keyword arguments (``_owner``) have no effect."""
    if isinstance(value, ObjectRef):
        raise TypeError("Calling 'put' on an ray.ObjectRef is not allowed")
    return ObjectRef(value)


def get(refs: ObjectRef | Sequence[ObjectRef], *, timeout: float | None = None) -> Any:
    """The value of an ``ObjectRef``, or the list of the values of a list of them.

    Raises:
        TypeError: Something other than an ``ObjectRef`` (or a list of them), as in Ray.
    """
    if isinstance(refs, ObjectRef):
        return refs.value()
    if isinstance(refs, (list, tuple)):
        values = []
        for ref in refs:
            if not isinstance(ref, ObjectRef):
                raise TypeError(f"'get' expects a list of ObjectRef, got {type(ref).__name__}")
            values.append(ref.value())
        return values
    raise TypeError(
        f"Attempting to call `get` on the value {refs!r}, which is not an ray.ObjectRef"
    )


def remote(*args: Any, **kwargs: Any) -> NoReturn:
    """Refused: hyperlab runs trials, not Ray tasks or actors."""
    raise NotImplementedError(
        "ray.remote has no hyperlab equivalent: hyperlab runs Tune trials, not Ray tasks or "
        "actors. Call the function directly inside the trainable, run trials on a cluster "
        "with ray.init(address=...) or hyperlab_options={'executor': 'ray'}, or use the real "
        "ray package for tasks and actors"
    )
