"""The real driver run one simulated tick at a time, for the engine's state machine.

``Driver.run`` is a loop that returns only when the experiment ends. To look at the store
between any two things that happen, ``Lockstep`` runs the loop in a thread of its own and
hands control back and forth with the test: the driver runs until its ``FakeClock`` passes
the next tick (a ``call_at`` callback, reached inside the executor's ``poll``), then waits
there while the test acts (a trial's step through ``FakeExecutor.act``, a control request
through the store) and checks the store. Exactly one of the two threads runs at any time, so
every run is the same for the same steps.

A driver *crash* leaves that thread parked where it waits, as a killed process would leave
its rows: the next driver opens the store anew, waits out the lease and replays the history.
Only once it holds the lease is the dead driver's thread let go, with ``DriverCrash`` raised
where it waited; whatever it then tries to write is refused by the store's lease fencing.
"""

from __future__ import annotations

import contextlib
import threading
from pathlib import Path
from typing import Any

from hyperlab.config import ExperimentOptions, validate_options
from hyperlab.experiment._driver import Driver
from hyperlab.experiment._setup import make_assessor
from hyperlab.space import SearchSpace
from hyperlab.store import ExperimentRecord, Store
from hyperlab.store._engine import create_store_engine
from hyperlab.store._schema import ensure_schema
from hyperlab.store._urls import resolve_storage
from hyperlab.testing import FakeClock, FakeExecutor
from hyperlab.trial import ExperimentStatus
from hyperlab.tuners.base import create_tuner

TICK = 0.25
"""Simulated seconds the driver runs per step (over its control and flush intervals)."""

HANDOFF_TIMEOUT = 30.0
"""Real seconds the test waits for the driver to reach its next tick before failing."""


class DriverCrash(BaseException):
    """Raised in a crashed driver's thread where it waited: the process is gone."""


class Lockstep:
    """One driver, its store and its executor, run a tick at a time in a thread of its own.

    Args:
        driver: A driver built and not yet run.
        store: The driver's own store (a process of its own would open one).
        executor: The driver's executor.
        clock: The simulated clock the driver, the store and the executor share.
    """

    def __init__(
        self, driver: Driver, store: Store, executor: FakeExecutor, clock: FakeClock
    ) -> None:
        self.driver, self.store, self.executor, self.clock = driver, store, executor, clock
        self.status: ExperimentStatus | None = None  # what run() returned
        self.error: BaseException | None = None  # what run() raised
        self.crashed = False
        self._go = threading.Semaphore(0)
        self._back = threading.Semaphore(0)
        self._thread = threading.Thread(target=self._main, name="engine-machine-driver")
        self._done = False

    @property
    def alive(self) -> bool:
        """True while ``run`` has not returned (nor raised) and the driver did not crash."""
        return not self._done and not self.crashed

    def start(self) -> None:
        """Start ``run`` and let it go on to its first tick."""
        self._at_next_tick()
        self._thread.start()
        self._wait()

    def step(self) -> None:
        """Let the driver run one more tick of simulated time (or to its end)."""
        if self.alive:
            self._go.release()
            self._wait()

    def crash(self) -> None:
        """The driver's process dies where it waits: its lease watchdog stops beating, and
        nothing more of it runs until ``bury``."""
        assert self.alive
        self.crashed = True
        keeper = self.driver.keeper
        if keeper is not None:
            keeper.stop()

    def bury(self) -> None:
        """Let a crashed driver's thread end (``DriverCrash`` where it waited)."""
        if self.crashed and not self._done:
            self._go.release()
            self._thread.join(HANDOFF_TIMEOUT)
            assert not self._thread.is_alive(), "a crashed driver's thread did not end"

    def close(self) -> None:
        """End the thread whatever its state (the test is over); close the store."""
        if not self._done and self._thread.is_alive():
            self.crashed = True
            self.bury()
        with contextlib.suppress(Exception):  # a crashed driver's store may not flush
            self.store.close()

    # ---- the hand-off ---------------------------------------------------------------------

    def _main(self) -> None:
        try:
            self.status = self.driver.run()
        except DriverCrash:
            pass
        except BaseException as exc:
            if not self.crashed:
                self.error = exc
        finally:
            self._done = True
            self._back.release()

    def _at_next_tick(self) -> None:
        self.clock.call_at(self.clock.monotonic() + TICK, self._handoff)

    def _handoff(self) -> None:
        if threading.current_thread() is not self._thread or self._done:
            return  # another driver's (or the test's) advance passed this tick
        self._back.release()
        self._go.acquire()
        if self.crashed:
            raise DriverCrash
        self._at_next_tick()

    def _wait(self) -> None:
        if not self._back.acquire(timeout=HANDOFF_TIMEOUT):
            raise AssertionError("the driver did not reach its next tick (a busy loop?)")


class Connections:
    """Separate ``Store`` objects on one SQLite file, as separate processes would open them:
    each has its own write buffer and its own leases (what a crash loses, what fencing
    checks). They share one SQLAlchemy engine only so that statements compile once, which
    makes the machine several times faster than ``Store.open`` per driver.

    Args:
        path: The SQLite file (created with the schema).
        clock: The stamp source of every store.
    """

    def __init__(self, path: Path, clock: FakeClock) -> None:
        self.target = resolve_storage(f"sqlite:///{path}")
        self.engine = create_store_engine(self.target)
        ensure_schema(self.engine, str(path))
        self.clock = clock

    def open(self) -> Store:
        """A new store connection."""
        return Store(self.engine, self.target, clock=self.clock)

    def close(self) -> None:
        """Release the file."""
        self.engine.dispose()


def create(
    connections: Connections, space: SearchSpace, **options: Any
) -> tuple[str, ExperimentOptions]:
    """Create an experiment in the store; its id and validated options."""
    opts = validate_options(**options)
    clock = connections.clock
    with connections.open() as store:
        record = ExperimentRecord(
            id=store.new_experiment_id(),
            name=None,
            status=ExperimentStatus.INITIALIZED,
            options=opts,
            space=space.to_nni(),
            seed=opts.seed if opts.seed is not None else 0,
            objective=None,
            created_at=clock.time(),
        )
        store.create_experiment(record)
    return record.id, opts


def open_driver(connections: Connections, experiment_id: str, folder: Path) -> Lockstep:
    """A driver for the experiment built from the store alone, as ``hyperlab.resume`` builds
    it (a new store connection, tuner, assessor and executor; the history replayed), not yet
    started. Every trial's script is empty: the test steers each one with ``act``."""
    clock = connections.clock
    store = connections.open()
    record = store.get_experiment(experiment_id)
    opts = record.options
    history = store.get_trials(experiment_id, reports=True)
    space = SearchSpace.from_nni(record.space)
    tuner = create_tuner(opts.tuner, space, mode=opts.mode, seed=record.seed, args=opts.tuner_args)
    assessor = make_assessor(opts, tuner, opts.assessor)
    executor = FakeExecutor([], clock=clock, concurrency=opts.concurrency)
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
    return Lockstep(driver, store, executor, clock)
