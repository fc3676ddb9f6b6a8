"""The Ray actor that runs trials on a node, one at a time, for the ``ray`` executor.

Each actor holds the experiment's objective and a local executor of its own (``threads`` for
a function, ``command`` for a ``CommandTrial``), so a trial on a node runs exactly as it
would on the driver's machine: the same calls (``hyperlab.report``, ``trial_dir``,
``checkpoint``), the same ``HYPERLAB_*`` and NNI variables for commands. The trial works in
a folder of its own on the node (``<temp>/hyperlab-ray/<trial id>-<attempt>``).

The driver calls ``run`` to start a trial and keeps one ``collect`` call outstanding per
busy actor: it returns as soon as the trial has something new (events, output, a complete
checkpoint) or after ``wait`` seconds, so reports stream back while the trial runs. ``stop``
reaches the trial at its next report. The actor is threaded (Ray's ``max_concurrency``):
``run`` blocks one thread for the trial's life while the others answer.

When the driver may die without taking its actors along (a cluster it connected to), the
actor is detached and named so that a resumed driver finds it (``current``) and collects
the trial from where the store stops. An actor nobody has called for ``ORPHAN_TIMEOUT``
seconds exits, unless its trial still runs or its result waits to be collected (then after
``UNCOLLECTED_TIMEOUT``).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import cloudpickle

from hyperlab.executors._exceptions import dump_exception
from hyperlab.executors._output import LOG_FILES
from hyperlab.executors._ray._files import checkpoint_names, pack, pack_checkpoints, unpack
from hyperlab.executors._run import format_error
from hyperlab.executors.base import (
    END_EVENTS,
    Event,
    Executor,
    Failed,
    Finished,
    Reported,
    Stopped,
    TrialSpec,
    create_executor,
)
from hyperlab.reporting.checkpoints import CHECKPOINTS_DIR
from hyperlab.reporting.metrics import MetricsError, clean_metrics

__all__ = ["ORPHAN_TIMEOUT", "UNCOLLECTED_TIMEOUT", "Batch", "TrialActor"]

ORPHAN_TIMEOUT = 120.0
"""Seconds an idle detached actor waits for a driver before it exits."""
UNCOLLECTED_TIMEOUT = 3600.0
"""Seconds a detached actor keeps a finished trial's result for a resumed driver."""
STEP = 0.05
"""Seconds between two looks at the local executor while a trial runs."""
_CARRIERS = (Reported, Finished, Stopped)  # the events that carry metrics


@dataclasses.dataclass
class Batch:
    """What ``collect`` hands the driver: what happened since its last call.

    Attributes:
        events: The trial's events after the cursor it was given (``Started``,
            ``Reported``); its end comes in ``end``.
        out / err: Output appended to its stdout and stderr since the last batch.
        checkpoints: Complete checkpoints not sent before: name to tar bytes.
        kept: The checkpoints the trial keeps now (the driver drops the others).
        end: How the trial ended, once it has (a ``Failed``'s exception comes pickled in
            ``exception``); then ``files`` holds the rest of its folder (tar bytes, or None).
        node: The id of the node the actor is on.
        waiting: The trial has not reached the actor yet.
    """

    events: list[Event]
    out: bytes
    err: bytes
    checkpoints: dict[str, bytes]
    kept: list[str]
    end: Event | None
    exception: bytes | None
    files: bytes | None
    node: str
    waiting: bool = False


class _Run:
    """One trial on this actor."""

    def __init__(self, spec: TrialSpec, folder: Path) -> None:
        self.spec = spec
        self.folder = folder
        self.events: list[Event] = []
        self.end: Event | None = None
        self.exception: bytes | None = None
        self.files: bytes | None = None
        self.done = False
        self.started: float | None = None
        self.stop = False
        self.offsets = [0, 0]
        self.sent: set[str] = set()
        self.ended_at: float | None = None
        self.refused: str | None = None  # why the driver could not store what it sent


class TrialActor:
    """Runs the trials the driver gives it, one at a time, and hands their events back."""

    def __init__(self, objective: bytes, detached: bool) -> None:
        self._lock = threading.Condition()
        self._run: _Run | None = None
        self._early_stops: set[int] = set()
        self._contact = time.monotonic()
        self._root = Path(tempfile.gettempdir()) / "hyperlab-ray"
        try:
            loaded = cloudpickle.loads(objective)
        except Exception:
            reason = format_error()

            def loaded(*_args: object) -> None:
                raise RuntimeError(f"the objective could not be loaded on this node:\n{reason}")

        kind = "command" if type(loaded).__name__ == "CommandTrial" else "threads"
        self._local: Executor = create_executor(kind, loaded, concurrency=1, max_log_bytes=None)
        self._local.open(self._listen)
        if detached:
            threading.Thread(target=self._watch, name="hyperlab-orphan", daemon=True).start()

    # ---- called by the driver ------------------------------------------------------------

    def run(self, spec: TrialSpec, checkpoints: bytes | None, restore: bytes | None) -> None:
        """Run one trial to its end in this thread (the others answer ``collect``/``stop``).

        ``checkpoints`` are the trial's own (it continues from them), ``restore`` those of
        the trial a population based training child starts from.
        """
        import ray

        self._touch()
        folder = self._root / f"{spec.trial_id}-{spec.attempt}-{os.getpid()}"
        shutil.rmtree(folder, ignore_errors=True)
        run = _Run(spec, folder)
        restore_dir = None
        if checkpoints is not None:
            unpack(checkpoints, folder / CHECKPOINTS_DIR)
            run.sent.update(checkpoint_names(folder))
        if restore is not None:
            restore_dir = folder.with_name(folder.name + "-restore")
            shutil.rmtree(restore_dir, ignore_errors=True)
            unpack(restore, restore_dir / CHECKPOINTS_DIR)
        folder.mkdir(parents=True, exist_ok=True)
        gpus = tuple(int(i) for i in ray.get_gpu_ids() if str(i).isdigit())
        local = dataclasses.replace(
            spec,
            trial_dir=str(folder),
            devices=gpus,
            restore_from=None if restore_dir is None else str(restore_dir),
        )
        with self._lock:
            self._run = run
            if spec.number in self._early_stops:
                self._early_stops.discard(spec.number)
                run.stop = True
        try:
            self._local.submit(local)
            stopping = False
            while run.end is None:
                if run.stop and not stopping:
                    self._local.stop(spec.number)
                    stopping = True
                self._local.poll(STEP)
            files = pack(folder)
        except Exception:
            files = None
            if run.end is None:
                self._listen(Failed(spec.number, time.time(), format_error()))
        with self._lock:
            run.files = files
            run.done = True
            run.ended_at = time.monotonic()
            self._lock.notify_all()
        if restore_dir is not None:
            shutil.rmtree(restore_dir, ignore_errors=True)

    def collect(self, number: int, cursor: int, wait: float) -> Batch:
        """What trial ``number`` did after its first ``cursor`` events, waiting up to
        ``wait`` seconds for something to happen; the folder goes once its end is sent."""
        import ray

        self._touch()
        deadline = time.monotonic() + wait
        node = ray.get_runtime_context().get_node_id()
        with self._lock:
            while True:  # the run call may reach this actor after this one
                run = self._run
                mine = run is not None and run.spec.number == number
                if mine and run is not None and (run.done or len(run.events) > cursor):
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._lock.wait(left)
            if run is None or run.spec.number != number:
                return Batch([], b"", b"", {}, [], None, None, None, node, waiting=True)
            events = run.events[cursor:]
            done = run.done
        out, err = self._output(run)
        checkpoints, kept = self._checkpoints(run)
        batch = Batch(events, out, err, checkpoints, kept, None, None, None, node)
        if done:
            batch.end, batch.exception, batch.files = run.end, run.exception, run.files
            with self._lock:
                if self._run is run:
                    self._run = None
            shutil.rmtree(run.folder, ignore_errors=True)
        return batch

    def stop(self, number: int) -> None:
        """Tell trial ``number`` to stop: it is at its next report (a command gets SIGTERM)."""
        self._touch()
        with self._lock:
            run = self._run
            if run is not None and run.spec.number == number:
                run.stop = True
            else:
                self._early_stops.add(number)

    def answer(self, number: int, index: int, value: Any, error: str | None) -> None:
        """Answer trial ``number``'s request ``index`` for a parameter."""
        self._touch()
        self._local.answer(number, index, value, error)

    def current(self) -> tuple[str, int, float | None] | None:
        """The trial this actor holds (id, attempt, start time), or None: for adoption."""
        self._touch()
        with self._lock:
            run = self._run
            if run is None:
                return None
            return run.spec.trial_id, run.spec.attempt, run.started

    def ping(self) -> None:
        """Say the driver is still there."""
        self._touch()

    # ---- inside ----------------------------------------------------------------------------

    def _touch(self) -> None:
        self._contact = time.monotonic()

    def _listen(self, event: Event) -> None:
        with self._lock:
            run = self._run
            if run is None or event.number != run.spec.number:
                return
            sendable = self._sendable(run, event)
            if sendable is None:
                return
            event = sendable
            if isinstance(event, END_EVENTS):
                if isinstance(event, Failed) and event.exception is not None:
                    run.exception = dump_exception(event.exception)
                    event = dataclasses.replace(event, exception=None)
                run.end = event
            else:
                if run.started is None:
                    run.started = event.time
                run.events.append(event)
            self._lock.notify_all()

    @staticmethod
    def _sendable(run: _Run, event: Event) -> Event | None:
        """``event`` with its metrics as the driver stores them (``clean_metrics``), so that
        Ray can carry them back; None to drop it. A trial whose metrics the driver would refuse
        is told to stop, what it sends next is dropped, and it ends FAILED with the refusal,
        naming the metric and its type, as the driver's own check says it."""
        if run.refused is None and isinstance(event, _CARRIERS) and event.metrics:
            try:
                event = dataclasses.replace(event, metrics=clean_metrics(event.metrics))
            except MetricsError as exc:
                done = "reported" if isinstance(event, Reported) else "returned"
                run.refused = f"trial {event.number} {done} {exc}"
                run.stop = True
        if run.refused is None:
            return event
        if isinstance(event, END_EVENTS):
            return Failed(event.number, event.time, run.refused)
        return None

    def _output(self, run: _Run) -> tuple[bytes, bytes]:
        chunks = []
        for index, name in enumerate(LOG_FILES):
            try:
                with open(run.folder / name, "rb") as log:
                    log.seek(run.offsets[index])
                    data = log.read()
            except OSError:
                data = b""
            run.offsets[index] += len(data)
            chunks.append(data)
        return chunks[0], chunks[1]

    def _checkpoints(self, run: _Run) -> tuple[dict[str, bytes], list[str]]:
        """The checkpoints not sent yet, and the names the trial still keeps. The trial runs
        on meanwhile: one it prunes (``checkpoint_keep``) while it is packed is skipped."""
        new = {}
        for name in checkpoint_names(run.folder):
            if name not in run.sent:
                try:
                    data = pack_checkpoints(run.folder, [name])
                except FileNotFoundError:
                    continue
                if data is not None:
                    new[name] = data
                    run.sent.add(name)
        kept = checkpoint_names(run.folder)
        return {n: d for n, d in new.items() if n in kept}, kept

    def _watch(self) -> None:
        """Exit once no driver has called for long (see the module's docstring)."""
        while True:
            time.sleep(5.0)
            with self._lock:
                run = self._run
                quiet = time.monotonic() - self._contact
                if run is None:
                    limit: float | None = ORPHAN_TIMEOUT
                elif run.done:
                    limit = UNCOLLECTED_TIMEOUT
                else:
                    limit = None
            if limit is not None and quiet > limit:
                os._exit(0)
