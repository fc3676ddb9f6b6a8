"""Module-level objectives of the fault suite, importable by spawned worker processes.

Each trial that runs outside the driver appends its pid to ``pids`` in its trial folder, so a
test can check afterwards that no process of the experiment is left.
"""

from __future__ import annotations

import os
import time

import hyperlab


def _note_pid() -> None:
    with open(hyperlab.trial_dir() / "pids", "a") as f:
        f.write(f"{os.getpid()}\n")


def _steps(params, count: int, tick: float) -> dict:
    _note_pid()
    x = params["x"]
    for step in range(count):
        hyperlab.report(loss=x / (step + 1), pid=os.getpid())
        time.sleep(tick)
    return {"loss": x, "pid": os.getpid()}


def tenth_second(params):
    """Five reports 20 ms apart; FAILED when ``x > 0.8``."""
    result = _steps(params, 5, 0.02)
    if params["x"] > 0.8:
        raise ValueError(f"x={params['x']:.3f} is too large")
    return result


def quarter_second(params):
    """Five reports 50 ms apart."""
    return _steps(params, 5, 0.05)


def one_second(params):
    """Twenty reports 50 ms apart."""
    return _steps(params, 20, 0.05)


def long_running(params):
    """Reports every 50 ms for up to a minute: it ends only when it is stopped."""
    return _steps(params, 1200, 0.05)


def twenty_ms(params):
    time.sleep(0.02)
    return params["x"]


def always_raises(params):
    raise ValueError(f"cannot evaluate x={params['x']:.3f}")


def wrong_metric(params):
    """Returns ``accuracy`` where the experiment expects ``loss``."""
    return {"accuracy": params["x"]}


def raises_on_odd(params):
    if params["i"] % 2:
        raise RuntimeError(f"odd i={params['i']}")
    return float(params["i"])


def checkpointed(params):
    """Ten steps 0.3 s apart, each reported then checkpointed; a run again goes on from its
    last checkpoint. Every step it trains is noted in ``steps`` in its folder."""
    _note_pid()
    state = hyperlab.load_checkpoint() or {"step": -1}
    for step in range(state["step"] + 1, 10):
        time.sleep(0.3)
        with open(hyperlab.trial_dir() / "steps", "a") as f:
            f.write(f"{step}\n")
        hyperlab.report(loss=params["x"] + step, step=step)
        hyperlab.checkpoint({"step": step})
    return {"loss": params["x"] + 9}
