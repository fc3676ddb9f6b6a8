"""Launch config.yml from Python (NNI's ExperimentConfig.load, then Experiment(config)): the
YAML an ``nnictl create --config config.yml`` user has. Usage: python launch_yaml.py PORT"""

import json
import sys

from nni.experiment import Experiment
from nni.experiment.config import ExperimentConfig

config = ExperimentConfig.load("config.yml")
experiment = Experiment(config)
experiment.run(int(sys.argv[1]))

jobs = experiment.list_trial_jobs()
exported = experiment.export_data()
metrics = experiment.get_job_metrics()
print(
    "RESULT "
    + json.dumps(
        {
            "trials": len(jobs),
            "statuses": sorted(job.status for job in jobs),
            "finals": sorted(result.value for result in exported),
            "reports": sorted(
                [job.status, sum(m.type == "PERIODICAL" for m in metrics.get(job.trialJobId, []))]
                for job in jobs
            ),
            "params": sorted(sorted(result.parameter) for result in exported)[:1],
        }
    )
)
experiment.stop()
