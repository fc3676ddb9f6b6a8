"""Experiments run by the real driver in simulated time: a ``FakeExecutor`` running scripted
trials, a ``FakeClock`` and the in-memory store, wired as ``hyperlab.run`` wires them (the
tuner, the assessor the options name or a given one). Shared by the driver's, the assessors'
and the schedulers' tests; every time is simulated and nothing sleeps.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hyperlab import ExperimentStatus, TrialStatus
from hyperlab import space as hs
from hyperlab.assessors import Assessor
from hyperlab.config import ExperimentOptions, validate_options
from hyperlab.executors import TrialSpec
from hyperlab.experiment._driver import Driver
from hyperlab.experiment._setup import make_assessor
from hyperlab.space import SearchSpace
from hyperlab.store import ControlRequest, ExperimentRecord, Store
from hyperlab.testing import FakeClock, FakeExecutor
from hyperlab.trial import Trial
from hyperlab.tuners.base import Tuner, tuner_name

SPACE = SearchSpace.coerce({"x": hs.uniform(0, 1000)})
SEED = 7

Script = Callable[[TrialSpec], Any]
"""What a simulated trial does (see ``hyperlab.testing.FakeExecutor``)."""


class NumberTuner(Tuner):
    """Proposes ``x = number``; records the trials it observes, in order."""

    def __init__(self, space: SearchSpace, **kwargs: Any) -> None:
        super().__init__(space, **kwargs)
        self.observed: list[Trial] = []

    def suggest(self, number: int) -> dict[str, Any]:
        return {"x": float(number)}

    def observe(self, trial: Trial) -> None:
        self.observed.append(trial)


@dataclass
class Sim:
    """One experiment wired for simulated time."""

    clock: FakeClock
    store: Store
    record: ExperimentRecord
    tuner: Tuner
    assessor: Assessor | None
    executor: FakeExecutor
    driver: Driver
    folder: Path

    @property
    def id(self) -> str:
        return self.record.id

    def run(self) -> ExperimentStatus:
        return self.driver.run()

    def trials(self) -> list[Trial]:
        return self.store.get_trials(self.id)

    def statuses(self) -> dict[int, TrialStatus]:
        return {t.number: t.status for t in self.trials()}

    def reached(self) -> dict[int, int]:
        """Trial number -> the last step + 1 it reported (its resource)."""
        return {t.number: max((r.step + 1 for r in t.reports), default=0) for t in self.trials()}

    def at(self, when: float, request: ControlRequest) -> list[int]:
        """Send ``request`` at simulated second ``when``; the list gets its control id."""
        sent: list[int] = []
        self.clock.call_at(when, lambda: sent.append(self.store.send_control(self.id, request)))
        return sent

    def t(self, epoch: float | None) -> float:
        """Simulated seconds since the clock started for one of its epoch stamps."""
        assert epoch is not None
        return epoch - self.clock.start


def simulate(
    script: Script,
    tmp_path: Path,
    *,
    space: SearchSpace = SPACE,
    tuner: Tuner | str | None = None,
    assessor: Assessor | str | None = None,
    **options: Any,
) -> Sim:
    """A driver for a new experiment with ``options`` (``max_trials=``, ``metric=``...).

    Args:
        script: The trials' script.
        tmp_path: The experiment's folder.
        space: The search space.
        tuner: The tuner object, whose name the options record (a search-space update
            rebuilds it by that name); or a tuner's name, recorded in the options while a
            ``NumberTuner`` (``x = number``) proposes until such an update. A
            ``NumberTuner`` by default.
        assessor: An assessor object (BOHB: the tuner itself), or the name of one, built from
            ``assessor_args`` as ``hyperlab.run`` builds it.
        **options: The experiment's options; ``seed`` is the tuner's.
    """
    if isinstance(assessor, str):
        options["assessor"], assessor = assessor, None
    if isinstance(tuner, str):
        options["tuner"], tuner = tuner, None
    elif tuner is not None:
        options.setdefault("tuner", tuner_name(type(tuner)))
    clock = FakeClock()
    store = Store.open(":memory:", clock=clock)
    opts = validate_options(seed=SEED if tuner is None else tuner.seed, **options)
    record = ExperimentRecord(
        id=store.new_experiment_id(),
        name=None,
        status=ExperimentStatus.INITIALIZED,
        options=opts,
        space=space.to_nni(),
        seed=opts.seed if opts.seed is not None else SEED,
        objective=None,
        created_at=clock.time(),
    )
    store.create_experiment(record)
    return _wire(store, record, opts, script, clock, space, tuner, assessor, tmp_path, None)


def resume(
    sim: Sim,
    script: Script,
    *,
    tuner: Tuner | None = None,
    assessor: Assessor | None = None,
    **changes: Any,
) -> Sim:
    """A new driver, tuner, assessor and executor for the same experiment, built from the store
    alone as ``hyperlab.resume`` builds them (the options changed by ``changes``): the history,
    reports included, is replayed into the tuner and the assessor."""
    record = sim.store.get_experiment(sim.id)
    opts = validate_options(**{**record.options.model_dump(), **changes})
    history = sim.store.get_trials(sim.id, reports=True)
    space = SearchSpace.from_nni(record.space)  # as a search-space update left it
    return _wire(
        sim.store, record, opts, script, sim.clock, space, tuner, assessor, sim.folder, history
    )


def _wire(
    store: Store,
    record: ExperimentRecord,
    opts: ExperimentOptions,
    script: Script,
    clock: FakeClock,
    space: SearchSpace,
    tuner: Tuner | None,
    assessor: Assessor | None,
    folder: Path,
    history: list[Trial] | None,
) -> Sim:
    if tuner is None:
        tuner = NumberTuner(space, mode=opts.mode, seed=SEED)
    if assessor is None:
        assessor = make_assessor(opts, tuner, opts.assessor)
    executor = FakeExecutor(
        script, clock=clock, concurrency=opts.concurrency, trial_timeout=opts.trial_timeout
    )
    driver = Driver(
        store,
        record,
        opts,
        tuner,
        executor,
        assessor=assessor,
        history=history,
        experiment_dir=folder,
        clock=clock,
    )
    return Sim(clock, store, record, tuner, assessor, executor, driver, folder)
