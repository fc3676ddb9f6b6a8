"""The executor interface: run trials somewhere and turn what they do into events.

An executor knows nothing about tuners, assessors or the store. The driver ``submit``s
``TrialSpec``s and calls ``poll``; the executor hands every ``Event`` to the listener given to
``open``, always in the thread that called ``poll`` (so the driver's thread alone touches the
experiment's state). Events are frozen records, one class per kind (``Started``, ``Reported``,
``Finished``, ``Failed``, ``Stopped``). Every submitted trial ends with exactly one
``Finished``, ``Failed`` or ``Stopped`` (or ``Lost``, from an executor whose machines can die
under a trial), after its ``Started`` and ``Reported`` events, and ``close`` leaves no trial
running. ``hyperlab.testing.ExecutorContract`` checks all of this.

An executor whose trials outlive a killed driver (``command``) may also ``adopt`` them when the
experiment is resumed: an adopted trial gets no ``Started`` (it started under the dead driver),
only its reports not yet stored and then its one end event.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from hyperlab.config import DEFAULT_MAX_LOG_BYTES, MIN_MAX_LOG_BYTES, Registry
from hyperlab.errors import ConfigError, HyperlabError
from hyperlab.reporting.context import RequestKind

if TYPE_CHECKING:
    from hyperlab.executors.devices import DevicePool

__all__ = [
    "DEFAULT_MAX_LOG_BYTES",
    "END_EVENTS",
    "EXECUTORS",
    "Event",
    "Executor",
    "Failed",
    "Finished",
    "Lost",
    "Reported",
    "Requested",
    "Started",
    "Stopped",
    "TrialEnd",
    "TrialSpec",
    "create_executor",
    "executor_class",
    "executor_names",
    "register_executor",
]


@dataclass(frozen=True, slots=True)
class Started:
    """The trial's code began to run (``time`` is epoch seconds, as in every event)."""

    number: int
    time: float


@dataclass(frozen=True, slots=True)
class Reported:
    """The trial reported an intermediate result."""

    number: int
    time: float
    step: int
    metrics: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Finished:
    """The objective returned: ``metrics`` is its final result."""

    number: int
    time: float
    metrics: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Failed:
    """The trial raised, crashed, or timed out: ``error`` says how.

    ``exception`` is what the trial's code raised, when the executor can carry it to the
    driver: the object itself from a trial in the driver's process, an unpickled copy (without
    its traceback) from another process, None otherwise (a crash, a timeout, a command). The
    driver re-raises it from ``run()`` when ``continue_on_failure=False`` ends the experiment.
    It takes no part in equality or ``repr``.
    """

    number: int
    time: float
    error: str
    exception: BaseException | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Stopped:
    """The trial ended because ``stop`` asked it to; ``metrics`` is its last report, if any."""

    number: int
    time: float
    metrics: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Requested:
    """The running trial asks the driver for the value of parameter ``name``, drawn from
    ``spec`` (its NNI JSON, ``{"_type": ..., "_value": [...]}``): a define-by-run
    ``hyperlab.suggest``. It waits until the driver calls ``Executor.answer(number, index,
    ...)``; ``index`` counts the trial's requests from 0."""

    number: int
    time: float
    index: int
    kind: RequestKind
    name: str
    spec: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Lost:
    """The trial's run was lost with the machine it ran on (a Ray node or a Dask worker died,
    a pool worker stopped heartbeating), through no fault of its own: the driver runs it again
    with ``attempt + 1``, from its last checkpoint when it has one. ``reason`` says what was
    lost."""

    number: int
    time: float
    reason: str


Event = Started | Reported | Requested | Finished | Failed | Stopped | Lost
"""Everything an executor tells the driver: one frozen record per kind."""

TrialEnd = Finished | Failed | Stopped
"""The three ways a trial's code ends."""

END_EVENTS = (Finished, Failed, Stopped, Lost)
"""The classes of the events that end a submitted trial's run (a ``TrialEnd``, or ``Lost``),
for ``isinstance``; every submitted trial's run ends with exactly one."""


@dataclass(frozen=True, slots=True)
class TrialSpec:
    """What an executor needs to run one trial.

    Attributes:
        number / trial_id / params / seed: The trial's.
        trial_dir: Its folder (outputs, channel, checkpoints), or None for none.
        attempt: 1, or more when it runs again after its driver died.
        devices: Filled by the executor when it places the trial on a ``DevicePool``.
        restore_from: The folder of the trial whose checkpoints this one starts from when it
            has none of its own (population based training), or None.
        checkpoint_keep: How many of its latest checkpoints the trial keeps.
        checkpoint_score: ``(metric, "min" | "max")``: the trial keeps instead the
            ``checkpoint_keep`` checkpoints whose reports were best in that metric, and its
            newest (``hyperlab.reporting.checkpoints.prune``); or None.
        ran_before: It ran before with this attempt (a paused trial resumed).
        round_trip: Something listens to its reports (an assessor or scheduler): each
            ``report`` waits until the driver has taken it and decided on it
            (``TrialContext.round_trip``), so decisions take effect at that very report.
    """

    number: int
    trial_id: str
    params: dict[str, Any]
    seed: int | None
    trial_dir: str | None
    attempt: int = 1
    devices: tuple[int, ...] = ()
    restore_from: str | None = None
    checkpoint_keep: int = 1
    ran_before: bool = False
    round_trip: bool = False
    checkpoint_score: tuple[str, str] | None = None

    @property
    def fresh(self) -> bool:
        """True for a trial's first run: its folder holds nothing of an earlier one (no logs,
        no checkpoints), so nothing there needs looking at before it starts."""
        return self.attempt == 1 and not self.ran_before


Listener = Callable[[Event], None]


class Executor(ABC):
    """Runs trials of one objective, up to ``concurrency`` at a time.

    Args:
        objective: What each trial runs, as ``check_objective`` accepts it: a function of the
            params (the ``command`` executor takes a ``CommandTrial``).
        concurrency: How many trials may run at once.
        trial_timeout: Seconds after which a running trial is failed, or None.
        stop_grace: Seconds a stopped trial gets to end by itself before it is killed.
        devices: Accelerators to place trials on, or None. Each trial holds
            ``devices.per_trial`` of them from its submit to its end event; ``free_slots``
            is 0 while none are free.
        max_log_bytes: At most how many bytes of a trial's output its ``stdout.log`` and
            ``stderr.log`` each keep (its first and last bytes, with a line saying how many
            were dropped between them), or None to keep everything; at least 1024.
        echo_output: Also write each trial's output to the driver's stdout and stderr, each
            line prefixed with ``[trial N] ``; by default it goes to the trial's logs only.

    Subclasses implement ``submit``, ``poll``, ``stop`` and ``close``; they are driven by one
    thread and need no locks of their own beyond what their worker threads require. With
    devices, ``submit`` starts with ``spec = self.place(spec)``; the release happens here, when
    the trial's end event reaches the listener.
    """

    name: ClassVar[str]
    runs_outside: ClassVar[bool] = False
    """True when trials run outside the driver's process: the store is flushed before submit."""
    objective_bytes: bytes | None = None
    """The objective as this executor pickled it for other processes, if it did (the store
    keeps it for ``resume``, so it is pickled once)."""

    def __init__(
        self,
        objective: Any,
        *,
        concurrency: int = 1,
        trial_timeout: float | None = None,
        stop_grace: float = 5.0,
        devices: DevicePool | None = None,
        max_log_bytes: int | None = DEFAULT_MAX_LOG_BYTES,
        echo_output: bool = False,
    ) -> None:
        self.check_objective(objective)
        if max_log_bytes is not None and (
            isinstance(max_log_bytes, bool)
            or not isinstance(max_log_bytes, int)
            or max_log_bytes < MIN_MAX_LOG_BYTES
        ):
            raise ConfigError(
                f"max_log_bytes: expected None (no cap) or a number of bytes >= "
                f"{MIN_MAX_LOG_BYTES}, got {max_log_bytes!r}"
            )
        self.objective: Any = objective
        self._concurrency = concurrency
        self.trial_timeout = trial_timeout
        self.stop_grace = stop_grace
        self.devices = devices
        self.max_log_bytes = max_log_bytes
        self.echo_output = echo_output
        self.listener: Listener = _drop
        self._held: dict[int, tuple[int, ...]] = {}

    @classmethod
    def check_objective(cls, objective: Any) -> None:
        """Raise ``ConfigError`` if this executor cannot run ``objective`` (default: callable)."""
        if not callable(objective):
            hint = ""
            if isinstance(objective, str) or type(objective).__name__ == "CommandTrial":
                hint = "; shell commands run with executor='command'"
            raise ConfigError(
                f"objective: expected a callable (a function taking params) for the "
                f"{getattr(cls, 'name', cls.__name__)!r} executor, got {objective!r}{hint}"
            )

    def attach(self, store: Any, experiment_id: str) -> None:
        """Learn the experiment's store and id; the driver calls it once, before ``open``.

        By default nothing: only an executor that reaches its trials through the store (the
        worker pool, ``hyperlab.pool``) needs them. ``store`` is the driver's ``Store``
        (typed loosely: executors sit beside the store, below the experiment).
        """
        return None

    def open(self, listener: Listener) -> None:
        """Start; events go to ``listener`` from then on."""
        devices = self.devices
        if devices is None:
            self.listener = listener
            return

        def release_then(event: Event) -> None:
            if isinstance(event, END_EVENTS):
                held = self._held.pop(event.number, None)
                if held is not None:
                    devices.release(held)
            listener(event)

        self.listener = release_then

    def place(self, spec: TrialSpec) -> TrialSpec:
        """``spec`` holding devices from ``self.devices`` (unchanged without a pool).

        Raises:
            HyperlabError: No device is free: submit only while ``free_slots > 0``.
        """
        if self.devices is None or spec.number in self._held:
            return spec
        devices = self.devices.acquire()
        if devices is None:
            raise HyperlabError(
                f"trial {spec.number}: no free device in {self.devices!r} "
                f"(loads {self.devices.load}); submit only while free_slots > 0"
            )
        self._held[spec.number] = devices
        return dataclasses.replace(spec, devices=devices)

    @property
    def concurrency(self) -> int:
        """How many trials may run at once; raising it from another thread wakes a ``poll``
        waiting now, so the driver fills the new slots at once."""
        return self._concurrency

    @concurrency.setter
    def concurrency(self, value: int) -> None:
        grew = value > self._concurrency
        self._concurrency = value
        if grew:
            self.wake()

    def wake(self) -> None:
        """Make a ``poll`` waiting now return early. By default nothing: a poll returns
        within its timeout anyway; executors whose poll waits on a queue of their own
        override it."""
        return None

    @property
    @abstractmethod
    def running(self) -> int:
        """How many submitted trials have not ended yet."""

    @property
    def free_slots(self) -> int:
        """How many more trials ``submit`` accepts now (fewer when devices run out)."""
        free = max(0, self.concurrency - self.running)
        if self.devices is not None and free:
            free = min(free, self.devices.free_trials())
        return free

    @abstractmethod
    def submit(self, spec: TrialSpec) -> None:
        """Start (or queue to start at the next ``poll``) one trial."""

    def adopt(self, spec: TrialSpec, *, reports: int) -> float | None:
        """Take over a trial that a driver which died started, if it still runs here.

        The driver holding the experiment's lease calls this on resume, after ``open`` and
        before any ``submit``, for each trial the store shows waiting or running, with the
        attempt the store has (the dead driver's). An adopted trial counts in ``running``
        and is watched as if it had been submitted: ``Reported`` for its reports after the
        first ``reports`` of this attempt (the store has those), then exactly one end event;
        ``stop`` and ``close`` work on it. No ``Started`` is delivered.

        Args:
            spec: The trial, as it was submitted (same ``attempt``).
            reports: How many reports of this run of the trial the store already holds.

        Returns:
            When the trial started (epoch seconds) if it was adopted; None if it cannot be
            (the default: trials that die with their driver). The driver then runs it again
            with ``attempt + 1``.
        """
        return None

    @property
    def brought_trials(self) -> int | None:
        """Trials added to the experiment's ``max_trials`` by the workers that joined it (the
        ``shared`` executor's: each brings its own, as Optuna's processes do); None when one
        brings no bound. 0 for executors whose workers bring nothing."""
        return 0

    @property
    def round_trips(self) -> bool:
        """Whether its trials can wait for the driver's decision on each report (a
        ``TrialSpec.round_trip``): it answers their requests (``answer``). An assessor needs
        it, so that its decisions act at the report they were made on."""
        return type(self).answer is not Executor.answer

    def answer(self, number: int, index: int, value: Any, error: str | None = None) -> None:
        """Answer trial ``number``'s request ``index`` (a ``Requested`` event): with
        ``value``, or with ``error``, which the trial's ``hyperlab.suggest`` raises as a
        ``ValueError``. An executor whose trials cannot ask (their ``suggest`` says so) never
        delivers ``Requested`` and keeps this default."""
        raise HyperlabError(f"the {self.name!r} executor's trials cannot ask for parameters")

    @abstractmethod
    def poll(self, timeout: float) -> None:
        """Deliver the events that happened, waiting up to ``timeout`` seconds for the first."""

    @abstractmethod
    def stop(self, number: int) -> None:
        """Ask a running trial to stop; it ends with STOPPED (or FINISHED if it was done)."""

    @abstractmethod
    def close(self) -> None:
        """Stop every trial, wait ``stop_grace`` at most, kill what is left, release resources."""

    def detach(self) -> None:
        """Let go of the trials without stopping those that can be adopted; release resources.

        The driver calls this instead of ``close`` when it lost the experiment's lease: the
        driver that took the experiment over adopts such trials (or stops them before it runs
        them again). No event is delivered after it. The default is ``close``, for trials
        that cannot outlive their driver anyway.
        """
        self.close()


def _drop(event: Event) -> None:
    """Listener of an executor that has not been opened."""


EXECUTORS: Registry[Executor] = Registry(
    "executor",
    Executor,
    {
        "inprocess": "hyperlab.executors._inprocess:InProcessExecutor",
        "threads": "hyperlab.executors._threads:ThreadExecutor",
        "processes": "hyperlab.executors._processes:ProcessExecutor",
        "command": "hyperlab.executors._command:CommandExecutor",
        "research": "hyperlab.research:ResearchExecutor",
        "ray": "hyperlab.executors._ray:RayExecutor",
        "dask": "hyperlab.executors._dask:DaskExecutor",
        "pool": "hyperlab.pool:PoolExecutor",
        "shared": "hyperlab.pool:SharedExecutor",
    },
)
"""Executor names for ``executor=``, and users' own (``register_executor``)."""


def register_executor(name: str, cls: type[Executor] | str) -> None:
    """Make an executor class (or its ``"module:Class"`` path) available under ``name``."""
    EXECUTORS.register(name, cls)


def executor_names() -> list[str]:
    """The names ``executor=`` accepts."""
    return EXECUTORS.names()


def executor_class(name: str) -> type[Executor]:
    """The executor class registered as ``name``; ``ConfigError`` listing the known names."""
    return EXECUTORS.get(name)


def create_executor(name: str, objective: Any, **options: Any) -> Executor:
    """An executor of class ``name`` for ``objective`` with ``options``."""
    return executor_class(name)(objective, **options)
