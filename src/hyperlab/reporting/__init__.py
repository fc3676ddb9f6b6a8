"""The trial side: what code running inside a trial calls, in every executor.

```python
def objective(params):
    state = hyperlab.load_checkpoint() or {"epoch": -1}   # continue a paused or re-run trial
    for epoch in range(state["epoch"] + 1, 10):
        loss = train_one_epoch(params)
        hyperlab.report(loss=loss)   # intermediate result; raises TrialStopped if told to stop
        hyperlab.checkpoint({"epoch": epoch, "model": model.state_dict()})
    return {"loss": loss}            # final result
```

The package holds the one protocol between a trial and its driver, which every executor uses
and none re-spells:

- ``context``: ``TrialContext``, what a running trial knows about itself, and how it reports
  and asks its driver (a report is a round trip when something listens to it);
- ``channel``: the ``HYPERLAB_*`` variables and the channel file of a trial run as a program
  (commands, NNI scripts), written by the trial and parsed by its executor;
- ``checkpoints``: the checkpoint folders that ``checkpoint`` writes and ``load_checkpoint``
  reads, atomically.
"""

from __future__ import annotations

from hyperlab.reporting._calls import (
    checkpoint,
    get_params,
    load_checkpoint,
    report,
    should_stop,
    suggest,
    trial_devices,
    trial_dir,
    trial_seed,
)
from hyperlab.reporting.context import TrialContext, find_current

__all__ = [
    "TrialContext",
    "checkpoint",
    "find_current",
    "get_params",
    "load_checkpoint",
    "report",
    "should_stop",
    "suggest",
    "trial_devices",
    "trial_dir",
    "trial_seed",
]
