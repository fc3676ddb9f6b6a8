"""NNI's experiment API (``nni.experiment``) on hyperlab: import ``Experiment`` from here instead
of ``nni.experiment`` and NNI's launcher scripts and notebooks run on hyperlab.

```python
from hyperlab.compat.nni.experiment import Experiment

experiment = Experiment('local')
experiment.config.trial_command = 'python3 model.py'
experiment.config.search_space = {'lr': {'_type': 'loguniform', '_value': [1e-4, 1e-1]}}
experiment.config.tuner.name = 'TPE'
experiment.config.max_trial_number = 10
experiment.run(8080)
```

``experiment.py`` has the ``Experiment``, ``config.py`` NNI's config classes, ``data.py`` NNI's
trial records; docs/migrating.md maps every NNI call and lists what is not supported.
"""

from hyperlab.compat.nni.experiment._base import UnknownField, UnsupportedFeature
from hyperlab.compat.nni.experiment.config import (
    AlgorithmConfig,
    CustomAlgorithmConfig,
    ExperimentConfig,
    LocalConfig,
)
from hyperlab.compat.nni.experiment.data import (
    TrialHyperParameters,
    TrialJob,
    TrialMetricData,
    TrialResult,
)
from hyperlab.compat.nni.experiment.experiment import Experiment, RunMode

__all__ = [
    "AlgorithmConfig",
    "CustomAlgorithmConfig",
    "Experiment",
    "ExperimentConfig",
    "LocalConfig",
    "RunMode",
    "TrialHyperParameters",
    "TrialJob",
    "TrialMetricData",
    "TrialResult",
    "UnknownField",
    "UnsupportedFeature",
]
