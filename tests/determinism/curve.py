"""A trial whose reports depend on its parameters alone: a learning curve that checkpoints.

Imported, ``curve`` is a function trial; run as ``python curve.py``, it is the same trial as a
command (its parameters come through the ``HYPERLAB_*`` variables). Each step is reported and
checkpointed, so a paused trial resumes after its last step and a branch starts from its
parent's.
"""

from __future__ import annotations

import hyperlab

STEPS = 9


def loss_at(params: dict, step: int) -> float:
    """The loss after ``step`` (0-based) steps: better for x near 0.3, falling with steps."""
    return round((params["x"] - 0.3) ** 2 + params["y"] / (step + 1), 12)


def curve(params: dict) -> None:
    state = hyperlab.load_checkpoint()
    start = 0 if state is None else state["step"] + 1
    for step in range(start, STEPS):
        hyperlab.report(loss=loss_at(hyperlab.get_params(), step), step=step)
        hyperlab.checkpoint({"step": step})


if __name__ == "__main__":
    curve(hyperlab.get_params())
