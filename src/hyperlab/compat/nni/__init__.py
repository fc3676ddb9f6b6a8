"""hyperlab's ``nni`` shim: NNI's trial API on top of ``hyperlab.reporting``.

```python
import nni

params = nni.get_next_parameter()          # the trial's parameters
for epoch in range(10):
    nni.report_intermediate_result(acc)    # a number, or a dict with a "default" key
nni.report_final_result(acc)
```

A trial that calls ``nni.get_next_parameter()`` again gets another parameter set from the tuner
(NNI's multi-phase trials; None when there is no more), and reports a final result for each.

Inside a hyperlab trial (a command trial, or a function trial that calls these) the calls go
to hyperlab's reporting; elsewhere they behave like NNI's standalone mode: no parameters (with
a ``RuntimeWarning``), results logged, ids ``"STANDALONE"``.

A user's own NNI tuner or assessor (``nni.tuner.Tuner``, ``nni.assessor.Assessor``, with
``nni.utils`` and ``nni.NoMoreTrialError``) runs through ``hyperlab.compat.nni.custom``, an
advisor (``nni.runtime.msg_dispatcher_base.MsgDispatcherBase``) through
``hyperlab.compat.nni.advisor``.
"""

from __future__ import annotations

from . import utils
from .trial import (
    get_current_parameter,
    get_experiment_id,
    get_next_parameter,
    get_next_parameters,
    get_sequence_id,
    get_trial_id,
    report_final_result,
    report_intermediate_result,
)
from .tuner import NoMoreTrialError

__version__ = "hyperlab-shim"

__all__ = [
    "NoMoreTrialError",
    "get_current_parameter",
    "get_experiment_id",
    "get_next_parameter",
    "get_next_parameters",
    "get_sequence_id",
    "get_trial_id",
    "report_final_result",
    "report_intermediate_result",
    "utils",
]
