"""``TuneConfig``, ``RunConfig``, ``CheckpointConfig``, ``FailureConfig``: Ray's configuration
objects, checked when made: an argument with no hyperlab equivalent is accepted at Ray's
default only (``NotImplementedError`` otherwise, naming it and what to do instead)."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from hyperlab.compat.ray.tune._refuse import check_mode, refuse

__all__ = ["CheckpointConfig", "FailureConfig", "RunConfig", "TuneConfig"]

_DEPRECATED = "DEPRECATED"


@dataclass
class TuneConfig:
    """What to search and how (Ray's ``tune.TuneConfig``).

    Attributes:
        metric / mode: The metric to optimise and which way; both or neither.
        search_alg: A searcher (``BasicVariantGenerator`` by default).
        scheduler: A trial scheduler (``FIFOScheduler`` by default).
        num_samples: Samples of the space (each grid point this many times); -1 for no end
            (then ``time_budget_s`` is required).
        max_concurrent_trials: At most this many trials at once.
        time_budget_s: Seconds (or a ``timedelta``) of the whole experiment.
        reuse_actors: Keep a ``Trainable``'s instance for the next trial (``reset_config``).
    """

    mode: str | None = None
    metric: str | None = None
    search_alg: Any = None
    scheduler: Any = None
    num_samples: int = 1
    max_concurrent_trials: int | None = None
    time_budget_s: float | datetime.timedelta | None = None
    reuse_actors: bool = False
    trial_name_creator: Any = None
    trial_dirname_creator: Any = None
    chdir_to_trial_dir: Any = _DEPRECATED

    def __post_init__(self) -> None:
        check_mode("TuneConfig", self.mode)
        names = "trials are named <trainable>_<experiment id>-<number>"
        refuse("TuneConfig", "trial_name_creator", self.trial_name_creator, None, names)
        refuse("TuneConfig", "trial_dirname_creator", self.trial_dirname_creator, None, names)
        refuse(
            "TuneConfig",
            "chdir_to_trial_dir",
            self.chdir_to_trial_dir,
            _DEPRECATED,
            "set the environment variable RAY_CHDIR_TO_TRIAL_DIR=0, as Ray asks",
        )
        if isinstance(self.num_samples, bool) or not isinstance(self.num_samples, int):
            raise TypeError(f"TuneConfig: num_samples must be an int, got {self.num_samples!r}")
        if self.num_samples == 0 or self.num_samples < -1:
            raise ValueError(
                f"TuneConfig: num_samples must be >= 1, or -1 for no end, got {self.num_samples}"
            )

    def budget_seconds(self) -> float | None:
        """``time_budget_s`` in seconds."""
        budget = self.time_budget_s
        return budget.total_seconds() if isinstance(budget, datetime.timedelta) else budget


@dataclass
class CheckpointConfig:
    """Which checkpoints to keep, and when a ``Trainable`` saves them.

    Attributes:
        num_to_keep: The checkpoints each trial keeps (its newest, or its best by
            ``checkpoint_score_attribute``, and then its newest too); None for all (Ray's
            default).
        checkpoint_score_attribute: The reported metric by which checkpoints are ranked (the
            result reported with each checkpoint): hyperlab's ``checkpoint_score``; None keeps
            the newest.
        checkpoint_score_order: ``"max"`` (Ray's default) or ``"min"``: which way the
            attribute is better (hyperlab's ``checkpoint_score_mode``).
        checkpoint_frequency: A Trainable saves every this many iterations (0: never).
        checkpoint_at_end: A Trainable saves when it ends on its own.
    """

    num_to_keep: int | None = None
    checkpoint_score_attribute: str | None = None
    checkpoint_score_order: str | None = "max"
    checkpoint_frequency: int = 0
    checkpoint_at_end: bool | None = None

    def __post_init__(self) -> None:
        if self.checkpoint_score_order not in ("min", "max"):
            raise ValueError(
                "CheckpointConfig: checkpoint_score_order must be 'min' or 'max', got "
                f"{self.checkpoint_score_order!r}"
            )
        score = self.checkpoint_score_attribute
        if score is not None and (not isinstance(score, str) or not score):
            raise TypeError(
                f"CheckpointConfig: checkpoint_score_attribute must be a metric's name, got "
                f"{score!r}"
            )
        if self.num_to_keep is not None and self.num_to_keep < 1:
            raise ValueError(
                f"CheckpointConfig: num_to_keep must be >= 1 or None, got {self.num_to_keep!r}"
            )


@dataclass
class FailureConfig:
    """What a failed trial does to the experiment.

    Attributes:
        fail_fast: True ends the experiment at the first failed trial (the results hold
            it); ``"raise"`` ends it and raises that trial's exception from ``fit()``.
    """

    max_failures: int = 0
    fail_fast: bool | str = False

    def __post_init__(self) -> None:
        refuse(
            "FailureConfig",
            "max_failures",
            self.max_failures,
            0,
            "hyperlab runs a failed trial once (the ray executor re-runs a trial whose node "
            "died: hyperlab_options={'max_node_failures': N})",
        )
        if self.fail_fast not in (True, False, "raise"):
            raise ValueError(
                f"FailureConfig: fail_fast must be True, False or 'raise', got {self.fail_fast!r}"
            )


@dataclass
class RunConfig:
    """Where and how the experiment runs (Ray's ``tune.RunConfig``, ``ray.train.RunConfig``).

    Attributes:
        name: The experiment's name (``hyperlab ls`` shows it).
        storage_path: Its folder: trials go to ``<storage_path>/<name>/<id>/trials/<n>``
            (the store stays hyperlab's, so ``hyperlab ls`` lists the experiment).
        stop: When a trial ends on its own results (see ``tune.stopper``).
        checkpoint_config / failure_config: As above.
        verbose: 0 for no progress output.
        log_to_file: True keeps trials' output in their ``stdout.log``/``stderr.log`` only;
            False (Ray's default) also echoes it to this process.
    """

    name: str | None = None
    storage_path: str | None = None
    storage_filesystem: Any = None
    failure_config: FailureConfig | None = None
    checkpoint_config: CheckpointConfig | None = None
    sync_config: Any = None
    verbose: Any = None
    stop: Any = None
    callbacks: list[Any] | None = None
    progress_reporter: Any = None
    log_to_file: bool = False
    local_dir: str | None = None

    def __post_init__(self) -> None:
        own = "remove it: hyperlab keeps experiments in its store and their folders locally"
        refuse("RunConfig", "storage_filesystem", self.storage_filesystem, None, own)
        refuse("RunConfig", "sync_config", self.sync_config, None, own)
        refuse(
            "RunConfig",
            "callbacks",
            self.callbacks,
            None,
            "pass hyperlab callbacks (on_trial_start, on_report, on_trial_end) in "
            "hyperlab_options={'callbacks': [...]}",
        )
        refuse(
            "RunConfig",
            "progress_reporter",
            self.progress_reporter,
            None,
            "hyperlab shows its own progress (verbose=0 for none)",
        )
        if self.log_to_file not in (True, False):
            raise NotImplementedError(
                f"RunConfig(log_to_file={self.log_to_file!r}): file names have no hyperlab "
                "equivalent; trials write stdout.log and stderr.log in their folders"
            )
        if self.local_dir is not None:
            if self.storage_path is not None:
                raise ValueError("RunConfig: give storage_path or local_dir, not both")
            self.storage_path = self.local_dir
        if self.storage_path is not None and "://" in str(self.storage_path):
            raise NotImplementedError(
                f"RunConfig(storage_path={self.storage_path!r}): remote storage has no "
                "hyperlab equivalent; give a local folder"
            )
