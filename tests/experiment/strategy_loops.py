"""The strategy loop that ``test_strategy_resume`` runs in a process of its own, SIGKILLs, and
resumes in the test's: an evolution that submits a generation of children of the best trials
so far whenever half of the trials in flight have ended, so that trials are running at any
moment of the run, and that prints each trial as its handle resolves.

Run it as ``python -c "from tests.experiment.strategy_loops import main; main()" STORAGE
EXECUTOR KILL_AFTER [ID]``: it starts a new experiment, or resumes experiment ``ID``, prints
the experiment's id, then ``number value`` for each trial whose handle resolved, and SIGKILLs
itself right after the ``KILL_AFTER``-th (0: never). The objective lives here, not in
``__main__``, so that worker processes and a resume load it.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future

import hyperlab
from hyperlab import space as hs
from hyperlab.trial import Trial

SPACE = {"x": hs.uniform(0, 1)}
MAX_TRIALS = 16
GENERATION = 4
TRIAL_SECONDS = 0.2  # long enough that a kill finds trials running, short enough for the suite
SEED = 5


def sleepy(params: dict) -> float:
    """Sleep ``TRIAL_SECONDS``, then return the distance of ``x`` to 0.3 (squared)."""
    time.sleep(TRIAL_SECONDS)
    return (params["x"] - 0.3) ** 2


def new_experiment(storage: str, executor: str) -> hyperlab.Experiment:
    """The experiment the loop drives: no tuner, ``MAX_TRIALS``, two trials at a time."""
    return hyperlab.Experiment(
        sleepy,
        SPACE,
        max_trials=MAX_TRIALS,
        executor=executor,
        concurrency=2,
        storage=storage,
        progress=False,
    )


def children(ended: list[Trial], count: int, rng: random.Random) -> list[dict]:
    """``count`` parameter sets: random ones at first, then mutations of the two best trials."""
    if not ended:
        return [{"x": rng.random()} for _ in range(count)]
    best = sorted(ended, key=lambda trial: trial.value)[:2]
    return [
        {"x": min(1.0, max(0.0, best[i % len(best)].params["x"] + rng.uniform(-0.1, 0.1)))}
        for i in range(count)
    ]


def evolve(
    exp: hyperlab.Experiment,
    handles: Iterable[Future[Trial]] = (),
    on_end: Callable[[Trial], None] = lambda trial: None,
) -> list[Trial]:
    """Drive ``exp`` until its ``max_trials`` are created and ended, starting from ``handles``
    (a resumed loop's, from ``trials``): a new generation whenever half of the trials in
    flight ended. ``on_end`` is called with each trial once its handle resolved; the ended
    trials are returned in the order they were seen ended."""
    rng = random.Random(SEED)
    pending = list(handles)
    ended: list[Trial] = []

    while True:
        done = [h for h in pending if h.done()]
        pending = [h for h in pending if h not in done]
        for handle in done:
            ended.append(handle.result())
            on_end(handle.result())
        room = MAX_TRIALS - exp.state_dict()["model_count"]
        if room > 0:
            pending += exp.submit(children(ended, min(GENERATION, room), rng))
        if not pending:
            return ended
        half = max(1, len(pending) // 2)
        for count, _ in enumerate(exp.as_completed(pending), 1):
            if count == half:
                break


def main() -> None:
    """The script: see the module's docstring."""
    storage, executor, kill_after = sys.argv[1], sys.argv[2], int(sys.argv[3])
    seen = 0

    def show(trial: Trial) -> None:
        nonlocal seen
        print(trial.number, repr(trial.value), flush=True)
        seen += 1
        if seen == kill_after:  # right after the handle resolved: nothing may be lost
            os.kill(os.getpid(), signal.SIGKILL)

    if len(sys.argv) > 4:  # resume it
        exp = hyperlab.Experiment.resume(sys.argv[4], storage=storage, progress=False)
    else:
        exp = new_experiment(storage, executor)
    print(exp.id, flush=True)
    with exp:
        evolve(exp, exp.trials(status=["SUCCEEDED", "WAITING", "RUNNING"]), on_end=show)
