"""Test seams and conformance suites that ship with hyperlab, as Optuna ships
``optuna.testing``: run them against your own tuner, assessor, executor or store.

```python
# tests/test_my_tuner.py
import pytest
from hyperlab.testing import TunerContract

class TestMyTuner(TunerContract):
    @pytest.fixture
    def tuner_name(self):
        return "my-tuner"          # registered with hyperlab.tuners.register_tuner
```

- ``TunerContract``: seeded determinism, replay equality, proposals inside the space, nested
  choices, failed and stopped trials; several objectives and constraints, infeasible trials
  among them, or refused by a tuner that does not declare them (``hyperlab.testing.tuners``).
- ``AssessorContract``: answers of the right kind, the same answers to the same calls and after
  a replay of the stored history, silent trials left alone, ``TrialError`` for a report without
  the judged metric, nothing decided after a trial's end, the worst of a family of learning
  curves stopped before the best, in simulated time (``hyperlab.testing.assessors``).
- ``ExecutorContract``: the end-event contract, stop, timeout, nothing left running
  (``hyperlab.testing.executors``).
- ``StoreContract``: the store's behaviour on any backend (``hyperlab.testing.stores``).
- ``FakeClock`` and ``FakeExecutor``: the driver loop in simulated time, fast and
  deterministic (``hyperlab.testing.fakes``).

The contracts need pytest; the fakes do not.
"""

import importlib as _importlib
import typing as _typing

_EXPORTS = {
    "AssessorContract": "hyperlab.testing.assessors",
    "ExecutorContract": "hyperlab.testing.executors",
    "FakeClock": "hyperlab.testing.fakes",
    "FakeExecutor": "hyperlab.testing.fakes",
    "StoreContract": "hyperlab.testing.stores",
    "TunerContract": "hyperlab.testing.tuners",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> _typing.Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hyperlab.testing' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
