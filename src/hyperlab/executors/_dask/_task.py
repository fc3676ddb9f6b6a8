"""What runs on a Dask worker: one trial as one Dask task, for the ``dask`` executor.

The task runs the trial with a local executor of its own (``processes`` for a function,
``command`` for a ``CommandTrial``), so a trial on a worker runs exactly as on the driver's
machine (``hyperlab.report``, ``trial_dir``, ``checkpoint``, the ``HYPERLAB_*`` variables), in
a process that ``stop`` and ``trial_timeout`` can end. Its folder is the driver's own: the
experiment's folder must be on a file system the workers share (as a cluster's home or scratch
is), so logs and checkpoints need no copying.

Two Dask primitives carry the rest, both kept up by Dask and used by its own features (the
``Pub``/``Sub`` channels were deprecated for their races and removed, and actors are still
experimental, without resilience):

- out, the scheduler's structured event log: each event of the run is one message
  (``Worker.log_event``) under the run's topic, its task key, numbered from 0 (``seq``); the
  driver subscribes to the topic, and a resumed driver reads what it missed
  (``Client.get_events``). The task also returns every message, so nothing the stream dropped
  is lost. Messages are msgpack data: ``{"seq", "kind", "time", ...}``.
- in, a ``distributed.Queue`` per run with a ``distributed.Event`` rung after each message
  (``Inbox``): ``["stop"]``, ``["answer", index, value, error]`` and ``["kill"]``, which the
  task waits for in a thread of its own.

A task that Dask runs again because the worker that ran it died (Dask's own recovery) finds
its first run's ``began`` message in the log and returns at once with ``lost``: the driver
runs the trial again as a new attempt, from its last checkpoint, rather than from scratch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import queue
import threading
import time
from pathlib import Path
from typing import Any

import cloudpickle

from hyperlab.executors._dask._gpus import WORKER_GPUS, visible_gpus
from hyperlab.executors._exceptions import dump_exception
from hyperlab.executors._run import format_error
from hyperlab.executors.base import (
    END_EVENTS,
    Event,
    Failed,
    Finished,
    Reported,
    Requested,
    Started,
    Stopped,
    TrialSpec,
    create_executor,
)
from hyperlab.reporting.metrics import MetricsError, clean_metrics

__all__ = ["INBOX_WAIT", "Inbox", "Message", "run_trial"]

Message = dict[str, Any]
"""One event of a run, as it travels: ``{"seq": n, "kind": ..., "time": ..., ...}``."""
INBOX_WAIT = 0.5
"""Seconds each wait on the run's inbox lasts before it looks whether the run is over."""
STEP = 0.05
"""Seconds between two looks at the local executor while the trial runs."""
ASKING_STEP = 0.002
"""The same while the trial waits for an answer (a round-trip report's verdict): the answer
is handed to it at the next look."""
_CARRIERS = (Reported, Finished, Stopped)  # the events that carry metrics


class Inbox:
    """What the driver says to the run with task ``key``: a ``distributed.Queue`` of
    messages and a ``distributed.Event`` rung after each ``put``, on which the task waits (a
    ``Queue.get`` that times out logs an error on the scheduler; ``Event.wait`` does not)."""

    def __init__(self, key: str, client: Any) -> None:
        from distributed import Event, Queue

        self._queue = Queue(f"{key}-inbox", client=client)
        self._bell = Event(f"{key}-bell", client=client)

    def put(self, message: list[Any]) -> None:
        """Send ``message`` (in the driver)."""
        self._queue.put(message)
        self._bell.set()

    def take(self, timeout: float) -> list[list[Any]]:
        """The messages sent since the last call, waiting up to ``timeout`` seconds for one
        (in the task)."""
        if not self._bell.wait(timeout):
            return []
        self._bell.clear()  # before the read: a message put after it rings again
        return [list(message) for message in self._queue.get(batch=True)]

    def ring(self) -> None:
        """Wake the task's wait at once (the run is over)."""
        self._bell.set()

    def close(self, *, reader: bool = False) -> None:
        """Let the scheduler drop the queue once neither side holds it; the ``reader`` (the
        task, done reading) also clears the bell, so that the scheduler forgets it. The driver
        never does: a message it sent last (``kill``) must still wake the task."""
        with contextlib.suppress(Exception):  # the client closed first: the scheduler drops it
            if reader:
                self._bell.clear()  # cleared with no one waiting: the scheduler forgets it
            self._queue.close()


class _Channel:
    """The run's messages: logged under its topic and kept for the task's result."""

    def __init__(self, worker: Any, key: str) -> None:
        self.worker = worker
        self.key = key
        self.sent: list[Message] = []

    def send(self, kind: str, when: float | None = None, **fields: Any) -> None:
        message = {"seq": len(self.sent), "kind": kind, "time": when or time.time(), **fields}
        self.sent.append(message)
        self.worker.log_event(self.key, message)


class _Trial:
    """The trial on this worker: its local executor's events, turned into messages."""

    def __init__(self, channel: _Channel, spec: TrialSpec) -> None:
        self.channel = channel
        self.spec = spec
        self.ended = False
        self.asking = 0  # requests sent and not answered yet
        self.refused: str | None = None  # why the driver could not store what it sent

    def listen(self, event: Event) -> None:
        if self.ended or event.number != self.spec.number:
            return
        if self.refused is None and isinstance(event, _CARRIERS) and event.metrics:
            try:
                event = dataclasses.replace(event, metrics=clean_metrics(event.metrics))
            except MetricsError as exc:
                done = "reported" if isinstance(event, Reported) else "returned"
                self.refused = f"trial {event.number} {done} {exc}"
        if self.refused is not None:
            if isinstance(event, END_EVENTS):
                self.end_failed(self.refused, event.time)
            return
        send = self.channel.send
        if isinstance(event, Started):
            send("started", event.time)
        elif isinstance(event, Reported):
            send("reported", event.time, step=event.step, metrics=event.metrics)
        elif isinstance(event, Requested):
            self.asking += 1
            send(
                "requested",
                event.time,
                index=event.index,
                request=event.kind,
                name=event.name,
                spec=event.spec,
            )
        elif isinstance(event, Finished):
            self.ended = True
            send("finished", event.time, metrics=event.metrics)
        elif isinstance(event, Stopped):
            self.ended = True
            send("stopped", event.time, metrics=event.metrics)
        elif isinstance(event, Failed):
            self.ended = True
            send("failed", event.time, error=event.error, exception=dump_exception(event.exception))

    def end_failed(self, error: str, when: float | None = None) -> None:
        if not self.ended:
            self.ended = True
            self.channel.send("failed", when, error=error, exception=None)


def run_trial(
    key: str, objective: bytes, spec: TrialSpec, settings: dict[str, Any], gpus: float
) -> list[Message]:
    """Run one trial to its end on this worker (the Dask task keyed ``key``); every message
    it sent, in order.

    ``settings`` holds the local executor's ``trial_timeout``, ``stop_grace`` and
    ``max_log_bytes``; ``gpus`` is how many of the worker's GPUs the trial holds (Dask's
    ``GPU`` resource), which ``hyperlab.executors._dask._gpus`` picks.
    """
    from distributed import get_client, get_worker

    worker = get_worker()
    client = get_client()
    channel = _Channel(worker, key)
    earlier = next(
        (m.get("worker") for _, m in client.get_events(key) if m.get("kind") == "began"), None
    )
    if earlier is not None:  # Dask runs it again: the worker of its first run died
        channel.send("lost", worker=earlier)
        return channel.sent
    channel.send("began", worker=worker.address)
    trial = _Trial(channel, spec)
    if spec.trial_dir is not None and not Path(spec.trial_dir).is_dir():
        trial.end_failed(
            f"the trial's folder {spec.trial_dir} is not on Dask worker {worker.address}: the "
            "experiment's folder must be on a file system the workers share (set working_dir "
            "to one)"
        )
        return channel.sent
    mail: queue.SimpleQueue[list[Any]] = queue.SimpleQueue()
    over = threading.Event()
    inbox = Inbox(key, client)
    threading.Thread(
        target=_read_inbox, args=(inbox, mail, over), name="hyperlab-inbox", daemon=True
    ).start()
    declared = float(worker.state.total_resources.get("GPU", 0.0))
    held = WORKER_GPUS.hold(gpus, visible_gpus(declared))
    try:
        _run(trial, objective, dataclasses.replace(spec, devices=held), settings, mail)
    finally:
        over.set()
        with contextlib.suppress(Exception):
            inbox.ring()  # its reader stops waiting now, not when its wait times out
        WORKER_GPUS.release(held, gpus)
    return channel.sent


def _run(
    trial: _Trial,
    objective: bytes,
    spec: TrialSpec,
    settings: dict[str, Any],
    mail: queue.SimpleQueue[list[Any]],
) -> None:
    try:
        loaded = cloudpickle.loads(objective)
    except Exception:
        trial.end_failed(f"the objective could not be loaded on this worker:\n{format_error()}")
        return
    kind = "command" if type(loaded).__name__ == "CommandTrial" else "processes"
    local = create_executor(kind, loaded, concurrency=1, **settings)
    local.open(trial.listen)
    submitted = stopping = False
    try:
        while not trial.ended:
            while True:
                try:
                    message = mail.get_nowait()
                except queue.Empty:
                    break
                if message[0] == "answer" and submitted:
                    trial.asking = max(0, trial.asking - 1)
                    local.answer(spec.number, *message[1:4])
                elif message[0] in ("stop", "kill") and not submitted:  # it never runs
                    trial.channel.send("stopped", metrics=None)
                    trial.ended = True
                elif message[0] == "stop":
                    local.stop(spec.number)
                    stopping = True
                elif message[0] == "kill":
                    local.close()
            if trial.ended:
                break
            if not submitted:
                local.submit(spec)
                submitted = True
            if trial.refused is not None and not stopping:
                local.stop(spec.number)
                stopping = True
            local.poll(ASKING_STEP if trial.asking else STEP)
    except Exception:
        trial.end_failed(format_error())
    finally:
        local.close()


def _read_inbox(inbox: Inbox, mail: queue.SimpleQueue[list[Any]], over: threading.Event) -> None:
    """Hand what the driver puts in the run's inbox to the task's thread, until the run is
    over."""
    while not over.is_set():
        try:
            messages = inbox.take(INBOX_WAIT)
        except Exception:  # the scheduler is gone, or going: the run ends anyway
            if over.wait(INBOX_WAIT):
                break
            continue
        for message in messages:
            mail.put(message)
    inbox.close(reader=True)
