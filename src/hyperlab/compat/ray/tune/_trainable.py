"""Ray Tune's class API (``tune.Trainable``) run as a hyperlab trial, and the trainable
wrappers ``with_parameters`` and ``with_resources``.

A ``Trainable`` trial builds the instance (``setup(config)``), restores the trial's latest
checkpoint if it has one (``load_checkpoint``: a paused, re-run or PBT-branched trial), then
calls ``train()`` (``step()`` plus Ray's automatic metrics) and reports each result, until a
result says ``done``, the run's ``stop`` criteria are met, or a scheduler stops it; then
``cleanup()``. It saves checkpoints (``save_checkpoint``) every ``checkpoint_frequency``
iterations, at its end with ``checkpoint_at_end``, and after every iteration under a
scheduler that pauses or branches trials (HyperBand, PBT), which Ray would ask for then.
With ``reuse_actors=True``, the instance of an ended trial is kept for the next trial of the
same class in the same worker, when its ``reset_config(new_config)`` returns True.
"""

from __future__ import annotations

import atexit
import copy
import os
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hyperlab.compat.ray.tune._session import Session, find_session
from hyperlab.errors import TrialStopped

__all__ = [
    "PlacementGroupFactory",
    "Resourced",
    "Trainable",
    "WithParameters",
    "run_class",
    "with_parameters",
    "with_resources",
]


class Trainable:
    """Ray Tune's class API: subclass it and implement ``setup``, ``step`` and, to be paused,
    branched or resumed, ``save_checkpoint`` and ``load_checkpoint``.

    Attributes:
        config: The trial's config.
        iteration: Iterations done (``training_iteration`` of the last result).
    """

    def __init__(
        self, config: dict[str, Any] | None = None, logger_creator: Any = None, storage: Any = None
    ) -> None:
        if logger_creator is not None or storage is not None:
            raise NotImplementedError(
                "Trainable(logger_creator=..., storage=...) has no hyperlab equivalent; "
                "trials log to their own folder (self.logdir)"
            )
        self.config: dict[str, Any] = dict(config or {})
        self._session = find_session()
        self._iteration = 0
        self._time_total = 0.0
        self.setup(copy.deepcopy(self.config))

    # ---- what subclasses implement --------------------------------------------------------

    def setup(self, config: dict[str, Any]) -> None:
        """Build what the trial needs (called once, with the config)."""

    def step(self) -> dict[str, Any]:
        """Run one iteration and return its result (a dict of metrics; ``done: True`` ends)."""
        raise NotImplementedError(f"{type(self).__name__} must implement step()")

    def save_checkpoint(self, checkpoint_dir: str) -> dict[str, Any] | None:
        """Write the state into ``checkpoint_dir`` (and return None), or return it as a dict."""
        raise NotImplementedError(f"{type(self).__name__} must implement save_checkpoint()")

    def load_checkpoint(self, checkpoint: dict[str, Any] | str) -> None:
        """Restore what ``save_checkpoint`` saved: its dict, or the folder it wrote."""
        raise NotImplementedError(f"{type(self).__name__} must implement load_checkpoint()")

    def reset_config(self, new_config: dict[str, Any]) -> bool:
        """Take ``new_config`` for a new trial (``reuse_actors=True``); True if it could."""
        return False

    def cleanup(self) -> None:
        """Release what ``setup`` took (called when the trial ends)."""

    # ---- Ray's public methods and attributes ---------------------------------------------

    def train(self) -> dict[str, Any]:
        """``step()`` with Ray's automatic metrics: ``training_iteration``,
        ``time_this_iter_s``, ``time_total_s``."""
        start = time.monotonic()
        result = self.step()
        if not isinstance(result, Mapping):
            raise TypeError(
                f"{type(self).__name__}.step() must return a dict of metrics, got "
                f"{type(result).__name__}"
            )
        self._iteration += 1
        took = time.monotonic() - start
        self._time_total += took
        out = dict(result)
        out.setdefault("training_iteration", self._iteration)
        out.setdefault("time_this_iter_s", took)
        out.setdefault("time_total_s", self._time_total)
        return out

    def stop(self) -> None:
        """End the instance: calls ``cleanup()``."""
        self.cleanup()

    @property
    def iteration(self) -> int:
        """Iterations done (counted on from a restored checkpoint)."""
        return self._iteration

    @property
    def training_iteration(self) -> int:
        """The same as ``iteration``."""
        return self._iteration

    @property
    def trial_id(self) -> str:
        """The trial's id (``"default"`` outside a trial)."""
        return "default" if self._session is None else self._session.ctx.trial_id

    @property
    def trial_name(self) -> str:
        """``<class name>_<trial id>`` (``"default"`` outside a trial)."""
        return "default" if self._session is None else f"{type(self).__name__}_{self.trial_id}"

    @property
    def logdir(self) -> str:
        """The trial's folder (a temporary folder outside a trial)."""
        if self._session is None or self._session.ctx.trial_dir is None:
            return tempfile.gettempdir()
        os.makedirs(self._session.ctx.trial_dir, exist_ok=True)
        return self._session.ctx.trial_dir

    @property
    def trial_dir(self) -> str:
        """The same as ``logdir``."""
        return self.logdir


def run_class(
    cls: type[Trainable], session: Session, *, frequency: int, at_end: bool, reuse: bool
) -> None:
    """Run a trial of ``cls`` until it is done, its stop criteria are met, or it is stopped.

    Args:
        cls: The Trainable subclass.
        session: The trial's session.
        frequency: Save a checkpoint every this many iterations (0: never).
        at_end: Save a checkpoint when the trial ends on its own.
        reuse: Keep the instance for the next trial (Ray's ``reuse_actors``).
    """
    trainable = _acquire(cls, session)
    healthy = False  # an instance whose trial failed is not reused
    try:
        state = session.restore()
        if state is not None:
            trainable.load_checkpoint(os.fspath(state) if isinstance(state, Path) else state)
        trainable._iteration = session.iteration
        while True:
            result = trainable.train()
            met = session.log(result)
            end = met or bool(result.get("done", False))
            if (frequency and trainable.iteration % frequency == 0) or (end and at_end):
                _save(trainable, session)
            if end:
                healthy = True
                return
    except TrialStopped:
        healthy = True
        raise
    finally:
        if reuse and healthy:
            with _IDLE_LOCK:
                _IDLE.append(trainable)
        else:
            trainable.cleanup()


def _save(trainable: Trainable, session: Session) -> None:
    with tempfile.TemporaryDirectory(prefix="trainable-") as folder:
        state = trainable.save_checkpoint(folder)
        if state is not None and not isinstance(state, Mapping):
            raise TypeError(
                f"{type(trainable).__name__}.save_checkpoint() must write into the folder it "
                f"gets and return None, or return a dict; got {type(state).__name__}"
            )
        session.save(folder if state is None else dict(state))


_IDLE: list[Trainable] = []
"""Instances whose trials ended, kept for the next trials of this process (``reuse_actors``):
at most one per trial running at once, as Ray keeps actors."""
_IDLE_LOCK = threading.Lock()


def _acquire(cls: type[Trainable], session: Session) -> Trainable:
    """An instance for the session's trial: an idle one of ``cls`` if it takes the new config
    (``reset_config``), else a new one."""
    with _IDLE_LOCK:
        idle = next((t for t in reversed(_IDLE) if type(t) is cls), None)
        if idle is not None:
            _IDLE.remove(idle)
    if idle is not None:
        if idle.reset_config(copy.deepcopy(session.config)):
            idle.config = dict(session.config)
            idle._session = session
            idle._iteration = 0
            idle._time_total = 0.0
            return idle
        idle.cleanup()
    return cls(session.config)


@atexit.register
def _cleanup_idle() -> None:
    with _IDLE_LOCK:
        idle = list(_IDLE)
        _IDLE.clear()
    for trainable in idle:
        trainable.cleanup()


def with_parameters(trainable: Any, **kwargs: Any) -> Any:
    """``trainable`` given ``kwargs`` too: a function is called as ``f(config, **kwargs)``,
    a Trainable's ``setup`` as ``setup(config, **kwargs)``. The values travel with the
    trainable (pickled into each trial's worker and into the store)."""
    if isinstance(trainable, Resourced):
        return Resourced(with_parameters(trainable.trainable, **kwargs), trainable.resources)
    if isinstance(trainable, type) and issubclass(trainable, Trainable):
        parent = trainable

        def setup(self: Trainable, config: dict[str, Any]) -> None:
            parent.setup(self, config, **kwargs)

        return type(parent.__name__, (parent,), {"setup": setup, "__module__": parent.__module__})
    if not callable(trainable):
        raise TypeError(f"with_parameters: expected a function or a Trainable, got {trainable!r}")
    return WithParameters(trainable, kwargs)


@dataclass(frozen=True)
class WithParameters:
    """A function given keyword arguments by ``with_parameters``; called in any of the
    function forms (``(config, reporter)``, ``(config, checkpoint_dir=None)``) of the function
    it wraps."""

    function: Callable[..., Any]
    kwargs: dict[str, Any]

    def __call__(self, config: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        return self.function(config, *args, **kwargs, **self.kwargs)

    @property
    def __name__(self) -> str:
        return getattr(self.function, "__name__", type(self.function).__name__)


_WithParameters = WithParameters  # its name before: experiments stored then unpickle still


@dataclass(frozen=True)
class PlacementGroupFactory:
    """Ray's resource request as bundles (``[{"CPU": 1, "GPU": 1}]``); hyperlab maps a single
    bundle onto the ``ray`` executor's per-trial resources and refuses it elsewhere."""

    bundles: list[dict[str, float]]
    strategy: str = "PACK"


@dataclass(frozen=True)
class Resourced:
    """A trainable with the resources each of its trials holds (``with_resources``)."""

    trainable: Any
    resources: Mapping[str, Any] | PlacementGroupFactory


def with_resources(trainable: Any, resources: Mapping[str, Any] | PlacementGroupFactory) -> Any:
    """``trainable`` with what each trial holds: ``{"cpu": 1, "gpu": 0.5}`` (``memory`` and
    custom resources with the ``ray`` executor only), or a ``PlacementGroupFactory``."""
    if callable(resources) and not isinstance(resources, PlacementGroupFactory):
        raise NotImplementedError(
            "with_resources(trainable, <function of config>): resources that depend on the "
            "config have no hyperlab equivalent (every trial holds the same); give a dict"
        )
    if not isinstance(resources, (Mapping, PlacementGroupFactory)):
        raise TypeError(
            f"with_resources: expected a dict or a PlacementGroupFactory, got {resources!r}"
        )
    if isinstance(trainable, Resourced):
        trainable = trainable.trainable
    return Resourced(trainable, resources)
