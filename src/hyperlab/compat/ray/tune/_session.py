"""What a trainable calls while it runs: ``tune.report``, ``tune.get_checkpoint``,
``tune.get_context``, and the trial's ``Session`` behind them.

Each report goes to ``hyperlab.report`` with the metrics Ray adds to every result:
``training_iteration`` (1, 2, ... continuing from a restored checkpoint; hyperlab's step is
``training_iteration - 1``, so schedulers on ``training_iteration`` judge hyperlab's default
resource), ``time_this_iter_s`` and ``time_total_s`` (seconds since this run of the trial
started: a paused or branched trial counts again from its restart). A checkpoint goes to
``hyperlab.checkpoint``, as does the folder of Ray 1.x's ``tune.checkpoint_dir(step)``, after
the next report. When the run's ``stop`` criteria are met, ``report`` ends the trainable (the
trial then succeeds with its last report as its result).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn

from hyperlab import reporting
from hyperlab.compat.ray.tune._checkpoint import Checkpoint, saved_state
from hyperlab.reporting.checkpoints import FILES
from hyperlab.reporting.context import TrialContext, find_current

__all__ = [
    "CriteriaMet",
    "Session",
    "TuneContext",
    "checkpoint_dir",
    "find_session",
    "get_checkpoint",
    "get_context",
    "get_trial_dir",
    "get_trial_id",
    "get_trial_name",
    "report",
]

StopRule = Callable[[str, dict[str, Any]], bool]
"""The run's stop criteria as a test on one result: ``rule(trial_id, result) -> stop?``."""


class CriteriaMet(BaseException):
    """Raised by ``report`` when the run's ``stop`` criteria are met, to end the trainable.

    A ``BaseException``, so that a trainable's ``except Exception`` does not swallow it; the
    trial's objective catches it and ends the trial as succeeded."""


class Session:
    """One run of one trial, as its trainable sees it.

    Args:
        ctx: The hyperlab trial context.
        config: The config the trainable got.
        trainable_name: The trainable's name (Ray's trial names start with it).
        experiment_name: ``RunConfig(name=...)``, or None for the experiment's id.
        stop: The stop criteria, or None.
    """

    def __init__(
        self,
        ctx: TrialContext,
        config: Any,
        *,
        trainable_name: str,
        experiment_name: str | None,
        stop: StopRule | None,
    ) -> None:
        self.ctx = ctx
        self.config = config
        self.trainable_name = trainable_name
        self.experiment_name = experiment_name
        self.stop = stop
        self.checkpoint: Checkpoint | None = None
        self.pending: str | None = None
        self._start = self._last = time.monotonic()

    @property
    def iteration(self) -> int:
        """Iterations done: reports so far, counted on from a restored checkpoint."""
        return self.ctx.next_step

    def restore(self) -> dict[str, Any] | Path | None:
        """Load the trial's latest checkpoint (``hyperlab.load_checkpoint``), which
        ``get_checkpoint`` then returns: the saved dict, the folder, or None."""
        state = reporting.load_checkpoint()
        if isinstance(state, Path):
            self.checkpoint = Checkpoint(state)
        elif state is not None:
            self.checkpoint = Checkpoint.from_dict(state)
        return state

    def log(self, metrics: Mapping[str, Any]) -> bool:
        """Report ``metrics`` with Ray's automatic ones; True if the stop criteria are met.

        Raises:
            TrialStopped: the trial was told to stop (by a scheduler, or the user).
        """
        now = time.monotonic()
        result = dict(metrics)
        result.setdefault("training_iteration", self.ctx.next_step + 1)
        result.setdefault("time_this_iter_s", now - self._last)
        result.setdefault("time_total_s", now - self._start)
        self._last = now
        try:
            self.ctx.report(None, None, result)
        finally:  # saved even when a scheduler pauses the trial at this report
            self.save_pending()
        if self.stop is None:
            return False
        return self.stop(self.ctx.trial_id, {**result, "config": self.config})

    def save(self, state: dict[str, Any] | str | os.PathLike[str]) -> None:
        """Save a checkpoint (a dict, or a folder whose files are copied) after a report."""
        saved = reporting.checkpoint(state)
        self.checkpoint = (
            Checkpoint.from_dict(state) if isinstance(state, dict) else Checkpoint(saved / FILES)
        )

    def make_folder(self, step: int) -> str:
        """A new folder for ``tune.checkpoint_dir(step)``, inside the trial's folder; it
        becomes a checkpoint after the next report (``save_pending``)."""
        parent = self.ctx.trial_dir
        if parent is not None:
            os.makedirs(parent, exist_ok=True)
        return tempfile.mkdtemp(prefix=f".checkpoint_dir-{step}-", dir=parent)

    def set_pending(self, folder: str) -> None:
        """Make ``folder`` the checkpoint to save after the next report (the one made before
        it, not yet saved, is dropped: Ray keeps the newest)."""
        if self.pending is not None and self.pending != folder:
            shutil.rmtree(self.pending, ignore_errors=True)
        self.pending = folder

    def save_pending(self) -> None:
        """Save the folder of the last ``tune.checkpoint_dir`` as a checkpoint, then delete it."""
        folder, self.pending = self.pending, None
        if folder is None:
            return
        try:
            self.save(folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    @contextlib.contextmanager
    def active(self) -> Iterator[Session]:
        """Make this the session of its trial while the trainable runs."""
        _SESSIONS[id(self.ctx)] = self
        try:
            yield self
        finally:
            del _SESSIONS[id(self.ctx)]


_SESSIONS: dict[int, Session] = {}
"""id(trial context) -> its session, while its trainable runs (contexts are per trial run)."""


def find_session() -> Session | None:
    """The running trial's session, or None outside a trial started by a Tuner."""
    ctx = find_current()
    return None if ctx is None else _SESSIONS.get(id(ctx))


def _session(call: str) -> Session:
    session = find_session()
    if session is None:
        raise RuntimeError(
            f"tune.{call}() works only inside a trainable run by hyperlab.compat.ray.tune's "
            "Tuner or run()"
        )
    return session


def report(
    metrics: Mapping[str, Any] | float | None = None,
    *,
    checkpoint: Checkpoint | None = None,
    **kwargs: Any,
) -> None:
    """Report a result of the running trial, and optionally a checkpoint.

    Args:
        metrics: A dict of metrics (Ray 2.7 and later). Ray's older forms work too:
            ``report(loss=0.3)``, and ``report(0.3)`` for the metric ``_metric``.
        checkpoint: A ``Checkpoint`` saved with this result (its files are copied).
        **kwargs: More metrics (Ray's older form).

    Raises:
        TrialStopped: A scheduler stopped or paused the trial, or the user stopped it: let
            it propagate.
    """
    session = _session("report")
    if metrics is not None and not isinstance(metrics, Mapping):
        kwargs["_metric"] = metrics
        metrics = None
    if checkpoint is not None and not isinstance(checkpoint, Checkpoint):
        raise TypeError(
            f"tune.report: checkpoint must be a tune.Checkpoint, got {type(checkpoint).__name__}"
        )
    met = session.log({**(metrics or {}), **kwargs})
    if checkpoint is not None:
        session.save(saved_state(checkpoint))
    if met:
        raise CriteriaMet


@contextlib.contextmanager
def checkpoint_dir(step: int) -> Iterator[str]:
    """A new folder to write a checkpoint's files into (Ray 1.x): the files become the trial's
    checkpoint with its next report (call it before ``tune.report``), or when the trainable
    returns. A function ``f(config, checkpoint_dir=None)`` gets that folder back when its
    trial continues (paused, re-run or branched).

    Args:
        step: The checkpoint's index (Ray names the folder by it).

    Example:
        >>> with tune.checkpoint_dir(step=epoch) as folder:
        ...     torch.save(model.state_dict(), os.path.join(folder, "model.pt"))
        >>> tune.report(loss=loss)
    """
    session = _session("checkpoint_dir")
    if step is None:
        raise ValueError("tune.checkpoint_dir(step): step must be given, got None")
    folder = session.make_folder(step)
    try:
        yield folder
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    session.set_pending(folder)


def get_checkpoint() -> Checkpoint | None:
    """The checkpoint the running trial continues from (a paused, re-run or branched trial's
    latest), updated by the checkpoints it reports; None for a fresh trial."""
    return _session("get_checkpoint").checkpoint


def get_context() -> TuneContext:
    """The running trial's ``TuneContext``: its id, name, folder and experiment."""
    return TuneContext(_session("get_context"))


def get_trial_id() -> str:
    """Ray 1.x's ``tune.get_trial_id()``: ``get_context().get_trial_id()``."""
    return get_context().get_trial_id()


def get_trial_name() -> str:
    """Ray 1.x's ``tune.get_trial_name()``: ``get_context().get_trial_name()``."""
    return get_context().get_trial_name()


def get_trial_dir() -> str:
    """Ray 1.x's ``tune.get_trial_dir()``: ``get_context().get_trial_dir()``."""
    return get_context().get_trial_dir()


class TuneContext:
    """What a trial knows about itself (Ray's ``tune.get_context()``)."""

    _REFUSED = (
        "get_local_rank",
        "get_local_world_size",
        "get_metadata",
        "get_node_rank",
        "get_storage",
        "get_trial_resources",
        "get_world_rank",
        "get_world_size",
    )

    def __init__(self, session: Session) -> None:
        self._session = session

    def get_trial_id(self) -> str:
        """The trial's id: ``<experiment id>-<number>``."""
        return self._session.ctx.trial_id

    def get_trial_name(self) -> str:
        """``<trainable name>_<trial id>``, as Ray names trials."""
        return f"{self._session.trainable_name}_{self._session.ctx.trial_id}"

    def get_trial_dir(self) -> str:
        """The trial's own folder (created if needed)."""
        return os.fspath(reporting.trial_dir())

    def get_experiment_name(self) -> str:
        """``RunConfig(name=...)``, else the experiment's id."""
        return self._session.experiment_name or self._session.ctx.experiment_id

    def __getattr__(self, name: str) -> NoReturn:
        if name in self._REFUSED:
            raise NotImplementedError(
                f"TuneContext.{name}() has no hyperlab equivalent (distributed training and "
                "placement are not mapped); use get_trial_id, get_trial_name, get_trial_dir "
                "or get_experiment_name"
            )
        raise AttributeError(f"'TuneContext' object has no attribute {name!r}")
