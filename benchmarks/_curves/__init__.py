"""Learning-curve tasks for ``benchmarks/early_stopping.py``: each trial trains epoch by epoch
and reports a validation score (higher is better) after each epoch.

Every task has a search space and a way to train one configuration for ``epochs`` epochs.
Training is deterministic given the configuration (the model's seed is derived from it, and
each epoch's data order from the epoch), so a configuration's whole curve is computed once,
cached, and replayed to every contender: an assessor that stops a trial at epoch 3 sees exactly
the three scores that trial would have reported live, and one that pauses and resumes it sees
the curve continue from its checkpoint. The cost of training is counted as epochs, not seconds.
"""

from __future__ import annotations

from _curves._tasks import REPORT, TASKS, TUNING, Task, curves

__all__ = ["REPORT", "TASKS", "TUNING", "Task", "curves"]
