"""Ray Tune's oldest trial-side API (Ray 0.7 and 0.8): ``tune.track.log(**metrics)``.

```python
from hyperlab.compat.ray import tune

def train(config):
    for epoch in range(10):
        tune.track.log(mean_loss=(config["lr"] - 0.01) ** 2 / (epoch + 1))
```

``log`` is ``tune.report(**metrics)``: the same automatic metrics, stop criteria and
scheduler decisions (a stop raises ``hyperlab.TrialStopped``: let it propagate). Inside a
trial, ``init()`` and ``shutdown()`` do nothing, as Ray ignored them in a trial it ran; a
tracking session of its own outside Tune has no hyperlab equivalent.
"""

from __future__ import annotations

from typing import Any

from hyperlab.compat.ray.tune import _session

__all__ = ["init", "log", "shutdown", "trial_dir"]


def log(**metrics: Any) -> None:
    """Report ``metrics`` as a result of the running trial (``tune.report(**metrics)``).

    Raises:
        TrialStopped: A scheduler stopped or paused the trial, or the user stopped it.
        RuntimeError: Called outside a trainable run by ``tune.run`` or ``Tuner``.
    """
    _session.report(**metrics)


def trial_dir() -> str:
    """The running trial's folder (``tune.get_context().get_trial_dir()``)."""
    return _session.get_trial_dir()


def init(ignore_reinit_error: bool = True, **session_kwargs: Any) -> None:
    """Nothing inside a trial (the trial's session exists already); outside one, refused.

    Raises:
        NotImplementedError: Outside a trainable run by ``tune.run`` or ``Tuner``.
    """
    if _session.find_session() is None:
        raise NotImplementedError(
            "tune.track.init() outside a trial: a tracking session of its own has no "
            "hyperlab equivalent; run the function with tune.run or tune.Tuner, where "
            "tune.track.log reports its results"
        )


def shutdown() -> None:
    """Nothing: the trial's session ends when its trainable returns."""
