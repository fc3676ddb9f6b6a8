"""The ``dask`` executor: trials as Dask tasks, the driver staying the store's only writer."""

from __future__ import annotations

import contextlib
import queue
import time
import uuid
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from hyperlab.errors import ConfigError
from hyperlab.executors import pickling
from hyperlab.executors._dask._cluster import (
    connect,
    dask_resources,
    import_distributed,
    missing_resources,
)
from hyperlab.executors._dask._task import Inbox, Message, run_trial
from hyperlab.executors._exceptions import load_exception
from hyperlab.executors.base import (
    END_EVENTS,
    Event,
    Executor,
    Failed,
    Finished,
    Lost,
    Reported,
    Requested,
    Started,
    Stopped,
    TrialSpec,
)

__all__ = ["DaskExecutor"]

STOP_MARGIN = 1.0
"""Seconds past ``stop_grace`` after which a stopped trial whose task has not ended is ended
``Stopped`` by the driver (its task is told to kill it)."""
KILL_WAIT = 5.0
"""Seconds ``close`` waits for the tasks it told to kill their trials to end."""
WORKERS_INTERVAL = 2.0
"""Seconds between two looks at the workers' resources."""


class _Run:
    """One submitted (or adopted) trial: its task, its inbox and what was heard of it."""

    __slots__ = (
        "future",
        "held",
        "inbox",
        "key",
        "last",
        "next",
        "skip",
        "spec",
        "started",
        "stop_at",
        "worker",
    )

    def __init__(self, spec: TrialSpec, key: str, inbox: Inbox) -> None:
        self.spec = spec
        self.key = key
        self.inbox = inbox
        self.future: Any = None
        self.next = 0  # the seq of the next message to deliver
        self.held: dict[int, Message] = {}  # messages that came before their turn
        self.started = False
        self.worker: str | None = None
        self.last: dict[str, Any] | None = None  # its last report's metrics
        self.skip = 0  # reports of an adopted trial the store already has
        self.stop_at: float | None = None  # a stop's grace expires (monotonic)


def run_name(spec: TrialSpec) -> str:
    """The name under which the task of the trial's attempt is published (a dataset of the
    scheduler: it holds the task, which outlives this driver), and a resumed driver finds it
    (``adopt``)."""
    return f"hyperlab-{spec.trial_id}-{spec.attempt}"


class DaskExecutor(Executor):
    """Up to ``concurrency`` trials at once on a Dask cluster, each trial one Dask task.

    Args:
        dask_address: The scheduler's address (``"tcp://host:8786"``); None for Dask's
            ``scheduler-address`` setting. Ignored when ``dask_cluster`` is given.
        dask_cluster: A running cluster object (``dask_jobqueue.SLURMCluster``,
            ``distributed.LocalCluster``...) to connect to instead.
        resources: The Dask worker resources each trial holds (``{"gpu": 1}`` is Dask's
            ``GPU=1``; see ``dask_resources``); none by default: a trial takes one thread of
            a worker. Trials sharing a worker get distinct GPUs of it
            (``hyperlab.executors._dask._gpus``).
        max_node_failures: How many times a trial whose worker dies runs again (``attempt +
            1``, from its last checkpoint) before it fails.
        objective, concurrency, trial_timeout, stop_grace, max_log_bytes: As for every
            executor. ``devices`` and ``echo_output`` are refused: GPUs are Dask resources,
            and trials' output is in their logs.

    Each trial runs in a process of its own on its worker (``hyperlab.executors._dask._task``
    says how, and which Dask primitives carry its events and the driver's answers), in its
    folder under the experiment's, which the workers must share with the driver. Reports
    stream back while it runs; ``stop`` and ``trial_timeout`` end its process. The connection
    is made when the executor is made, so a scheduler that does not answer is reported before
    anything is written. Each task is published on the scheduler under its trial and attempt
    (``run_name``), so it outlives a driver that dies, and the driver that resumes the
    experiment adopts it.
    """

    name = "dask"
    runs_outside = True

    def __init__(
        self,
        objective: Any,
        *,
        dask_address: str | None = None,
        dask_cluster: Any = None,
        resources: Mapping[str, Any] | None = None,
        max_node_failures: int = 3,
        **options: Any,
    ) -> None:
        super().__init__(objective, **options)
        if self.devices is not None:
            raise ConfigError(
                "gpus: the 'dask' executor places trials on GPUs as Dask worker resources; "
                "remove `gpus` and give resources={'gpu': 1} (workers declare --resources GPU=1)"
            )
        if self.echo_output:
            raise ConfigError(
                "echo_output: the 'dask' executor's trials print on their workers, into each "
                "trial's stdout.log and stderr.log (`hyperlab logs ID N --follow`); remove it"
            )
        if (
            isinstance(max_node_failures, bool)
            or not isinstance(max_node_failures, int)
            or max_node_failures < 0
        ):
            raise ConfigError(
                f"max_node_failures: expected a number >= 0, got {max_node_failures!r}"
            )
        self.resources = dask_resources(resources)
        self.max_node_failures = max_node_failures
        self.objective_bytes: bytes = _serialize(objective)
        self._distributed = import_distributed()
        self._client = connect(dask_address, dask_cluster)
        self._settings = {
            "trial_timeout": self.trial_timeout,
            "stop_grace": self.stop_grace,
            "max_log_bytes": self.max_log_bytes,
        }
        self._runs: dict[int, _Run] = {}
        self._keys: dict[str, _Run] = {}
        self._pending: list[Failed] = []  # trials that could not be started: for poll
        self._mail: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._losses: dict[int, int] = {}
        self._workers: dict[str, Any] = {}
        self._workers_at = float("-inf")
        self._closed = False

    @classmethod
    def check_objective(cls, objective: Any) -> None:
        if type(objective).__name__ == "CommandTrial":
            return
        super().check_objective(objective)

    @property
    def running(self) -> int:
        return len(self._runs) + len(self._pending)

    def wake(self) -> None:
        self._mail.put(("wake",))

    # ---- starting trials ------------------------------------------------------------------

    def submit(self, spec: TrialSpec) -> None:
        missing = missing_resources(self.resources, self._worker_info())
        if missing is not None:
            self._pending.append(Failed(spec.number, time.time(), missing))
            return
        if spec.trial_dir is not None:
            try:
                Path(spec.trial_dir).mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                error = f"the trial's folder could not be made: {exc}"
                self._pending.append(Failed(spec.number, time.time(), error))
                return
        key = f"{run_name(spec)}-{uuid.uuid4().hex[:8]}"
        run = _Run(spec, key, Inbox(key, self._client))
        self._watch(run)
        run.future = self._client.submit(
            run_trial,
            key,
            self.objective_bytes,
            spec,
            self._settings,
            self.resources.get("GPU", 0.0),
            key=key,
            resources=self.resources or None,
            pure=False,
        )
        self._client.publish_dataset(run.future, name=run_name(spec), override=True)
        run.future.add_done_callback(partial(self._done, key))

    def _watch(self, run: _Run) -> None:
        """Take the run's messages from now on (its future's end is hooked by the caller)."""
        self._runs[run.spec.number] = run
        self._keys[run.key] = run
        self._client.subscribe_topic(run.key, partial(self._heard, run.key))

    def _heard(self, key: str, event: tuple[float, Message]) -> None:
        """A message of run ``key`` (in the client's thread)."""
        self._mail.put(("message", key, _as_sent(event[1])))

    def _done(self, key: str, _future: Any) -> None:
        """Run ``key``'s task ended (in the client's thread)."""
        self._mail.put(("done", key))

    def _worker_info(self) -> dict[str, Any]:
        """The workers and their resources, looked at again at most every
        ``WORKERS_INTERVAL`` seconds (and only when trials ask for resources)."""
        now = time.monotonic()
        if self.resources and now - self._workers_at >= WORKERS_INTERVAL:
            self._workers = dict(self._client.scheduler_info().get("workers", {}))
            self._workers_at = now
        return self._workers

    # ---- watching them --------------------------------------------------------------------

    def poll(self, timeout: float) -> None:
        pending, self._pending = self._pending, []
        for failed in pending:
            self.listener(failed)
        if pending:
            timeout = 0
        limits = [r.stop_at for r in self._runs.values() if r.stop_at is not None]
        if limits:
            timeout = min(timeout, max(0.0, min(limits) - time.monotonic()))
        try:
            first = self._mail.get(timeout=timeout) if timeout > 0 else self._mail.get_nowait()
        except queue.Empty:
            first = None
        items = [] if first is None else [first]
        while True:
            try:
                items.append(self._mail.get_nowait())
            except queue.Empty:
                break
        for item in items:
            run = self._keys.get(item[1]) if len(item) > 1 else None
            if run is None:
                continue  # a wake, or a run that ended
            if item[0] == "message":
                self._take(run, item[2])
            else:
                self._finish(run)
        self._enforce_stops()

    def _take(self, run: _Run, message: Message) -> None:
        """Deliver ``message`` and those held after it, in their order (``seq``)."""
        if message.get("kind") == "lost":  # from Dask's second run of the task: own numbers
            self._deliver(run, message)
            return
        seq = message.get("seq", -1)
        if seq < run.next:
            return  # heard twice: through the subscription and in the task's result
        run.held[seq] = message
        while run.next in run.held and self._keys.get(run.key) is run:
            self._deliver(run, run.held.pop(run.next))
            run.next += 1

    def _deliver(self, run: _Run, message: Message) -> None:
        number, when, kind = run.spec.number, message["time"], message["kind"]
        if kind == "began":
            run.worker = message["worker"]
        elif kind == "lost":
            self._lost(run, f"Dask worker {message['worker']} died under the trial")
        elif kind == "started":
            if not run.started:
                run.started = True
                self.listener(Started(number, when))
        elif kind == "reported":
            run.last = message["metrics"]
            if run.skip:
                run.skip -= 1
                return
            self.listener(Reported(number, when, message["step"], message["metrics"]))
        elif kind == "requested":
            index, request, name = message["index"], message["request"], message["name"]
            self.listener(Requested(number, when, index, request, name, dict(message["spec"])))
        elif kind == "finished":
            self._end(run, Finished(number, when, message["metrics"]))
        elif kind == "stopped":
            self._end(run, Stopped(number, when, message["metrics"]))
        elif kind == "failed":
            exception = load_exception(message.get("exception"))
            self._end(run, Failed(number, when, message["error"], exception))

    def _finish(self, run: _Run) -> None:
        """The run's task ended: what it returned fills any gap the subscription left."""
        number = run.spec.number
        try:
            messages = run.future.result()
        except self._distributed.KilledWorker as exc:
            self._lost(run, f"Dask gave up on its task: {exc}")
            return
        except Exception as exc:  # cancelled by the cluster, or the task itself raised
            reason = str(exc) or type(exc).__name__
            self._end(run, Failed(number, time.time(), f"the trial's Dask task failed: {reason}"))
            return
        for message in messages:
            self._take(run, _as_sent(message))
        if self._keys.get(run.key) is run:
            error = "the trial's Dask task ended without the trial's end"
            self._end(run, Failed(number, time.time(), error))

    def _lost(self, run: _Run, reason: str) -> None:
        self._kill(run)  # a worker only thought dead, still running it, lets it go
        number = run.spec.number
        losses = self._losses.get(number, 0) + 1
        self._losses[number] = losses
        if losses > self.max_node_failures:
            error = (
                f"{reason}, which lost the trial {losses} times "
                f"(max_node_failures={self.max_node_failures})"
            )
            self._end(run, Failed(number, time.time(), error))
        else:
            self._end(run, Lost(number, time.time(), reason))

    def _end(self, run: _Run, event: Event) -> None:
        assert isinstance(event, END_EVENTS)
        self._forget(run)
        self.listener(event)

    def _forget(self, run: _Run) -> None:
        """Stop watching the run and let the scheduler forget its task and inbox."""
        self._runs.pop(run.spec.number, None)
        self._keys.pop(run.key, None)
        with contextlib.suppress(Exception):
            self._client.unsubscribe_topic(run.key)
        with contextlib.suppress(Exception):
            self._client.unpublish_dataset(run_name(run.spec))
        for release in (run.inbox.close, run.future.release):
            with contextlib.suppress(Exception):
                release()

    def _enforce_stops(self) -> None:
        now = time.monotonic()
        for run in list(self._runs.values()):
            if run.stop_at is not None and run.stop_at <= now:
                self._kill(run)
                self._end(run, Stopped(run.spec.number, time.time(), run.last))

    def _kill(self, run: _Run) -> None:
        """Tell the run's task to kill its trial now."""
        with contextlib.suppress(Exception):
            run.inbox.put(["kill"])

    # ---- answering, stopping, adopting, closing -------------------------------------------

    def answer(self, number: int, index: int, value: Any, error: str | None = None) -> None:
        run = self._runs.get(number)
        if run is not None:
            run.inbox.put(["answer", index, value, error])

    def stop(self, number: int) -> None:
        run = self._runs.get(number)
        if run is not None and run.stop_at is None:
            run.inbox.put(["stop"])
            run.stop_at = time.monotonic() + self.stop_grace + STOP_MARGIN

    def adopt(self, spec: TrialSpec, *, reports: int) -> float | None:
        future = self._client.get_dataset(run_name(spec), default=None)
        if not isinstance(future, self._distributed.Future) or future.status == "cancelled":
            return None
        history = [message for _, message in self._client.get_events(future.key)]
        run = _Run(spec, future.key, Inbox(future.key, self._client))
        run.future, run.started, run.skip = future, True, reports
        self._watch(run)
        for message in history:  # delivered by poll; the subscription repeats some
            self._mail.put(("message", run.key, _as_sent(message)))
        future.add_done_callback(partial(self._done, run.key))
        began = [m["time"] for m in history if m.get("kind") in ("began", "started")]
        return began[-1] if began else time.time()

    def detach(self) -> None:
        """Leave the trials' tasks running (published, they go on) for the driver that
        takes the experiment over, and let go of the cluster."""
        for run in list(self._runs.values()):
            with contextlib.suppress(Exception):
                self._client.unsubscribe_topic(run.key)
            with contextlib.suppress(Exception):
                run.inbox.close()
        self._runs.clear()
        self._keys.clear()
        self._pending.clear()
        self._disconnect()

    def close(self) -> None:
        if self._closed:
            return
        for number in list(self._runs):
            self.stop(number)
        end = time.monotonic() + self.stop_grace
        while self._runs and time.monotonic() < end:
            self.poll(0.05)
        left = list(self._runs.values())
        for run in left:
            self._kill(run)
        futures = [run.future for run in left]
        if futures:  # their trials' processes end before close returns
            with contextlib.suppress(Exception):
                self._distributed.wait(futures, timeout=KILL_WAIT)
        for run in left:
            with contextlib.suppress(Exception):
                run.future.cancel()
            self._end(run, Stopped(run.spec.number, time.time(), run.last))
        pending, self._pending = self._pending, []
        for failed in pending:
            self.listener(failed)
        self._disconnect()

    def _disconnect(self) -> None:
        self._closed = True
        with contextlib.suppress(Exception):
            self._client.close()


def _as_sent(value: Any) -> Any:
    """``value`` with its lists as lists: the scheduler's event log (msgpack) hands them back
    as tuples, the task's result (pickle) as they were sent, and both must read the same."""
    if isinstance(value, (list, tuple)):
        return [_as_sent(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_sent(item) for key, item in value.items()}
    return value


def _serialize(objective: Any) -> bytes:
    """``objective`` as cloudpickle bytes for the workers; ``ConfigError`` saying why not."""
    try:
        return pickling.dumps(objective)
    except Exception as exc:
        raise ConfigError(
            f"objective: {objective!r} cannot be serialized to send it to the Dask workers "
            f"({type(exc).__name__}: {exc}). Make it a module-level function, and create what "
            "it holds (locks, connections, open files) inside it"
        ) from None
