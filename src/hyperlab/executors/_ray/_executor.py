"""The ``ray`` executor: trials on a Ray cluster, the driver staying the store's only writer."""

from __future__ import annotations

import contextlib
import dataclasses
import time
import uuid
from collections.abc import Mapping
from typing import Any

from hyperlab.errors import ConfigError
from hyperlab.executors._exceptions import load_exception
from hyperlab.executors._output import watch_trial_logs
from hyperlab.executors._ray._actor import Batch, TrialActor
from hyperlab.executors._ray._cluster import (
    connect,
    import_ray,
    parse_resources,
    serialize_objective,
)
from hyperlab.executors._ray._orphans import NAMESPACE, Orphans, actor_prefix, find_orphans
from hyperlab.executors._ray._slot import Slot
from hyperlab.executors._ray._transfer import checkpoints_for, deliver_files
from hyperlab.executors.base import (
    END_EVENTS,
    Executor,
    Failed,
    Lost,
    Reported,
    Started,
    Stopped,
    TrialSpec,
)

__all__ = ["RayExecutor"]

COLLECT_WAIT = 0.5
"""Seconds an actor holds a ``collect`` call open while its trial says nothing."""
PING_INTERVAL = 10.0
"""Seconds between two pings to idle detached actors (see ``ORPHAN_TIMEOUT``)."""
RECHECK_INTERVAL = 2.0
"""Seconds between two looks at the cluster for trials whose actor waits for resources."""
WAIT_BEFORE_FREEING = 1.0
"""Seconds a trial waits for its actor to be placed before idle actors are let go for it."""
ACTOR_CONCURRENCY = 8
"""Threads of an actor: one runs the trial, the others answer the driver."""


class RayExecutor(Executor):
    """Up to ``concurrency`` trials at once on a Ray cluster, each in an actor that holds
    ``resources`` on its node and is reused from trial to trial.

    Args:
        ray_address: ``"auto"``, ``"host:port"`` or ``"ray://host:port"`` of a running
            cluster; None to use the Ray instance this process is connected to, or to start
            a local one (it stops when the process exits).
        resources: What each trial holds: ``cpu`` (default 1), ``gpu`` (a fraction shares a
            GPU), ``memory`` (bytes or ``"4GiB"``) and custom Ray resources by name.
        max_node_failures: How many times a trial whose node dies runs again (``attempt +
            1``, from its last checkpoint) before it fails.
        objective, concurrency, trial_timeout, stop_grace, max_log_bytes, echo_output: As
            for every executor. ``devices`` is refused: GPUs are Ray resources here.

    Reports stream back while a trial runs; a stop reaches the trial at its next report, and
    after ``stop_grace`` (or at ``trial_timeout``) its actor is killed. A trial's folder is on
    its node; its output, each checkpoint and, at its end, the rest of its files come back
    through Ray's object store into the trial's folder under the driver's experiment folder.
    The connection is made when the executor is made, so an unreachable cluster is reported
    before anything is written. On a cluster hyperlab did not start, actors are detached and
    named: a driver that crashed and is resumed adopts the trials still running there.
    """

    name = "ray"
    runs_outside = True

    def __init__(
        self,
        objective: Any,
        *,
        ray_address: str | None = None,
        resources: Mapping[str, Any] | None = None,
        max_node_failures: int = 3,
        **options: Any,
    ) -> None:
        super().__init__(objective, **options)
        if self.devices is not None:
            raise ConfigError(
                "gpus: the 'ray' executor places trials on GPUs as Ray resources; remove "
                "`gpus` and give resources={'gpu': 1} (or a fraction such as 0.5)"
            )
        if (
            isinstance(max_node_failures, bool)
            or not isinstance(max_node_failures, int)
            or (max_node_failures < 0)
        ):
            raise ConfigError(
                f"max_node_failures: expected a number >= 0, got {max_node_failures!r}"
            )
        self.resources = parse_resources(resources)
        self.max_node_failures = max_node_failures
        self.objective_bytes: bytes = serialize_objective(objective)
        self._ray = ray = import_ray()
        self._detached = not connect(ray_address)
        self._objective = ray.put(self.objective_bytes)
        self._actor_class = ray.remote(TrialActor)
        self._slots: list[Slot] = []
        self._pending: list[Failed] = []  # trials that could not be started: for poll
        self._losses: dict[int, int] = {}
        self._nodes: list[dict[str, Any]] = []
        self._nodes_at = float("-inf")
        self._pinged = time.monotonic()
        self._orphans: Orphans | None = None

    @classmethod
    def check_objective(cls, objective: Any) -> None:
        if type(objective).__name__ == "CommandTrial":
            return
        super().check_objective(objective)

    @property
    def running(self) -> int:
        return sum(slot.spec is not None for slot in self._slots) + len(self._pending)

    # ---- starting trials ------------------------------------------------------------------

    def submit(self, spec: TrialSpec) -> None:
        if self._orphans:  # adoption is over: what nobody adopted goes
            self._release_orphans()
        missing = self.resources.missing(self._cluster(refresh=not self._slots))
        if missing is not None:
            self._pending.append(Failed(spec.number, time.time(), missing))
            return
        logs = watch_trial_logs(
            spec.trial_dir, spec.attempt, spec.number, self.max_log_bytes, self.echo_output
        )
        if isinstance(logs, str):
            self._pending.append(Failed(spec.number, time.time(), logs))
            return
        slot = next((s for s in self._slots if s.spec is None), None) or self._new_slot(spec)
        own, restore = checkpoints_for(spec)
        slot.spec = spec
        slot.logs = logs
        slot.submitted = time.monotonic()
        slot.run = slot.actor.run.remote(spec, own, restore)
        slot.ref = slot.actor.collect.remote(spec.number, 0, COLLECT_WAIT)

    def _new_slot(self, spec: TrialSpec) -> Slot:
        name = f"{actor_prefix(spec.trial_id)}{uuid.uuid4().hex[:8]}"
        options: dict[str, Any] = dict(self.resources.actor_options())
        options["max_concurrency"] = ACTOR_CONCURRENCY
        if self._detached:
            options |= {"name": name, "namespace": NAMESPACE, "lifetime": "detached"}
        actor = self._actor_class.options(**options).remote(self._objective, self._detached)
        slot = Slot(actor)
        self._slots.append(slot)
        return slot

    def _cluster(self, *, refresh: bool = False) -> list[dict[str, Any]]:
        """``ray.nodes()``, looked at again at most every ``RECHECK_INTERVAL`` seconds."""
        now = time.monotonic()
        if refresh or now - self._nodes_at >= RECHECK_INTERVAL:
            self._nodes = self._ray.nodes()
            self._nodes_at = now
        return self._nodes

    # ---- watching them --------------------------------------------------------------------

    def poll(self, timeout: float) -> None:
        pending, self._pending = self._pending, []
        for event in pending:
            self.listener(event)
        if pending:
            timeout = 0
        busy = {slot.ref: slot for slot in self._slots if slot.ref is not None}
        limits = [t for s in busy.values() for t in (s.deadline, s.kill_at) if t is not None]
        if limits:
            timeout = min(timeout, max(0.0, min(limits) - time.monotonic()))
        if busy:
            ready, _ = self._ray.wait(list(busy), num_returns=1, timeout=timeout)
            if ready:  # take all the others that are ready too
                ready, _ = self._ray.wait(list(busy), num_returns=len(busy), timeout=0)
            for ref in ready:
                self._receive(busy[ref], ref)
        elif timeout > 0:
            time.sleep(timeout)
        self._enforce_limits()
        self._check_waiting()
        self._free_idle()
        now = time.monotonic()
        for slot in self._slots:
            if slot.logs is not None:
                slot.logs.check(now)
        if self._detached and now - self._pinged >= PING_INTERVAL:
            self._pinged = now
            for slot in self._slots:
                if slot.spec is None:
                    slot.actor.ping.remote()

    def _receive(self, slot: Slot, ref: Any) -> None:
        spec = slot.spec
        assert spec is not None
        try:
            batch: Batch = self._ray.get(ref)
        except self._ray.exceptions.RayActorError as exc:
            self._actor_died(slot, exc)
            return
        except Exception as exc:  # the batch could not be made or sent
            self._kill(slot)
            self._end(
                slot, Failed(spec.number, time.time(), f"the trial's Ray actor failed: {exc}")
            )
            return
        slot.node = batch.node
        if batch.waiting and (slot.run is None or self._ray.wait([slot.run], timeout=0)[0]):
            error = "the trial is no longer on its Ray actor"
            try:  # the run call ended without starting the trial: it raised
                if slot.run is not None:
                    self._ray.get(slot.run)
            except Exception as exc:
                error = f"the trial's Ray actor could not start it: {exc}"
            self._kill(slot)
            self._end(slot, Failed(spec.number, time.time(), error))
            return
        slot.cursor += len(batch.events)
        deliver_files(slot.spec, batch)
        for event in batch.events:
            if isinstance(event, Started):
                if self.trial_timeout is not None:
                    since = max(0.0, time.time() - event.time)
                    slot.deadline = time.monotonic() - since + self.trial_timeout
                if slot.started:
                    continue
                slot.started = True
            elif isinstance(event, Reported):
                slot.last = event.metrics
                if slot.skip:
                    slot.skip -= 1
                    continue
            self.listener(event)
        if batch.end is not None:
            end = batch.end
            if isinstance(end, Failed) and batch.exception is not None:
                end = dataclasses.replace(end, exception=load_exception(batch.exception))
            self._end(slot, end)
        else:
            slot.ref = slot.actor.collect.remote(spec.number, slot.cursor, COLLECT_WAIT)

    def _actor_died(self, slot: Slot, exc: BaseException) -> None:
        """The trial's actor is gone: a lost node re-runs the trial, anything else fails it."""
        spec = slot.spec
        assert spec is not None
        self._slots.remove(slot)
        reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        nodes = self._cluster(refresh=True)
        gone = slot.node is not None and not any(
            n.get("NodeID") == slot.node and n.get("Alive") for n in nodes
        )
        if slot.kill_at is not None:  # killed by us after a stop: it stopped
            self._end(slot, Stopped(spec.number, time.time(), slot.last))
            return
        if not (gone or "node has died" in str(exc) or "node was terminated" in str(exc)):
            error = f"the trial's Ray actor died: {reason}"
            self._end(slot, Failed(spec.number, time.time(), error))
            return
        losses = self._losses.get(spec.number, 0) + 1
        self._losses[spec.number] = losses
        where = f"Ray node {slot.node}" if slot.node else "its Ray node"
        if losses > self.max_node_failures:
            error = (
                f"{where} died under the trial, which was lost {losses} times "
                f"(max_node_failures={self.max_node_failures})"
            )
            self._end(slot, Failed(spec.number, time.time(), error))
        else:
            self._end(slot, Lost(spec.number, time.time(), f"{where} died: {reason}"))

    def _end(self, slot: Slot, event: Any) -> None:
        assert isinstance(event, END_EVENTS)
        slot.end_trial()
        self.listener(event)

    def _enforce_limits(self) -> None:
        now = time.monotonic()
        for slot in list(self._slots):
            spec = slot.spec
            if spec is None:
                continue
            if slot.deadline is not None and slot.deadline <= now:
                error = f"trial exceeded trial_timeout={self.trial_timeout:g}s"
                self._kill(slot)
                self._end(slot, Failed(spec.number, time.time(), error))
            elif slot.kill_at is not None and slot.kill_at <= now:
                last = slot.last
                self._kill(slot)
                self._end(slot, Stopped(spec.number, time.time(), last))

    def _check_waiting(self) -> None:
        """Fail the trials whose actor waits for resources that no node has any more."""
        waiting = [s for s in self._slots if s.spec is not None and not s.started]
        if not waiting:
            return
        missing = self.resources.missing(self._cluster())
        if missing is None:
            return
        for slot in waiting:
            spec = slot.spec
            assert spec is not None
            self._kill(slot)
            self._end(slot, Failed(spec.number, time.time(), missing))

    def _free_idle(self) -> None:
        """Let idle actors go when a trial waits for the resources they hold (the cluster
        has too little of them free: not an actor that is merely slow to start), or when
        ``concurrency`` was lowered below the number of actors."""
        now = time.monotonic()
        waits = any(
            s.spec is not None and not s.started and now - s.submitted > WAIT_BEFORE_FREEING
            for s in self._slots
        )
        if waits:
            free = self._ray.available_resources()
            waits = any(free.get(k, 0.0) < v for k, v in self.resources.as_ray().items())
        excess = len(self._slots) - self.concurrency
        for slot in [s for s in self._slots if s.spec is None]:
            if waits or excess > 0:
                self._kill(slot)
                excess -= 1

    def _kill(self, slot: Slot) -> None:
        """Kill the slot's actor (and the trial in it); the slot leaves the pool."""
        with contextlib.suppress(Exception):
            self._ray.kill(slot.actor, no_restart=True)
        if slot in self._slots:
            self._slots.remove(slot)

    # ---- stopping, adopting, closing ------------------------------------------------------

    def answer(self, number: int, index: int, value: Any, error: str | None = None) -> None:
        for slot in self._slots:
            if slot.spec is not None and slot.spec.number == number:
                slot.actor.answer.remote(number, index, value, error)

    def stop(self, number: int) -> None:
        for slot in self._slots:
            if slot.spec is not None and slot.spec.number == number and slot.kill_at is None:
                slot.actor.stop.remote(number)
                slot.kill_at = time.monotonic() + self.stop_grace

    def adopt(self, spec: TrialSpec, *, reports: int) -> float | None:
        if not self._detached:
            return None  # its local Ray instance died with the driver that started it
        if self._orphans is None:
            self._orphans = find_orphans(self._ray, spec)
        found = self._orphans.pop((spec.trial_id, spec.attempt), None)
        if found is None:
            return None
        actor, started = found
        slot = Slot(actor)
        self._slots.append(slot)
        slot.spec = spec
        slot.skip = reports
        slot.started = True
        logs = watch_trial_logs(
            spec.trial_dir, spec.attempt, spec.number, self.max_log_bytes, self.echo_output
        )
        slot.logs = None if isinstance(logs, str) else logs  # its output is lost, not it
        slot.ref = actor.collect.remote(spec.number, 0, COLLECT_WAIT)
        return time.time() if started is None else started

    def detach(self) -> None:
        """Leave detached actors' trials running for the driver that takes over."""
        if not self._detached:
            self.close()
            return
        for slot in list(self._slots):
            if slot.spec is None:
                self._kill(slot)
            elif slot.logs is not None:
                slot.logs.finish()
                slot.logs = None
        self._slots.clear()
        self._release_orphans()

    def close(self) -> None:
        for slot in self._slots:
            if slot.spec is not None:
                self.stop(slot.spec.number)
        end = time.monotonic() + self.stop_grace
        while any(s.spec is not None for s in self._slots) and time.monotonic() < end:
            self.poll(0.05)
        for slot in list(self._slots):
            spec = slot.spec
            self._kill(slot)
            if spec is not None:
                self._end(slot, Stopped(spec.number, time.time(), slot.last))
        pending, self._pending = self._pending, []
        for event in pending:
            self.listener(event)
        self._release_orphans()

    def _release_orphans(self) -> None:
        """Kill the actors found on adoption whose trials the store did not ask for."""
        for actor, _started in (self._orphans or {}).values():
            with contextlib.suppress(Exception):
                self._ray.kill(actor, no_restart=True)
        self._orphans = None
