"""NNI's ``nni.nas.execution``: the execution engine a strategy loop of one's own submits its
models to, and the model events it may listen to.

```python
from hyperlab.compat.nni.nas.execution import SequentialExecutionEngine, TrainingEndEvent
from hyperlab.compat.nni.nas.space import ModelStatus
```

(``nni.nas.execution`` and ``nni.nas.execution.sequential`` where the ``nni`` shim is on the
path.) ``SequentialExecutionEngine`` runs the models as the trials of a ``hyperlab.Experiment``;
see its module, ``sequential``, for what maps to what.
"""

from __future__ import annotations

from .engine import ExecutionEngine
from .event import (
    FinalMetricEvent,
    IntermediateMetricEvent,
    ModelEvent,
    ModelEventType,
    TrainingEndEvent,
)
from .sequential import SequentialExecutionEngine

__all__ = [
    "ExecutionEngine",
    "FinalMetricEvent",
    "IntermediateMetricEvent",
    "ModelEvent",
    "ModelEventType",
    "SequentialExecutionEngine",
    "TrainingEndEvent",
]
