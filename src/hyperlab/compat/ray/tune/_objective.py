"""The hyperlab objective that runs one trial of a Ray Tune trainable."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from hyperlab.compat.ray.tune._function import run_function
from hyperlab.compat.ray.tune._session import CriteriaMet, Session, StopRule
from hyperlab.compat.ray.tune._space import Template
from hyperlab.compat.ray.tune._trainable import Trainable, run_class
from hyperlab.reporting import trial_seed
from hyperlab.reporting.context import find_current

__all__ = ["TrialObjective", "trainable_name"]


def trainable_name(trainable: Any) -> str:
    """The name Ray gives a trainable: its function's or class's ``__name__``."""
    return str(getattr(trainable, "__name__", type(trainable).__name__))


@dataclass
class TrialObjective:
    """Runs a trainable (a function in one of Ray's forms, see ``_function``, or a
    ``Trainable`` class) as a hyperlab trial: builds Ray's config from the trial's parameters,
    runs it in a ``Session`` that maps Ray's trial-side calls onto hyperlab's, and ends the
    trial with its last report.

    It presents itself as the trainable (``__module__``, ``__qualname__``), so the experiment
    records the user's code: the folder ``hyperlab.resume`` imports it from, its git state.

    Args:
        trainable: The function or the Trainable subclass.
        template: The translated param_space.
        stop: The stop criteria, or None.
        experiment_name: ``RunConfig(name=...)``, or None.
        checkpoint_frequency: A Trainable saves a checkpoint every this many iterations.
        checkpoint_at_end: A Trainable saves a checkpoint when it ends on its own.
        reuse: A Trainable's instance is kept for the next trial (``reuse_actors``).
        chdir: Run the trainable in the trial's folder (Ray's default, for trials in their
            own process).
    """

    trainable: Callable[..., Any] | type[Trainable]
    template: Template
    stop: StopRule | None = None
    experiment_name: str | None = None
    checkpoint_frequency: int = 0
    checkpoint_at_end: bool = False
    reuse: bool = False
    chdir: bool = False

    def __post_init__(self) -> None:
        self.__module__ = getattr(self.trainable, "__module__", None) or __name__
        setattr(self, "__qualname__", trainable_name(self.trainable))  # noqa: B010

    def __call__(self, params: dict[str, Any]) -> None:
        ctx = find_current()
        if ctx is None:
            raise RuntimeError("a Ray Tune trainable runs only inside a hyperlab trial")
        session = Session(
            ctx,
            self.template.resolve(params, trial_seed()),
            trainable_name=trainable_name(self.trainable),
            experiment_name=self.experiment_name,
            stop=self.stop,
        )
        with session.active(), self._in_folder(ctx.trial_dir), contextlib.suppress(CriteriaMet):
            self._run(session)
        return None  # the trial's result is its last report

    def _run(self, session: Session) -> None:
        trainable: Any = self.trainable
        if isinstance(trainable, type) and issubclass(trainable, Trainable):
            run_class(
                trainable,
                session,
                frequency=self.checkpoint_frequency,
                at_end=self.checkpoint_at_end,
                reuse=self.reuse,
            )
            return
        run_function(trainable, session)

    @contextlib.contextmanager
    def _in_folder(self, folder: str | None) -> Iterator[None]:
        if not self.chdir or folder is None:
            yield
            return
        before = os.getcwd()
        os.makedirs(folder, exist_ok=True)
        os.chdir(folder)
        try:
            yield
        finally:
            os.chdir(before)
