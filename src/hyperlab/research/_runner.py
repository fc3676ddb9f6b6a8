"""Run one worker's group of a research's experiments: its branches in lockstep, iteration by
iteration, with the root units computed once for all of them.

Every experiment (one config x repetition, one trial) reports through its own
``TrialContext``: each iteration's saved variables become one report (``step`` = the
iteration), and it ends with one message, like a worker's trial: ``("finished" | "stopped",
number, time, metrics)`` or ``("failed", number, time, error)``. The same code runs in worker
processes, on threads and in the driver's thread. What it keeps per experiment and what a
unit's arguments can name are in ``_lookup.py``; how a unit's failure reads, ``_failures.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hyperlab.errors import TrialStopped
from hyperlab.reporting.context import TrialContext, activate, deactivate
from hyperlab.research._failures import Exhausted, Failure, error_text, short, storable
from hyperlab.research._lookup import Lookup, State, common_config
from hyperlab.research._units import Unit, filled_names

__all__ = ["Plan", "alias_key", "run_group"]

Send = Callable[[tuple], None]
PROFILE_FILE = "profile.jsonl"


@dataclass(frozen=True)
class Plan:
    """Everything a worker needs to run a research's experiments (pickled to workers and kept
    in the store as the experiment's objective, so ``resume`` rebuilds the same research).

    Attributes:
        units: In the order they run within an iteration.
        n_iters: Iterations per experiment; None runs until a generator unit is exhausted.
        values: For each config key, the actual value of each alias (what the domains hold
            that is not stored as it is: classes, functions, objects).
        finalize: After a unit fails, still run the experiment's ``"last"`` units.
        profile: Record each unit's time and calls per iteration (``profile.jsonl``).
        workers / branches: Worker count, and experiments per worker sharing root units.
        devices: For each worker, for each branch, the device indices it holds (physical).
        executor: ``"processes"``, ``"threads"`` or ``"inprocess"``.
        memory_check: Free-memory requirement checked before a worker starts on its devices.
        echo: Also show the experiments' output on the driver's streams.
        worker_configs / branch_configs: Config values added to every experiment a worker
            runs (one dict per worker), and to the experiment of each branch (one per branch);
            empty when none were given (BatchFlow's ``workers=[Config...]``).
        target: How a group's branches run each iteration: ``"for"`` (one after another) or
            ``"threads"`` (at once, one thread each; their events still leave from the
            group's thread).
    """

    units: tuple[Unit, ...]
    n_iters: int | None
    values: dict[str, dict[str, Any]] = field(default_factory=dict)
    finalize: bool = True
    profile: bool = False
    workers: int = 1
    branches: int = 1
    devices: tuple[tuple[tuple[int, ...], ...], ...] | None = None
    executor: str = "processes"
    memory_check: Any = None
    echo: bool = False
    worker_configs: tuple[dict[str, Any], ...] = ()
    branch_configs: tuple[dict[str, Any], ...] = ()
    target: str = "for"

    def config(self, params: dict[str, Any]) -> dict[str, Any]:
        """The actual config of a trial's stored params (aliases; ``repetition`` left out)."""
        config = {}
        for key, alias in params.items():
            if key == "repetition":
                continue
            table = self.values.get(key)
            config[key] = table.get(alias_key(alias), alias) if table else alias
        return config

    def worker_devices(self, worker: int) -> tuple[int, ...]:
        """The devices of every branch of ``worker``, in order, each once."""
        if self.devices is None:
            return ()
        seen: list[int] = []
        for branch in self.devices[worker]:
            seen.extend(d for d in branch if d not in seen)
        return tuple(seen)


def alias_key(alias: Any) -> str:
    """How ``Plan.values`` keys an alias (aliases may be lists or dicts)."""
    return json.dumps(alias, sort_keys=True, default=str)


class _Group:
    """A group of branches run in lockstep by one worker."""

    def __init__(self, plan: Plan, contexts: list[TrialContext], send: Send) -> None:
        self.plan = plan
        self.send = send
        self.branches: list[State] = []
        for ctx in contexts:
            config = {k: v for k, v in ctx.params.items() if k != "repetition"}
            self.branches.append(State(ctx, config, int(ctx.params.get("repetition", 0))))
        self.root = State(None, common_config(self.branches), -1)
        self.roots = [u for u in plan.units if u.root]
        self.names: dict[tuple[str, int], list[str]] = {}  # parameters filled by name
        self.own = [u for u in plan.units if not u.root]

    # ---- running ------------------------------------------------------------------------

    def run(self) -> None:
        plan = self.plan
        for state in self.branches:
            self.send(("started", state.ctx.number, time.time()))  # type: ignore[union-attr]
        live = list(self.branches)
        iteration = 0
        try:
            self._create_instances(self.root, self.roots, iteration, live)
            for state in live:
                self._create_instances(state, self.own, iteration, [state])
        except Failure as failure:
            self._fail_all(live, failure, iteration)
            return
        live = [s for s in live if s.error is None]
        while live and (plan.n_iters is None or iteration < plan.n_iters):
            last = plan.n_iters is not None and iteration == plan.n_iters - 1
            ending = self._iterate_root(iteration, last, live)
            if ending == "failed":
                return
            for state in self._iterate_branches(live, iteration, last or ending == "exhausted"):
                live.remove(state)
            if ending == "exhausted":
                break
            iteration += 1
        for state in live:
            self._end(state, "finished")

    def _create_instances(
        self, state: State, units: list[Unit], iteration: int, branches: list[State]
    ) -> None:
        for unit in units:
            if unit.kind != "instance":
                continue
            try:
                state.instances[unit.name] = self._call(unit, state, iteration, branches)
                state.outputs[unit.name] = state.instances[unit.name]
            except Exception as exc:
                raise Failure(error_text(unit.name, iteration), exc) from None

    def _iterate_root(self, iteration: int, last: bool, live: list[State]) -> str | None:
        """Run the root units due now; "failed" or "exhausted" when the group must end."""
        if not self.roots:
            return None
        state = self.root
        state.ran.clear()
        try:
            self._run_units(state, self.roots, iteration, last, live)
        except Exhausted:
            return "exhausted"
        except Failure as failure:
            self._fail_all(live, failure, iteration)
            return "failed"
        return None

    def _iterate_branches(self, live: list[State], iteration: int, last: bool) -> list[State]:
        """Run one iteration of each live experiment; the ones that ended. With the
        ``"threads"`` target they run at once, and what they send is passed on from this
        thread (an executor hands events over from the thread it runs the group in)."""
        if self.plan.target != "threads" or len(live) < 2:
            return [s for s in list(live) if self._iterate_branch(s, iteration, last)]
        outbox: queue.SimpleQueue[tuple] = queue.SimpleQueue()
        send, self.send = self.send, outbox.put
        try:
            with ThreadPoolExecutor(len(live), thread_name_prefix="hyperlab-branch") as pool:
                futures = [pool.submit(self._iterate_branch, s, iteration, last) for s in live]
                while True:
                    done = all(f.done() for f in futures)
                    with contextlib.suppress(queue.Empty):
                        while True:
                            send(outbox.get(timeout=0 if done else 0.005))
                    if done:
                        break
        finally:
            self.send = send
        return [s for s, f in zip(live, futures, strict=True) if f.result()]

    def _iterate_branch(self, state: State, iteration: int, last: bool) -> bool:
        """Run one experiment's iteration; True when it ended (its end is sent)."""
        ctx = state.ctx
        assert ctx is not None
        state.ran.clear()
        state.saved = {}
        state.profile = {}
        token = activate(ctx)
        try:
            try:
                if ctx.stop_requested:
                    raise TrialStopped(f"trial {ctx.trial_id} was told to stop")
                exhausted = False
                try:
                    self._run_units(state, self.own, iteration, last, [state])
                except Exhausted:
                    exhausted = True
                    self._run_units(state, self.own, iteration, True, [state], only_last=True)
                self._report(state, iteration)
                if exhausted:
                    self._end(state, "finished")
                    return True
                return False
            except Failure as failure:
                state.error, state.exc = failure.text, failure.exc
                if self.plan.finalize:
                    self._finalize(state, iteration)
                self._write_profile(state, iteration)
                self._end(state, "failed")
                return True
            except TrialStopped:
                self._end(state, "stopped")
                return True
        finally:
            deactivate(token)

    def _finalize(self, state: State, iteration: int) -> None:
        """After a failure, run the experiment's ``"last"`` units not run yet this iteration;
        their own errors are added to the experiment's."""
        try:
            self._run_units(state, self.own, iteration, True, [state], only_last=True)
        except Failure as failure:
            state.error = f"{state.error}\n\nthen, finalizing:\n{failure.text}"
        except Exhausted:
            pass
        with contextlib.suppress(TrialStopped):
            self._report(state, iteration)

    def _run_units(
        self,
        state: State,
        units: list[Unit],
        iteration: int,
        last: bool,
        branches: list[State],
        *,
        only_last: bool = False,
    ) -> None:
        exhausted = False
        for unit in units:
            if unit.kind == "instance" or unit.name in state.ran:
                continue
            if only_last and not unit.when.last:
                continue
            if not unit.when.due(iteration, last=last):
                continue
            state.ran.add(unit.name)
            started = time.perf_counter()
            try:
                output = self._step(unit, state, iteration, branches)
            except Exhausted:
                exhausted = True
                break
            except Exception as exc:
                raise Failure(error_text(unit.name, iteration), exc) from None
            finally:
                if self.plan.profile:
                    spent = state.profile.setdefault(unit.name, [0.0, 0])
                    spent[0] += time.perf_counter() - started
                    spent[1] += 1
            state.outputs[unit.name] = output
            self._save(unit, state, output, iteration)
        if exhausted:
            raise Exhausted

    def _step(self, unit: Unit, state: State, iteration: int, branches: list[State]) -> Any:
        """One run of a unit: a call, or the next value of its generator."""
        if unit.kind == "generator":
            generator = state.generators.get(unit.name)
            if generator is None:
                generator = self._call(unit, state, iteration, branches)
                if not hasattr(generator, "__next__"):
                    raise TypeError(
                        f"unit {unit.name!r} was added with add_generator but "
                        f"{unit.function!r} returned {type(generator).__name__}, not a generator"
                    )
                state.generators[unit.name] = generator
            try:
                return next(generator)
            except StopIteration:
                raise Exhausted from None
        return self._call(unit, state, iteration, branches)

    def _call(self, unit: Unit, state: State, iteration: int, branches: list[State]) -> Any:
        function = unit.function
        if unit.kind == "method":
            owner, _, method = str(function).partition(".")
            instance = state.instances.get(owner, self.root.instances.get(owner))
            function = getattr(instance, method)
        lookup = Lookup(self.root, state, iteration, branches)
        args = [lookup.resolve(a) for a in unit.args]
        kwargs = {k: lookup.resolve(v) for k, v in unit.kwargs.items()}
        key = (unit.name, id(state) if unit.kind == "method" else 0)
        names = self.names.get(key)
        if names is None:  # a method belongs to its experiment's instance
            names = self.names[key] = filled_names(function, unit.args, unit.kwargs)
        for name in names:
            found, value = lookup.get(name)
            if found:
                kwargs[name] = value
        return function(*args, **kwargs)

    def _save(self, unit: Unit, state: State, output: Any, iteration: int) -> None:
        if not unit.save_to:
            return
        values: list[Any]
        if len(unit.save_to) == 1:
            values = [output]
        else:
            if not isinstance(output, (tuple, list)) or len(output) != len(unit.save_to):
                raise Failure(
                    f"unit {unit.name!r} (iteration {iteration}): save_to names "
                    f"{len(unit.save_to)} variables {list(unit.save_to)} but it returned "
                    f"{short(output)}"
                )
            values = list(output)
        for name, value in zip(unit.save_to, values, strict=True):
            stored = storable(value, name, unit.name, iteration)
            targets = self.branches if state is self.root else [state]
            for target in targets:
                target.saved[name] = stored
                target.last_values[name] = stored
                target.outputs[name] = value

    def _report(self, state: State, iteration: int) -> None:
        self._write_profile(state, iteration)
        if state.saved:
            assert state.ctx is not None
            saved, state.saved = state.saved, {}
            state.ctx.report(None, iteration, saved)

    def _write_profile(self, state: State, iteration: int) -> None:
        ctx = state.ctx
        if not self.plan.profile or ctx is None or ctx.trial_dir is None:
            return
        rows = dict(state.profile)
        if state is self.branches[0]:  # root units: counted once, with the first branch
            for name, spent in self.root.profile.items():
                rows.setdefault(name, spent)
            self.root.profile = {}
        state.profile = {}
        if not rows:
            return
        os.makedirs(ctx.trial_dir, exist_ok=True)
        lines = "".join(
            json.dumps(
                {
                    "iteration": iteration,
                    "unit": name,
                    "time": spent[0],
                    "calls": spent[1],
                    "attempt": ctx.attempt,
                }
            )
            + "\n"
            for name, spent in rows.items()
        )
        with open(os.path.join(ctx.trial_dir, PROFILE_FILE), "a", encoding="utf-8") as file:
            file.write(lines)

    # ---- ending --------------------------------------------------------------------------

    def _end(self, state: State, how: str) -> None:
        ctx = state.ctx
        assert ctx is not None
        now = time.time()
        if how == "failed":
            error = state.error or "the experiment failed"
            self.send(("failed", ctx.number, now, error, state.exc))
        elif how == "stopped":
            self.send(("stopped", ctx.number, now, ctx.last))
        else:
            self.send(("finished", ctx.number, now, dict(state.last_values)))

    def _fail_all(self, live: list[State], failure: Failure, iteration: int) -> None:
        for state in live:
            state.error = f"a root unit failed:\n{failure.text}"
            state.exc = failure.exc
            if self.plan.finalize:
                token = activate(state.ctx)
                try:
                    self._finalize(state, iteration)
                finally:
                    deactivate(token)
            self._end(state, "failed")


def run_group(plan: Plan, contexts: list[TrialContext], send: Send) -> None:
    """Run the experiments of ``contexts`` (one per branch) to their ends, in this thread.

    Each context's ``params`` is its actual config (with ``repetition``); every experiment's
    end is sent exactly once. ``KeyboardInterrupt`` and ``SystemExit`` propagate.
    """
    _Group(plan, contexts, send).run()
